import Foundation
import SealKit
import SealTestSupport
import Testing

@Suite("sealkit profile")
struct ProfileCLITests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/profile")
    static let schema = fixtures.appendingPathComponent("schema.json").path
    static let profilePath = fixtures.appendingPathComponent("profile.json").path
    static let rowndKey = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="

    static func fixtureProfile() throws -> JSONValue {
        try JSONValue.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: profilePath))))
    }

    @Test func encryptsFromAFileAndDecryptsFromStdin() throws {
        let cli = try CLI.withKey()
        let encrypted = try cli.run(["profile", "encrypt", "--schema", Self.schema, "--key", "ada", Self.profilePath])
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        #expect(encrypted.stderr.isEmpty)
        let sealed = try JSONValue.parse(encrypted.output)
        #expect(sealed["data"]?["ssn"]?.stringValue != "078-05-1120")
        #expect(sealed["data"]?["middle_name"] == .null)
        #expect(sealed["data"]?["email"] == "ada@example.com")
        #expect(!encrypted.stdout.contains("078-05-1120") && !encrypted.stdout.contains("St James"))

        for source in [[], ["-"]] {
            let decrypted = try cli.run(
                ["profile", "decrypt", "--schema", Self.schema, "--key", "ada"] + source, stdin: encrypted.stdout)
            #expect(decrypted.status == 0 && decrypted.stderr.isEmpty, "\(decrypted.stderr)")
            #expect(try JSONValue.parse(decrypted.output) == Self.fixtureProfile())
            // Compact output keeps key order and exact numbers.
            #expect(decrypted.output == (try Self.fixtureProfile().serialized()))
        }
        let pretty = try cli.run(
            ["profile", "decrypt", "--pretty", "--schema", Self.schema, "--key", "ada"], stdin: encrypted.stdout)
        #expect(pretty.output == (try Self.fixtureProfile().serialized(pretty: true)))
    }

    @Test(.requires(.pyNaCl)) func pyNaClOpensWhatTheCommandEncrypts() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "rownd"], stdin: Self.rowndKey).status == 0)
        let encrypted = try cli.run(["profile", "encrypt", "--schema", Self.schema, "--key", "rownd", Self.profilePath])
        #expect(encrypted.status == 0)
        let script = """
            import sys, json, base64, nacl.secret
            key = sys.stdin.readline().strip()
            data = json.loads(sys.stdin.read())["data"]
            box = nacl.secret.SecretBox(base64.b64decode(key))
            print(json.dumps([box.decrypt(base64.b64decode(data[f])).decode() for f in ("ssn", "credit_score", "recovery_codes")]))
            """
        let result = try python(script, stdin: Self.rowndKey + "\n" + encrypted.stdout)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JSONValue.parse(result.stdout) == ["078-05-1120", "812", #"["4821-0937","7730-1185","0042-9911"]"#])
    }

    @Test func ndjsonStreamsOneProfilePerLine() throws {
        let cli = try CLI.withKey()
        let profiles: [JSONValue] = (0..<300).map { index in
            ["id": .string("user_\(index)"), "data": ["ssn": .string("000-00-\(index)"), "credit_score": .number("\(index).5"), "x": nil]]
        }
        let input = profiles.map { $0.serialized() }.joined(separator: "\n") + "\n"
        let encrypted = try cli.run(["profile", "encrypt", "--ndjson", "--schema", Self.schema, "--key", "ada"], stdin: input)
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let lines = encrypted.output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 300)
        #expect(!encrypted.stdout.contains("000-00-"))

        let file = cli.home.appendingPathComponent("profiles.ndjson")
        try encrypted.stdout.write(to: file, atomically: true, encoding: .utf8)
        let decrypted = try cli.run(["profile", "decrypt", "--ndjson", "--schema", Self.schema, "--key", "ada", file.path])
        #expect(decrypted.status == 0)
        #expect(decrypted.stdout == input)
    }

    @Test func retiredKeysAreReportedAndRotated() throws {
        let cli = try CLI.withKey()
        let encrypted = try cli.run(["profile", "encrypt", "--schema", Self.schema, "--key", "ada", Self.profilePath])
        #expect(try cli.run(["keys", "rotate", "ada"]).status == 0)

        let decrypted = try cli.run(["profile", "decrypt", "--schema", Self.schema, "--key", "ada"], stdin: encrypted.stdout)
        #expect(decrypted.status == 0)
        #expect(try JSONValue.parse(decrypted.output) == Self.fixtureProfile())
        #expect(
            decrypted.stderr
                == "sealkit: warning: ssn, date_of_birth, credit_score, account_balance, is_verified, home_address, "
                + "recovery_codes decrypted only with a retired key; run 'sealkit profile rotate' to move them to the current key\n")

        let ndjson = try cli.run(
            ["profile", "decrypt", "--ndjson", "--schema", Self.schema, "--key", "ada"],
            stdin: #"{"ssn":null}"# + "\n" + encrypted.stdout + encrypted.stdout)
        #expect(ndjson.status == 0)
        #expect(ndjson.stderr.hasPrefix("sealkit: warning: 2 profiles have fields decrypted only with a retired key (first, line 2: ssn, date_of_birth,"))
        #expect(ndjson.stderr.split(separator: "\n").count == 1)

        let rotated = try cli.run(["profile", "rotate", "--schema", Self.schema, "--key", "ada"], stdin: encrypted.stdout)
        #expect(rotated.status == 0 && rotated.stderr.isEmpty)
        let after = try cli.run(["profile", "decrypt", "--schema", Self.schema, "--key", "ada"], stdin: rotated.stdout)
        #expect(after.status == 0 && after.stderr.isEmpty)
        #expect(try JSONValue.parse(after.output) == Self.fixtureProfile())
        // Rotating again leaves every ciphertext as it was.
        let again = try cli.run(["profile", "rotate", "--schema", Self.schema, "--key", "ada"], stdin: rotated.stdout)
        #expect(again.stdout == rotated.stdout)
    }

    @Test func failuresAreOneLineWithNothingOnStdout() throws {
        let cli = try CLI.withKey()
        #expect(try cli.run(["keys", "generate", "other"]).status == 0)
        let encrypted = try cli.run(["profile", "encrypt", "--schema", Self.schema, "--key", "ada", Self.profilePath])
        let base = ["--schema", Self.schema, "--key", "ada"]

        let wrongKey = try cli.run(["profile", "decrypt", "--schema", Self.schema, "--key", "other"], stdin: encrypted.stdout)
        // One reason, said once, with its seven fields.
        expectCleanFailure(wrongKey, containing: "7 profile fields failed: ssn, ")
        // Not one field opens: the likely cause, a key this keystore lacks, is named.
        #expect(wrongKey.stderr.components(separatedBy: "most likely sealed under a key this keystore does not have").count == 2)
        #expect(wrongKey.stderr.contains("sealkit transfer receive") && !wrongKey.stderr.contains("--rownd"))
        #expect(wrongKey.status == 65)
        for secret in ["078-05-1120", "1815-12-10", "812", "St James"] {
            #expect(!wrongKey.stderr.contains(secret))
        }

        expectCleanFailure(
            try cli.run(["profile", "encrypt"] + base, stdin: #"{"credit_score": "812"}"#),
            containing: #"credit_score holds a string but the schema declares type "number""#)
        expectCleanFailure(try cli.run(["profile", "encrypt"] + base, stdin: "[1,]"), containing: "the profile is invalid JSON at line 1, column 4")
        expectCleanFailure(try cli.run(["profile", "encrypt"] + base, stdin: "[]"), containing: "a profile must be a JSON object")
        expectCleanFailure(try cli.run(["profile", "encrypt"] + base + ["/nonexistent/p.json"]), containing: "cannot read the profile file")
        expectCleanFailure(
            try cli.run(["profile", "encrypt", "--schema", "/nonexistent/s.json", "--key", "ada"], stdin: "{}"),
            containing: "cannot read the schema file")
        expectCleanFailure(
            try cli.run(["profile", "encrypt", "--schema", Self.schema, "--key", "nobody"], stdin: "{}"),
            containing: "no key for 'nobody'")
        expectCleanFailure(try cli.run(["profile", "encrypt", "--ndjson", "--pretty"] + base, stdin: "{}"))

        let badSchema = cli.home.appendingPathComponent("bad-schema.json")
        try #"{"schema": {"ssn": {"encryption": {"state": "on"}}}}"#.write(to: badSchema, atomically: true, encoding: .utf8)
        expectCleanFailure(
            try cli.run(["profile", "encrypt", "--schema", badSchema.path, "--key", "ada"], stdin: "{}"),
            containing: #"invalid schema: schema.ssn.encryption.state: expected "enabled" or "disabled", found "on""#)
        let emailSchema = cli.home.appendingPathComponent("email-schema.json")
        try #"{"email": {"encryption": {"state": "enabled"}}}"#.write(to: emailSchema, atomically: true, encoding: .utf8)
        expectCleanFailure(
            try cli.run(["profile", "encrypt", "--schema", emailSchema.path, "--key", "ada"], stdin: "{}"),
            containing: #""email" is used to look users up and cannot be encrypted"#)
    }

    @Test func ndjsonFailuresNameTheLine() throws {
        let cli = try CLI.withKey()
        let base = ["--ndjson", "--schema", Self.schema, "--key", "ada"]
        expectCleanFailure(
            try cli.run(["profile", "encrypt"] + base, stdin: "{}\n{\"ssn\": 1}\n{}\n"),
            containing: #"line 2: 1 profile field failed: ssn holds a number"#)
        expectCleanFailure(
            try cli.run(["profile", "encrypt"] + base, stdin: "{}\n{}\n  {\"a\" 1}\n"),
            containing: "the profile is invalid JSON at line 3, column 8: found '1', expected ':' after the key")
        // Blank lines are skipped (and counted, as audit does) but still numbered.
        let skipped = try cli.run(["profile", "encrypt"] + base, stdin: "{}\n\n{}\n")
        #expect(skipped.status == 0 && skipped.stdout == "{}\n{}\n" && skipped.stderr == "sealkit: note: 1 blank line skipped\n")
        expectCleanFailure(
            try cli.run(["profile", "encrypt"] + base, stdin: "{}\n\n{\"ssn\": 1}\n"), containing: "line 3: 1 profile field failed")
        expectCleanFailure(
            try cli.run(["profile", "decrypt"] + base, stdin: "{}\n{\"is_verified\": true}\n"),
            containing: "line 2: 1 profile field failed: is_verified holds a boolean, not a ciphertext")
    }
}

extension ProfileCLITests {
    // MARK: Schemas that encrypt nothing

    @Test(arguments: [
        (#"{"ssn": {"type": "string", "encrpytion": {"state": "enabled"}}}"#, "\"encrpytion\""),
        (#"{"ssn": {"type": "string", "Encryption": {"state": "enabled"}}}"#, "\"Encryption\""),
        (#"{"schemas": {"ssn": {"type": "string", "encryption": {"state": "enabled"}}}}"#, "\"schemas\""),
        (#"{"ssn": {"type": "string", "encryption": {"state": "disabled"}}}"#, "flags no field"),
    ])
    func schemasThatEncryptNothingAreRefused(schema: String, named: String) throws {
        let cli = try CLI.withKey()
        let path = try cli.write(schema, to: "schema.json")
        let profile = #"{"ssn": "078-05-1120"}"#
        for command in ["encrypt", "decrypt", "rotate"] {
            let result = try cli.run(["profile", command, "--schema", path, "--key", "ada"], stdin: profile)
            expectCleanFailure(result, containing: named)
            #expect(result.status == 65)
        }
        let exports = try cli.write(profile + "\n", to: "exports/a.ndjson")
        let audit = try cli.run(["audit", "--schema", path, exports])
        expectCleanFailure(audit, containing: named)
        #expect(audit.status == 65)
    }
}

extension ProfileCLITests {
    // MARK: Newline-delimited profiles and grouped errors

    @Test func blankNDJSONLinesAreSkippedAndCountedAlike() throws {
        let cli = try CLI.withKey()
        let schema = CLI.profileFixtures.appendingPathComponent("schema.json").path
        let input = #"{"ssn": "078-05-1120"}"# + "\n\n \t\n" + #"{"ssn": "219-09-9999"}"# + "\n"
        let encrypted = try cli.run(["profile", "encrypt", "--ndjson", "--schema", schema, "--key", "ada"], stdin: input)
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        #expect(encrypted.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 3)
        #expect(encrypted.stderr.contains("2 blank lines skipped"), "\(encrypted.stderr)")

        let file = try cli.write(encrypted.stdout + "\n\n", to: "exports/a.ndjson")
        let audit = try cli.run(["audit", "--schema", schema, file])
        #expect(audit.stdout.contains("2 blank lines skipped"), "\(audit.stdout)")
        let json = try cli.run(["audit", "--format", "json", "--schema", schema, file])
        #expect(json.stdout.contains(#""blank_lines": 2"#), "\(json.stdout)")
    }

    @Test func profileErrorsGroupFieldsByReason() throws {
        let cli = try CLI.withKey()
        let schema = try cli.write(
            #"{"a": {"type": "string", "encryption": {"state": "enabled"}}, "b": {"type": "string", "encryption": {"state": "enabled"}}, "c": {"type": "number", "encryption": {"state": "enabled"}}}"#,
            to: "schema.json")
        let other = try CLI()
        #expect(try other.run(["keys", "generate", "eve"]).status == 0)
        let foreign = try other.run(["profile", "encrypt", "--schema", schema, "--key", "eve"], stdin: #"{"a": "x", "b": "y", "c": 1}"#)
        #expect(foreign.status == 0)
        let result = try cli.run(["profile", "decrypt", "--schema", schema, "--key", "ada"], stdin: foreign.stdout)
        expectCleanFailure(result, containing: "3 profile fields failed")
        #expect(result.stderr.components(separatedBy: "none of the user's keys opens").count == 2, "\(result.stderr)")
        #expect(result.stderr.contains("a, b, c"), "\(result.stderr)")
    }
}
