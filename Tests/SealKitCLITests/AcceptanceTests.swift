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

    // MARK: Issue 12: the QR a terminal shows holds exactly URL#KEY

    /// Turns what a terminal shows into the QR code's text: escapes and CRs dropped, the longest
    /// run of half-block lines read as module rows (each glyph is two rows; a block is dark),
    /// scaled into a PBM image, and decoded by zbarimg. Nil when there is no code to scan.
    static func scanTerminalQR(_ screen: String, in folder: URL) throws -> String? {
        let glyphs: [Character: (Bool, Bool)] = [" ": (false, false), "▀": (true, false), "▄": (false, true), "█": (true, true)]
        var runs: [[[Bool]]] = [[]]
        // "\r\n" is one Character in Swift: drop the CRs before splitting lines.
        for raw in screen.replacingOccurrences(of: "\r", with: "").split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw).replacing(/\u{1B}\[[0-9;]*[A-Za-z]/, with: "")
            if line.count >= 21, line.allSatisfy({ glyphs[$0] != nil }), runs[runs.count - 1].last.map({ $0.count == line.count }) ?? true {
                runs[runs.count - 1].append(contentsOf: [line.map { glyphs[$0]!.0 }, line.map { glyphs[$0]!.1 }])
            } else if !runs[runs.count - 1].isEmpty {
                runs.append([])
            }
        }
        guard let rows = runs.max(by: { $0.count < $1.count }), let width = rows.first?.count, rows.joined().contains(true) else {
            return nil
        }
        let scale = 4
        var pbm = "P1\n\(width * scale) \(rows.count * scale)\n"
        for row in rows {
            let line = row.flatMap { Array(repeating: $0 ? "1" : "0", count: scale) }.joined(separator: " ") + "\n"
            pbm += String(repeating: line, count: scale)
        }
        let image = folder.appendingPathComponent("screen.pbm")
        try Data(pbm.utf8).write(to: image)
        let scanned = try Subprocess.run("/usr/bin/zbarimg", ["--nodbus", "--raw", "-q", "-Sbinary", image.path])
        guard scanned.status == 0 else { return nil }
        return scanned.stdoutText.hasSuffix("\n") ? String(scanned.stdoutText.dropLast()) : scanned.stdoutText
    }

    /// "prints (text) and shows (QR) exactly <link>#<base64 key>": on a terminal (the default
    /// there, or --format qr), with colours and without, the QR code zbarimg reads is the text
    /// `--format text` prints, byte for byte.
    @Test func theQRCodeOnTheTerminalHoldsExactlyTheLinkAndKey() throws {
        let cli = try Self.cliWithKey("u")
        let link = Self.link + "?ref=qr&x=1"
        let text = try cli.run(["transfer", "send", "u", "--rownd", "--link", link, "--format", "text"])
        #expect(text.status == 0, "\(text.stderr)")
        let expected = text.output
        #expect(expected.hasPrefix(link + "#") && expected.count == link.count + 45)
        for (format, colour) in [("", true), ("--format qr", true), ("--format qr", false)] {
            let screen = try Self.bash(
                """
                exec /usr/bin/script -qec "stty cols 200; exec env \(colour ? "-u NO_COLOR" : "NO_COLOR=1") TERM=xterm \\"\\$SEALKIT\\" transfer send u --rownd --link '\(link)' \(format)" /dev/null
                """, in: cli)
            let shown = screen.stdoutText
            #expect(shown.contains("\u{1B}[38;5;16;48;5;231m") == colour, "\(format) colour \(colour)")
            let scanned = try Self.scanTerminalQR(shown, in: cli.home)
            #expect(scanned == expected, "\(format) colour \(colour): zbarimg read \(scanned ?? "nothing")")
            // And the same text under it, for people who copy instead of scanning.
            #expect(shown.contains(expected + "\r\n"), "\(format) colour \(colour)")
        }
    }
}
