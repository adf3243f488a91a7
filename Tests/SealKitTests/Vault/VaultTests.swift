import Foundation
// Only the public API, as an app sees it; the one exception (a given key for Rownd's vector) says why.
import SealKit
// Test helpers only (bounded waits), no part of SealKit.
import SealTestSupport
import Testing

@Suite("Vault")
struct VaultTests {
    @Test func rowndShapedSurface() throws {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID("user-123"), format: .v1)
        #expect(!vault.isEncryptionPossible())
        try vault.ensureKey(existing: "{}")
        #expect(vault.isEncryptionPossible())
        let sealed = try vault.encrypt(plaintext: "A+ blood type")
        let info = try vault.inspect(ciphertext: sealed)
        #expect(info.format == .v1)
        #expect(try info.keyFingerprint == vault.keystore.entry(for: vault.user)?.fingerprint)
        #expect(try vault.decrypt(ciphertext: sealed) == "A+ blood type")
        let fingerprint = try vault.keystore.entry(for: KeyID("user-123"))?.fingerprint
        try vault.ensureKey(existing: "{}")
        #expect(try vault.keystore.entry(for: KeyID("user-123"))?.fingerprint == fingerprint)
    }

    @Test func errorsNameTheKeyAndTheProblem() throws {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID("bob"), format: .v1)
        do {
            _ = try vault.encrypt(plaintext: "x")
            Issue.record("encrypted without a key")
        } catch {
            #expect(error.reason == .keyNotFound)
            #expect(error.keyID == (try KeyID("bob")))
        }
        try vault.ensureKey(existing: "{}")
        do {
            _ = try vault.decrypt(ciphertext: "AAAA")
            Issue.record("decrypted garbage")
        } catch {
            #expect(error.reason == .notCiphertext)
            #expect(error.description == "cannot decrypt with key 'bob': too short to be a ciphertext (3 bytes, need at least 40)")
        }
        #expect(throws: SealKitError.self) { try KeyID("a/b") }
        #expect(throws: SealKitError.self) { try Passphrase("") }
        #expect("\(try Passphrase("hunter2"))" == "Passphrase(redacted)")
    }

    @Test func rotationKeepsOldCiphertextsReadable() throws {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID("r"), format: .v2)
        try vault.ensureKey(existing: "{}")
        let old = try vault.encrypt(plaintext: "before")
        let oldKey = try vault.inspect(ciphertext: old).keyFingerprint
        let entry = try vault.rotateKey()
        #expect(entry.retiredFingerprints == [oldKey].compactMap { $0 })
        #expect(try vault.decrypt(ciphertext: old) == "before")
        #expect(try vault.inspect(ciphertext: vault.encrypt(plaintext: "after")).keyFingerprint == entry.fingerprint)
    }

    @Test func lockedKeysMakeEncryptionImpossible() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-vault-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let keystore = try Keystore(directory: root)
        let id = try KeyID("locked")
        try Vault(keystore: keystore, user: id, format: .v1, passphrase: Passphrase("pw")).ensureKey(existing: "{}")
        #expect(try keystore.entry(for: id)?.isProtected == true)
        let locked = Vault(keystore: keystore, user: id, format: .v1)
        #expect(!locked.isEncryptionPossible())
        guard case .notPossible(let error) = locked.encryptionStatus() else { Issue.record("a locked key encrypted"); return }
        #expect(error.reason == .passphraseRequired)
        guard case .notPossible(let wrong) = Vault(keystore: keystore, user: id, format: .v1, passphrase: try Passphrase("wrong")).encryptionStatus()
        else { Issue.record("a wrong passphrase unlocked"); return }
        #expect(wrong.reason == .wrongPassphrase)
        #expect(Vault(keystore: keystore, user: id, format: .v1, passphrase: try Passphrase("pw")).isEncryptionPossible())
    }

    @Test(.timeLimit(.minutes(1))) func eventsCarryTheKeyIDInOrder() async throws {
        let id = try KeyID("events")
        let vault = Vault(keystore: try .inMemory(), user: id, format: .v1)
        let stream = vault.events()
        try vault.ensureKey(existing: "{}")
        let sealed = try vault.encrypt(plaintext: "x")
        _ = try? vault.decrypt(ciphertext: "AAAA")
        try vault.rotateKey()
        _ = try vault.decrypt(ciphertext: sealed)
        try vault.deleteKey()
        _ = try? vault.encrypt(plaintext: "y")
        let received = try #require(await Waits.first(5, of: stream), "fewer than 5 events within the deadline")
        #expect(received == [.keyGenerated(id), .decryptionFailed(id), .keyRotated(id), .keyDeleted(id), .encryptionFailed(id)])
    }
}

@Suite("Vault profiles")
struct VaultProfileTests {
    static let schema = """
        {"app": {"schema": {
          "ssn": {"type": "string", "encryption": {"state": "enabled"}},
          "score": {"type": "number", "encryption": {"state": "enabled"}},
          "name": {"type": "string", "encryption": {"state": "disabled"}}
        }}}
        """

    /// The refusal's words: the facts, then both remedies, as either name may be the misspelt one.
    static let salaryNearSalery = "`salary` is not in the schema, and its name is near the encrypted field `salery`: "
        + "declare `salary` in the schema if it is another field, or correct whichever of the two names is misspelt, "
        + "in the schema or in the profile"

    /// A field misspelt in the schema (or the profile) never leaves in plaintext through the vault.
    @Test func aFieldNearAnEncryptedOneIsRefusedNamingBoth() throws {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID("p"), format: .v1)
        try vault.ensureKey(existing: "{}")
        var schema = try ProfileSchema(json: #"{"schema": {"salery": {"type": "number", "encryption": {"state": "enabled"}}}}"#)
        #expect(schema.undeclaredMembers == .refusedNearEncrypted)
        let profile = #"{"user_id": "u1", "salary": 85000.50}"#
        func expectRefused(_ error: SealKitError?) {
            #expect(error?.reason == .profileFields)
            #expect(error?.fields == ["salary"])
            #expect(error?.description == Self.salaryNearSalery)
        }
        let strict = schema
        do {
            _ = try ProfileProcessor(.encrypt, schema: strict).process(profile, with: vault).json
            Issue.record("encrypt let the misspelt field go out in plaintext")
        } catch {
            expectRefused(error)
        }
        do {
            _ = try ProfileProcessor(.rotate, schema: strict).process(profile, with: vault)
            Issue.record("rotate let the misspelt field go out in plaintext")
        } catch {
            expectRefused(error)
        }
        // The processor (bulk and --ndjson) follows the same rule, naming the line.
        let processor = try ProfileProcessor(.encrypt, schema: strict)
        var output: [UInt8] = []
        let bytes = Array(profile.utf8)
        do throws(SealKitError) {
            _ = try bytes.withUnsafeBufferPointer { (text) throws(SealKitError) in
                try processor.process(text, with: vault, line: 3, appendingTo: &output)
            }
            Issue.record("the processor let it through")
        } catch {
            #expect(error.description == "line 3: " + Self.salaryNearSalery)
            #expect(output.isEmpty)
        }
        // user_id passes, unless the schema declares every field.
        #expect(try ProfileProcessor(.encrypt, schema: schema).process(#"{"user_id": "u1", "salery": 1}"#, with: vault).json.hasPrefix(#"{"user_id":"u1","#))
        schema.undeclaredMembers = .refused
        #expect(throws: SealKitError.self) { try ProfileProcessor(.encrypt, schema: schema).process(#"{"user_id": "u1", "salery": 1}"#, with: vault) }
    }

    /// JSON text in and out: compact, members in order, types restored, and typed failures naming fields.
    @Test(.timeLimit(.minutes(1))) func encryptsFlaggedFieldsAndRoundTrips() async throws {
        let id = try KeyID("p")
        let vault = Vault(keystore: try .inMemory(), user: id, format: .v1)
        let stream = vault.events()
        try vault.ensureKey(existing: "{}")
        let schema = try ProfileSchema(json: Self.schema)
        #expect(schema.encryptedFieldNames == ["ssn", "score"])
        // Each operation prepared once, then applied to each profile.
        let encrypting = try ProfileProcessor(.encrypt, schema: schema)
        let decrypting = try ProfileProcessor(.decrypt, schema: schema)
        let rotating = try ProfileProcessor(.rotate, schema: schema)
        let text = #"{ "name": "Ada", "ssn": "078-05-1120", "score": 12345678901234567890.5 }"#
        let sealed = try encrypting.process(text, with: vault).json
        #expect(sealed.hasPrefix(#"{"name":"Ada","ssn":""#))
        #expect(!sealed.contains("078-05-1120") && !sealed.contains("12345678901234567890"))
        #expect(try encrypting.process(sealed, with: vault).json == sealed, "already encrypted: nothing changes")
        #expect(try decrypting.process(sealed, with: vault).json == #"{"name":"Ada","ssn":"078-05-1120","score":12345678901234567890.5}"#)

        try vault.rotateKey()
        let opened = try decrypting.process(sealed, with: vault)
        #expect(Set(opened.fieldsUnderRetiredKeys) == ["ssn", "score"])
        let rotated = try rotating.process(sealed, with: vault)
        #expect(Set(rotated.rotatedFields) == ["ssn", "score"])
        #expect(try decrypting.process(rotated.json, with: vault).fieldsUnderRetiredKeys.isEmpty)

        do {
            _ = try encrypting.process(#"{"ssn": "x""#, with: vault).json
            Issue.record("encrypted broken JSON")
        } catch {
            #expect(error.reason == .invalidJSON)
        }
        do {
            _ = try encrypting.process(#"{"score": "12"}"#, with: vault).json
            Issue.record("encrypted a string as a number")
        } catch {
            #expect(error.reason == .profileFields)
            #expect(error.fields == ["score"])
        }
        let received = try #require(await Waits.first(4, of: stream), "fewer than 4 events within the deadline")
        #expect(received == [.keyGenerated(id), .keyRotated(id), .encryptionFailed(id), .encryptionFailed(id)])
    }

    @Test func badSchemasAreTyped() throws {
        #expect { try ProfileSchema(json: #"{"email": {"type": "string", "encryption": {"state": "enabled"}}}"#) } throws: {
            ($0 as? SealKitError)?.reason == .invalidSchema
        }
        #expect { try ProfileSchema(json: "{") } throws: { ($0 as? SealKitError)?.reason == .invalidJSON }
    }
}

/// The Vault's side of one key per user: it never forks a user's key, and v2 binds a context.
@Suite("Vault: one key per user, v2")
struct VaultKeyForkTests {
    static let schema: ProfileSchema = {
        try! ProfileSchema(json: #"{"ssn": {"type": "string", "encryption": {"state": "enabled"}}, "name": {"type": "string"}}"#)
    }()
    static let v2Schema: ProfileSchema = {
        try! ProfileSchema(json: #"{"ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}}}"#)
    }()

    @Test func ensureKeyWithTheUsersDataNeverForksTheirKey() throws {
        let id = try KeyID("alice")
        let device1 = Vault(keystore: try .inMemory(), user: id, format: .v1)
        try device1.ensureKey(existing: "{}")
        let uploaded = try ProfileProcessor(.encrypt, schema: Self.schema).process(#"{"ssn": "078-05-1120", "name": "Ada"}"#, with: device1).json

        let device2 = Vault(keystore: try .inMemory(), user: id, format: .v1)
        for schema in [nil, Self.schema] {
            #expect { try device2.ensureKey(existing: uploaded, schema: schema) } throws: { ($0 as? SealKitError)?.reason == .keyElsewhere }
        }
        #expect(try device2.keystore.entry(for: id) == nil)
        // v2 data names the missing key.
        let v2 = try ProfileProcessor(.encrypt, schema: Self.v2Schema).process(#"{"ssn": "078-05-1120"}"#, with: device1).json
        let fingerprint = try #require(try device1.keystore.entry(for: id)).fingerprint
        do {
            try device2.ensureKey(existing: v2)
            Issue.record("forked the key")
        } catch {
            #expect(error.reason == .keyElsewhere && error.description.contains("\(fingerprint)"))
        }
        // A user whose data holds no ciphertext gets a key.
        try device2.ensureKey(existing: #"{"ssn": "078-05-1120", "name": "Ada"}"#, schema: Self.schema)
        #expect(device2.isEncryptionPossible())

        // Now device 2 holds another key: the status for the data says so, as a typed reason.
        guard case .notPossible(let error) = device2.encryptionStatus(existing: uploaded, schema: Self.schema) else {
            Issue.record("status does not name the missing key")
            return
        }
        #expect(error.reason == .keyElsewhere)
        #expect(device1.encryptionStatus(existing: uploaded, schema: Self.schema) == .possible(fingerprint))
        // And encrypting the downloaded profile is refused, never sealed twice.
        #expect(throws: SealKitError.self) { try ProfileProcessor(.encrypt, schema: Self.schema).process(uploaded, with: device2).json }
    }

    @Test func aV2VaultOpensOnlyInTheContextAndNeverV1() throws {
        let keystore = try Keystore.inMemory()
        let id = try KeyID("alice")
        let vault = Vault(keystore: keystore, user: id, format: .v2)
        try vault.ensureKey(existing: "{}")
        let sealed = try vault.encrypt(plaintext: "IBAN DE89", context: "billing")
        #expect(sealed.hasPrefix("sk2:"))
        #expect(try vault.inspect(ciphertext: sealed).format == .v2)
        #expect(try vault.decrypt(ciphertext: sealed, context: "billing") == "IBAN DE89")
        #expect { try vault.decrypt(ciphertext: sealed, context: "shipping") } throws: { ($0 as? SealKitError)?.reason == .wrongPlace }
        // Another user with the same keys cannot open it either.
        let bound = Vault(keystore: keystore, user: id, format: .v2)
        #expect(try bound.decrypt(ciphertext: sealed, context: "billing") == "IBAN DE89")
        // A v1 value names no context, so a v2 vault does not open it: it is no back door.
        let rownd = Vault(keystore: keystore, user: id, format: .v1)
        let v1 = try rownd.encrypt(plaintext: "y")
        for context in ["anything", ""] {
            #expect { try vault.decrypt(ciphertext: v1, context: context) } throws: { ($0 as? SealKitError)?.reason == .notBound }
        }
        #expect(try rownd.decrypt(ciphertext: v1) == "y")
        // A v1 vault binds nothing, so it takes no context.
        #expect { try rownd.encrypt(plaintext: "x", context: "billing") } throws: { ($0 as? SealKitError)?.reason == .invalidArgument }
    }
}
