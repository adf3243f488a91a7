import Foundation
import SealKit
import Testing

/// One user, one key: the rules that keep a second device from forking the user's key, and rotation's rules,
/// at the library, so a failure names the function. The CLI scripts (keys-generate, profile-encrypt) check the
/// wording and exit status once.
@Suite("Key fork and rotation rules")
struct KeyForkTests {
    static let schema = try! ProfileSchema(json: #"""
        {"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled"}},
                    "name": {"type": "string"},
                    "notes": {"type": "string", "encryption": {"state": "enabled"}},
                    "nickname": {"type": "string", "encryption": {"state": "enabled"}}}}
        """#)
    static let profile = #"{"ssn":"078-05-1120","name":"Ada","notes":"allergic"}"#

    /// Device 1's uploaded profile and its vault.
    static func uploaded(format: CiphertextFormat = .v1) throws -> (vault: Vault, json: String) {
        let device1 = Vault(keystore: try .inMemory(), user: try KeyID("alice"), format: format)
        try device1.ensureKey(existing: "{}")
        return (device1, try ProfileProcessor(.encrypt, schema: schema).process(profile, with: device1).json)
    }

    @Test(arguments: [CiphertextFormat.v1, .v2])
    func makeKeyRefusesWhenTheDataHoldsAnotherKeysCiphertextsAndStoresNothing(_ format: CiphertextFormat) throws {
        let (_, uploaded) = try Self.uploaded(format: format)
        let device2 = Vault(keystore: try .inMemory(), user: try KeyID("alice"), format: format)
        for schema in [nil, Self.schema] {
            do {
                try device2.makeKey(existing: uploaded, schema: schema)
                Issue.record("makeKey forked the user's key")
            } catch {
                #expect(error.reason == .keyElsewhere)
                #expect(error.description.contains("sealkit transfer receive") || error.description.contains("a key this keystore does not have"),
                        "\(error.description)")
            }
        }
        #expect(try device2.keystore.entry(for: KeyID("alice")) == nil, "a refused makeKey stored a key")
    }

    @Test func aProfileWithNoCiphertextGetsItsKeyAndASecondMakeIsRefused() throws {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID("alice"), format: .v1)
        let entry = try vault.makeKey(existing: Self.profile, schema: Self.schema)
        #expect(try vault.keystore.entry(for: KeyID("alice"))?.fingerprint == entry.fingerprint)
        #expect { try vault.makeKey(existing: "{}") } throws: { ($0 as? SealKitError)?.reason == .keyExists }
        #expect(try vault.keystore.entry(for: KeyID("alice"))?.fingerprint == entry.fingerprint)
    }

    /// A device that forked anyway (an older SealKit did) never seals device 1's values a second time;
    /// Rownd mode leaves such a value byte for byte.
    @Test func aForkedDeviceRefusesToSealTheOtherDevicesValuesAgain() throws {
        let (device1, uploaded) = try Self.uploaded()
        let forked = Vault(keystore: try .inMemory(), user: try KeyID("alice"), format: .v1)
        try forked.ensureKey(existing: "{}")
        var edited = try #require(try JSONSerialization.jsonObject(with: Data(uploaded.utf8)) as? [String: Any])
        let ssn = try #require(edited["ssn"] as? String)
        edited["notes"] = "allergic to penicillin"
        let editedText = String(decoding: try JSONSerialization.data(withJSONObject: edited), as: UTF8.self)
        do {
            _ = try ProfileProcessor(.encrypt, schema: Self.schema).process(editedText, with: forked)
            Issue.record("sealed a ciphertext a second time")
        } catch {
            #expect(error.description.contains("ssn"), "\(error.description)")
            #expect(error.description.contains("a key this keystore does not have"), "\(error.description)")
            #expect(!error.description.contains("078-05-1120"))
        }
        let rownd = try ProfileProcessor(.encrypt, schema: Self.schema, options: .init(asRownd: true)).process(editedText, with: forked)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(rownd.json.utf8)) as? [String: Any])
        #expect(object["ssn"] as? String == ssn, "Rownd mode changed a value it cannot open")
        guard case .notPossible(let error) = forked.encryptionStatus(existing: uploaded, schema: Self.schema) else {
            Issue.record("status says a forked device can encrypt")
            return
        }
        #expect(error.reason == .keyElsewhere)
        let fingerprint = try #require(try device1.keystore.entry(for: KeyID("alice"))).fingerprint
        #expect(device1.encryptionStatus(existing: uploaded, schema: Self.schema) == .possible(fingerprint))
    }

    /// A flagged field that fails mid-profile stops the whole profile: nothing is written, neither the fields
    /// before it sealed nor those after it in plaintext, and the values are never in the error.
    @Test(arguments: [CiphertextFormat.v1, .v2])
    func encryptionNeverFallsBackToPlaintextMidProfile(_ format: CiphertextFormat) throws {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID("alice"), format: format)
        try vault.ensureKey(existing: "{}")
        do {
            let out = try ProfileProcessor(.encrypt, schema: Self.schema).process(
                #"{"ssn":"078-05-1120","notes":42,"nickname":"Addie"}"#, with: vault)
            Issue.record("wrote a profile with a failed field: \(out.json.count) bytes")
        } catch {
            #expect(error.description.contains("notes"), "\(error.description)")
            #expect(!error.description.contains("078-05-1120") && !error.description.contains("Addie"))
        }
    }

    /// A v2 value opens only in the context it was sealed for; the empty context is a context too.
    @Test func v2OpensOnlyInItsContext() throws {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID("alice"), format: .v2)
        try vault.ensureKey(existing: "{}")
        let sealed = try vault.encrypt(plaintext: "IBAN DE89", context: "billing")
        #expect(sealed.hasPrefix("sk2:"))
        #expect(try vault.decrypt(ciphertext: sealed, context: "billing") == "IBAN DE89")
        for wrong in ["shipping", ""] {
            #expect { try vault.decrypt(ciphertext: sealed, context: wrong) } throws: {
                ($0 as? SealKitError)?.reason == .wrongPlace
            }
        }
        #expect(try vault.decrypt(ciphertext: vault.encrypt(plaintext: "x")) == "x")
    }

    /// Rotation: a new current key, the old kept retired so older values open; rotating twice keeps both;
    /// rotating a user with no key makes none.
    @Test func rotationKeepsEveryRetiredKeyAndMakesNoneForAMissingUser() throws {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID("r"), format: .v1)
        let first = try vault.ensureKey(existing: "{}")
        let old = try vault.encrypt(plaintext: "before")
        let second = try vault.rotateKey()
        let middle = try vault.encrypt(plaintext: "middle")
        let third = try vault.rotateKey()
        #expect(third.retiredFingerprints == [second.fingerprint, first.fingerprint] || third.retiredFingerprints == [first.fingerprint, second.fingerprint])
        #expect(Set([first.fingerprint, second.fingerprint, third.fingerprint]).count == 3)
        #expect(try vault.decrypt(ciphertext: old) == "before")
        #expect(try vault.decrypt(ciphertext: middle) == "middle")
        #expect(try vault.inspect(ciphertext: vault.encrypt(plaintext: "after")).keyFingerprint == third.fingerprint)

        let empty = Vault(keystore: try .inMemory(), user: try KeyID("nobody"), format: .v1)
        #expect { try empty.rotateKey() } throws: { ($0 as? SealKitError)?.reason == .keyNotFound }
        #expect(try empty.keystore.entry(for: KeyID("nobody")) == nil)
    }

    /// `café` typed as NFC and as NFD is one id: one key, reachable by both spellings, in memory and on disk (where
    /// the file's name is derived from the id's bytes).
    @Test(arguments: [false, true])
    func theTwinOfAnIDIsTheSameID(onDisk: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-twin-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let keystore = onDisk ? try Keystore(directory: folder.path) : try Keystore.inMemory()
        let nfd = Vault(keystore: keystore, user: try KeyID("cafe\u{301}"), format: .v1)
        let nfc = Vault(keystore: keystore, user: try KeyID("caf\u{E9}"), format: .v1)
        try nfd.ensureKey(existing: "{}")
        #expect { try nfc.makeKey(existing: "{}") } throws: { ($0 as? SealKitError)?.reason == .keyExists }
        #expect(try nfd.decrypt(ciphertext: nfc.encrypt(plaintext: "x")) == "x")
        #expect(Array(nfd.user.description.utf8) == Array("caf\u{E9}".utf8) || nfd.user == nfc.user)
    }
}
