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
