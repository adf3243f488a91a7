import Foundation
// The public API, as an app sees it; the JSON types only to edit profiles as a server would.
@_spi(CLI) import SealKit
import Testing

/// Profile seals and rollback detection through the library: each attack a server can
/// make on a stored profile is refused with its own reason.
@Suite("Profile seals (Vault)")
struct ProfileSealTests {
    static let schemaText = """
        {"schema": {"name": {"type": "string"},
                    "ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
                    "notes": {"type": "string", "encryption": {"state": "enabled"}},
                    "salary": {"type": "number", "encryption": {"state": "enabled"}}},
         "sealkit": {"seal": true}}
        """
    static let schema = try! ProfileSchema(json: schemaText)
    /// The operations on the sealing schema, each prepared once, as an app prepares them.
    static let encrypting = try! ProfileProcessor(.encrypt, schema: schema)
    static let decrypting = try! ProfileProcessor(.decrypt, schema: schema)
    static let rotating = try! ProfileProcessor(.rotate, schema: schema)
    /// Encryption that seals a profile without a seal on purpose: where the record holds the id, a new profile too.
    static let resealing = try! ProfileProcessor(.encrypt, schema: schema, options: .init(resealing: true))
    /// Decryption that reads a conflicting write on purpose, to merge it.
    static let merging = try! ProfileProcessor(.decrypt, schema: schema, options: .init(acceptingConflict: true))

    static func vault(_ user: String = "alice", keystore: Keystore? = nil) throws -> Vault {
        let vault = Vault(keystore: try keystore ?? .inMemory(), user: try KeyID(user), format: .v2)
        try vault.ensureKey(existing: "{}")
        return vault
    }

    static func object(_ json: String) throws -> [String: JSONValue] {
        guard case .object(let members) = try JSONValue.parse(json) else { return [:] }
        return Dictionary(members, uniquingKeysWith: { $1 })
    }

    /// `json` with member `name` set to `value` (nil removes it).
    static func replacing(_ json: String, _ name: String, with value: JSONValue?) throws -> String {
        var profile = try JSONValue.parse(json)
        profile[name] = value
        return profile.serialized()
    }

    static func refusal(_ body: () throws -> Void) -> SealKitError? {
        do {
            try body()
            return nil
        } catch {
            return error as? SealKitError
        }
    }

    @Test func theSchemaAsksForTheSeal() throws {
        #expect(Self.schema.asksForSeal)
        #expect(try !ProfileSchema(json: #"{"schema": {"a": {"encryption": {"state": "enabled"}}}}"#).asksForSeal)
        #expect(try ProfileSchema(json: #"{"app": {"schema": {"a": {}}, "sealkit": {"seal": true}}}"#).asksForSeal)
        #expect(throws: SealKitError.self) { try ProfileSchema(json: #"{"schema": {"a": {}}, "sealkit": {"seal": "yes"}}"#) }
        #expect(throws: SealKitError.self) {
            try ProfileSchema(json: #"{"schema": {"sealkit_seal": {}}, "sealkit": {"seal": true}}"#)
        }
    }

    @Test func writesAndVerifiesVersions() throws {
        let vault = try Self.vault()
        let first = try Self.encrypting.process(#"{"name": "Alice", "ssn": "078-05-1120", "notes": "n1", "salary": 5}"#, with: vault).json
        #expect(try Self.object(first)["sealkit_seal"]?.stringValue?.hasPrefix("sks2:") == true)
        let opened = try Self.decrypting.process(first, with: vault)
        #expect(opened.sealVersion == 1)
        #expect(try Self.object(opened.json)["ssn"] == "078-05-1120")
        // Re-encrypting the decrypted profile takes the next version.
        let second = try Self.encrypting.process(try Self.replacing(opened.json, "ssn", with: "111-22-3333"), with: vault).json
        #expect(try Self.decrypting.process(second, with: vault).sealVersion == 2)
        // A schema that does not ask behaves as before: no seal written, none needed.
        let plainSchema = try ProfileSchema(json: Self.schemaText.replacingOccurrences(of: "\"seal\": true", with: "\"seal\": false"))
        let plain = try ProfileProcessor(.encrypt, schema: plainSchema).process(#"{"ssn": "x"}"#, with: vault).json
        #expect(try Self.object(plain)["sealkit_seal"] == nil)
        #expect(try ProfileProcessor(.decrypt, schema: plainSchema).process(plain, with: vault).sealVersion == nil)
    }

    /// Encrypting a sealed profile as the server holds it checks its seal first (found by the review of this
    /// wave): before, a field rolled back, another user's seal or a whole older profile came out with a fresh,
    /// valid seal, which `decrypt` then accepted.
    @Test func encryptingASealedProfileChecksItsSealFirst() throws {
        let keystore = try Keystore.inMemory()
        let vault = try Self.vault(keystore: keystore)
        let v1 = try Self.encrypting.process(#"{"name": "Alice", "ssn": "078-05-1120", "notes": "n1", "salary": 5}"#, with: vault).json
        let edited = try Self.replacing(try Self.decrypting.process(v1, with: vault).json, "ssn", with: "111-22-3333")
        let v2 = try Self.encrypting.process(edited, with: vault).json
        // A field rolled back to its v1 ciphertext, then "re-encrypted": refused, not laundered.
        let rolled = try Self.replacing(v2, "ssn", with: try Self.object(v1)["ssn"])
        #expect(Self.refusal { _ = try Self.encrypting.process(rolled, with: vault).json }?.reason == .sealMismatch)
        // The whole older profile: refused as older than what this device wrote.
        #expect(Self.refusal { _ = try Self.encrypting.process(v1, with: vault).json }?.reason == .sealRolledBack)
        // Another user's seal on this user's fields.
        let bob = try Self.vault("bob", keystore: keystore)
        let bobs = try Self.encrypting.process(#"{"ssn": "999-99-9999"}"#, with: bob).json
        let swapped = try Self.replacing(v2, "sealkit_seal", with: try Self.object(bobs)["sealkit_seal"])
        #expect(Self.refusal { _ = try Self.encrypting.process(swapped, with: vault).json }?.reason == .sealMismatch)
        // What apps do stays open: the intact profile encrypts again (keeping its seal: its flagged fields did not
        // change, so no version is minted), and an edit of the decrypted latest one, whose output keeps the seal,
        // takes the next version.
        let again = try Self.encrypting.process(v2, with: vault).json
        #expect(try Self.object(again)["sealkit_seal"] == Self.object(v2)["sealkit_seal"])
        #expect(try Self.decrypting.process(again, with: vault).sealVersion == 2)
        let latest = try Self.decrypting.process(again, with: vault).json
        let next = try Self.encrypting.process(try Self.replacing(latest, "notes", with: "n2"), with: vault).json
        #expect(try Self.decrypting.process(next, with: vault).sealVersion == 3)
        // An edit of a decrypted older profile (its seal older than this device wrote) is refused too.
        let stale = try Self.replacing(try Self.replacing(v1, "ssn", with: "123-45-6789"), "notes", with: "n9")
        #expect(Self.refusal { _ = try Self.encrypting.process(stale, with: vault).json }?.reason == .sealRolledBack)
    }

    /// A misspelt seal setting would turn seals off without a word: refused (found by the review of this wave).
    @Test func aMisspeltSealSettingIsRefused() throws {
        for text in [
            #"{"schema": {"a": {}}, "sealkit": {"Seal": true}}"#, #"{"schema": {"a": {}}, "sealkit": {"seals": true}}"#,
            #"{"schema": {"a": {}}, "sealkit": {"SEAL": true}}"#, #"{"schema": {"a": {}}, "sealKit": {"seal": true}}"#,
            #"{"schema": {"a": {}}, "Sealkit": {"seal": true}}"#, #"{"app": {"schema": {"a": {}}, "sealkt": {"seal": true}}}"#,
        ] {
            #expect(throws: SealKitError.self, "\(text)") { try ProfileSchema(json: text) }
        }
        #expect(try ProfileSchema(json: #"{"schema": {"a": {}}, "sealkit": {"seal": true, "undeclared": "error"}}"#).asksForSeal)
    }

    @Test func eachAttackIsRefusedWithItsOwnReason() throws {
        let vault = try Self.vault()
        let v1 = try Self.encrypting.process(#"{"name": "Alice", "ssn": "078-05-1120", "notes": "n1", "salary": null}"#, with: vault).json
        let v1Fields = try Self.object(v1)
        let v2 = try Self.encrypting.process(try Self.replacing(try Self.decrypting.process(v1, with: vault).json, "ssn", with: "111-22-3333"), with: vault).json
        #expect(try Self.decrypting.process(v2, with: vault).sealVersion == 2)

        // A field rolled back: v1's ssn ciphertext (valid for this user and field) inside v2.
        let rolledBack = try Self.replacing(v2, "ssn", with: v1Fields["ssn"])
        #expect(Self.refusal { _ = try Self.decrypting.process(rolledBack, with: vault) }?.reason == .sealMismatch)
        // A field dropped, a field added, a null field dropped.
        #expect(Self.refusal { _ = try Self.decrypting.process(try Self.replacing(v2, "notes", with: JSONValue?.none), with: vault) }?.reason == .sealMismatch)
        #expect(Self.refusal { _ = try Self.decrypting.process(try Self.replacing(v2, "salary", with: JSONValue?.none), with: vault) }?.reason == .sealMismatch)
        let added = try Self.replacing(v2, "salary", with: try Self.object(Self.resealing.process(#"{"salary": 9}"#, with: vault).json)["salary"])
        #expect(Self.refusal { _ = try Self.decrypting.process(added, with: vault) }?.reason == .sealMismatch)
        // The seal removed.
        let unsealed = try Self.replacing(v2, "sealkit_seal", with: JSONValue?.none)
        let missing = Self.refusal { _ = try Self.decrypting.process(unsealed, with: vault) }
        #expect(missing?.reason == .sealMissing)
        #expect(missing?.description.contains("missing") == true)
        // The whole older profile served again.
        let older = Self.refusal { _ = try Self.decrypting.process(v1, with: vault) }
        #expect(older?.reason == .sealRolledBack)
        #expect(older?.description.contains("older than version") == true, "\(older?.description ?? "")")
        // Rotating a rolled-back profile is refused too.
        #expect(Self.refusal { _ = try Self.rotating.process(v1, with: vault) }?.reason == .sealRolledBack)
    }

    @Test func anotherUsersSealDoesNotMatch() throws {
        let keystore = try Keystore.inMemory()
        let alice = try Self.vault("alice", keystore: keystore)
        let bob = try Self.vault("bob", keystore: keystore)
        // Bob's whole profile, seal and all, served as Alice's.
        let sealedForBob = try Self.encrypting.process(#"{"notes": "his"}"#, with: bob).json
        #expect(Self.refusal { _ = try Self.decrypting.process(sealedForBob, with: alice) }?.reason == .sealMismatch)
        // Alice's own profile with Bob's seal in it.
        let hers = try Self.encrypting.process(#"{"notes": "hers"}"#, with: alice).json
        let swapped = try Self.replacing(hers, "sealkit_seal", with: try Self.object(sealedForBob)["sealkit_seal"])
        #expect(Self.refusal { _ = try Self.decrypting.process(swapped, with: alice) }?.reason == .sealMismatch)
        #expect(try Self.decrypting.process(hers, with: alice).sealVersion == 1)
    }

    @Test func rotationKeepsSealsReadableAndReseals() throws {
        let vault = try Self.vault()
        let v1 = try Self.encrypting.process(#"{"ssn": "078-05-1120", "notes": "n"}"#, with: vault).json
        try vault.rotateKey()
        // Sealed by the retired key: still verifies.
        let read = try Self.decrypting.process(v1, with: vault)
        #expect(read.sealVersion == 1 && read.fieldsUnderRetiredKeys == ["ssn", "notes"])
        let rotated = try Self.rotating.process(v1, with: vault)
        #expect(rotated.sealVersion == 2 && rotated.rotatedFields == ["ssn", "notes"])
        #expect(try Self.decrypting.process(rotated.json, with: vault).fieldsUnderRetiredKeys.isEmpty)
        // And the profile before rotation is now older.
        #expect(Self.refusal { _ = try Self.decrypting.process(v1, with: vault) }?.reason == .sealRolledBack)
    }

    /// Two devices with the same key write at once: the next read fails as a conflicting write on
    /// the device whose write lost, and the documented resolution (re-read each, merge, write a
    /// version higher than both) is accepted everywhere.
    @Test func twoDevicesWritingAtOnceConflictAndTheResolutionSucceeds() throws {
        let phone = try Self.vault()
        let laptopStore = try Keystore.inMemory()
        _ = try laptopStore.importKeys(try phone.keystore.exportKeys([phone.user], passphrase: nil), passphrase: nil)
        let laptop = Vault(keystore: laptopStore, user: phone.user, format: .v2)

        let base = try Self.encrypting.process(#"{"ssn": "1", "notes": "base"}"#, with: phone).json
        let baseText = try Self.decrypting.process(base, with: laptop).json
        #expect(try Self.decrypting.process(base, with: phone).sealVersion == 1)
        // Both edit version 1 and write version 2.
        let fromPhone = try Self.encrypting.process(try Self.replacing(baseText, "notes", with: "phone"), with: phone).json
        let fromLaptop = try Self.encrypting.process(try Self.replacing(baseText, "ssn", with: "2"), with: laptop).json
        // The server keeps the laptop's; the phone reads it.
        let conflict = Self.refusal { _ = try Self.decrypting.process(fromLaptop, with: phone) }
        #expect(conflict?.reason == .sealConflict, "\(String(describing: conflict))")
        #expect(conflict?.description.contains("conflicting write") == true)
        // Resolution: the phone reads the server's copy on purpose, merges its own change, and
        // encrypts the result (the server's seal in it): version 3, higher than both.
        let theirs = try Self.merging.process(fromLaptop, with: phone)
        #expect(theirs.sealVersion == 2)
        let mine = try Self.object(try Self.decrypting.process(fromLaptop, with: laptop).json)
        #expect(mine["ssn"] == "2")
        let merged = try Self.replacing(theirs.json, "notes", with: "phone")
        let resolved = try Self.encrypting.process(merged, with: phone).json
        #expect(try Self.decrypting.process(resolved, with: phone).sealVersion == 3)
        let onLaptop = try Self.decrypting.process(resolved, with: laptop)
        #expect(onLaptop.sealVersion == 3)
        #expect(try Self.object(onLaptop.json)["ssn"] == "2" && Self.object(onLaptop.json)["notes"] == "phone")
        // The phone's own version 2 is now the conflicting one; an older seal is refused even on purpose.
        #expect(Self.refusal { _ = try Self.decrypting.process(fromPhone, with: phone) }?.reason == .sealRolledBack)
        #expect(Self.refusal { _ = try Self.merging.process(base, with: laptop) }?.reason == .sealRolledBack)
    }

    /// A write whose profile never left (a kill after the version was recorded and before the profile was
    /// handed out, or an upload that failed) is retried from the same edit, and the retry is accepted (the
    /// CI run of the last wave found the CLI refusing it when the kill landed in that window). The edit of the
    /// version before stays acceptable only until a read confirms a newer one; the profile before stays refused.
    @Test func aWriteThatNeverLeftIsRetriedFromTheSameEdit() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealtest-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for keystore in [try Keystore.inMemory(), try Keystore(directory: folder)] {
            let vault = try Self.vault(keystore: keystore)
            let v1 = try Self.encrypting.process(#"{"ssn": "1", "notes": "base"}"#, with: vault).json
            let edit = try Self.replacing(try Self.decrypting.process(v1, with: vault).json, "ssn", with: "2")
            _ = try Self.encrypting.process(edit, with: vault).json  // version 2, recorded, never handed out
            let retried = try Self.encrypting.process(edit, with: vault).json
            #expect(try Self.decrypting.process(retried, with: vault).sealVersion == 3)
            #expect(Self.refusal { _ = try Self.decrypting.process(v1, with: vault) }?.reason == .sealRolledBack)
            // Version 3 was read back: an edit of version 1 is now stale, and refused.
            #expect(Self.refusal { _ = try Self.encrypting.process(edit, with: vault).json }?.reason == .sealRolledBack)
            // Until version 4, written over 3, is read back, another edit of 3 is taken as a retry of that write;
            // an edit of anything older than 3 is not.
            let three = try Self.decrypting.process(retried, with: vault).json
            _ = try Self.encrypting.process(try Self.replacing(three, "notes", with: "4"), with: vault).json
            #expect(Self.refusal { _ = try Self.encrypting.process(edit, with: vault).json }?.reason == .sealRolledBack)
            let again = try Self.encrypting.process(try Self.replacing(three, "notes", with: "4 again"), with: vault).json
            #expect(try Self.decrypting.process(again, with: vault).sealVersion == 5)
        }
    }

    /// A write of a profile without a seal (a new one) opens no window onto older versions: before, it recorded
    /// "written over 0", and then a server's profile of any older version, with one field in plaintext, was
    /// sealed as new (found by the review of this change).
    @Test func aNewProfileOpensNoWindowOntoOlderVersions() throws {
        let vault = try Self.vault()
        let v1 = try Self.encrypting.process(#"{"ssn": "OLD", "notes": "n"}"#, with: vault).json
        let v2 = try Self.encrypting.process(try Self.replacing(try Self.decrypting.process(v1, with: vault).json, "ssn", with: "NEW"), with: vault).json
        #expect(try Self.decrypting.process(v2, with: vault).sealVersion == 2)
        _ = try Self.resealing.process(#"{"notes": "fresh"}"#, with: vault).json
        let oldEdit = try Self.replacing(v1, "notes", with: "x")
        #expect(Self.refusal { _ = try Self.encrypting.process(oldEdit, with: vault).json }?.reason == .sealRolledBack)
        // A record that cannot be read or written keeps the keystore's error beneath, for an app (and the command)
        // to word its remedy from.
        let busy = SealKitError(KeystoreError.lockTimeout(path: "/k/.lock", seconds: 10))
        let unrecorded = SealKitError(ProfileError.seal(.unrecorded("cannot read", cause: busy)))
        #expect(unrecorded.reason == .fileSystem && unrecorded.underlying == busy && unrecorded.underlying?.detail == .lockTimedOut)
    }

    /// Two vaults (two processes of one app, say) on one keystore folder: each write takes a version above
    /// the other's latest, read from the record, not from what the vault saw before; the record is 0600.
    @Test func writesReadTheRecordAgainAndItIsTheKeystoresOwnFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealtest-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try Self.vault(keystore: try Keystore(directory: folder))
        let second = Vault(keystore: try Keystore(directory: folder), user: first.user, format: .v2)
        let a = try Self.encrypting.process(#"{"notes": "a"}"#, with: first).json
        #expect(try Self.decrypting.process(a, with: first).sealVersion == 1)
        let b = try Self.resealing.process(#"{"notes": "b"}"#, with: second).json
        #expect(try Self.decrypting.process(b, with: second).sealVersion == 2)
        let c = try Self.resealing.process(#"{"notes": "c"}"#, with: first).json
        #expect(try Self.decrypting.process(c, with: first).sealVersion == 3)
        #expect(Self.refusal { _ = try Self.decrypting.process(b, with: second) }?.reason == .sealRolledBack)
        let records = try FileManager.default.contentsOfDirectory(atPath: folder + "/default").filter { $0.hasSuffix(".seal") }
        try #require(records.count == 1, "\(records)")
        let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/default/" + records[0])
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // The record names the key that made the seal it holds (16 hex digits), then version 3.
        #expect(try String(contentsOfFile: folder + "/default/" + records[0], encoding: .utf8).contains(#/^sealkit-seal-mark 2 [0-9a-f]{16} 3 [0-9a-f]{64}\n$/#))
        // A damaged record is an error naming it, never read as "nothing seen".
        try Data("sealkit-seal-mark 1 x\n".utf8).write(to: URL(fileURLWithPath: folder + "/default/" + records[0]))
        let fresh = Vault(keystore: try Keystore(directory: folder), user: first.user, format: .v2)
        let damaged = Self.refusal { _ = try Self.decrypting.process(c, with: fresh) }
        #expect(damaged?.reason == .fileSystem)
        #expect(damaged?.description.contains(records[0]) == true, "\(damaged?.description ?? "")")
    }

    @Test func rowndModeRefusesASchemaThatAsksForSeals() throws {
        #expect(throws: SealKitError.self) { try ProfileProcessor(.encrypt, schema: Self.schema, options: .init(asRownd: true)) }
        do {
            _ = try ProfileProcessor(.decrypt, schema: Self.schema, options: .init(asRownd: true))
        } catch {
            #expect(error.reason == .invalidArgument)
        }
    }

    @Test func linesOfManyProfilesAreSealedButTrackNoVersion() throws {
        let vault = try Self.vault()
        let encrypting = try ProfileProcessor(.encrypt, schema: Self.schema)
        let decrypting = try ProfileProcessor(.decrypt, schema: Self.schema)
        var lines: [[UInt8]] = []
        for text in [#"{"notes": "a"}"#, #"{"notes": "b"}"#] {
            var output: [UInt8] = []
            let outcome = try Array(text.utf8).withUnsafeBufferPointer {
                try encrypting.process($0, with: vault, line: 1, appendingTo: &output)
            }
            #expect(outcome?.sealVersion == 1)
            lines.append(output)
        }
        for line in lines {
            var output: [UInt8] = []
            _ = try line.withUnsafeBufferPointer { try decrypting.process($0, with: vault, line: 1, appendingTo: &output) }
        }
        // A line without its seal is still refused.
        let unsealed = Array(try Self.replacing(String(decoding: lines[0], as: UTF8.self), "sealkit_seal", with: JSONValue?.none).utf8)
        var output: [UInt8] = []
        #expect(throws: SealKitError.self) {
            _ = try unsealed.withUnsafeBufferPointer { try decrypting.process($0, with: vault, line: 3, appendingTo: &output) }
        }
    }
}
