import Foundation
import SealKit
import SealTestSupport
import Testing

/// `sealkit profile` with a sealing schema, against a server that changes stored profiles: what `encrypt` takes
/// from its input's seal, `--reseal`, a schema served without its seal setting, fields moved out of `data`, a new
/// key for the id, and the record's own safety.
@Suite("sealkit profile: what a sealed write trusts")
struct ProfileSealTrustCLITests {
    typealias Device = ProfileSealCLITests.Device
    static let otherKey = "qvQ3KW6Gm2Hn0tS5J8cYdX1rZb4uE7fLkP9oVwAiNgM="

    static func replacing(_ json: String, _ name: String, with value: JSONValue?) throws -> String {
        try ProfileSealCLITests.replacing(json, name, with: value)
    }

    static func member(_ json: String, _ name: String) throws -> JSONValue? { try ProfileSealCLITests.member(json, name) }

    /// `seal` (a seal's text) with the version and MAC a server chose, in the same format and under the same key tag.
    static func forged(_ seal: String, version: UInt64) throws -> String {
        var body = [UInt8](try #require(Data(base64Encoded: String(seal.dropFirst(5)))))
        try #require(body.count == 49)
        for index in 0..<8 { body[9 + index] = UInt8(truncatingIfNeeded: version >> (56 - 8 * UInt64(index))) }
        for index in 17..<49 { body[index] = UInt8.random(in: 0...255) }
        return String(seal.prefix(5)) + Data(body).base64EncodedString()
    }

    /// Versions 1 and 2, both written and read on `device`.
    static func twoVersions(_ device: Device) throws -> (v1: String, v2: String) {
        let v1 = try device.write(#"{"name": "Ada", "ssn": "078-05-1120", "notes": "n1", "salary": null}"#)
        let v2 = try device.write(try replacing(try device.read(v1), "ssn", with: "111-22-3333"))
        _ = try device.read(v2)
        return (v1, v2)
    }

    /// Finding 1: three served profiles, each refused by decrypt (65), are refused by encrypt too (65, one line),
    /// and change nothing: the stored v2 still reads, and the next write takes version 3 on every device.
    @Test func aProfileTheServerChangedIsNotSealedAgain() throws {
        let device = try Device()
        let laptop = try Device()
        let (v1, v2) = try Self.twoVersions(device)
        let seal = try #require(try Self.member(v2, "sealkit_seal")?.stringValue)
        let forged = try Self.forged(seal, version: UInt64.max - 1)
        let served: [(String, String, String)] = [
            ("A: v2's seal, v1's ssn, the server's notes",
             try Self.replacing(try Self.replacing(v2, "ssn", with: try Self.member(v1, "ssn")), "notes", with: "the server's"),
             "seal cannot be checked"),
            ("B: v1 without its seal", try Self.replacing(v1, "sealkit_seal", with: JSONValue?.none), "--reseal"),
            ("C: v1 with a forged seal and the server's notes",
             try Self.replacing(try Self.replacing(v1, "sealkit_seal", with: .string(forged)), "notes", with: "the server's"),
             "seal cannot be checked"),
            ("C: v2 decrypted, with a forged seal", try Self.replacing(try device.read(v2), "sealkit_seal", with: .string(forged)),
             "seal cannot be checked"),
        ]
        for (name, profile, reason) in served {
            #expect(try device.profile("decrypt", profile).status == 65, "\(name): decrypt accepted it")
            let encrypted = try device.profile("encrypt", profile)
            #expect(encrypted.status == 65, "\(name): encrypt exit \(encrypted.status)")
            expectCleanFailure(encrypted, containing: reason)
            #expect(!encrypted.stderr.contains("078-05-1120") && !encrypted.stderr.contains("the server's"))
        }
        #expect(try Self.member(try device.read(v2), "ssn") == "111-22-3333")
        let v3 = try device.write(try Self.replacing(try device.read(v2), "notes", with: "n3"))
        for reader in [device, laptop] {
            #expect(try Self.member(try reader.read(v3), "notes") == "n3")
        }
        let v4 = try laptop.write(try Self.replacing(try laptop.read(v3), "notes", with: "n4"))
        #expect(try Self.member(try device.read(v4), "notes") == "n4")
    }

    /// B's legitimate case: decrypt's "missing" message names --reseal, and --reseal seals a stored profile
    /// without a seal on a device whose record holds the id; the new version reads on this device.
    @Test func resealIsTheWayToSealAStoredProfileAnew() throws {
        let device = try Device()
        let (v1, _) = try Self.twoVersions(device)
        let unsealed = try Self.replacing(v1, "sealkit_seal", with: JSONValue?.none)
        let missing = try device.profile("decrypt", unsealed)
        #expect(missing.status == 65)
        expectCleanFailure(missing, containing: "'sealkit profile encrypt --reseal', which vouches for every field as it stands")
        let resealed = try device.profile("encrypt", unsealed, ["--reseal"])
        #expect(resealed.status == 0, "\(resealed.stderr)")
        #expect(try Self.member(try device.read(resealed.output), "ssn") == "078-05-1120")
        // --reseal goes with encrypt only, and never with --rownd.
        #expect(try device.profile("decrypt", unsealed, ["--reseal"]).status == 64)
        #expect(try device.profile("encrypt", unsealed, ["--reseal", "--rownd"]).status == 64)
    }

    /// Finding 2: a schema served without its seal setting, on a device whose record holds the id, says so on
    /// stderr; the rolled-back profile is no longer read without a word.
    @Test func aSchemaWithoutTheSealSettingSaysSo() throws {
        let device = try Device()
        let (v1, _) = try Self.twoVersions(device)
        let bare = try device.cli.write("""
            {"schema": {"name": {"type": "string"},
                        "ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
                        "notes": {"type": "string", "encryption": {"state": "enabled"}},
                        "salary": {"type": "number", "encryption": {"state": "enabled"}}}}
            """, to: "served-schema.json")
        for extra in [[], ["--ndjson"]] {
            let read = try device.cli.run(["profile", "decrypt", "--schema", bare, "--key", "ada"] + extra, stdin: v1 + "\n")
            #expect(read.status == 0, "\(read.stderr)")
            #expect(read.stderr.hasPrefix("sealkit: warning: the schema does not ask for profile seals"), "\(extra): \(read.stderr)")
            #expect(read.stderr.split(separator: "\n").count == 1, "\(read.stderr)")
        }
        // A device that never saw the id sealed is told nothing.
        let other = try Device()
        let quiet = try other.cli.run(["profile", "encrypt", "--schema", try other.cli.write(try String(contentsOfFile: bare, encoding: .utf8), to: "s.json"), "--key", "ada"], stdin: #"{"notes": "x"}"#)
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
    }

    /// Finding 3: every flagged field moved from `data` to the top level (and `data` to null) is refused.
    @Test func fieldsMovedOutOfDataAreRefused() throws {
        let device = try Device()
        let stored = try device.write(#"{"id": "ada", "data": {"name": "Ada", "ssn": "078-05-1120", "notes": "n1", "salary": 5}}"#)
        _ = try device.read(stored)
        var moved = try JSONValue.parse(stored)
        for name in ["ssn", "notes", "salary"] { moved[name] = moved["data"]?[name] }
        moved["data"] = .null
        let result = try device.profile("decrypt", moved.serialized())
        #expect(result.status == 65)
        expectCleanFailure(result, containing: "does not match")
    }

    /// The name rule: a member re-spelt NFD -> NFC by the server keeps every field opening and the seal verifying.
    @Test func aMemberReSpeltInAnotherNormalFormKeepsItsSeal() throws {
        let device = try Device()
        let schema = try device.cli.write("""
            {"schema": {"caf\u{00E9}": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}}},
             "sealkit": {"seal": true}}
            """, to: "accents.json")
        let stored = try device.cli.run(["profile", "encrypt", "--schema", schema, "--key", "ada"], stdin: "{\"cafe\u{0301}\": \"au lait\"}")
        #expect(stored.status == 0, "\(stored.stderr)")
        let respelt = stored.output.replacingOccurrences(of: "\"cafe\u{0301}\"", with: "\"caf\u{00E9}\"")
        #expect(respelt.unicodeScalars.count == stored.output.unicodeScalars.count - 1)
        let read = try device.cli.run(["profile", "decrypt", "--schema", schema, "--key", "ada"], stdin: respelt)
        #expect(read.status == 0, "\(read.stderr)")
    }

    /// Finding 4: after 'keys delete', a new key for the id made on another device, and its first profile
    /// (version 1), read here; a rollback under the new key is still refused.
    @Test func aNewKeyForTheIdStartsItsOwnHistory() throws {
        let device = try Device()
        var latest = try device.write(#"{"notes": "1"}"#)
        for version in 2...4 { latest = try device.write(try Self.replacing(try device.read(latest), "notes", with: .string("\(version)"))) }
        _ = try device.read(latest)
        #expect(try device.cli.run(["keys", "delete", "ada", "--force"]).status == 0)
        let other = try CLI()
        let schema = try other.write(ProfileSealCLITests.schemaText, to: "schema.json")
        #expect(try other.run(["keys", "import", "ada"], stdin: Self.otherKey).status == 0)
        #expect(try device.cli.run(["keys", "import", "ada"], stdin: Self.otherKey).status == 0)
        let first = try other.run(["profile", "encrypt", "--schema", schema, "--key", "ada"], stdin: #"{"notes": "new 1"}"#)
        #expect(first.status == 0, "\(first.stderr)")
        let read = try device.profile("decrypt", first.output)
        #expect(read.status == 0, "a new key's first profile is refused: \(read.stderr)")
        let plain = try other.run(["profile", "decrypt", "--schema", schema, "--key", "ada"], stdin: first.output)
        let second = try other.run(["profile", "encrypt", "--schema", schema, "--key", "ada"], stdin: try Self.replacing(plain.output, "notes", with: "new 2"))
        #expect(try device.profile("decrypt", second.output).status == 0)
        let rolledBack = try device.profile("decrypt", first.output)
        #expect(rolledBack.status == 65)
        expectCleanFailure(rolledBack, containing: "older than version 2 seen here")
    }

    /// The rollback message: a device that only read is not told a write of its own may be lost.
    @Test func theRollbackMessageBlamesNoWriteOnADeviceThatNeverWrote() throws {
        let phone = try Device()
        let laptop = try Device()
        let (v1, v2) = try Self.twoVersions(phone)
        _ = try laptop.read(v2)
        let result = try laptop.profile("decrypt", v1)
        #expect(result.status == 65)
        expectCleanFailure(result, containing: "older than version 2 seen here")
        #expect(!result.stderr.contains("write of this device"), "\(result.stderr)")
    }

    /// The record is read under the key files' rules: readable by others, or a link, exits 77 as a key file does.
    @Test func anUnsafeRecordExits77() throws {
        let device = try Device()
        let (_, v2) = try Self.twoVersions(device)
        let folder = device.cli.home.appendingPathComponent("keys/default").path
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".seal") })
        let record = folder + "/" + name
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: record)
        let open = try device.profile("decrypt", v2)
        #expect(open.status == 77, "\(open.stderr)")
        expectCleanFailure(open, containing: name)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: record)
        let elsewhere = device.cli.home.appendingPathComponent("elsewhere.seal").path
        try FileManager.default.moveItem(atPath: record, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: record, withDestinationPath: elsewhere)
        let linked = try device.profile("decrypt", v2)
        #expect(linked.status == 77, "\(linked.stderr)")
        expectCleanFailure(linked, containing: name)
    }

    /// The version a seal's text states (bytes 9 to 16 of its body, big-endian).
    static func version(of profile: String) throws -> UInt64 {
        let text = try #require(try Self.member(profile, "sealkit_seal")?.stringValue)
        let body = [UInt8](try #require(Data(base64Encoded: String(text.dropFirst(5)))))
        try #require(body.count == 49)
        return body[9..<17].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// A batch fed an older profile: on a device whose record holds the id, an --ndjson write holds each line to the
    /// record as one profile's write does. v1 is refused by encrypt and rotate (65, naming the rollback, no output);
    /// v2 as stored keeps its seal, so feeding the output back never climbs past the record; a decrypted, edited
    /// line and a new profile take a version above the record's; and the record stays at v2.
    @Test func anNdjsonWriteIsHeldToTheRecord() throws {
        let device = try Device()
        let (v1, v2) = try Self.twoVersions(device)
        for operation in ["encrypt", "rotate"] {
            let old = try device.profile(operation, v1 + "\n", ["--ndjson"])
            #expect(old.status == 65, "\(operation) --ndjson of v1: exit \(old.status)")
            expectCleanFailure(old, containing: "older than version 2 seen here")
            #expect(!old.stderr.contains("078-05-1120"))
        }
        var line = v2
        for operation in ["encrypt", "encrypt", "rotate", "encrypt"] {
            let again = try device.profile(operation, line + "\n", ["--ndjson"])
            #expect(again.status == 0, "\(operation): \(again.stderr)")
            line = again.output.trimmingCharacters(in: .newlines)
            #expect(try Self.member(line, "sealkit_seal") == Self.member(v2, "sealkit_seal"), "\(operation) minted a version")
        }
        let edited = try device.profile("encrypt", try Self.replacing(try device.read(v2), "notes", with: "batch") + "\n", ["--ndjson"])
        #expect(edited.status == 0, "\(edited.stderr)")
        #expect(try Self.version(of: edited.output.trimmingCharacters(in: .newlines)) == 3)
        let fresh = try device.profile("encrypt", #"{"notes": "new"}"# + "\n", ["--ndjson", "--reseal"])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(try Self.version(of: fresh.output.trimmingCharacters(in: .newlines)) == 3)
        // Lines are not recorded: v2 is still the version this device saw last.
        #expect(try Self.member(try device.read(v2), "ssn") == "111-22-3333")
        #expect(try device.profile("decrypt", v1).status == 65)
    }

    /// The attack end to end: v1 fed to --ndjson encrypt twice on the device that saw v2 gives nothing another
    /// device that saw v2 would accept.
    @Test func aRolledBackProfileIsNotLaunderedThroughNdjson() throws {
        let device = try Device()
        let laptop = try Device()
        let (v1, v2) = try Self.twoVersions(device)
        _ = try laptop.read(v2)
        var line = v1
        for _ in 0..<2 {
            let batch = try device.profile("encrypt", line + "\n", ["--ndjson"])
            if batch.status != 0 { break }
            line = batch.output.trimmingCharacters(in: .newlines)
        }
        for reader in [device, laptop] {
            let read = try reader.profile("decrypt", line)
            #expect(read.status == 65, "the rolled-back ssn was accepted as new: \(read.stderr)")
        }
        #expect(try Self.member(try laptop.read(v2), "ssn") == "111-22-3333")
    }

    /// A damaged or unsafe seal record is named as the seal record, not as a key file, and its advice is to delete
    /// it (backups do not carry records, so none restores it).
    @Test func aBadRecordIsCalledTheSealRecord() throws {
        let device = try Device()
        let (_, v2) = try Self.twoVersions(device)
        let folder = device.cli.home.appendingPathComponent("keys/default").path
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".seal") })
        let record = folder + "/" + name
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: record)
        let open = try device.profile("decrypt", v2)
        #expect(open.status == 77)
        expectCleanFailure(open, containing: "profile seal record \(record) is accessible by group or others")
        #expect(!open.stderr.contains("key file"), "\(open.stderr)")
        try Data("not a record\n".utf8).write(to: URL(fileURLWithPath: record))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: record)
        let damaged = try device.profile("decrypt", v2)
        #expect(damaged.status != 0)
        expectCleanFailure(damaged, containing: "profile seal record \(record) is damaged")
        #expect(!damaged.stderr.contains("key file") && !damaged.stderr.contains("backup"), "\(damaged.stderr)")
    }

    /// Settings that would turn seals off unseen are refused (65, naming the place): `sealkit` spelt in full-width
    /// forms beside "schema" or in "app", settings beside "app" instead of in it, and settings in a bare schema.
    @Test func sealSettingsOutOfPlaceAreRefused() throws {
        let device = try Device()
        let field = #"{"ssn": {"encryption": {"state": "enabled"}}}"#
        let schemas: [(String, String)] = [
            ("full-width beside schema", #"{"schema": \#(field), "ｓｅａｌｋｉｔ": {"seal": true}}"#),
            ("full-width in app", #"{"app": {"schema": \#(field), "ＳｅａｌＫｉｔ": {"seal": true}}}"#),
            ("beside app", #"{"app": {"schema": \#(field)}, "sealkit": {"seal": true}}"#),
            ("near-miss beside app", #"{"app": {"schema": \#(field)}, "sealKit": {"seal": true}}"#),
            ("bare", #"{"ssn": {"encryption": {"state": "enabled"}}, "sealkit": {"seal": true}}"#),
        ]
        for (name, text) in schemas {
            let schema = try device.cli.write(text, to: "odd.json")
            let result = try device.cli.run(["profile", "encrypt", "--schema", schema, "--key", "ada"], stdin: #"{"ssn": "1"}"#)
            #expect(result.status == 65, "\(name): exit \(result.status), \(result.stdout)")
            expectCleanFailure(result)
        }
        // In app, beside its schema, is where Rownd's app config keeps it: honoured.
        let inApp = try device.cli.write(#"{"app": {"schema": \#(field), "sealkit": {"seal": true}}}"#, to: "app.json")
        let sealed = try device.cli.run(["profile", "encrypt", "--schema", inApp, "--key", "ada"], stdin: #"{"ssn": "1"}"#)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(try Self.member(sealed.output, "sealkit_seal") != nil)
    }

    /// After `keys rotate`, a device fed the stored v2 (sealed by the retired key) again and again, one profile or
    /// lines, hands back v2's own seal: no version is minted, so another device that wrote v3 still refuses what it
    /// outputs as older. `profile rotate` changes the fields, so it is a real write (version 3 here).
    @Test func anUnchangedProfileMintsNoVersionAfterAKeyRotation() throws {
        let device = try Device()
        let laptop = try Device()
        let (_, v2) = try Self.twoVersions(device)
        let v3 = try laptop.write(try Self.replacing(try laptop.read(v2), "ssn", with: "333-44-5555"))
        _ = try laptop.read(v3)
        #expect(try device.cli.run(["keys", "rotate", "ada"]).status == 0)
        var profile = v2
        for extra in [["--ndjson"], [], ["--ndjson"], []] {
            let again = try device.profile("encrypt", profile + "\n", extra)
            #expect(again.status == 0, "\(extra): \(again.stderr)")
            profile = again.output.trimmingCharacters(in: .newlines)
            #expect(try Self.member(profile, "sealkit_seal") == Self.member(v2, "sealkit_seal"), "\(extra) minted a version")
        }
        #expect(try laptop.profile("decrypt", profile).status == 65)
        #expect(try Self.member(try device.read(v2), "ssn") == "111-22-3333")
        let rotated = try device.profile("rotate", v2)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(try Self.version(of: rotated.output) == 3)
    }

    /// One profile, no key rotation: encrypting the stored v1 unchanged, twice, keeps v1's seal, so a device that wrote
    /// v2 refuses the result as older (65).
    @Test func anUnchangedProfileIsNotPumpedOneAtATime() throws {
        let device = try Device()
        let laptop = try Device()
        let v1 = try device.write(#"{"name": "Ada", "ssn": "078-05-1120"}"#)
        _ = try device.read(v1)
        let v2 = try laptop.write(try Self.replacing(try laptop.read(v1), "ssn", with: "999-88-7777"))
        _ = try laptop.read(v2)
        let p2 = try device.write(v1)
        let p3 = try device.write(p2)
        #expect(try Self.version(of: p3) == 1)
        let read = try laptop.profile("decrypt", p3)
        #expect(read.status == 65, "the pumped v1 was accepted: \(read.stderr)")
        expectCleanFailure(read, containing: "older than version 2 seen here")
    }

    /// On a device whose record holds the id, a profile without a seal (no ciphertexts either: the server stripped
    /// them, or serves its own plaintext) is refused (65, the seal is missing), one profile and lines alike; with
    /// --reseal it is sealed above the record, on purpose.
    @Test func aProfileWithoutASealIsRefusedWhereTheRecordHoldsTheId() throws {
        let device = try Device()
        let (_, v2) = try Self.twoVersions(device)
        for served in [#"{"name": "Ada"}"#, #"{"name": "Ada", "ssn": "SERVER-CHOSEN", "notes": null}"#] {
            for extra in [[], ["--ndjson"]] {
                let result = try device.profile("encrypt", served + "\n", extra)
                #expect(result.status == 65, "\(extra): exit \(result.status)")
                expectCleanFailure(result, containing: "seal is missing")
                #expect(!result.stderr.contains("SERVER-CHOSEN"))
            }
        }
        #expect(try Self.member(try device.read(v2), "ssn") == "111-22-3333")
        let resealed = try device.profile("encrypt", #"{"name": "Ada"}"#, ["--reseal"])
        #expect(resealed.status == 0, "\(resealed.stderr)")
        #expect(try Self.version(of: resealed.output) == 3)
    }
}
