import Foundation
import SealTestSupport
import Testing

/// A black-box pass over issues 11 (offline), 12 and 14: each test drives `sealkit` the way the
/// issue's contract words it, from a fresh keystore, and covers what the other suites did not.
@Suite("sealkit acceptance")
struct AcceptanceTests {
    static let link = "https://example.rownd.link/s/Ab3dE"

    static func cliWithKey(_ id: String = "ada") throws -> CLI {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", id]).status == 0)
        return cli
    }

    /// Runs a bash script with `$SEALKIT` set to the binary, in the CLI's environment.
    static func bash(_ script: String, in cli: CLI, stdin: String = "") throws -> ProcessResult {
        var environment = cli.environment
        environment["SEALKIT"] = CLI.executable.path
        return try Subprocess.run("/bin/bash", ["-c", script], stdin: Array(stdin.utf8), environment: environment)
    }

    // MARK: Issue 14: a closed stdout ends every command quietly

    /// `transfer send --rownd --format text` writes its one line straight from guarded memory; a
    /// reader that has gone must end it as `| head -1` ends the others: no "Broken pipe", no 74.
    @Test func rowndTextIntoAClosedPipeEndsQuietly() throws {
        let cli = try Self.cliWithKey("u")
        // The reader (head -c 0) is gone well before sealkit writes.
        let result = try Self.bash(
            """
            { sleep 0.5; "$SEALKIT" transfer send u --rownd --link '\(Self.link)' --format text; } | head -c 0
            echo "${PIPESTATUS[0]}"
            """, in: cli)
        let status = result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(status == "0" || status == "141", "exit status \(status): \(result.stderrText)")
        #expect(!result.stderrText.contains("cannot write"), "\(result.stderrText)")
        // Only the warning that the text holds the raw key, which is written before the text.
        #expect(result.stderrText.split(separator: "\n").allSatisfy { $0.hasPrefix("sealkit: warning: ") }, "\(result.stderrText)")
    }

    // MARK: Odd but plausible input: CRLF and blanks around a ciphertext

    /// A ciphertext saved by a Windows editor, or pasted with a space, is still the same base64:
    /// decrypt reads it from stdin, `-`, `--input` and an argument, and `--lines` reads CRLF files.
    @Test func decryptTakesCiphertextsWithCRLFAndBlanksAround() throws {
        let cli = try Self.cliWithKey()
        let sealed = try cli.run(["encrypt", "--key", "ada"], stdin: "A+").output
        for stdin in ["\(sealed)\r\n", "  \(sealed)\t \n", "\(sealed)\r"] {
            for arguments in [["decrypt", "--key", "ada"], ["decrypt", "--key", "ada", "-"], ["decrypt", "--key", "ada", "--input", "-"]] {
                let opened = try cli.run(arguments, stdin: stdin)
                #expect(opened.status == 0 && opened.stdout == "A+\n", "\(arguments) \(stdin.debugDescription): \(opened.stderr)")
            }
        }
        let argument = try cli.run(["decrypt", "--key", "ada", "--", sealed + " "])
        #expect(argument.status == 0 && argument.stdout == "A+\n", "\(argument.stderr)")

        let lines = try cli.run(["decrypt", "--key", "ada", "--lines"], stdin: "\(sealed)\r\n\(sealed)\r\n")
        #expect(lines.status == 0 && lines.stdout == "A+\nA+\n", "\(lines.stderr)")
        // A CRLF file encrypted line by line comes back byte for byte: the CR was part of the text.
        let crlf = try cli.run(["encrypt", "--key", "ada", "--lines"], stdin: "a\r\nb\r\n")
        let back = try cli.run(["decrypt", "--key", "ada", "--lines"], stdin: crlf.stdout)
        #expect(back.status == 0 && back.stdout == "a\r\nb\r\n", "\(back.stderr)")
        // Blanks inside are still refused: that is not a ciphertext.
        let inside = String(sealed.prefix(10)) + " " + String(sealed.dropFirst(10))
        let refused = try cli.run(["decrypt", "--key", "ada"], stdin: inside)
        expectCleanFailure(refused, containing: "base64")
        #expect(refused.status == 65)
    }
}
