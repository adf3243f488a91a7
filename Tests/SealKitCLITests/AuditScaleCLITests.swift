import Foundation
import SealTestSupport
import Testing

/// The audit at scale, at the command line: v2 values as `sealkit encrypt --format v2` writes them are counted, the progress
/// line shows on a terminal only and leaves nothing behind, and the split audit's two halves are additions that
/// refuse what they cannot do.
@Suite("sealkit audit at scale")
struct AuditScaleCLITests {
    @Test func aCopiedV2ValueIsADuplicateAsACopiedV1ValueIs() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "ada"]).status == 0)
        for format in ["v1", "v2"] {
            let sealed = try cli.run(["encrypt", "--key", "ada", "--format", format], stdin: "1970-01-01")
            #expect(sealed.status == 0, "\(sealed.stderr)")
            #expect(sealed.output.hasPrefix("sk2:") == (format == "v2"))
            let export = cli.home.appendingPathComponent("export-\(format).ndjson")
            try Data("{\"id\": \"a\", \"dob\": \"\(sealed.output)\"}\n{\"id\": \"b\", \"dob\": \"\(sealed.output)\"}\n".utf8).write(to: export)
            let result = try cli.run(["audit", "--format", "json", export.path])
            #expect(result.status == 1, "\(format): \(result.stdout)")
            let root = try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
            let kinds = (root["findings"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
            #expect(kinds == ["duplicate-ciphertext"], "\(format)")
        }
    }

    /// About 12 MiB of NDJSON, over the 8 MiB from which the progress line shows.
    func bigExport(in cli: CLI) throws -> URL {
        let value = Data((0..<64).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var text = ""
        for index in 0..<100_000 {
            let nonce = Data((0..<24).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            text += "{\"id\": \"user-\(index)\", \"n\": \"\(nonce)\", \"ssn\": \"\(nonce)\(value.prefix(40))\"}\n"
        }
        let url = cli.home.appendingPathComponent("big.ndjson")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func progressShowsOnATerminalOnlyAndIsErasedWhenDone() throws {
        let cli = try CLI()
        let export = try bigExport(in: cli)
        var environment = cli.environment
        environment["TERM"] = "xterm"
        let arguments = ["audit", "--format", "json", "--fail-on", "error", export.path]
        let screen = try ChildProcess.run(CLI.executable.path, arguments, environment: environment, terminal: 200)
        let shown = screen.stdoutText
        #expect(screen.status == 0, "\(shown.suffix(500))")
        let progress = try #require(shown.range(of: "sealkit audit: ", options: .backwards), "no progress line: \(shown.prefix(300))")
        let line = String(shown[progress.lowerBound...].prefix { $0 != "\r" && $0 != "\n" })
        // Bytes of the known total, values, the rate and the time left.
        #expect(line.contains(" MiB of ") && line.contains(" values, ") && line.contains(" MiB/s") && line.hasSuffix(" left"), "\(line)")
        // Erased when done: the last drawing is followed by a carriage return and an erase, before the report.
        let erase = try #require(shown.range(of: "\r\u{1B}[K", options: .backwards))
        #expect(erase.lowerBound > progress.lowerBound)
        #expect(shown[erase.upperBound...].hasPrefix("{"), "\(shown[erase.upperBound...].prefix(80).debugDescription)")

        // --no-progress on a terminal, and no terminal at all: never a progress line.
        let quiet = try ChildProcess.run(
            CLI.executable.path, ["audit", "--no-progress"] + arguments.dropFirst(), environment: environment, terminal: 200)
        #expect(quiet.status == 0 && !quiet.stdoutText.contains("sealkit audit:") && !quiet.stdoutText.contains("\u{1B}["))
        let piped = try cli.run(arguments, environment: ["TERM": "xterm"])
        #expect(piped.status == 0 && piped.stderr.isEmpty, "\(piped.stderr.prefix(200))")
    }

    @Test func theSplitAuditsHalvesAreAdditionsThatRefuseWhatTheyCannotDo() throws {
        let cli = try CLI()
        let export = cli.home.appendingPathComponent("e.ndjson")
        try Data("{\"a\": 1}\n".utf8).write(to: export)
        for arguments in [
            ["audit", "--facts", export.path], ["audit", "--from-facts", export.path], ["audit", "--facts", "--from-facts", "-"],
            ["audit", "--facts", "--key", "ada", "-"], ["audit", "--facts", "--format", "json", "-"],
        ] {
            let result = try cli.run(arguments)
            expectCleanFailure(result)
            #expect(result.status == 64, "\(arguments)")
        }
        // Facts: one line in, its facts out; never the value's text.
        let value = Data((0..<48).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let facts = try cli.run(["audit", "--facts", "-"], stdin: "3 17 {\"ssn\": \"\(value)\", \"x\": \"plain words\"}\n")
        #expect(facts.status == 0, "\(facts.stderr)")
        let lines = facts.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].hasPrefix("{\"value\":{\"file\":3,\"line\":17,\"seq\":0,\"field\":\"ssn\",\"nonce\":\""), "\(lines)")
        // The part's counts, with its key census: one v1 value, which names no key.
        #expect(lines.last == "{\"counts\":{\"values\":1,\"profiles\":1,\"blank_lines\":0,\"keys\":{},\"naming_no_key\":1}}")
        #expect(!facts.stdout.contains(value) && !facts.stdout.contains("plain words"))
        let untagged = try cli.run(["audit", "--facts", "-"], stdin: "{\"a\": 1}\n")
        expectCleanFailure(untagged, containing: "FILE LINE")
        #expect(untagged.status == 64)
        // The report from merged facts: the file list first, the summary last, exit codes as sealkit audit's.
        let merged = """
            {"files": ["e.ndjson"]}
            {"repeat": {"file": 0, "line": 9, "field": "ssn", "copy": true, "first": {"file": 0, "line": 2, "field": "ssn"}}}
            {"summary": {"values": 5, "profiles": 9, "blank_lines": 0, "copied_ciphertexts": 1, "shared_nonces": 0, "largest_group": 2, "largest_group_first": null, "keys": {"3f9a:07c2:d41e:8b65": 3}, "naming_no_key": 2}}

            """
        let report = try cli.run(["audit", "--from-facts", "-"], stdin: merged)
        #expect(report.status == 1)
        // The text report pads its columns to line up under the header.
        #expect(report.stdout.contains("warning   duplicate-ciphertext  e.ndjson:9  ssn    the same ciphertext stands at e.ndjson:2"), "\(report.stdout)")
        let clean = try cli.run(
            ["audit", "--from-facts", "--format", "json", "-"],
            stdin: "{\"files\": [\"e.ndjson\"]}\n{\"summary\": {\"values\": 5, \"profiles\": 5, \"blank_lines\": 0, "
                + "\"copied_ciphertexts\": 0, \"shared_nonces\": 0, \"largest_group\": 0, \"largest_group_first\": null, "
                + "\"keys\": {\"3f9a:07c2:d41e:8b65\": 3, \"0000:0000:0000:0001\": 2}, \"naming_no_key\": 0}}\n")
        #expect(clean.status == 0 && clean.stdout.contains("\"values\": 5"), "\(clean.stderr)")
        // The key census reaches the JSON report, keys in fingerprint order.
        #expect(clean.stdout.contains(
            "    \"keys\": {\n      \"by_key\": {\n        \"0000:0000:0000:0001\": 2,\n        \"3f9a:07c2:d41e:8b65\": 3\n      },\n"
                + "      \"naming_no_key\": 0\n    }\n"), "\(clean.stdout)")
        let truncated = try cli.run(["audit", "--from-facts", "-"], stdin: "{\"files\": []}\n")
        expectCleanFailure(truncated, containing: "summary")
        #expect(truncated.status == 64)
    }
}
