import Foundation
import SealKit
import Testing

@Suite("Vault")
struct VaultTests {
    @Test func rowndShapedSurface() throws {
        let vault = Vault(keystore: InMemoryKeystore(), userID: try KeyID("user-123"))
        #expect(!vault.isEncryptionPossible())
        try vault.ensureKey()
        #expect(vault.isEncryptionPossible())
        let sealed = try vault.encrypt(plaintext: "A+ blood type")
        #expect(try vault.decrypt(ciphertext: sealed) == "A+ blood type")
        let fingerprint = try vault.keystore.entry(for: KeyID("user-123"))?.current.fingerprint
        try vault.ensureKey()
        #expect(try vault.keystore.entry(for: KeyID("user-123"))?.current.fingerprint == fingerprint)
    }

    @Test func noUserMeansNoEncryption() throws {
        let vault = Vault(keystore: InMemoryKeystore(), userID: nil)
        #expect(!vault.isEncryptionPossible())
        #expect(throws: VaultError.noUser) { try vault.encrypt(plaintext: "x") }
        #expect(throws: VaultError.noUser) { try vault.ensureKey() }
    }

    @Test func decryptsRowndsVector() throws {
        let store = InMemoryKeystore()
        let id = try KeyID("rownd")
        try store.store(SymmetricKey(base64Encoded: "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="), as: id, mode: .import, passphrase: nil)
        let vault = Vault(keystore: store, userID: id)
        let plaintext = try vault.decrypt(ciphertext:
            "Di0IyYbC141WIPKzFnlsQc0BIi1AWKSpLf6Th9TcDDJiidPfkVazXtFibnsqJyKFaQf7SaF68yihnqJXidodfKqKzjM2MnbHbh+O8wpxFO3gO6OhVg==")
        #expect(plaintext == "This super secret string will never be known.")
    }

    @Test func errorsNameTheKeyAndTheProblem() throws {
        let vault = Vault(keystore: InMemoryKeystore(), userID: try KeyID("bob"))
        #expect(throws: VaultError.keystore(.notFound(try KeyID("bob"), namespace: "default"))) { try vault.encrypt(plaintext: "x") }
        try vault.ensureKey()
        do {
            _ = try vault.decrypt(ciphertext: "AAAA")
            Issue.record("decrypted garbage")
        } catch {
            #expect(error.description == "cannot decrypt with key 'bob': too short to be a ciphertext (3 bytes, need at least 40)")
        }
    }

    @Test func rotationKeepsOldCiphertextsReadable() throws {
        let vault = Vault(keystore: InMemoryKeystore(), userID: try KeyID("r"))
        try vault.ensureKey()
        let old = try vault.encrypt(plaintext: "before")
        try vault.rotateKey()
        #expect(try vault.decrypt(ciphertext: old) == "before")
        let ring = try vault.keyRing()
        #expect(try ring.decrypt(old).needsRotation)
        #expect(try ring.decrypt(vault.encrypt(plaintext: "after")).needsRotation == false)
    }

    @Test func lockedKeysMakeEncryptionImpossible() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-vault-\(UUID().uuidString)").path
        let store = FileKeystore(root: root)
        let id = try KeyID("locked")
        try store.store(SymmetricKey.generate(), as: id, mode: .create, passphrase: Passphrase("pw"))
        #expect(!Vault(keystore: store, userID: id).isEncryptionPossible())
        #expect(!Vault(keystore: store, userID: id, passphrase: try Passphrase("wrong")).isEncryptionPossible())
        #expect(Vault(keystore: store, userID: id, passphrase: try Passphrase("pw")).isEncryptionPossible())
    }

    @Test func eventsCarryTheKeyIDInOrder() async throws {
        let id = try KeyID("events")
        let vault = Vault(keystore: InMemoryKeystore(), userID: id)
        let stream = vault.events()
        try vault.ensureKey()
        let sealed = try vault.encrypt(plaintext: "x")
        _ = try? vault.decrypt(ciphertext: "AAAA")
        try vault.rotateKey()
        _ = try vault.decrypt(ciphertext: sealed)
        try vault.deleteKey()
        _ = try? vault.encrypt(plaintext: "y")
        var received: [VaultEvent] = []
        for await event in stream {
            received.append(event)
            if received.count == 5 { break }
        }
        #expect(received == [.keyGenerated(id), .decryptionFailed(id), .keyRotated(id), .keyDeleted(id), .encryptionFailed(id)])
    }

    @Test func importEmitsOnlyWhenSomethingWasStored() async throws {
        let id = try KeyID("imported")
        let vault = Vault(keystore: InMemoryKeystore(), userID: id)
        let stream = vault.events()
        let key = SymmetricKey.generate()
        #expect(try vault.importKey(key) == .stored)
        #expect(try vault.importKey(key) == .unchanged)
        #expect(throws: VaultError.keystore(.conflictingKey(id))) { try vault.importKey(SymmetricKey.generate()) }
        try vault.deleteKey()
        var received: [VaultEvent] = []
        for await event in stream {
            received.append(event)
            if received.count == 2 { break }
        }
        #expect(received == [.keyImported(id), .keyDeleted(id)])
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

    @Test func encryptsFlaggedFieldsAndRoundTrips() throws {
        let vault = Vault(keystore: InMemoryKeystore(), userID: try KeyID("p"))
        try vault.ensureKey()
        let schema = try ProfileSchema(parsing: Self.schema)
        let profile = try JSONValue.parse(#"{"name":"Ada","ssn":"078-05-1120","score":12345678901234567890.5}"#)
        let sealed = try vault.encryptProfile(profile, schema: schema)
        #expect(sealed["name"] == .string("Ada"))
        let ssn = try #require(sealed["ssn"]?.stringValue)
        #expect(try vault.decrypt(ciphertext: ssn) == "078-05-1120")
        #expect(try vault.encryptProfile(sealed, schema: schema) == sealed)
        #expect(try vault.decryptProfile(sealed, schema: schema).profile == profile)

        try vault.rotateKey()
        let opened = try vault.decryptProfile(sealed, schema: schema)
        #expect(Set(opened.fieldsUnderRetiredKeys) == ["ssn", "score"])
        let rotated = try vault.rotateProfile(sealed, schema: schema)
        #expect(try vault.decryptProfile(rotated.profile, schema: schema).fieldsUnderRetiredKeys.isEmpty)
    }

    /// The text entry point: the same result as the value one, compact JSON out, and typed failures.
    @Test func encryptsProfilesGivenAsText() async throws {
        let id = try KeyID("t")
        let vault = Vault(keystore: InMemoryKeystore(), userID: id)
        let stream = vault.events()
        try vault.ensureKey()
        let schema = try ProfileSchema(parsing: Self.schema)
        let text = #"{ "name": "Ada", "ssn": "078-05-1120", "score": 12345678901234567890.5 }"#
        let sealed = try vault.encryptProfile(json: text, schema: schema)
        let value = try JSONValue.parse(sealed)
        #expect(sealed == value.serialized(), "not compact JSON")
        #expect(value["name"] == .string("Ada"))
        #expect(try vault.decrypt(ciphertext: #require(value["ssn"]?.stringValue)) == "078-05-1120")
        #expect(try vault.decryptProfile(value, schema: schema).profile == JSONValue.parse(text))
        // Already encrypted: nothing changes, as with the value entry point.
        #expect(try vault.encryptProfile(json: sealed, schema: schema) == sealed)

        #expect(throws: VaultError.profile(.invalidJSON(JSONError(reason: .unexpectedEnd(expected: "',' or '}'"), line: 1, column: 12, byteOffset: 11)))) {
            try vault.encryptProfile(json: #"{"ssn": "x""#, schema: schema)
        }
        #expect(throws: VaultError.profile(.fieldsFailed([FieldFailure(field: "score", reason: .typeMismatch(expected: .number, found: "a string"))]))) {
            try vault.encryptProfile(json: #"{"score": "12"}"#, schema: schema)
        }
        #expect(throws: VaultError.noUser) {
            try Vault(keystore: InMemoryKeystore(), userID: nil).encryptProfile(json: "{}", schema: schema)
        }
        var received: [VaultEvent] = []
        for await event in stream {
            received.append(event)
            if received.count == 3 { break }
        }
        #expect(received == [.keyGenerated(id), .encryptionFailed(id), .encryptionFailed(id)])
    }

    @Test func profileFailuresAreTypedAndEmitEvents() async throws {
        let id = try KeyID("q")
        let vault = Vault(keystore: InMemoryKeystore(), userID: id)
        let stream = vault.events()
        try vault.ensureKey()
        let schema = try ProfileSchema(parsing: Self.schema)
        #expect(throws: VaultError.self) { try vault.decryptProfile(JSONValue.parse(#"{"ssn":"plain"}"#), schema: schema) }
        var received: [VaultEvent] = []
        for await event in stream {
            received.append(event)
            if received.count == 2 { break }
        }
        #expect(received == [.keyGenerated(id), .decryptionFailed(id)])
    }
}

/// The Vault's side of one key per user: it never forks a user's key, and v2 binds a context.
@Suite("Vault: one key per user, v2")
struct VaultKeyForkTests {
    static let schema: ProfileSchema = {
        try! ProfileSchema(parsing: #"{"ssn": {"type": "string", "encryption": {"state": "enabled"}}, "name": {"type": "string"}}"#)
    }()

    @Test func ensureKeyWithTheUsersDataNeverForksTheirKey() throws {
        let id = try KeyID("alice")
        let device1 = Vault(keystore: InMemoryKeystore(), userID: id)
        try device1.ensureKey(existing: .object([]))
        let uploaded = try device1.encryptProfile(["ssn": "078-05-1120", "name": "Ada"], schema: Self.schema)

        let device2 = Vault(keystore: InMemoryKeystore(), userID: id)
        for schema in [nil, Self.schema] {
            #expect(throws: VaultError.keyElsewhere(id, [MissingKey(fingerprint: nil, paths: ["ssn"])])) {
                try device2.ensureKey(existing: uploaded, schema: schema)
            }
        }
        #expect(try device2.keystore.entry(for: id) == nil)
        // v2 data names the missing key.
        let v2 = try device1.encryptProfile(["ssn": "078-05-1120"], schema: Self.schema, format: .v2)
        let fingerprint = try #require(try device1.keystore.entry(for: id)).current.fingerprint
        #expect(throws: VaultError.keyElsewhere(id, [MissingKey(fingerprint: fingerprint, paths: ["ssn"])])) {
            try device2.ensureKey(existing: v2)
        }
        // A user whose data holds no ciphertext gets a key.
        try device2.ensureKey(existing: ["ssn": "078-05-1120", "name": "Ada"], schema: Self.schema)
        #expect(device2.isEncryptionPossible())

        // Now device 2 holds another key: the status for the data says so, as a typed reason.
        guard case .notPossible(.keyElsewhere(_, let missing)) = device2.encryptionStatus(for: uploaded, schema: Self.schema) else {
            Issue.record("status does not name the missing key")
            return
        }
        #expect(missing.map(\.paths) == [["ssn"]])
        guard case .possible = device1.encryptionStatus(for: uploaded, schema: Self.schema) else {
            Issue.record("device 1's keys open its own data")
            return
        }
        // And encrypting the downloaded profile is refused, never sealed twice.
        #expect(throws: VaultError.self) { try device2.encryptProfile(uploaded, schema: Self.schema) }
        #expect(throws: VaultError.self) { try device2.encryptProfile(json: uploaded.serialized(), schema: Self.schema) }
    }

    @Test func encryptWithAContextOpensOnlyInThatContext() throws {
        let vault = Vault(keystore: InMemoryKeystore(), userID: try KeyID("alice"))
        try vault.ensureKey(existing: .object([]))
        let sealed = try vault.encrypt(plaintext: "IBAN DE89", context: "billing")
        #expect(sealed.hasPrefix("sk2:"))
        #expect(try vault.decrypt(ciphertext: sealed, context: "billing") == "IBAN DE89")
        #expect(throws: VaultError.ciphertext(try KeyID("alice"), .sealedForAnotherPlace)) {
            try vault.decrypt(ciphertext: sealed, context: "shipping")
        }
        // Rownd's surface reads v2 too, as the empty context.
        let bare = try vault.encrypt(plaintext: "x", context: "")
        #expect(try vault.decrypt(ciphertext: bare) == "x")
        // A v1 value names no context, so a context does not open it (issue 28): it is no back door.
        let v1 = try vault.encrypt(plaintext: "y")
        for context in ["anything", ""] {
            #expect(throws: VaultError.ciphertext(try KeyID("alice"), .notBound)) { try vault.decrypt(ciphertext: v1, context: context) }
        }
        #expect(try vault.decrypt(ciphertext: v1) == "y")
    }
}
