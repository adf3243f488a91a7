import Foundation
import SealKit
import SealTestSupport
import Testing

/// Issue 14: safe defaults and the manners users expect of a Unix tool.
@Suite("sealkit everyday use")
struct EverydayCLITests {
    static let profileFixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/profile")

    static func cliWithKey(_ id: String = "ada") throws -> CLI {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", id]).status == 0)
        return cli
    }

    static func write(_ text: String, to name: String, in cli: CLI) throws -> String {
        let url = cli.home.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    // MARK: Schemas that encrypt nothing

    @Test(arguments: [
        (#"{"ssn": {"type": "string", "encrpytion": {"state": "enabled"}}}"#, "\"encrpytion\""),
        (#"{"ssn": {"type": "string", "Encryption": {"state": "enabled"}}}"#, "\"Encryption\""),
        (#"{"schemas": {"ssn": {"type": "string", "encryption": {"state": "enabled"}}}}"#, "\"schemas\""),
        (#"{"ssn": {"type": "string", "encryption": {"state": "disabled"}}}"#, "flags no field"),
    ])
    func schemasThatEncryptNothingAreRefused(schema: String, named: String) throws {
        let cli = try Self.cliWithKey()
        let path = try Self.write(schema, to: "schema.json", in: cli)
        let profile = #"{"ssn": "078-05-1120"}"#
        for command in ["encrypt", "decrypt", "rotate"] {
            let result = try cli.run(["profile", command, "--schema", path, "--key", "ada"], stdin: profile)
            expectCleanFailure(result, containing: named)
            #expect(result.status == 65)
        }
        let exports = try Self.write(profile + "\n", to: "exports/a.ndjson", in: cli)
        let audit = try cli.run(["audit", "--schema", path, exports])
        expectCleanFailure(audit, containing: named)
        #expect(audit.status == 65)
    }

    // MARK: No plaintext on the command line; '-' is stdin

    @Test func encryptRefusesPlaintextArgumentsAndReadsStdinOrAFile() throws {
        let cli = try Self.cliWithKey()
        let refused = try cli.run(["encrypt", "--key", "ada", "--", "A+ secret"])
        expectCleanFailure(refused, containing: "| sealkit encrypt --key ada")
        #expect(refused.status == 64)
        #expect(!refused.stderr.contains("A+ secret"))

        for arguments in [["encrypt", "--key", "ada"], ["encrypt", "--key", "ada", "-"], ["encrypt", "--key", "ada", "--", "-"]] {
            let sealed = try cli.run(arguments, stdin: "A+\n")
            #expect(sealed.status == 0, "\(sealed.stderr)")
            let opened = try cli.run(["decrypt", "--key", "ada", "-"], stdin: sealed.stdout)
            #expect(opened.status == 0 && opened.output == "A+", "\(opened.stderr)")
        }
        let file = try Self.write("from a file\n", to: "plain.txt", in: cli)
        let sealed = try cli.run(["encrypt", "--key", "ada", "--input", file])
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(try cli.run(["decrypt", "--key", "ada", "--", sealed.output]).output == "from a file")
        let lines = try cli.run(["encrypt", "--key", "ada", "--lines", "--input", file])
        #expect(lines.status == 0 && lines.stdout.split(separator: "\n").count == 1)
        let missing = try cli.run(["encrypt", "--key", "ada", "--input", file + ".missing"])
        expectCleanFailure(missing, containing: "cannot read the input file \(file).missing: No such file or directory")
        #expect(missing.status == 66)
    }

    /// `--to -` reads the offer from stdin, so it need not sit in shell history either; `qr -` too.
    @Test func dashIsStdinForTheOfferAndQRText() throws {
        let sender = try Self.cliWithKey("alice")
        let receiving = try CLI()
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text"])
        let offer = try #require(receiver.readLine())
        let code = try #require(receiver.readLine())
        let reply = try sender.run(["transfer", "send", "alice", "--to", "-", "--code", code, "--format", "text"], stdin: offer + "\n")
        #expect(reply.status == 0, "\(reply.stderr)")
        receiver.write(reply.stdout.split(separator: "\n").map(String.init))
        let received = receiver.finish()
        #expect(received.status == 0 && received.output.hasPrefix("alice\t"), "\(received.stderr)")

        let fromArgument = try sender.run(["qr", "--format", "ascii", "--", "hello"])
        let fromDash = try sender.run(["qr", "--format", "ascii", "-"], stdin: "hello\n")
        #expect(fromDash.status == 0 && fromDash.stdout == fromArgument.stdout)
    }

    // MARK: An audit of nothing is not a pass

    @Test func anAuditThatReadsNoValueFails() throws {
        let cli = try CLI()
        let empty = cli.home.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let noFiles = try cli.run(["audit", empty.path])
        expectCleanFailure(noFiles, containing: "nothing was audited: no .json, .ndjson or .jsonl file")
        #expect(noFiles.status == 66)

        let blank = try Self.write("\n\n", to: "blank/a.ndjson", in: cli)
        let noProfiles = try cli.run(["audit", blank])
        expectCleanFailure(noProfiles, containing: "nothing was audited: ")
        #expect(noProfiles.status == 66 && noProfiles.stderr.contains("no profile"))

        let schema = try Self.write(#"{"ssn": {"type": "string", "encryption": {"state": "enabled"}}}"#, to: "s.json", in: cli)
        let unflagged = try Self.write(#"{"name": "Ada"}"# + "\n", to: "plain/a.ndjson", in: cli)
        let noFields = try cli.run(["audit", "--schema", schema, unflagged])
        expectCleanFailure(noFields, containing: "nothing was audited: ")
        #expect(noFields.status == 66 && noFields.stderr.contains("no flagged field"))
    }

    /// Warnings fail by default; --fail-on error lets them pass, --ignore drops a kind.
    @Test func failOnAndIgnoreDecideWhatFails() throws {
        let cli = try Self.cliWithKey()
        let sealed = try cli.run(["encrypt", "--key", "ada"], stdin: "same").output
        let file = try Self.write(
            #"{"ssn": "\#(sealed)"}"# + "\n" + #"{"ssn": "\#(sealed)"}"# + "\n", to: "copies/a.ndjson", in: cli)
        let byDefault = try cli.run(["audit", file])
        #expect(byDefault.status == 1 && byDefault.stdout.contains("duplicate-ciphertext"), "\(byDefault.stderr)")
        let errorsOnly = try cli.run(["audit", "--fail-on", "error", file])
        #expect(errorsOnly.status == 0 && errorsOnly.stdout.contains("duplicate-ciphertext"), "\(errorsOnly.stderr)")
        let ignored = try cli.run(["audit", "--ignore", "duplicate-ciphertext", "--ignore", "nonce-reuse", "--format", "json", file])
        #expect(ignored.status == 0 && !ignored.stdout.contains(#""kind""#), "\(ignored.stdout)")
        expectCleanFailure(try cli.run(["audit", "--ignore", "no-such-kind", file]), containing: "no-such-kind")
        expectCleanFailure(try cli.run(["audit", "--fail-on", "note", file]), containing: "fail-on")
    }

    // MARK: Unix manners

    @Test func aClosedStdoutEndsQuietly() throws {
        let cli = try Self.cliWithKey()
        let script = """
            yes 'some text' | head -n 300000 | "$SEALKIT" encrypt --key ada --lines 2>"$ERRORS" | head -n 1 >/dev/null
            echo "${PIPESTATUS[2]}"
            """
        let errors = cli.home.appendingPathComponent("errors").path
        var environment = cli.environment
        environment["SEALKIT"] = CLI.executable.path
        environment["ERRORS"] = errors
        let result = try ChildProcess.run("/bin/bash", ["-c", script], stdin: [], environment: environment)
        let status = result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(status == "0" || status == "141", "exit status \(status)")
        #expect(try String(contentsOfFile: errors, encoding: .utf8) == "")
    }

    @Test func anUnknownSubcommandGetsASuggestion() throws {
        let cli = try CLI()
        let typo = try cli.run(["encrpyt", "--key", "ada"])
        expectCleanFailure(typo, containing: "did you mean 'encrypt'?")
        #expect(typo.status == 64)
        let nested = try cli.run(["keys", "genrate", "ada"])
        expectCleanFailure(nested, containing: "did you mean 'generate'?")
    }

    /// Under a terminal (script(1) gives one), the QR code defaults to ANSI colours, except
    /// with NO_COLOR or TERM=dumb; an explicit --format ansi still gets them.
    @Test func noColorAndDumbTerminalsGetNoANSI() throws {
        let cli = try CLI()
        func run(_ command: String, _ extra: [String: String]) throws -> String {
            var environment = cli.environment
            environment["SEALKIT"] = CLI.executable.path
            environment["TERM"] = "xterm"
            environment["COLUMNS"] = "200"
            environment.removeValue(forKey: "NO_COLOR")
            environment.merge(extra) { $1 }
            let arguments = command.split(separator: " ").map(String.init)
            return try ChildProcess.run(CLI.executable.path, arguments, environment: environment, terminal: 200).stdoutText
        }
        let escape = "\u{1B}["
        #expect(try run("qr -- hello", [:]).contains(escape))
        #expect(try !run("qr -- hello", ["NO_COLOR": "1"]).contains(escape))
        #expect(try !run("qr -- hello", ["TERM": "dumb"]).contains(escape))
        #expect(try run("qr --format ansi -- hello", ["NO_COLOR": "1"]).contains(escape))
    }

    @Test func blankNDJSONLinesAreSkippedAndCountedAlike() throws {
        let cli = try Self.cliWithKey()
        let schema = Self.profileFixtures.appendingPathComponent("schema.json").path
        let input = #"{"ssn": "078-05-1120"}"# + "\n\n \t\n" + #"{"ssn": "219-09-9999"}"# + "\n"
        let encrypted = try cli.run(["profile", "encrypt", "--ndjson", "--schema", schema, "--key", "ada"], stdin: input)
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        #expect(encrypted.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 3)
        #expect(encrypted.stderr.contains("2 blank lines skipped"), "\(encrypted.stderr)")

        let file = try Self.write(encrypted.stdout + "\n\n", to: "exports/a.ndjson", in: cli)
        let audit = try cli.run(["audit", "--schema", schema, file])
        #expect(audit.stdout.contains("2 blank lines skipped"), "\(audit.stdout)")
        let json = try cli.run(["audit", "--format", "json", "--schema", schema, file])
        #expect(json.stdout.contains(#""blank_lines": 2"#), "\(json.stdout)")
    }

    @Test func profileErrorsGroupFieldsByReason() throws {
        let cli = try Self.cliWithKey()
        let schema = try Self.write(
            #"{"a": {"type": "string", "encryption": {"state": "enabled"}}, "b": {"type": "string", "encryption": {"state": "enabled"}}, "c": {"type": "number", "encryption": {"state": "enabled"}}}"#,
            to: "schema.json", in: cli)
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
