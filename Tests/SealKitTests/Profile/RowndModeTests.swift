import SealKit
import Testing


/// Rownd's schema types in strict mode, and `RowndProfileEncryptor`, which does what Rownd's SDKs did.
@Suite struct RowndModeTests {
    static let schema = try! ProfileSchema(
        parsing: #"""
            {"schema": {
              "ssn": {"type": "string", "encryption": {"state": "enabled"}},
              "age": {"type": "number", "encryption": {"state": "enabled"}},
              "verified": {"type": "boolean", "encryption": {"state": "enabled"}},
              "address": {"type": "object", "encryption": {"state": "enabled"}},
              "photo": {"type": "image", "encryption": {"state": "enabled"}},
              "passport": {"type": "document", "encryption": {"state": "enabled"}},
              "extra": {"type": "any", "encryption": {"state": "enabled"}},
              "nothing": {"type": "null", "encryption": {"state": "enabled"}},
              "city": {"type": "string"}
            }}
            """#)
    let keys = KeyRing(current: .generate())

    // MARK: Schema types (strict)

    @Test func acceptsEveryRowndTypeAndSealKitsArray() throws {
        for type in ["string", "number", "boolean", "object", "image", "document", "any", "null", "array"] {
            let schema = try ProfileSchema(parsing: #"{"f": {"type": "\#(type)", "encryption": {"state": "enabled"}}}"#)
            #expect(schema.field(named: "f")?.type?.rawValue == type)
        }
        #expect(schemaError(#"{"f": {"type": "date", "encryption": {"state": "enabled"}}}"#) != nil)
        // The auditor reads schemas through `inspecting`: the same rules.
        let json = try JSONValue.parse(#"{"app": {"schema": {"p": {"type": "image", "encryption": {"state": "enabled"}}, "n": {"type": "null", "encryption": {"state": "enabled"}}}}}"#)
        #expect(try ProfileSchema.inspecting(json).schema.encryptedFields.map(\.name) == ["p", "n"])
    }

    @Test func anyValuesOfEveryTypeComeBackAsTheSameJSONValue() throws {
        let encryptor = ProfileEncryptor(schema: Self.schema)
        let values: [JSONValue] = ["812", .number("812"), .number("1e400"), true, ["a": [1, nil]], [1, "x"], "", nil]
        for value in values {
            let profile: JSONValue = ["data": ["extra": value]]
            let encrypted = try encryptor.encrypt(profile, with: keys)
            if value != .null {
                let ciphertext = try #require(encrypted.data["extra"]?.stringValue)
                // Stored as its JSON text: the string "812" is "\"812\"", the number is 812.
                #expect(try keys.decrypt(ciphertext).plaintext == value.serialized())
            } else {
                #expect(encrypted.data["extra"] == .null)
            }
            let decrypted = try encryptor.decrypt(encrypted, with: keys).profile
            #expect(decrypted == profile)
            #expect(decrypted.serialized() == profile.serialized())
            // The text path agrees with the tree.
            let text = try encryptor.encrypt(jsonText: Array(profile.serialized().utf8), with: keys)
            #expect(try encryptor.decrypt(JSONValue.parse(text), with: keys).profile == profile)
        }
    }

    @Test func imageAndDocumentAreStringsAndNullStaysNull() throws {
        let encryptor = ProfileEncryptor(schema: Self.schema)
        let profile: JSONValue = ["data": ["photo": "https://cdn.example/p.png", "passport": "files/p.pdf", "nothing": nil]]
        let encrypted = try encryptor.encrypt(profile, with: keys)
        // Encrypted exactly as strings, so Rownd's SDKs open them to the same text.
        #expect(try keys.decrypt(#require(encrypted.data["photo"]?.stringValue)).plaintext == "https://cdn.example/p.png")
        #expect(encrypted.data["nothing"] == .null)
        #expect(try encryptor.decrypt(encrypted, with: keys).profile == profile)

        for (field, value) in [("photo", JSONValue.number("1")), ("passport", true), ("nothing", "text"), ("nothing", .number("0"))] {
            let error = profileError { _ = try encryptor.encrypt(["data": [field: value]], with: keys) }
            guard case .fieldsFailed(let failures)? = error else { Issue.record("\(String(describing: error))"); continue }
            #expect(failures.map(\.field) == [field])
        }
    }

    // MARK: Rownd mode

    @Test func encryptTouchesOnlyStringsAndNotesTheRest() throws {
        let rownd = RowndProfileEncryptor(schema: Self.schema)
        let profile: JSONValue = [
            "id": "u", "data": ["ssn": "078-05-1120", "age": .number("36"), "verified": true, "address": ["s": "x"],
            "extra": .number("7"), "nothing": "not null", "city": "London", "photo": nil],
            "meta": ["ssn": "meta stays plaintext"],
        ]
        let result = try rownd.encrypt(profile, with: keys)
        let data = result.profile.data
        #expect(try keys.decrypt(#require(data["ssn"]?.stringValue)).plaintext == "078-05-1120")
        // Rownd's SDKs ignore the type: a string in a null-typed field is encrypted as a string.
        #expect(try keys.decrypt(#require(data["nothing"]?.stringValue)).plaintext == "not null")
        for field in ["age", "verified", "address", "extra", "city", "photo"] {
            #expect(data[field] == profile.data[field], "\(field)")
        }
        #expect(result.profile["meta"] == profile["meta"])
        #expect(result.notes.map(\.path) == ["data.age", "data.verified", "data.address", "data.extra"])
        #expect(result.notes.first?.description == "data.age left in plaintext: it holds a number, and Rownd encrypts only strings")
        // Encrypting again changes nothing.
        #expect(try rownd.encrypt(result.profile, with: keys).profile == result.profile)
    }

    @Test func decryptLeavesWhatDoesNotOpenAndNamesItWithoutItsValue() throws {
        let rownd = RowndProfileEncryptor(schema: Self.schema)
        let other = KeyRing(current: .generate())
        let profile: JSONValue = [
            "data": [
                "ssn": .string(keys.encrypt("078-05-1120")),
                "age": .number("36"),
                "photo": "https://cdn.example/plain.png",
                "passport": .string(other.encrypt("secret-doc")),
                "extra": .string(keys.encrypt("812")),
                "nothing": nil,
            ],
            "meta": ["ssn": .string(keys.encrypt("in meta")), "verified": "plain-meta", "city": .string(keys.encrypt("x"))],
        ]
        let result = try rownd.decrypt(profile, with: keys)
        let data = result.profile.data
        #expect(data["ssn"] == "078-05-1120")
        // Always a string, as in Rownd's SDKs, whatever the schema's type.
        #expect(data["extra"] == "812")
        #expect(data["age"] == .number("36"))
        #expect(data["photo"] == "https://cdn.example/plain.png")
        #expect(data["passport"] == profile.data["passport"])
        #expect(data["nothing"] == .null)
        // meta: flagged fields decrypt; unflagged ones are left alone.
        #expect(result.profile["meta"]?["ssn"] == "in meta")
        #expect(result.profile["meta"]?["city"] == profile["meta"]?["city"])
        #expect(result.notes.map(\.path) == ["data.age", "data.photo", "data.passport", "meta.verified"])
        let text = result.notes.map(\.description).joined(separator: "\n")
        for secret in ["plain.png", "secret-doc", "plain-meta"] { #expect(!text.contains(secret)) }
        #expect(text.contains("data.passport left as it is: it does not open with the user's keys"))
        #expect(text.contains("data.photo left as it is: not a ciphertext"))
        #expect(result.fieldsUnderRetiredKeys.isEmpty)
    }

    @Test func aPlaintextThatIsNotUTF8StaysEncrypted() throws {
        let rownd = RowndProfileEncryptor(schema: Self.schema)
        let sealed = [UInt8]([0xFF, 0xFE, 0x41]).withUnsafeBytes { FieldCipher.encrypt(bytes: $0, using: keys.current) }
        let result = try rownd.decrypt(["data": ["ssn": .string(sealed)]], with: keys)
        #expect(result.profile.data["ssn"] == .string(sealed))
        #expect(result.notes.map(\.description) == [
            "data.ssn left as it is: it opens, but not to UTF-8 text (Rownd's SDKs would show replacement characters)"
        ])
    }

    @Test func rotateMovesRetiredCiphertextsInDataAndMetaAndLeavesTheRest() throws {
        let old = KeyRing(current: .generate())
        let ring = KeyRing(current: .generate(), retired: [old.current])
        let rownd = RowndProfileEncryptor(schema: Self.schema)
        let current = ring.encrypt("already current")
        let profile: JSONValue = [
            "data": ["ssn": .string(old.encrypt("078")), "photo": .string(current), "age": .number("3"), "passport": "plain"],
            "meta": ["ssn": .string(old.encrypt("m"))],
        ]
        let result = try rownd.rotate(profile, with: ring)
        #expect(result.fieldsUnderRetiredKeys == ["data.ssn", "meta.ssn"])
        #expect(try FieldCipher.decrypt(#require(result.profile.data["ssn"]?.stringValue), using: ring.current) == "078")
        #expect(try FieldCipher.decrypt(#require(result.profile["meta"]?["ssn"]?.stringValue), using: ring.current) == "m")
        #expect(result.profile.data["photo"] == .string(current))
        #expect(result.profile.data["passport"] == "plain")
        #expect(result.notes.map(\.path) == ["data.age", "data.passport"])
    }

    @Test func bareProfilesHaveNoMetaAndPathsWithoutContainer() throws {
        let rownd = RowndProfileEncryptor(schema: Self.schema)
        let result = try rownd.decrypt(["ssn": "plain", "meta": ["ssn": "x"]], with: keys)
        #expect(result.notes.map(\.path) == ["ssn"])
        #expect(result.profile["meta"] == ["ssn": "x"])
        #expect(profileError { _ = try rownd.decrypt([1], with: keys) } == .notAnObject(found: "an array"))
    }

    @Test func strictModeNeverTouchesMeta() throws {
        let encryptor = ProfileEncryptor(schema: Self.schema)
        let meta: JSONValue = ["ssn": "plain", "age": .number("1")]
        let encrypted = try encryptor.encrypt(["data": ["ssn": "1"], "meta": meta], with: keys)
        #expect(encrypted["meta"] == meta)
        let sealedMeta: JSONValue = ["ssn": .string(keys.encrypt("x"))]
        #expect(try encryptor.decrypt(["data": [:], "meta": sealedMeta], with: keys).profile["meta"] == sealedMeta)
    }
}
