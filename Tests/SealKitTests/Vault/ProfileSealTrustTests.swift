import Foundation
@_spi(CLI) import SealKit
import Testing

/// What a sealed write takes from its input, and what a record belongs to, through the library: a server that
/// changes a stored profile cannot have a device seal the change as new, a profile cannot move its fields out of
/// `data` under its seal, and a new key for an id starts a history of its own.
@Suite("Profile seals: what a write trusts (Vault)")
struct ProfileSealTrustTests {
    typealias Seals = ProfileSealTests

    /// Version 1 and 2 of a profile, both written here: the record holds version 2.
    static func twoVersions(_ vault: Vault) throws -> (v1: String, v2: String) {
        let v1 = try Seals.encrypting.process(#"{"name": "Ada", "ssn": "078-05-1120", "notes": "n1", "salary": null}"#, with: vault).json
        let edited = try Seals.replacing(try Seals.decrypting.process(v1, with: vault).json, "ssn", with: "111-22-3333")
        let v2 = try Seals.encrypting.process(edited, with: vault).json
        #expect(try Seals.decrypting.process(v2, with: vault).sealVersion == 2)
        return (v1, v2)
    }

    /// A seal with the user's key tag (which every seal shows) and a version and MAC the server chose.
    static func forgedSeal(like profile: String, version: UInt64) throws -> JSONValue {
        let text = try #require(try Seals.object(profile)["sealkit_seal"]?.stringValue)
        let real = try #require(ProfileSeal(parsing: text))
        var mac = [UInt8](repeating: 0, count: 32)
        for index in mac.indices { mac[index] = UInt8.random(in: 0...255) }
        return .string(ProfileSeal(keyTag: real.keyTag, version: version, mac: mac).text)
    }

    /// The profiles a server serves to have them sealed again: each one refused by decrypt.
    static func serverChanges(_ vault: Vault, v1: String, v2: String) throws -> [(name: String, profile: String, reason: SealKitError.Reason)] {
        let v1Fields = try Seals.object(v1)
        // A: v2's seal over v1's ssn, and a plaintext notes the server chose.
        let a = try Seals.replacing(try Seals.replacing(v2, "ssn", with: v1Fields["ssn"]), "notes", with: "the server's")
        // B: v1 with its seal removed.
        let b = try Seals.replacing(v1, "sealkit_seal", with: JSONValue?.none)
        // C: v1 with a forged seal of the highest version but one, and one field in plaintext (the weak path), or all.
        let forged = try forgedSeal(like: v2, version: UInt64.max - 1)
        let c = try Seals.replacing(try Seals.replacing(v1, "sealkit_seal", with: forged), "notes", with: "the server's")
        let decrypted = try Seals.decrypting.process(v2, with: vault).json
        let cPlain = try Seals.replacing(decrypted, "sealkit_seal", with: forged)
        return [("A", a, .sealMismatch), ("B", b, .sealMissing), ("C", c, .sealMismatch), ("C, all in plaintext", cPlain, .sealMismatch)]
    }

    /// Finding 1: each server-changed profile is refused by encrypt, with the reason decrypt gives, and changes
    /// nothing: the stored v2 still reads as version 2, and the next honest write takes version 3.
    @Test func aProfileTheServerChangedIsNotSealedAgain() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealtrust-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for keystore in [try Keystore.inMemory(), try Keystore(directory: folder)] {
            let vault = try Seals.vault(keystore: keystore)
            let (v1, v2) = try Self.twoVersions(vault)
            for (name, profile, reason) in try Self.serverChanges(vault, v1: v1, v2: v2) {
                #expect(Seals.refusal { _ = try Seals.decrypting.process(profile, with: vault) } != nil, "\(name): decrypt accepted it")
                let refused = Seals.refusal { _ = try Seals.encrypting.process(profile, with: vault).json }
                #expect(refused?.reason == reason, "\(name): \(String(describing: refused))")
                #expect(refused?.description.contains("078-05-1120") == false)
            }
            let fresh = Vault(keystore: keystore, user: vault.user, format: .v2)
            #expect(try Seals.decrypting.process(v2, with: fresh).sealVersion == 2)
            let next = try Seals.encrypting.process(try Seals.replacing(try Seals.decrypting.process(v2, with: fresh).json, "notes", with: "n3"), with: fresh)
            #expect(next.sealVersion == 3)
        }
    }

    /// Finding 1, B's legitimate case: a stored profile without a seal is sealed when the caller asks on purpose;
    /// a device with no record seals it as before, without asking.
    @Test func resealingIsOnPurpose() throws {
        let vault = try Seals.vault()
        let (v1, _) = try Self.twoVersions(vault)
        let unsealed = try Seals.replacing(v1, "sealkit_seal", with: JSONValue?.none)
        let resealing = try ProfileProcessor(.encrypt, schema: Seals.schema, options: .init(resealing: true))
        let resealed = try resealing.process(unsealed, with: vault)
        #expect(resealed.sealVersion == 3)
        #expect(try Seals.decrypting.process(resealed.json, with: vault).sealVersion == 3)
        // Without a record here, nothing to ask.
        let elsewhere = Vault(keystore: try Keystore.inMemory(), user: vault.user, format: .v2)
        _ = try elsewhere.keystore.importKeys(try vault.keystore.exportKeys([vault.user], passphrase: nil), passphrase: nil)
        #expect(try Seals.encrypting.process(unsealed, with: elsewhere).sealVersion == 1)
        // It goes with encryption only.
        #expect(throws: SealKitError.self) { try ProfileProcessor(.decrypt, schema: Seals.schema, options: .init(resealing: true)) }
    }

    /// Finding 3: moving every flagged field from `data` to the top level (and `data` to null) breaks the seal;
    /// a profile that keeps them where they were still reads.
    @Test func theSealBindsWhereTheFieldsSit() throws {
        let vault = try Seals.vault()
        let stored = try Seals.encrypting.process(
            #"{"id": "ada", "data": {"name": "Ada", "ssn": "078-05-1120", "notes": "n1", "salary": 5}}"#, with: vault).json
        #expect(try Seals.decrypting.process(stored, with: vault).sealVersion == 1)
        var moved = try Seals.object(stored)
        let data = try #require(moved["data"]?.objectValue)
        for (name, value) in data where name != "name" { moved[name] = value }
        moved["data"] = .null
        var profile = JSONValue.object([])
        for (name, value) in moved.sorted(by: { $0.key < $1.key }) { profile[name] = value }
        let refused = Seals.refusal { _ = try Seals.decrypting.process(profile.serialized(), with: vault) }
        #expect(refused?.reason == .sealMismatch, "\(String(describing: refused))")
    }

    /// The smaller finding on names: a server that re-spells a flagged member NFD <-> NFC keeps every field opening
    /// (v2 binds the schema's spelling), and now the seal too.
    @Test func aMemberReSpeltInAnotherNormalFormKeepsItsSeal() throws {
        let schema = try ProfileSchema(json: """
            {"schema": {"caf\u{00E9}": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}}},
             "sealkit": {"seal": true}}
            """)
        let encrypting = try ProfileProcessor(.encrypt, schema: schema)
        let decrypting = try ProfileProcessor(.decrypt, schema: schema)
        let vault = try Seals.vault()
        let stored = try encrypting.process(#"{"cafe\#u{0301}": "au lait"}"#, with: vault).json
        let value = try #require(try Seals.object(stored).first { $0.key.unicodeScalars.count == 5 }?.value)
        // The server re-spells the member in NFC.
        let respelt = try Seals.replacing(try Seals.replacing(stored, "cafe\u{0301}", with: JSONValue?.none), "caf\u{00E9}", with: value)
        #expect(try Seals.object(respelt).keys.contains { $0.unicodeScalars.count == 4 })
        let read = try decrypting.process(respelt, with: vault)
        #expect(read.sealVersion == 1)
    }

    /// Finding 4: a record belongs to the key that made it. After the key is deleted and a new one made for the id
    /// on another device arrives here, that key's first profile (version 1) reads; a rollback under the new key is
    /// refused, and a profile of the old key no longer verifies.
    @Test func aNewKeyForTheIdStartsItsOwnHistory() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealtrust-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for here in [try Keystore.inMemory(), try Keystore(directory: folder)] {
            let vault = try Seals.vault(keystore: here)
            var latest = try Seals.encrypting.process(#"{"notes": "1"}"#, with: vault).json
            for version in 2...4 {
                latest = try Seals.encrypting.process(try Seals.replacing(try Seals.decrypting.process(latest, with: vault).json, "notes", with: .string("\(version)")), with: vault).json
            }
            #expect(try Seals.decrypting.process(latest, with: vault).sealVersion == 4)
            try vault.deleteKey()
            // Another device makes the id's new key and writes its first profile.
            let other = try Seals.vault(keystore: try Keystore.inMemory())
            let first = try Seals.encrypting.process(#"{"notes": "new 1"}"#, with: other).json
            _ = try here.importKeys(try other.keystore.exportKeys([other.user], passphrase: nil), passphrase: nil)
            let again = Vault(keystore: here, user: vault.user, format: .v2)
            var version: UInt64?
            let read = Seals.refusal { version = try Seals.decrypting.process(first, with: again).sealVersion }
            #expect(read == nil, "\(String(describing: read))")
            #expect(version == 1)
            let second = try Seals.encrypting.process(try Seals.replacing(try Seals.decrypting.process(first, with: other).json, "notes", with: "new 2"), with: other).json
            #expect(try Seals.decrypting.process(second, with: again).sealVersion == 2)
            #expect(Seals.refusal { _ = try Seals.decrypting.process(first, with: again) }?.reason == .sealRolledBack)
            #expect(Seals.refusal { _ = try Seals.decrypting.process(latest, with: again) }?.reason == .sealMismatch)
        }
    }

    /// The smaller finding on the rollback message: a device that never wrote is not told a write of its own may
    /// be lost; one that did write is.
    @Test func theRollbackMessageBlamesNoWriteOnADeviceThatNeverWrote() throws {
        let phone = try Seals.vault()
        let (v1, v2) = try Self.twoVersions(phone)
        let laptopStore = try Keystore.inMemory()
        _ = try laptopStore.importKeys(try phone.keystore.exportKeys([phone.user], passphrase: nil), passphrase: nil)
        let laptop = Vault(keystore: laptopStore, user: phone.user, format: .v2)
        #expect(try Seals.decrypting.process(v2, with: laptop).sealVersion == 2)
        let readOnly = Seals.refusal { _ = try Seals.decrypting.process(v1, with: laptop) }
        #expect(readOnly?.reason == .sealRolledBack)
        #expect(readOnly?.description.contains("write of this device") == false, "\(readOnly?.description ?? "")")
        // The phone wrote version 3 and has not read it back: there a lost write is a likely cause.
        _ = try Seals.encrypting.process(try Seals.replacing(try Seals.decrypting.process(v2, with: phone).json, "notes", with: "n3"), with: phone)
        let wrote = Seals.refusal { _ = try Seals.decrypting.process(v2, with: phone) }
        #expect(wrote?.description.contains("a newer write of this device was not saved") == true, "\(wrote?.description ?? "")")
    }

    /// Finding 2: a schema without the seal setting, on a device whose record holds the id, says so.
    @Test func aSchemaWithoutTheSealSettingSaysSoWhereTheRecordHoldsTheId() throws {
        let vault = try Seals.vault()
        let (v1, _) = try Self.twoVersions(vault)
        // The same fields, as Rownd's app config serves them: no "sealkit" member.
        let unsealing = try ProfileSchema(json: """
            {"schema": {"name": {"type": "string"},
                        "ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
                        "notes": {"type": "string", "encryption": {"state": "enabled"}},
                        "salary": {"type": "number", "encryption": {"state": "enabled"}}}}
            """)
        let decrypting = try ProfileProcessor(.decrypt, schema: unsealing)
        let rolledBack = try decrypting.process(v1, with: vault)
        #expect(rolledBack.warnings.count == 1)
        #expect(rolledBack.warnings.first?.contains("does not ask for profile seals") == true)
        #expect(rolledBack.warnings.first?.contains("version 2") == true)
        #expect(try ProfileProcessor(.encrypt, schema: unsealing).process(#"{"notes": "x"}"#, with: vault).warnings.count == 1)
        // A device with no record of the id is told nothing.
        let other = try Seals.vault("bob")
        #expect(try ProfileProcessor(.encrypt, schema: unsealing).process(#"{"notes": "x"}"#, with: other).warnings.isEmpty)
    }

    /// The smaller finding on the record's safety: a record readable by others, or a link, is refused as a key
    /// file is (`unsafeFile`, exit 77), not as a damaged one.
    @Test func anUnsafeRecordIsRefusedAsAKeyFileIs() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealtrust-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let vault = try Seals.vault(keystore: try Keystore(directory: folder))
        let (_, v2) = try Self.twoVersions(vault)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder + "/default").filter { $0.hasSuffix(".seal") }
        let record = folder + "/default/" + (try #require(names.first))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: record)
        let open = Seals.refusal { _ = try Seals.decrypting.process(v2, with: Vault(keystore: try Keystore(directory: folder), user: vault.user, format: .v2)) }
        #expect(open?.reason == .unsafeFile, "\(String(describing: open))")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: record)
        try FileManager.default.moveItem(atPath: record, toPath: folder + "/elsewhere.seal")
        try FileManager.default.createSymbolicLink(atPath: record, withDestinationPath: folder + "/elsewhere.seal")
        let linked = Seals.refusal { _ = try Seals.decrypting.process(v2, with: Vault(keystore: try Keystore(directory: folder), user: vault.user, format: .v2)) }
        #expect(linked?.reason == .unsafeFile, "\(String(describing: linked))")
    }

    /// A profile as a line of many (`line:` given): the JSON appended to a buffer, and the outcome.
    static func processLine(_ processor: ProfileProcessor, _ profile: String, with vault: Vault) throws -> (json: String, outcome: ProfileOutcome?) {
        var output: [UInt8] = []
        let bytes = Array(profile.utf8)
        let outcome = try bytes.withUnsafeBufferPointer { try processor.process($0, with: vault, line: 1, appendingTo: &output) }
        return (String(decoding: output, as: UTF8.self), outcome)
    }

    /// Lines of a write are held to the record: v1 is refused as older by encrypt and rotate; v2 as stored keeps its
    /// seal (version 2, the same seal, however often it is fed back); a new profile takes a version above the record;
    /// and the record is left as it was (v2 still reads, v1 is still older).
    @Test func linesOfAWriteAreHeldToTheRecord() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealtrust-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for keystore in [try Keystore.inMemory(), try Keystore(directory: folder)] {
            let vault = try Seals.vault(keystore: keystore)
            let (v1, v2) = try Self.twoVersions(vault)
            for processor in [Seals.encrypting, Seals.rotating] {
                let refused = Seals.refusal { _ = try Self.processLine(processor, v1, with: vault) }
                #expect(refused?.reason == .sealRolledBack, "\(String(describing: refused))")
                #expect(refused?.description.hasPrefix("line 1: ") == true)
            }
            var line = v2
            for processor in [Seals.encrypting, Seals.encrypting, Seals.rotating] {
                let (json, outcome) = try Self.processLine(processor, line, with: vault)
                #expect(outcome?.sealVersion == 2)
                #expect(try Seals.object(json)["sealkit_seal"] == Seals.object(v2)["sealkit_seal"])
                line = json
            }
            // A profile without a seal is sealed on this device only on purpose (resealing).
            let resealing = try ProfileProcessor(.encrypt, schema: Seals.schema, options: .init(resealing: true))
            let fresh = try Self.processLine(resealing, #"{"notes": "new"}"#, with: vault)
            #expect(fresh.outcome?.sealVersion == 3)
            #expect(try Seals.decrypting.process(v2, with: vault).sealVersion == 2)
            #expect(Seals.refusal { _ = try Seals.decrypting.process(v1, with: vault) }?.reason == .sealRolledBack)
        }
    }

    /// After a key rotation, and for one profile as for lines, a write that leaves the flagged fields as they were
    /// keeps the input's seal (made by the retired key): no version is minted, so a device fed the same stored profile
    /// again and again never raises it past a newer one written elsewhere, and the record is not advanced.
    /// `rotate` changes the fields, so it still writes a new version.
    @Test func anUnchangedProfileKeepsItsSealUnderAnyOfTheUsersKeys() throws {
        let vault = try Seals.vault()
        let (v1, v2) = try Self.twoVersions(vault)
        let v2Seal = try Seals.object(v2)["sealkit_seal"]
        // Before a rotation, one profile written unchanged keeps its seal too.
        let same = try Seals.encrypting.process(v2, with: vault)
        #expect(same.sealVersion == 2)
        #expect(try Seals.object(same.json)["sealkit_seal"] == v2Seal)
        _ = try vault.rotateKey()
        var profile = v2
        for _ in 0..<3 {
            let single = try Seals.encrypting.process(profile, with: vault)
            #expect(single.sealVersion == 2)
            #expect(try Seals.object(single.json)["sealkit_seal"] == v2Seal)
            let (line, outcome) = try Self.processLine(Seals.encrypting, single.json, with: vault)
            #expect(outcome?.sealVersion == 2)
            #expect(try Seals.object(line)["sealkit_seal"] == v2Seal)
            profile = line
        }
        // The record still holds version 2 as read: v2 reads, v1 is older.
        #expect(try Seals.decrypting.process(v2, with: vault).sealVersion == 2)
        #expect(Seals.refusal { _ = try Seals.decrypting.process(v1, with: vault) }?.reason == .sealRolledBack)
        let rotated = try Seals.rotating.process(v2, with: vault)
        #expect(rotated.sealVersion == 3)
        #expect(try Seals.decrypting.process(rotated.json, with: vault).sealVersion == 3)
    }

    /// On a device whose record holds the id, a profile without a seal is not sealed above the record, ciphertexts
    /// or not (a server that strips the seal and the ciphertexts, or serves its own plaintext, would get its choice
    /// sealed): refused as a missing seal, for one profile and for lines, unless resealing on purpose.
    @Test func aProfileWithoutASealIsSealedHereOnlyOnPurpose() throws {
        let vault = try Seals.vault()
        let (_, v2) = try Self.twoVersions(vault)
        for served in [#"{"name": "Ada"}"#, #"{"name": "Ada", "ssn": "SERVER-CHOSEN", "notes": null}"#] {
            let single = Seals.refusal { _ = try Seals.encrypting.process(served, with: vault) }
            #expect(single?.reason == .sealMissing, "\(String(describing: single))")
            #expect(single?.description.contains("SERVER-CHOSEN") == false)
            let line = Seals.refusal { _ = try Self.processLine(Seals.encrypting, served, with: vault) }
            #expect(line?.reason == .sealMissing, "\(String(describing: line))")
        }
        #expect(try Seals.decrypting.process(v2, with: vault).sealVersion == 2)
        let resealing = try ProfileProcessor(.encrypt, schema: Seals.schema, options: .init(resealing: true))
        #expect(try resealing.process(#"{"name": "Ada"}"#, with: vault).sealVersion == 3)
        // A device without a record seals a new profile without asking.
        let elsewhere = Vault(keystore: try Keystore.inMemory(), user: vault.user, format: .v2)
        _ = try elsewhere.keystore.importKeys(try vault.keystore.exportKeys([vault.user], passphrase: nil), passphrase: nil)
        #expect(try Seals.encrypting.process(#"{"name": "Ada"}"#, with: elsewhere).sealVersion == 1)
    }
}
