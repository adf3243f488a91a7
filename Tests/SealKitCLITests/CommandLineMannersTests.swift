import Foundation
import SealKit
import SealTestSupport
import Testing

/// What every command owes a Unix user, whichever it is: quiet ends on a closed stdout, suggestions for
/// a mistyped subcommand, no ANSI for dumb terminals or NO_COLOR.
@Suite("sealkit on any command: Unix manners")
struct CommandLineMannersTests {
    @Test func aClosedStdoutEndsQuietly() throws {
        let cli = try CLI.withKey()
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

}
