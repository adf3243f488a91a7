@_spi(CLI) import SealKit
import Testing


@Suite struct ProfileEncryptorTests {
    static let schema = try! ProfileSchema(
        parsing: #"""
            {"schema": {
              "ssn": {"type": "string", "encryption": {"state": "enabled"}},
              "nickname": {"encryption": {"state": "enabled"}},
              "age": {"type": "number", "encryption": {"state": "enabled"}},
              "verified": {"type": "boolean", "encryption": {"state": "enabled"}},
              "address": {"type": "object", "encryption": {"state": "enabled"}},
              "codes": {"type": "array", "encryption": {"state": "enabled"}},
              "email": {"type": "string", "encryption": {"state": "disabled"}},
              "city": {"type": "string"}
            }}
            """#)
    let encryptor = ProfileEncryptor(schema: Self.schema)
    let keys = KeyRing(current: .generate())

    static let profile: JSONValue = [
        "id": "user_1",
        "data": [
            "email": "ada@example.com",
            "ssn": "078-05-1120",
            "unknown": "passes through",
            "nickname": "Countess",
            "age": .number("36.5"),
            "verified": true,
            "address": ["street": "12 St James's Square", "floors": [1, 2]],
            "codes": ["a", 1, nil],
            "city": "London",
        ],
        "redacted": ["x"],
    ]

    @Test func encryptsFlaggedFieldsOnlyAndKeepsEverythingElse() throws {
        let encrypted = try encryptor.encrypt(Self.profile, with: keys)
        let data = try #require(encrypted.data.objectValue)
        #expect(data.map(\.key) == Self.profile.data.objectValue?.map(\.key))
        #expect(encrypted.objectValue?.map(\.key) == ["id", "data", "redacted"])
        #expect(encrypted["id"] == "user_1")
        #expect(encrypted["redacted"] == ["x"])
        for name in ["email", "unknown", "city"] {
            #expect(encrypted.data[name] == Self.profile.data[name])
        }
        for name in ["ssn", "nickname", "age", "verified", "address", "codes"] {
            let ciphertext = try #require(encrypted.data[name]?.stringValue, "\(name)")
            #expect(JSONValue.string(ciphertext) != Self.profile.data[name])
        }
    }

    @Test func stringsEncryptExactlyAsFieldCipherDoes() throws {
        let encrypted = try encryptor.encrypt(["ssn": "078-05-1120"], with: keys)
        let ciphertext = try #require(encrypted["ssn"]?.stringValue)
        #expect(try FieldCipher.decrypt(ciphertext, using: keys.current) == "078-05-1120")
        #expect(try FieldCipher.decode(ciphertext).count == FieldCipher.minimumByteCount + 11)
    }

    @Test func nonStringsEncryptAsTheirCompactJSONText() throws {
        let encrypted = try encryptor.encrypt(Self.profile, with: keys)
        let expected = [
            "age": "36.5", "verified": "true", "address": #"{"street":"12 St James's Square","floors":[1,2]}"#,
            "codes": #"["a",1,null]"#,
        ]
        for (name, text) in expected {
            let ciphertext = try #require(encrypted.data[name]?.stringValue)
            #expect(try FieldCipher.decrypt(ciphertext, using: keys.current) == text)
        }
    }

    @Test func decryptRestoresTheProfile() throws {
        let decrypted = try encryptor.decrypt(try encryptor.encrypt(Self.profile, with: keys), with: keys)
        #expect(decrypted.profile == Self.profile)
        #expect(decrypted.fieldsUnderRetiredKeys.isEmpty)
    }

    @Test(arguments: ["12345678901234567890", "0.1", "-0", "1e400", "-1.50E-7", "0"])
    func numbersSurviveExactly(lexeme: String) throws {
        let profile: JSONValue = ["age": .number(lexeme)]
        let encrypted = try encryptor.encrypt(profile, with: keys)
        let decrypted = try encryptor.decrypt(encrypted, with: keys).profile
        #expect(decrypted["age"]?.numberLexeme == lexeme)
        #expect(decrypted.serialized() == #"{"age":\#(lexeme)}"#)
    }

    @Test func nullStaysNull() throws {
        let profile: JSONValue = ["ssn": nil, "age": nil, "codes": nil]
        let encrypted = try encryptor.encrypt(profile, with: keys)
        #expect(encrypted == profile)
        #expect(try encryptor.decrypt(encrypted, with: keys).profile == profile)
        #expect(try encryptor.rotate(encrypted, with: keys) == ProfileRotation(profile: profile, rotatedFields: []))
    }

    @Test func nonStringWithoutATypeIsRefused() {
        let error = profileError { _ = try encryptor.encrypt(["nickname": 7, "ssn": "x"], with: keys) }
        #expect(error == .fieldsFailed([FieldFailure(field: "nickname", reason: .missingType(found: .number))]))
        #expect(
            error?.description
                == #"1 profile field failed: nickname holds a number but the schema gives it no type, so decryption could not restore it: add "type": "number" to the field in the schema"#
        )
        #expect(
            profileError { _ = try encryptor.encrypt(["nickname": [:]], with: keys) }
                == .fieldsFailed([FieldFailure(field: "nickname", reason: .missingType(found: .object))]))
    }

    @Test func valuesOfTheWrongTypeAreRefused() {
        let error = profileError {
            _ = try encryptor.encrypt(
                ["ssn": 123, "age": "forty", "verified": "yes", "address": [], "codes": [:], "city": 5], with: keys)
        }
        #expect(
            error
                == .fieldsFailed([
                    FieldFailure(field: "ssn", reason: .typeMismatch(expected: .string, found: "a number")),
                    FieldFailure(field: "age", reason: .typeMismatch(expected: .number, found: "a string")),
                    FieldFailure(field: "verified", reason: .typeMismatch(expected: .boolean, found: "a string")),
                    FieldFailure(field: "address", reason: .typeMismatch(expected: .object, found: "an array")),
                    FieldFailure(field: "codes", reason: .typeMismatch(expected: .array, found: "an object")),
                ]))
        #expect(error?.description.hasPrefix(#"5 profile fields failed: ssn holds a number but the schema declares type "string"; age holds a string"#) == true)
        #expect(error?.description.contains("forty") == false)
    }

    @Test func encryptingTwiceChangesNothing() throws {
        let once = try encryptor.encrypt(Self.profile, with: keys)
        let twice = try encryptor.encrypt(once, with: keys)
        #expect(twice == once)
        // Also when the ciphertexts are under a key that has since been retired.
        let rotatedKeys = KeyRing(current: .generate(), retired: [keys.current])
        #expect(try encryptor.encrypt(once, with: rotatedKeys) == once)
    }

    /// The documented edge of idempotency: a plaintext that is itself a ciphertext under the
    /// user's key counts as already encrypted and is left alone.
    @Test func plaintextThatIsTheUsersCiphertextIsLeftAlone() throws {
        let inner = FieldCipher.encrypt("secret", using: keys.current)
        let encrypted = try encryptor.encrypt(["ssn": .string(inner)], with: keys)
        #expect(encrypted["ssn"] == .string(inner))
        #expect(try encryptor.decrypt(encrypted, with: keys).profile == ["ssn": "secret"])
    }

    /// A ciphertext under a key this ring lacks (another device's fork) is never sealed a second
    /// time: the profile fails, naming the field and the missing key, and nothing is returned.
    @Test func ciphertextUnderAnotherKeyIsRefusedNotSealedAgain() throws {
        let foreign = FieldCipher.encrypt("secret", using: .generate())
        #expect(
            profileError { _ = try encryptor.encrypt(["ssn": .string(foreign), "age": 1], with: keys) }
                == .fieldsFailed([FieldFailure(field: "ssn", reason: .sealedUnderUnknownKey(nil))]))
        let otherKey = SymmetricKey.generate()
        let foreignV2 = try KeyRing(current: otherKey, id: "u").encrypt("secret", format: .v2, place: .field("ssn"))
        let ring = KeyRing(current: keys.current, id: "u")
        #expect(
            profileError { _ = try encryptor.encrypt(["ssn": .string(foreignV2)], with: ring) }
                == .fieldsFailed([FieldFailure(field: "ssn", reason: .sealedUnderUnknownKey(otherKey.fingerprint))]))
        #expect(
            profileError { _ = try encryptor.decrypt(["ssn": .string(foreignV2)], with: ring) }
                == .fieldsFailed([FieldFailure(field: "ssn", reason: .sealedUnderUnknownKey(otherKey.fingerprint))]))
        // In a number field too: a ciphertext is refused as one before its type is looked at.
        #expect(
            profileError { _ = try encryptor.encrypt(["age": .string(foreign)], with: keys) }
                == .fieldsFailed([FieldFailure(field: "age", reason: .sealedUnderUnknownKey(nil))]))
    }

    @Test func alreadyEncryptedValuesMustMatchTheirType() {
        let notANumber = FieldCipher.encrypt("abc", using: keys.current)
        #expect(
            profileError { _ = try encryptor.encrypt(["age": .string(notANumber)], with: keys) }
                == .fieldsFailed([FieldFailure(field: "age", reason: .decryptedTypeMismatch(expected: .number))]))
    }

    @Test func decryptListsEveryFailingFieldAndNeverTheValue() throws {
        let other = SymmetricKey.generate()
        var tampered = try #require(Base64.decode(FieldCipher.encrypt("true", using: keys.current)))
        tampered[tampered.count - 1] ^= 1
        let profile: JSONValue = [
            "ssn": .string(FieldCipher.encrypt("078-05-1120", using: other)),
            "nickname": "plain-nickname",
            "age": 36,
            "verified": .string(Base64.encode(tampered)),
            "address": .string(FieldCipher.encrypt(#"{"a":1}"#, using: keys.current)),
            "codes": .string(Base64.encode([UInt8](repeating: 0, count: 10))),
            "city": "not flagged",
        ]
        let error = profileError { _ = try encryptor.decrypt(profile, with: keys) }
        #expect(
            error
                == .fieldsFailed([
                    FieldFailure(field: "ssn", reason: .undecryptable(.authenticationFailed)),
                    FieldFailure(field: "nickname", reason: .undecryptable(.notBase64)),
                    FieldFailure(field: "age", reason: .notEncrypted(found: "a number")),
                    FieldFailure(field: "verified", reason: .undecryptable(.authenticationFailed)),
                    FieldFailure(field: "codes", reason: .undecryptable(.tooShort(byteCount: 10))),
                ]))
        let description = error?.description ?? ""
        // Fields failing for the same reason share one sentence.
        #expect(description.hasPrefix("5 profile fields failed: ssn, verified cannot be decrypted with the user's keys (authentication failed"))
        #expect(description.contains("age holds a number, not a ciphertext"))
        #expect(!description.contains("\n"))
        for secret in ["078-05-1120", "plain-nickname", "36", "Countess"] {
            #expect(!description.contains(secret))
        }
        #expect(profileError { _ = try encryptor.rotate(profile, with: keys) } == error)
    }

    @Test func decryptedValuesMustMatchTheirType() {
        let profile: JSONValue = [
            "age": .string(FieldCipher.encrypt("abc", using: keys.current)),
            "verified": .string(FieldCipher.encrypt("1", using: keys.current)),
            "codes": .string(FieldCipher.encrypt("{}", using: keys.current)),
            "address": .string(FieldCipher.encrypt("[]", using: keys.current)),
            "ssn": .string(FieldCipher.encrypt("[]", using: keys.current)),
        ]
        let error = profileError { _ = try encryptor.decrypt(profile, with: keys) }
        #expect(
            error
                == .fieldsFailed([
                    FieldFailure(field: "age", reason: .decryptedTypeMismatch(expected: .number)),
                    FieldFailure(field: "verified", reason: .decryptedTypeMismatch(expected: .boolean)),
                    FieldFailure(field: "codes", reason: .decryptedTypeMismatch(expected: .array)),
                    FieldFailure(field: "address", reason: .decryptedTypeMismatch(expected: .object)),
                ]))
        #expect(error?.description.hasPrefix("4 profile fields failed: age decrypts to text that is not a number") == true)
    }

    @Test func decryptReportsFieldsUnderRetiredKeys() throws {
        let old = KeyRing(current: .generate())
        let underOld = try encryptor.encrypt(["ssn": "1", "age": 2, "city": "x"], with: old)
        let ring = KeyRing(current: .generate(), retired: [old.current])
        let mixed: JSONValue = [
            "ssn": underOld["ssn"]!, "verified": .string(FieldCipher.encrypt("false", using: ring.current)),
            "age": underOld["age"]!, "city": "x",
        ]
        let decrypted = try encryptor.decrypt(mixed, with: ring)
        #expect(decrypted.profile == ["ssn": "1", "verified": false, "age": 2, "city": "x"])
        #expect(decrypted.fieldsUnderRetiredKeys == ["ssn", "age"])
        // Without the retired key they do not open at all.
        #expect(
            profileError { _ = try encryptor.decrypt(mixed, with: KeyRing(current: ring.current) ) }
                == .fieldsFailed([
                    FieldFailure(field: "ssn", reason: .undecryptable(.authenticationFailed)),
                    FieldFailure(field: "age", reason: .undecryptable(.authenticationFailed)),
                ]))
    }

    @Test func rotateMovesRetiredFieldsToTheCurrentKeyOnly() throws {
        let old = KeyRing(current: .generate())
        let ring = KeyRing(current: .generate(), retired: [old.current])
        let underOld = try encryptor.encrypt(["id": "u", "data": ["ssn": "1", "codes": [true], "age": nil]], with: old)
        let underCurrent = try encryptor.encrypt(["address": ["k": "v"], "nickname": "n"], with: ring)
        var members = try #require(underOld.data.objectValue)
        members += try #require(underCurrent.objectValue)
        let mixed: JSONValue = ["id": "u", "data": .object(members)]

        let rotated = try encryptor.rotate(mixed, with: ring)
        #expect(rotated.rotatedFields == ["ssn", "codes"])
        // Fields already under the current key keep their exact ciphertexts.
        #expect(rotated.profile.data["address"] == underCurrent["address"])
        #expect(rotated.profile.data["nickname"] == underCurrent["nickname"])
        #expect(rotated.profile.data["ssn"] != underOld.data["ssn"])
        #expect(rotated.profile.data["age"] == .null)
        // Everything now opens under the current key alone.
        let decrypted = try encryptor.decrypt(rotated.profile, with: KeyRing(current: ring.current))
        #expect(
            decrypted.profile
                == ["id": "u", "data": ["ssn": "1", "codes": [true], "age": nil, "address": ["k": "v"], "nickname": "n"]])
        #expect(decrypted.fieldsUnderRetiredKeys.isEmpty)
        // Rotating again changes nothing.
        #expect(try encryptor.rotate(rotated.profile, with: ring) == ProfileRotation(profile: rotated.profile, rotatedFields: []))
    }

    @Test func profilesMustBeObjects() {
        for value: JSONValue in [[], "x", 1, nil, true] {
            #expect(profileError { _ = try encryptor.encrypt(value, with: keys) } == .notAnObject(found: kindName(value)))
            #expect(profileError { _ = try encryptor.decrypt(value, with: keys) } == .notAnObject(found: kindName(value)))
        }
        #expect(
            ProfileError.notAnObject(found: "an array").description
                == "a profile must be a JSON object of fields, found an array")
    }

    private func kindName(_ value: JSONValue) -> String {
        switch value {
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .null: return "null"
        default: return "a boolean"
        }
    }

    @Test func dataIsAFieldWhenTheSchemaSaysSo() throws {
        let schema = try ProfileSchema(parsing: #"{"data": {"type": "object", "encryption": {"state": "enabled"}}}"#)
        let encryptor = ProfileEncryptor(schema: schema)
        let profile: JSONValue = ["data": ["ssn": "1"]]
        let encrypted = try encryptor.encrypt(profile, with: keys)
        #expect(encrypted["data"]?.stringValue != nil)
        #expect(try encryptor.decrypt(encrypted, with: keys).profile == profile)
        // Without such a field, a `data` object holds the fields.
        let wrapped = try self.encryptor.encrypt(profile, with: keys)
        #expect(wrapped["data"]?["ssn"]?.stringValue != nil)
        // A `data` member that is not an object is just a field.
        let plain: JSONValue = ["data": "x", "ssn": "1"]
        #expect(try self.encryptor.encrypt(plain, with: keys)["data"] == "x")
        #expect(try self.encryptor.encrypt(plain, with: keys)["ssn"]?.stringValue != "1")
    }

    @Test func theFixtureRoundTrips() throws {
        let schema = try ProfileSchema(parsing: try Fixture.json("schema.json"))
        let profile = try Fixture.json("profile.json")
        let encryptor = ProfileEncryptor(schema: schema)
        let encrypted = try encryptor.encrypt(profile, with: keys)
        for field in schema.encryptedFields {
            let value = try #require(profile.data[field.name], "fixture lacks \(field.name)")
            if value.isNull {
                #expect(encrypted.data[field.name] == .null)
            } else {
                #expect(encrypted.data[field.name]?.stringValue != nil)
                #expect(encrypted.data[field.name] != value)
            }
        }
        // The fixture shows every JSON type, a null in an encrypted field, and a field the schema lacks.
        let kinds = Set(try #require(profile.data.objectValue).map { $0.value.kindName })
        #expect(kinds == ["null", "a boolean", "a number", "a string", "an array", "an object"])
        #expect(profile.data.objectValue?.contains { schema.field(named: $0.key) == nil } == true)
        #expect(profile.data["account_balance"]?.numberLexeme == "12345678901234567890.10")
        let decrypted = try encryptor.decrypt(encrypted, with: keys)
        #expect(decrypted.profile == profile)
        #expect(decrypted.profile.serialized(pretty: true) == profile.serialized(pretty: true))
    }
}

/// v2 fields open only as v2, and a `data` member does not turn encryption off, in the library.
@Suite struct ProfileBindingTests {
    static let schema = try! ProfileSchema(
        parsing: #"""
            {"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
                        "notes": {"type": "string", "encryption": {"state": "enabled"}},
                        "name": {"type": "string"}}}
            """#)
    let keys = KeyRing(current: .generate(), id: "alice")

    @Test func aV2FieldOpensOnlyV2UnlessMigrating() throws {
        let v1 = keys.encrypt("078-05-1120")
        let profile: JSONValue = ["ssn": .string(v1), "notes": .string(keys.encrypt("allergic"))]
        let encryptor = ProfileEncryptor(schema: Self.schema)
        for operation in [{ _ = try encryptor.decrypt(profile, with: keys) }, { _ = try encryptor.rotate(profile, with: keys) },
                          { _ = try encryptor.encrypt(profile, with: keys) }] {
            #expect(profileError(operation) == .fieldsFailed([FieldFailure(field: "ssn", reason: .undecryptable(.notBound))]))
        }
        // The v1 field still reads v1; migration reads the v2 field's v1 value on purpose.
        let migrated = try encryptor.rotate(profile, with: keys, migratingFromV1: true)
        #expect(migrated.rotatedFields == ["ssn"])
        let opened = try encryptor.decrypt(migrated.profile, with: keys).profile
        #expect(opened == ["ssn": "078-05-1120", "notes": "allergic"])
        // --format v1 for every field: the schema's v2 no longer applies, so v1 opens.
        #expect(try ProfileEncryptor(schema: Self.schema.writing(.v1)).decrypt(profile, with: keys).profile == opened)
    }

    /// `--format` is the schema read with every encrypted field's format overridden (the schema
    /// decides, not a third place): the fields it flags change, nothing else does.
    @Test func writingAFormatOverridesEveryEncryptedFieldAndNothingElse() throws {
        var schema = try ProfileSchema(parsing: #"""
            {"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
                        "notes": {"type": "string", "encryption": {"state": "enabled"}},
                        "name": {"type": "string"}},
             "sealkit": {"seal": true}}
            """#)
        schema.undeclaredMembers = .refused
        for format in [CiphertextFormat.v1, .v2] {
            let written = schema.writing(format)
            #expect(written.encryptedFields.map(\.format) == [format, format])
            #expect(written.fields.map(\.name) == schema.fields.map(\.name))
            #expect(written.field(named: "name") == schema.field(named: "name"))
            #expect(written.requiresSeal && written.undeclaredMembers == .refused)
            let sealed = try ProfileEncryptor(schema: written).encrypt(["ssn": "078-05-1120", "notes": "n", "name": "Al"], with: keys)
            for field in ["ssn", "notes"] {
                #expect(sealed[field]?.stringValue?.hasPrefix("sk2:") == (format == .v2), "\(field) as \(format)")
            }
        }
        #expect(schema.encryptedFields.map(\.format) == [.v2, .v1], "the schema itself is unchanged")
    }

    @Test func flaggedNamesBesideDataAreRefusedOnEveryPath() throws {
        let v1Only = try ProfileSchema(parsing: #"{"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled"}}}}"#)
        for schema in [v1Only, Self.schema] {
            let encryptor = ProfileEncryptor(schema: schema)
            for text in [#"{"ssn":"123-45-6789","name":"Al","data":{}}"#, #"{"data":{"ssn":"1"},"ssn":"2"}"#] {
                let profile = try JSONValue.parse(Array(text.utf8))
                #expect(profileError { _ = try encryptor.encrypt(profile, with: keys) } == .fieldsBesideData(["ssn"]))
                // The JSON-text path (the fast path for v1 schemas) refuses too, rather than copying the text.
                #expect(profileError { _ = try encryptor.encrypt(jsonText: Array(text.utf8), with: keys) } == .fieldsBesideData(["ssn"]))
                #expect(profileError { _ = try encryptor.decrypt(profile, with: keys) } == .fieldsBesideData(["ssn"]))
                let rownd = try RowndProfileEncryptor(schema: schema).encrypt(profile, with: keys)
                #expect(rownd.notes.contains(RowndFieldNote(path: "ssn", reason: .besideData)))
            }
        }
    }
}
