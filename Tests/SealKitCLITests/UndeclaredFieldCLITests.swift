import Foundation
import SealKit
import Testing

/// The schema flags `salery`, the profile holds `salary`; the value must not
/// leave in plaintext with exit 0, whatever command carries it.
@Suite("sealkit profile and audit: fields the schema does not declare")
struct UndeclaredFieldCLITests {
    static let message = "sealkit: `salary` is not in the schema, and its name is near the encrypted field `salery`: "
        + "declare `salary` in the schema if it is another field, or correct whichever of the two names is misspelt, "
        + "in the schema or in the profile\n"
    static let schemaText = #"{"schema": {"salery": {"type": "number", "encryption": {"state": "enabled"}}, "name": {"type": "string"}}}"#
    static let profile = #"{"user_id": "u1", "name": "Ada", "salary": 85000.50}"#

    /// A CLI with a key `ada`, and the schema written beside it (with `settings` beside `"schema"`).
    static func setUp(settings: String = "") throws -> (CLI, schema: String) {
        let cli = try CLI.withKey()
        let path = cli.home.appendingPathComponent("schema.json").path
        let text = settings.isEmpty ? schemaText : String(schemaText.dropLast()) + ", " + settings + "}"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (cli, path)
    }

    @Test func rotateAndNDJSONRefuseItToo() throws {
        let (cli, schema) = try Self.setUp()
        let sealed = try cli.run(["profile", "encrypt", "--schema", schema, "--key", "ada"], stdin: #"{"name": "Ada", "salery": 1}"#)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(try cli.run(["keys", "rotate", "ada"]).status == 0)
        // A stored profile that also holds the misspelt field in plaintext.
        let stored = String(sealed.output.dropLast()) + #","salary":85000.50}"#
        let rotated = try cli.run(["profile", "rotate", "--schema", schema, "--key", "ada"], stdin: stored)
        expectCleanFailure(rotated)
        #expect(rotated.status == 65 && rotated.stderr == Self.message, "\(rotated.stderr)")

        let lines = [#"{"name": "Bob", "salery": 2}"#, Self.profile, #"{"salery": 3}"#].joined(separator: "\n") + "\n"
        let bulk = try cli.run(["profile", "encrypt", "--ndjson", "--schema", schema, "--key", "ada"], stdin: lines)
        expectCleanFailure(bulk)
        #expect(bulk.status == 65)
        #expect(bulk.stderr == "sealkit: line 2: " + Self.message.dropFirst("sealkit: ".count), "\(bulk.stderr)")
    }

    @Test func theAuditReportsUndeclaredFields() throws {
        let (cli, schema) = try Self.setUp()
        let export = cli.home.appendingPathComponent("export.ndjson")
        let sealed = try cli.run(["profile", "encrypt", "--schema", schema, "--key", "ada"], stdin: #"{"salery": 1}"#)
        #expect(sealed.status == 0)
        // Every profile carries user_id (a note, once); the second misspells the flagged field (an error).
        let lines = [
            String(sealed.output.dropLast()) + #","user_id":"u1"}"#,
            #"{"user_id": "u2", "salary": 85000.50}"#,
            #"{"user_id": "u3", "salary": 1}"#,
        ]
        try (lines.joined(separator: "\n") + "\n").write(to: export, atomically: true, encoding: .utf8)
        let audit = try cli.run(["audit", "--schema", schema, "--format", "json", export.path])
        #expect(audit.status == 1, "\(audit.stderr)")
        let findings = try #require(try JSONValue.parse(audit.output)["findings"]?.arrayValue)
        let undeclared = findings.filter { $0["kind"] == "undeclared-field" }
        #expect(undeclared.map { $0["severity"]?.stringValue ?? "" } == ["note", "error", "error"], "\(audit.output)")
        #expect(undeclared.map { $0["field"]?.stringValue ?? "" } == ["user_id", "salary", "salary"])
        try #require(undeclared.count == 3)
        #expect(undeclared[1]["message"]?.stringValue
            == "`salary` is not in the schema, and its name is near the encrypted field `salery`; its value is not audited as a ciphertext")
        #expect(!audit.stdout.contains("85000"))
        // Errors fail even --fail-on error; with only the note left, --fail-on error passes.
        #expect(try cli.run(["audit", "--schema", schema, "--fail-on", "error", export.path]).status == 1)
        try (lines[0] + "\n").write(to: export, atomically: true, encoding: .utf8)
        #expect(try cli.run(["audit", "--schema", schema, "--fail-on", "error", export.path]).status == 0)
        // --complete-schema (or the schema's setting) makes the note an error.
        let complete = try cli.run(["audit", "--schema", schema, "--complete-schema", "--fail-on", "error", "--format", "json", export.path])
        #expect(complete.status == 1)
        #expect(try JSONValue.parse(complete.output)["findings"]?.arrayValue?.first?["severity"] == "error")
        let (_, completeSchema) = try Self.setUp(settings: #""sealkit": {"undeclared": "error"}"#)
        #expect(try cli.run(["audit", "--schema", completeSchema, "--fail-on", "error", export.path]).status == 1)
    }

    /// An export that audited clean before 1.0 must again: `user_id`, which real Rownd exports carry, is a note
    /// (reported in every format, counted, SARIF level `note`) that fails only when asked.
    @Test func aFieldNearNoEncryptedOneIsANoteThatFailsOnlyWhenAsked() throws {
        let (cli, schema) = try Self.setUp()
        // Two profiles as Rownd exports them, each with its own ciphertext and a user_id.
        var lines: [String] = []
        for user in ["u1", "u2"] {
            let sealed = try cli.run(["profile", "encrypt", "--schema", schema, "--key", "ada"], stdin: #"{"name": "Ada", "salery": 1}"#)
            #expect(sealed.status == 0, "\(sealed.stderr)")
            lines.append(String(sealed.output.dropLast()) + #","user_id":"\#(user)"}"#)
        }
        let export = try cli.write(lines.joined(separator: "\n") + "\n", to: "rownd/export.ndjson")

        // The default, --fail-on warning: exit 0, the note in the table and in the summary's counts.
        let text = try cli.run(["audit", "--schema", schema, export])
        #expect(text.status == 0, "\(text.stdout)\(text.stderr)")
        #expect(text.stderr.isEmpty, "\(text.stderr)")
        let rows = text.stdout.split(separator: "\n").map(String.init)
        #expect(rows.filter { $0.hasPrefix("note ") && $0.contains("undeclared-field") && $0.contains("user_id") }.count == 1, "\(text.stdout)")
        #expect(rows.last == "1 finding (1 file, 2 values): 1 undeclared-field.", "\(text.stdout)")

        let json = try cli.run(["audit", "--schema", schema, "--format", "json", export])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try JSONValue.parse(json.output)
        let findings = try #require(report["findings"]?.arrayValue)
        try #require(findings.count == 1, "\(json.output)")
        #expect(findings[0]["kind"] == "undeclared-field" && findings[0]["severity"] == "note" && findings[0]["field"] == "user_id")
        #expect(report["summary"]?["findings"]?["undeclared-field"] == .number("1"), "\(json.output)")

        let sarif = try cli.run(["audit", "--schema", schema, "--format", "sarif", export])
        #expect(sarif.status == 0, "\(sarif.stderr)")
        let run = try #require(try JSONValue.parse(sarif.output)["runs"]?.arrayValue?.first)
        let results = try #require(run["results"]?.arrayValue)
        try #require(results.count == 1, "\(sarif.output)")
        #expect(results[0]["ruleId"] == "undeclared-field" && results[0]["level"] == "note", "\(sarif.output)")
        let rules = try #require(run["tool"]?["driver"]?["rules"]?.arrayValue)
        let rule = try #require(rules.first { $0["id"] == "undeclared-field" })
        #expect(rule["defaultConfiguration"]?["level"] == "note")

        // Asked: --fail-on note fails on it; --complete-schema and the schema's setting make it an error.
        let asked = try cli.run(["audit", "--schema", schema, "--fail-on", "note", export])
        #expect(asked.status == 1, "\(asked.stdout)")
        #expect(asked.stderr == "sealkit: 1 finding (1 file, 2 values): 1 undeclared-field.\n", "\(asked.stderr)")
        let complete = try cli.run(["audit", "--schema", schema, "--complete-schema", "--format", "json", export])
        #expect(complete.status == 1)
        // An error in every profile that holds it, as each is a value the schema does not vouch for.
        #expect(try JSONValue.parse(complete.output)["findings"]?.arrayValue?.map { $0["severity"] } == ["error", "error"], "\(complete.output)")
        let (_, strict) = try Self.setUp(settings: #""sealkit": {"undeclared": "error"}"#)
        #expect(try cli.run(["audit", "--schema", strict, export]).status == 1)

        // A near-miss stays an error, which fails by default.
        let misspelt = try cli.write(lines[0] + "\n" + #"{"user_id": "u3", "salary": 85000.50}"# + "\n", to: "near/export.ndjson")
        let near = try cli.run(["audit", "--schema", schema, "--format", "json", misspelt])
        #expect(near.status == 1, "\(near.stderr)")
        let nearFindings = try #require(try JSONValue.parse(near.output)["findings"]?.arrayValue)
        #expect(nearFindings.map { "\($0["field"]?.stringValue ?? "") \($0["severity"]?.stringValue ?? "")" } == ["user_id note", "salary error"],
            "\(near.output)")
    }
}
