import Foundation
import SealKit
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `sealkit profile` with a schema that asks for seals: each attack exits 65 with a
/// one-line reason naming which, two devices writing at once, and SIGKILLs between writing a
/// profile and recording its version.
@Suite("sealkit profile: seals")
struct ProfileSealCLITests {
    static let key = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="
    static let schemaText = """
        {"schema": {"name": {"type": "string"},
                    "ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
                    "notes": {"type": "string", "encryption": {"state": "enabled"}},
                    "salary": {"type": "number", "encryption": {"state": "enabled"}}},
         "sealkit": {"seal": true}}
        """

    /// A device: a keystore holding the shared key as `ada`, and the schema file.
    struct Device {
        let cli: CLI
        let schema: String

        init() throws {
            cli = try CLI()
            schema = try cli.write(ProfileSealCLITests.schemaText, to: "schema.json")
            #expect(try cli.run(["keys", "import", "ada"], stdin: ProfileSealCLITests.key).status == 0)
        }

        func profile(_ operation: String, _ input: String, _ extra: [String] = []) throws -> CLI.Result {
            try cli.run(["profile", operation, "--schema", schema, "--key", "ada"] + extra, stdin: input)
        }

        /// Encrypts and expects success.
        func write(_ plaintext: String) throws -> String {
            let result = try profile("encrypt", plaintext)
            #expect(result.status == 0, "\(result.stderr)")
            return result.output
        }

        func read(_ encrypted: String) throws -> String {
            let result = try profile("decrypt", encrypted)
            #expect(result.status == 0, "\(result.stderr)")
            return result.output
        }
    }

    static func replacing(_ json: String, _ name: String, with value: JSONValue?) throws -> String {
        var profile = try JSONValue.parse(json)
        profile[name] = value
        return profile.serialized()
    }

    static func member(_ json: String, _ name: String) throws -> JSONValue? {
        try JSONValue.parse(json)[name]
    }

    @Test func eachAttackExits65NamingWhich() throws {
        let device = try Device()
        let v1 = try device.write(#"{"name": "Ada", "ssn": "078-05-1120", "notes": "n1", "salary": null}"#)
        #expect(try Self.member(v1, "sealkit_seal")?.stringValue?.hasPrefix("sks2:") == true)
        let v2 = try device.write(try Self.replacing(try device.read(v1), "ssn", with: "111-22-3333"))
        #expect(try Self.member(try device.read(v2), "ssn") == "111-22-3333")

        let attacks: [(String, String, String)] = [
            ("field rolled back", try Self.replacing(v2, "ssn", with: try Self.member(v1, "ssn")), "does not match"),
            ("field dropped", try Self.replacing(v2, "notes", with: JSONValue?.none), "does not match"),
            ("null field dropped", try Self.replacing(v2, "salary", with: JSONValue?.none), "does not match"),
            ("field added", try Self.replacing(v2, "salary", with: try Self.member(device.profile("encrypt", #"{"salary": 9}"#, ["--reseal"]).output, "salary")), "does not match"),
            ("seal removed", try Self.replacing(v2, "sealkit_seal", with: JSONValue?.none), "missing"),
            ("older profile", v1, "older than version 3 seen here"),
            ("another user's seal", try Self.replacing(v2, "sealkit_seal", with: try Self.sealOfAnotherUser()), "does not match"),
        ]
        for (attack, profile, reason) in attacks {
            for operation in ["decrypt", "rotate"] {
                let result = try device.profile(operation, profile)
                #expect(result.status == 65, "\(attack), \(operation): exit \(result.status)")
                expectCleanFailure(result, containing: reason)
            }
        }
        // Removing the seal is no way round it in --ndjson either.
        let lines = try device.profile("decrypt", try Self.replacing(v2, "sealkit_seal", with: JSONValue?.none) + "\n", ["--ndjson"])
        #expect(lines.status == 65)
        expectCleanFailure(lines, containing: "line 1: the profile's seal is missing")
    }

    /// A seal for `bob` under the same key bytes.
    static func sealOfAnotherUser() throws -> JSONValue? {
        let device = try Device()
        #expect(try device.cli.run(["keys", "import", "bob"], stdin: key).status == 0)
        let result = try device.cli.run(["profile", "encrypt", "--schema", device.schema, "--key", "bob"], stdin: #"{"notes": "n1"}"#)
        return try member(result.output, "sealkit_seal")
    }

    @Test func ndjsonSealsEveryLine() throws {
        let device = try Device()
        let input = (0..<50).map { #"{"name": "u\#($0)", "notes": "n\#($0)"}"# }.joined(separator: "\n") + "\n"
        let encrypted = try device.profile("encrypt", input, ["--ndjson"])
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let lines = encrypted.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 50)
        #expect(try lines.allSatisfy { try Self.member($0, "sealkit_seal") != nil })
        let decrypted = try device.profile("decrypt", encrypted.stdout, ["--ndjson"])
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        #expect(decrypted.output.split(separator: "\n").count == 50)
    }

    /// Two devices with the same key both write version 2 over version 1; the laptop's reaches the
    /// server. The phone's next read is a conflicting write; it resolves as docs/format.md says:
    /// read the server's copy with --accept-conflict, merge, encrypt (version 3, higher than both).
    @Test func twoDevicesWritingAtOnce() throws {
        let phone = try Device()
        let laptop = try Device()
        let v1 = try phone.write(#"{"ssn": "1", "notes": "base"}"#)
        let base = try laptop.read(v1)
        _ = try phone.read(v1)
        let fromPhone = try phone.write(try Self.replacing(base, "notes", with: "phone"))
        let fromLaptop = try laptop.write(try Self.replacing(base, "ssn", with: "2"))

        let conflict = try phone.profile("decrypt", fromLaptop)
        #expect(conflict.status == 65)
        expectCleanFailure(conflict, containing: "conflicting write")
        let theirs = try phone.profile("decrypt", fromLaptop, ["--accept-conflict"])
        #expect(theirs.status == 0, "\(theirs.stderr)")
        let v3 = try phone.write(try Self.replacing(theirs.output, "notes", with: "phone"))
        for device in [phone, laptop] {
            let read = try device.read(v3)
            #expect(try Self.member(read, "ssn") == "2" && Self.member(read, "notes") == "phone")
        }
        // Both now refuse either version 2, --accept-conflict or not.
        for device in [phone, laptop] {
            for profile in [fromPhone, fromLaptop] {
                let older = try device.profile("decrypt", profile, ["--accept-conflict"])
                #expect(older.status == 65 && older.stderr.contains("older than version 3"), "\(older.stderr)")
            }
        }
    }

    /// SIGKILL at random moments of `profile encrypt` (which records the new version, then writes the
    /// profile): whatever the moment, the record is whole, a profile the command finished handing out
    /// is accepted, the profile before the last one handed out is refused, and the next write and read succeed.
    @Test func killedWritesNeverAcceptAnOlderProfileNorRefuseANewerOne() throws {
        let device = try Device()
        var handedOut = [try device.write(#"{"ssn": "0", "notes": "v"}"#)]
        var generator = SystemRandomNumberGenerator()
        let begin = Date()
        _ = try device.read(handedOut[0])
        let typical = Date().timeIntervalSince(begin)
        var kills = 0
        var attempt = 0
        while kills < 12 && attempt < 120 {
            attempt += 1
            let plaintext = try Self.replacing(try device.read(handedOut.last!), "ssn", with: .string("\(attempt)"))
            let process = try ChildProcess(
                CLI.executable.path, ["profile", "encrypt", "--schema", device.schema, "--key", "ada"],
                environment: device.cli.environment, killAfter: nil)
            _ = process.write(Array(plaintext.utf8))
            process.closeInput()
            usleep(UInt32(Double.random(in: 0...(typical * 1.2), using: &generator) * 1_000_000))
            process.kill()
            let outcome = process.finish(stdin: [], timeout: 10)
            if outcome.signal == SIGKILL { kills += 1 }
            let output = outcome.stdoutText.trimmingCharacters(in: .newlines)
            if let profile = try? JSONValue.parse(output), profile["sealkit_seal"] != nil {
                // Handed out: accepted, and the one before it refused.
                let newer = try device.profile("decrypt", output)
                #expect(newer.status == 0, "a profile handed out before the kill is refused: \(newer.stderr)")
                let older = try device.profile("decrypt", handedOut.last!)
                #expect(older.status == 65, "the profile before a handed-out one is accepted after a kill")
                handedOut.append(output)
            } else {
                // Nothing handed out: the last handed out may be refused (its version was recorded for
                // a write that never left), but nothing older is accepted, and the record is whole.
                let last = try device.profile("decrypt", handedOut.last!)
                #expect(last.status == 0 || last.stderr.contains("older than version"), "\(last.stderr)")
                if handedOut.count > 1 {
                    let older = try device.profile("decrypt", handedOut[handedOut.count - 2])
                    #expect(older.status == 65 && older.stderr.contains("older than version"), "\(older.stderr)")
                }
                // The next write is accepted: what an app does after a write that did not finish.
                let retried = try device.write(plaintext)
                #expect(try device.profile("decrypt", retried).status == 0)
                handedOut.append(retried)
            }
        }
        #expect(kills >= 12, "only \(kills) of \(attempt) runs were killed mid-way")
    }
}
