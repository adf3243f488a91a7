import Foundation
import SealTestSupport
import Testing

/// One user, two devices, one key: the second device is told to receive the user's key instead of
/// making its own, never double-encrypts, and v2 ciphertexts open only where they were sealed.
@Suite("one key per user, and v2 bound ciphertexts, on the CLI")
struct KeyForkCLITests {
    static let schema = #"""
        {"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled"}},
                    "name": {"type": "string"},
                    "notes": {"type": "string", "encryption": {"state": "enabled"}},
                    "nickname": {"type": "string", "encryption": {"state": "enabled"}}}}
        """#
    static let profile = #"{"ssn":"078-05-1120","name":"Ada","notes":"allergic"}"#

    /// Writes `text` to a file in `cli`'s folder and returns its path.
    static func file(_ cli: CLI, _ name: String, _ text: String) throws -> String {
        let url = cli.home.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    @Test func theTwoDeviceJourneyRefusesTheForkThenATransferJoinsThem() throws {
        let device1 = try CLI(), device2 = try CLI()
        #expect(try device1.run(["keys", "generate", "alice"]).status == 0)
        let schema1 = try Self.file(device1, "schema.json", Self.schema)
        let uploaded = try device1.run(["profile", "encrypt", "--schema", schema1, "--key", "alice"], stdin: Self.profile)
        #expect(uploaded.status == 0, "\(uploaded.stderr)")

        // Device 2 signs in and would make "the user's key on first use": the data says no.
        let schema2 = try Self.file(device2, "schema.json", Self.schema)
        let server = try Self.file(device2, "profile.json", uploaded.stdout)
        for extra in [[], ["--schema", schema2]] {
            let refused = try device2.run(["keys", "generate", "alice", "--profile", server] + extra)
            #expect(refused.status == 73)
            expectCleanFailure(refused, containing: "sealkit transfer receive")
            #expect(refused.stderr.contains("a key this keystore does not have"))
            #expect(refused.stderr.contains("ssn") && refused.stderr.contains("notes"))
        }
        #expect(try TransferCLITests.ids(device2).isEmpty, "a refused generate made no key")
        // A profile with no ciphertext yet still gets its key.
        let fresh = try CLI()
        let plain = try Self.file(fresh, "plain.json", Self.profile)
        #expect(try fresh.run(["keys", "generate", "alice", "--profile", plain]).status == 0)
        #expect(try TransferCLITests.ids(fresh) == ["alice"])

        // A device that forked anyway (an older SealKit did) refuses to seal device 1's values again.
        let forked = try CLI()
        #expect(try forked.run(["keys", "generate", "alice"]).status == 0)
        let forkedSchema = try Self.file(forked, "schema.json", Self.schema)
        let forkedServer = try Self.file(forked, "profile.json", uploaded.stdout)
        var edited = try Self.object(uploaded.stdout)
        edited["name"] = "Ada L."
        edited["notes"] = "allergic to penicillin"
        let editedText = String(decoding: try JSONSerialization.data(withJSONObject: edited), as: UTF8.self)
        let doubled = try forked.run(["profile", "encrypt", "--schema", forkedSchema, "--key", "alice"], stdin: editedText)
        #expect(doubled.status == 65)
        expectCleanFailure(doubled, containing: "ssn")
        #expect(doubled.stderr.contains("sealed under a key this keystore does not have"))
        #expect(doubled.stderr.contains("sealkit transfer receive"))
        #expect(!doubled.stderr.contains("--rownd"))
        // --rownd leaves the value byte for byte and names the field.
        let rownd = try forked.run(["profile", "encrypt", "--rownd", "--schema", forkedSchema, "--key", "alice"], stdin: editedText)
        #expect(rownd.status == 0, "\(rownd.stderr)")
        let ssn = try #require(try Self.object(uploaded.stdout)["ssn"] as? String)
        #expect(rownd.stdout.contains("\"ssn\":\"\(ssn.replacingOccurrences(of: "/", with: "\\/"))\"") || rownd.stdout.contains("\"ssn\":\"\(ssn)\""))
        #expect(rownd.stderr.contains("ssn") && rownd.stderr.contains("transfer receive"))
        // Status and strict decrypt say why.
        let status = try forked.run(["status", "--key", "alice", "--profile", forkedServer, "--schema", forkedSchema])
        #expect(status.status == 1)
        expectCleanFailure(status, containing: "a key this keystore does not have")
        let decrypted = try forked.run(["profile", "decrypt", "--schema", forkedSchema, "--key", "alice", forkedServer])
        expectCleanFailure(decrypted, containing: "transfer receive")
        #expect(!decrypted.stderr.contains("--rownd"))
        #expect(try device1.run(["status", "--key", "alice", "--profile", server]).status == 0)

        // The fix: device 2 receives the key, then both devices read and write the same profile.
        let (_, _, received) = try TransferCLITests.receive(in: device2) { offer, code in
            try TransferCLITests.send(device1, ["alice"], to: offer, code: code)
        }
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try device2.run(["status", "--key", "alice", "--profile", server, "--schema", schema2]).status == 0)
        let saved = try device2.run(["profile", "encrypt", "--schema", schema2, "--key", "alice"], stdin: editedText)
        #expect(saved.status == 0, "\(saved.stderr)")
        let readBack = try device1.run(["profile", "decrypt", "--schema", schema1, "--key", "alice"], stdin: saved.stdout)
        #expect(readBack.status == 0, "\(readBack.stderr)")
        let result = try Self.object(readBack.stdout)
        #expect(result["ssn"] as? String == "078-05-1120")
        #expect(result["notes"] as? String == "allergic to penicillin")
        #expect(result["name"] as? String == "Ada L.")
    }

    @Test(.requires(.pyNaCl)) func v2OnTheCommandLineOpensOnlyInItsContextAndPyNaClAgrees() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let sealed = try cli.run(["encrypt", "--key", "alice", "--format", "v2", "--context", "billing"], stdin: "IBAN DE89")
        #expect(sealed.status == 0)
        #expect(sealed.output.hasPrefix("sk2:") && !sealed.output.contains("\n"))
        #expect(try cli.run(["decrypt", "--key", "alice", "--context", "billing"], stdin: sealed.stdout).stdout == "IBAN DE89\n")
        for wrong in [["--context", "shipping"], []] {
            let moved = try cli.run(["decrypt", "--key", "alice"] + wrong, stdin: sealed.stdout)
            #expect(moved.status == 65)
            expectCleanFailure(moved, containing: "sealed for another field or user")
        }
        // Without --context the context is empty, and that is a context too.
        let bare = try cli.run(["encrypt", "--key", "alice", "--format", "v2"], stdin: "x")
        #expect(try cli.run(["decrypt", "--key", "alice"], stdin: bare.stdout).stdout == "x\n")
        // v1 stays the default and both are read.
        let v1 = try cli.run(["encrypt", "--key", "alice"], stdin: "y")
        #expect(!v1.output.hasPrefix("sk2:"))
        #expect(try cli.run(["decrypt", "--key", "alice"], stdin: v1.stdout).stdout == "y\n")

        let key = try #require(try TransferCLITests.keyMaterial(cli).first)
        let opened = try PythonV2.open(sealed.output, keys: [key], id: "alice", place: .context("billing"))
        #expect(opened.outcome == "ok" && opened.plaintext == "IBAN DE89")
        let theirs = try PythonV2.seal("from PyNaCl", keys: [key], id: "alice", place: .context("billing"))
        #expect(try cli.run(["decrypt", "--key", "alice", "--context", "billing"], stdin: theirs).stdout == "from PyNaCl\n")

        // A key the keystore lacks is named by its fingerprint, not mistaken for tampering.
        let other = try CLI()
        #expect(try other.run(["keys", "generate", "alice"]).status == 0)
        let unknown = try other.run(["decrypt", "--key", "alice", "--context", "billing"], stdin: sealed.stdout)
        expectCleanFailure(unknown, containing: "which this keystore does not have")
        let fingerprint = try field(1, of: try cli.run(["keys", "list"]).output)
        #expect(unknown.stderr.contains(String(fingerprint)))
        #expect(try cli.run(["encrypt", "--key", "alice", "--format", "v3"], stdin: "x").status == 64)
    }

    @Test func swapAttacksOnARealProfileFail() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let key = try #require(try TransferCLITests.keyMaterial(cli).first)
        // The same key under a second id, as a careless import could do.
        #expect(try cli.run(["keys", "import", "bob"], stdin: key).status == 0)
        let schema = try Self.file(cli, "schema.json", Self.schema)
        let sealed = try cli.run(
            ["profile", "encrypt", "--schema", schema, "--key", "alice", "--format", "v2"],
            stdin: #"{"data":{"ssn":"078-05-1120","notes":"allergic","nickname":"Addie"}}"#)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        var profile = try Self.object(sealed.stdout)
        var data = try #require(profile["data"] as? [String: Any])
        let ssn = try #require(data["ssn"] as? String)
        #expect(ssn.hasPrefix("sk2:"))

        // Field to field: the SSN moved into the nickname, which an app might show.
        data["nickname"] = ssn
        profile["data"] = data
        let swapped = String(decoding: try JSONSerialization.data(withJSONObject: profile), as: UTF8.self)
        let fieldSwap = try cli.run(["profile", "decrypt", "--schema", schema, "--key", "alice"], stdin: swapped)
        #expect(fieldSwap.status == 65)
        expectCleanFailure(fieldSwap, containing: "nickname")
        #expect(fieldSwap.stderr.contains("sealed for another field or user"))
        // User to user: alice's profile handed to bob, who holds the same key.
        let userSwap = try cli.run(["profile", "decrypt", "--schema", schema, "--key", "bob"], stdin: sealed.stdout)
        expectCleanFailure(userSwap, containing: "sealed for another field or user")
        // v2 to v1: the header stripped must not open as v1 under the same key.
        data["nickname"] = String(ssn.dropFirst(4))
        profile["data"] = data
        let stripped = String(decoding: try JSONSerialization.data(withJSONObject: profile), as: UTF8.self)
        let strip = try cli.run(["profile", "decrypt", "--schema", schema, "--key", "alice"], stdin: stripped)
        expectCleanFailure(strip, containing: "stripped")
        let stripRownd = try cli.run(["profile", "decrypt", "--rownd", "--schema", schema, "--key", "alice"], stdin: stripped)
        let rowndData = try #require(try Self.object(stripRownd.stdout)["data"] as? [String: Any])
        #expect(rowndData["nickname"] as? String == String(ssn.dropFirst(4)), "a stripped value stays as it was")
        // The untouched profile opens, in the bare shape as in `data`'s: fields bind their names.
        let opened = try cli.run(["profile", "decrypt", "--schema", schema, "--key", "alice"], stdin: sealed.stdout)
        #expect(opened.status == 0 && opened.stdout.contains("078-05-1120"))
        let bare = String(decoding: try JSONSerialization.data(withJSONObject: try #require(try Self.object(sealed.stdout)["data"])), as: UTF8.self)
        #expect(try cli.run(["profile", "decrypt", "--schema", schema, "--key", "alice"], stdin: bare).stdout.contains("078-05-1120"))
    }

    @Test func theSchemaChoosesV2PerFieldAndRotateMigrates() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let mixed = try Self.file(cli, "mixed.json", #"""
            {"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
                        "notes": {"type": "string", "encryption": {"state": "enabled"}}}}
            """#)
        let input = #"{"ssn":"078-05-1120","notes":"allergic"}"#
        let perField = try Self.object(try cli.run(["profile", "encrypt", "--schema", mixed, "--key", "alice"], stdin: input).stdout)
        #expect((perField["ssn"] as? String)?.hasPrefix("sk2:") == true)
        #expect((perField["notes"] as? String)?.hasPrefix("sk2:") == false)
        let overridden = try Self.object(
            try cli.run(["profile", "encrypt", "--schema", mixed, "--key", "alice", "--format", "v1"], stdin: input).stdout)
        #expect((overridden["ssn"] as? String)?.hasPrefix("sk2:") == false)
        // --rownd never writes v2.
        let rownd = try cli.run(["profile", "encrypt", "--rownd", "--schema", mixed, "--key", "alice"], stdin: input)
        expectCleanFailure(rownd, containing: "ssn")
        let rowndV2 = try cli.run(["profile", "encrypt", "--rownd", "--format", "v2", "--schema", mixed, "--key", "alice"], stdin: input)
        #expect(rowndV2.status == 64)

        // rotate --format v2 refuses v1 values (they name no field); --from-v1 migrates them on
        // purpose to v2, which still decrypts to the same.
        let schema = try Self.file(cli, "schema.json", Self.schema)
        let v1 = try cli.run(["profile", "encrypt", "--schema", schema, "--key", "alice"], stdin: input).stdout
        let unasked = try cli.run(["profile", "rotate", "--schema", schema, "--key", "alice", "--format", "v2"], stdin: v1)
        #expect(unasked.status == 65)
        expectCleanFailure(unasked, containing: "not bound to this place")
        let rotated = try cli.run(
            ["profile", "rotate", "--schema", schema, "--key", "alice", "--format", "v2", "--from-v1"], stdin: v1)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let object = try Self.object(rotated.stdout)
        #expect((object["ssn"] as? String)?.hasPrefix("sk2:") == true && (object["notes"] as? String)?.hasPrefix("sk2:") == true)
        let back = try Self.object(try cli.run(["profile", "decrypt", "--schema", schema, "--key", "alice"], stdin: rotated.stdout).stdout)
        #expect(back["ssn"] as? String == "078-05-1120" && back["notes"] as? String == "allergic")
        // A v2 value is never rewritten as v1, and a second rotation changes nothing.
        let again = try cli.run(["profile", "rotate", "--schema", schema, "--key", "alice"], stdin: rotated.stdout)
        #expect(again.stdout == rotated.stdout)
    }

    /// A v1 value kept from before the migration to v2, moved into another
    /// field, opened there as that field, was rotated into a genuine v2 value bound to it, and the
    /// audit found nothing. v2 now means v2 everywhere the place matters.
    @Test func aV1ValueIsNoBackDoorIntoAV2FieldOrContext() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let v1Schema = try Self.file(cli, "schema.json", Self.schema)
        let v2Schema = try Self.file(cli, "v2.json", #"""
            {"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
                        "nickname": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}}}}
            """#)
        // Before the migration: v1 values, which the server keeps.
        let before = try Self.object(try cli.run(
            ["profile", "encrypt", "--schema", v1Schema, "--key", "alice"],
            stdin: #"{"ssn":"078-05-1120","nickname":"Addie"}"#).stdout)
        let oldSSN = try #require(before["ssn"] as? String)
        // After: the app's fields are v2, and the server puts the old SSN into the nickname.
        let migrated = try cli.run(
            ["profile", "encrypt", "--schema", v2Schema, "--key", "alice"], stdin: #"{"ssn":"078-05-1120","nickname":"Addie"}"#)
        var swapped = try Self.object(migrated.stdout)
        swapped["nickname"] = oldSSN
        let swappedText = String(decoding: try JSONSerialization.data(withJSONObject: swapped), as: UTF8.self)
        for command in ["decrypt", "rotate"] {
            let refused = try cli.run(["profile", command, "--schema", v2Schema, "--key", "alice"], stdin: swappedText)
            #expect(refused.status == 65, "\(command): \(refused.stderr)")
            expectCleanFailure(refused, containing: "nickname")
            #expect(refused.stderr.contains("not bound to this place"), "\(command): \(refused.stderr)")
            #expect(!refused.stderr.contains("078-05-1120"))
        }
        // Encrypting leaves no v1 value in a v2 field either.
        let encrypt = try cli.run(["profile", "encrypt", "--schema", v2Schema, "--key", "alice"], stdin: swappedText)
        expectCleanFailure(encrypt, containing: "not bound to this place")
        // The audit names it, an error.
        let path = try Self.file(cli, "swapped.json", swappedText)
        let audit = try cli.run(["audit", "--schema", v2Schema, "--key", "alice", "--format", "json", path])
        #expect(audit.status == 1, "\(audit.stdout) \(audit.stderr)")
        let report = try Self.object(audit.stdout)
        let findings = try #require(report["findings"] as? [[String: Any]])
        #expect(findings.contains { $0["kind"] as? String == "v1-in-bound-field" && $0["severity"] as? String == "error" && $0["field"] as? String == "nickname" })
        // Migration reads v1 on purpose, once.
        let fromV1 = try cli.run(
            ["profile", "rotate", "--schema", v2Schema, "--key", "alice", "--from-v1"],
            stdin: String(decoding: try JSONSerialization.data(withJSONObject: before), as: UTF8.self))
        #expect(fromV1.status == 0, "\(fromV1.stderr)")
        let rotated = try Self.object(fromV1.stdout)
        #expect((rotated["ssn"] as? String)?.hasPrefix("sk2:") == true && (rotated["nickname"] as? String)?.hasPrefix("sk2:") == true)
        #expect(try cli.run(["profile", "rotate", "--rownd", "--from-v1", "--schema", v1Schema, "--key", "alice"], stdin: "{}").status == 64)

        // A bare value: --context means v2, for encrypt and decrypt.
        let contextual = try cli.run(["encrypt", "--key", "alice", "--context", "billing"], stdin: "IBAN DE89")
        #expect(contextual.output.hasPrefix("sk2:"), "--context writes v2 without --format")
        #expect(try cli.run(["decrypt", "--key", "alice", "--context", "billing"], stdin: contextual.stdout).stdout == "IBAN DE89\n")
        let v1Value = try cli.run(["encrypt", "--key", "alice"], stdin: "IBAN DE89").stdout
        for context in ["billing", ""] {
            let refused = try cli.run(["decrypt", "--key", "alice", "--context", context], stdin: v1Value)
            #expect(refused.status == 65)
            expectCleanFailure(refused, containing: "not bound to this place")
            let lines = try cli.run(["decrypt", "--key", "alice", "--lines", "--context", context], stdin: v1Value)
            expectCleanFailure(lines, containing: "line 1: not bound to this place")
        }
        #expect(try cli.run(["decrypt", "--key", "alice"], stdin: v1Value).stdout == "IBAN DE89\n", "v1 still opens without a place")
        let mixed = try cli.run(["encrypt", "--key", "alice", "--format", "v1", "--context", "billing"], stdin: "x")
        #expect(mixed.status == 64)
        expectCleanFailure(mixed, containing: "--context goes with --format v2")
    }

    /// One `data` member turned a bare profile's encryption off.
    @Test func aDataMemberBesideFlaggedFieldsIsRefusedNotIgnored() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let schema = try Self.file(cli, "schema.json", Self.schema)
        for profile in [#"{"ssn":"123-45-6789","name":"Al","data":{}}"#, #"{"ssn":"123-45-6789","data":{"ssn":"987-65-4321"}}"#] {
            for format in ["v1", "v2"] {
                let strict = try cli.run(["profile", "encrypt", "--schema", schema, "--key", "alice", "--format", format], stdin: profile)
                #expect(strict.status == 65, "\(strict.stdout)")
                expectCleanFailure(strict, containing: "ssn")
                #expect(strict.stderr.contains("\"data\"") && !strict.stderr.contains("123-45-6789"))
            }
            let rownd = try cli.run(["profile", "encrypt", "--rownd", "--schema", schema, "--key", "alice"], stdin: profile)
            #expect(rownd.stderr.contains("ssn left as it is: a top-level member beside \"data\""), "\(rownd.stderr)")
            let path = try Self.file(cli, "beside.json", profile)
            let audit = try cli.run(["audit", "--schema", schema, "--format", "json", path])
            #expect(audit.status == 1, "\(audit.stdout) \(audit.stderr)")
            let findings = try #require(try Self.object(audit.stdout)["findings"] as? [[String: Any]])
            #expect(findings.contains { $0["kind"] as? String == "field-beside-data" && $0["field"] as? String == "ssn" })
        }
        // The user-state shape alone, and a bare profile alone, are as they were.
        #expect(try cli.run(["profile", "encrypt", "--schema", schema, "--key", "alice"], stdin: #"{"name":"Al","data":{"ssn":"1"}}"#).status == 0)
        #expect(try cli.run(["profile", "encrypt", "--schema", schema, "--key", "alice"], stdin: #"{"ssn":"1","name":"Al"}"#).status == 0)
    }

    @Test func statusNamesAV2KeyByItsFingerprintAndSchemaNeedsAProfile() throws {
        let device1 = try CLI(), device2 = try CLI()
        #expect(try device1.run(["keys", "generate", "alice"]).status == 0)
        #expect(try device2.run(["keys", "generate", "alice"]).status == 0)
        let schema = try Self.file(device1, "schema.json", Self.schema)
        let sealed = try device1.run(["profile", "encrypt", "--schema", schema, "--key", "alice", "--format", "v2"], stdin: Self.profile)
        let path = try Self.file(device2, "p.json", sealed.stdout)
        let status = try device2.run(["status", "--key", "alice", "--profile", path])
        #expect(status.status == 1)
        let fingerprint = try field(1, of: try device1.run(["keys", "list"]).output)
        expectCleanFailure(status, containing: String(fingerprint))
        #expect(try device2.run(["status", "--key", "alice", "--schema", schema]).status == 64)
        let generate = try device2.run(["keys", "generate", "bob", "--profile", path])
        #expect(generate.status == 73)
        expectCleanFailure(generate, containing: String(fingerprint))
    }
}

/// A key file whose time no output can show is a clear error, never a trap.
@Suite("key times out of range")
struct KeyTimeCLITests {
    @Test(arguments: ["9223372036854775807", "-1", "253402300800"])
    func aKeyFileWithATimeOutOfRangeFailsCleanly(_ time: String) throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let folder = cli.home.appendingPathComponent("keys/default")
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix(".key") })
        let path = folder.appendingPathComponent(file).path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let edited = try text.split(separator: "\n", omittingEmptySubsequences: false).map { line throws -> String in
            guard line.hasPrefix("key ") else { return String(line) }
            var parts = line.split(separator: " ").map(String.init)
            try #require(parts.count > 2, "a key line of \(parts.count) fields")
            parts[2] = time
            return parts.joined(separator: " ")
        }.joined(separator: "\n")
        try edited.write(toFile: path, atomically: false, encoding: .utf8)
        let passphraseFile = cli.home.appendingPathComponent("passphrase").path
        try "correct horse battery staple\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        for arguments in [["keys", "backup", "alice", "--passphrase-file", passphraseFile], ["encrypt", "--key", "alice"], ["keys", "list"]] {
            let result = try cli.run(arguments, stdin: "x")
            #expect(result.status != 0 && result.status < 126 && result.status != 70, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("outside 1970-01-01 to 9999-12-31") || result.stderr.contains("damaged"), "\(result.stderr)")
        }
    }
}

/// One name, one id. `café` typed as NFC and as NFD is one id.
@Suite("ids are NFC")
struct NormalizedIDCLITests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    /// Rewrites the key file `name` as a SealKit before normalization stored the NFD form: the id line
    /// in NFD, under the file name its NFD form hashes to. Returns that name.
    static func storeAsLegacy(folder: URL, name: String) throws -> String {
        let text = try String(contentsOfFile: folder.appendingPathComponent(name).path, encoding: .utf8)
        let nfdLine = "id " + Data(decomposed.utf8).base64EncodedString()
        let legacyName = try python(
            "import hashlib, sys; print(hashlib.blake2b(sys.stdin.buffer.read(), digest_size=20, key=b'SealKit key id v1 ').hexdigest() + '.key')",
            stdin: decomposed).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        try text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix("id ") ? nfdLine : String($0) }
            .joined(separator: "\n").write(to: folder.appendingPathComponent(legacyName), atomically: false, encoding: .utf8)
        chmod(folder.appendingPathComponent(legacyName).path, 0o600)
        return legacyName
    }

    @Test func theTwinOfAnIDIsTheSameID() throws {
        let cli = try CLI()
        #expect(Self.composed == Self.decomposed && Array(Self.composed.utf8) != Array(Self.decomposed.utf8))
        let made = try cli.run(["keys", "generate", Self.decomposed])
        #expect(made.status == 0)
        #expect(made.stdoutBytes.starts(with: Array(Self.composed.utf8)), "stored and shown in NFC")
        let twin = try cli.run(["keys", "generate", Self.composed])
        #expect(twin.status == 73)
        expectCleanFailure(twin)
        let sealed = try cli.run(["encrypt", "--key", Self.composed], stdin: "x")
        #expect(try cli.run(["decrypt", "--key", Self.decomposed], stdin: sealed.stdout).stdout == "x\n")
        #expect(try cli.run(["keys", "list"]).stdout.split(separator: "\n").count == 1)
        let passphraseFile = cli.home.appendingPathComponent("passphrase").path
        try "correct horse battery\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        #expect(try cli.run(["keys", "backup", "--all", "--passphrase-file", passphraseFile]).status == 0)
    }

    @Test(.requires(.python)) func aFileStoredUnderAnotherFormIsReportedNotUsed() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", Self.composed]).status == 0)
        let folder = cli.home.appendingPathComponent("keys/default")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix(".key") })
        _ = try Self.storeAsLegacy(folder: folder, name: name)
        let listed = try cli.run(["keys", "list"])
        #expect(listed.status != 0)
        #expect(listed.stderr.contains("Unicode NFC"), "\(listed.stderr)")
        // Not used under the id.
        expectCleanFailure(try cli.run(["encrypt", "--key", Self.composed], stdin: "x"))

        // keys migrate --normalize moves it to the NFC id, with consent (--yes without a terminal).
        let unasked = try cli.run(["keys", "migrate", "--normalize"])
        #expect(unasked.status == 64)
        expectCleanFailure(unasked, containing: "--yes")
        let moved = try cli.run(["keys", "migrate", "--normalize", "--yes", "--v1-only"])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stdout.hasPrefix(Self.composed + "\t") && moved.stdout.hasSuffix("\tnormalized\n"), "\(moved.stdout)")
        #expect(try cli.run(["keys", "list"]).status == 0)
        let sealed = try cli.run(["encrypt", "--key", Self.decomposed], stdin: "x")
        let opened = try cli.run(["decrypt", "--key", Self.composed], stdin: sealed.stdout)
        #expect(sealed.status == 0 && opened.stdout == "x\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".key") } == [name])
        #expect(try cli.run(["keys", "migrate", "--normalize", "--yes"]).stderr.contains("nothing to do"))
    }

    @Test(.requires(.python)) func aTwinWithAnotherKeyIsNotMergedAway() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", Self.composed]).status == 0)
        let folder = cli.home.appendingPathComponent("keys/default")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix(".key") })
        // The legacy file keeps this key; a new, different key is made under the NFC id.
        let legacyName = try Self.storeAsLegacy(folder: folder, name: name)
        #expect(try cli.run(["keys", "generate", Self.composed]).status == 0)
        let refused = try cli.run(["keys", "migrate", "--normalize", "--yes", "--v1-only"])
        #expect(refused.status == 73)
        expectCleanFailure(refused)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(legacyName).path), "the legacy file stays")
    }

    /// `--normalize --yes` said "normalized" and stranded every v2 value an
    /// earlier SealKit had bound to the old spelling. It now refuses unless told none exist.
    @Test(.requires(.pyNaCl)) func normalizingRefusesWhileV2ValuesMayBindTheOldSpelling() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", Self.composed]).status == 0)
        let key = try #require(try TransferCLITests.keyMaterial(cli).first)
        let folder = cli.home.appendingPathComponent("keys/default")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix(".key") })
        let legacyName = try Self.storeAsLegacy(folder: folder, name: name)
        // What an earlier SealKit sealed for the NFD spelling (PyNaCl, from docs/format.md).
        let bound = try PythonV2.seal("078-05-1120", keys: [key], id: Self.decomposed, place: .field("ssn"))
        let files = { try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".key") }.sorted() }
        let before = try files()
        let refused = try cli.run(["keys", "migrate", "--normalize", "--yes"])
        #expect(refused.status == 64)
        expectCleanFailure(refused, containing: "v2 values sealed for it under that spelling would no longer open")
        #expect(refused.stderr.contains("--v1-only"))
        #expect(try files() == before && before == [legacyName], "nothing was changed")
        // Told so, it moves; the value bound to the old spelling then opens under neither, as the refusal said.
        #expect(try cli.run(["keys", "migrate", "--normalize", "--yes", "--v1-only"]).status == 0)
        let schema = try KeyForkCLITests.file(cli, "schema.json", KeyForkCLITests.schema)
        let stranded = try cli.run(["profile", "decrypt", "--schema", schema, "--key", Self.composed], stdin: #"{"ssn":"\#(bound)"}"#)
        expectCleanFailure(stranded, containing: "sealed for another field or user")
    }
}
