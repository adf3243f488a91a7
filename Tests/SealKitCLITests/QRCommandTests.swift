import Foundation
import SealKit
import SealTestSupport
import Testing

/// Drives the built `sealkit qr` and scans what it writes with zbarimg, an independent decoder.
@Suite("sealkit qr")
struct QRCommandTests {
    @Test("--format png --output writes a 0600 file that zbarimg decodes to the text", .requires(.zbarimg), arguments: [
        "hello", "Grüße aus Köln — 東京 🔐",
    ])
    func pngFile(text: String) throws {
        let cli = try CLI()
        let file = cli.home.appendingPathComponent("code.png")
        let result = try cli.run(["qr", "--format", "png", "--output", file.path, "--", text])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty && result.stderr.isEmpty)
        #expect(try zbarimg(file) == Array(text.utf8))
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("stdin is the payload, one trailing newline dropped; the file name picks the format", .requires(.zbarimg))
    func stdinToFileNamedFormat() throws {
        let cli = try CLI()
        let pbm = cli.home.appendingPathComponent("code.pbm")
        let result = try cli.run(["qr", "--output", pbm.path], stdin: "line one\nline two\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Array(Data(contentsOf: pbm).prefix(3)) == Array("P4\n".utf8))
        #expect(try zbarimg(pbm) == Array("line one\nline two".utf8))

        let svg = cli.home.appendingPathComponent("code.svg")
        #expect(try cli.run(["qr", "--output", svg.path, "--", "x"]).status == 0)
        #expect(try String(contentsOf: svg, encoding: .utf8).hasPrefix("<?xml"))
    }

    @Test("Piped stdout gets utf8 by default; --format and --ecc are honoured")
    func textToPipe() throws {
        let cli = try CLI()
        let text = "https://example.com/sealkit"
        let plain = try cli.run(["qr", "--", text])
        #expect(plain.status == 0)
        #expect(plain.stdoutBytes == (try QRCode(text, correction: .medium).rendered(as: .utf8)))
        let ascii = try cli.run(["qr", "--format", "ascii", "--ecc", "h", "--", text])
        #expect(ascii.status == 0)
        #expect(ascii.stdoutBytes == (try QRCode(text, correction: .high).rendered(as: .ascii)))
    }

    @Test("Too long for any QR code: one line saying what fits and what helps, nothing written", .requires(.zbarimg))
    func tooLong() throws {
        let cli = try CLI()
        let file = cli.home.appendingPathComponent("code.png")
        let result = try cli.run(["qr", "--output", file.path], stdin: String(repeating: "a", count: 2332))
        #expect(result.status == 65)
        expectCleanFailure(result, containing: "too long for a QR code: 2332 bytes")
        #expect(result.stderr.contains("at most 2331 bytes") && result.stderr.contains("--ecc L holds 2953 bytes"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.home.path).isEmpty)

        let fits = try cli.run(["qr", "--ecc", "L", "--output", file.path], stdin: String(repeating: "a", count: 2332))
        #expect(fits.status == 0)
        #expect(try zbarimg(file).count == 2332)
    }

    @Test("--output replaces an existing file whole and leaves no temporary file", .requires(.zbarimg))
    func replacesAtomically() throws {
        let cli = try CLI()
        let file = cli.home.appendingPathComponent("code.png")
        try Data("old contents".utf8).write(to: file)
        #expect(try cli.run(["qr", "--output", file.path, "--", "new"]).status == 0)
        #expect(try zbarimg(file) == Array("new".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.home.path) == ["code.png"])
    }

    @Test("On a terminal: ansi by default, a warning when too wide, no binary images")
    func terminalBehaviour() throws {
        let wide = try runOnTerminal(columns: 200, ["qr", "--", "hello"])
        #expect(wide.status == 0)
        #expect(wide.output.contains("\u{1B}[38;5;16;48;5;231m"))
        #expect(!wide.output.contains("warning"))

        let narrow = try runOnTerminal(columns: 20, ["qr", "--", "hello"])
        #expect(narrow.status == 0)
        #expect(narrow.output.contains("sealkit: warning: this QR code is 29 columns wide but the terminal has 20"))
        #expect(narrow.output.contains("--format png"))

        let png = try runOnTerminal(columns: 200, ["qr", "--format", "png", "--", "hello"])
        #expect(png.status == 64)
        #expect(png.output.hasPrefix("sealkit: refusing to write a png image to the terminal"))
    }
}

/// The bytes of the QR code in `file`, read by zbarimg; `-Sbinary` stops zbar converting character sets.
private func zbarimg(_ file: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    let result = try runTool("zbarimg", ["--nodbus", "--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", file.path])
    try #require(result.status == 0, "zbarimg found no QR code in \(file.lastPathComponent)", sourceLocation: sourceLocation)
    return result.stdout
}

/// Runs `sealkit ARGS` on a pseudo-terminal of the given width; stdout and stderr arrive mixed, as on a screen.
private func runOnTerminal(columns: Int, _ arguments: [String]) throws -> (status: Int32, output: String) {
    var environment = ProcessInfo.processInfo.environment
    // A terminal that takes colour: `swift test` sets NO_COLOR, which turns the ansi default off.
    environment.removeValue(forKey: "NO_COLOR")
    environment["TERM"] = "xterm"
    let result = try ChildProcess.run(CLI.executable.path, arguments, environment: environment, terminal: columns)
    return (result.status, result.stdoutText)
}

/// Runs a tool with small output (the tests that call it say `.requires(.zbarimg)`).
private func runTool(_ path: String, _ arguments: [String]) throws -> (status: Int32, stdout: [UInt8]) {
    let result = try ChildProcess.run(path, arguments)
    return (result.status, result.stdout)
}

extension QRCommandTests {
    // MARK: the QR a terminal shows holds exactly URL#KEY

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
        let scanned = try ChildProcess.run("zbarimg", ["--nodbus", "--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", image.path])
        guard scanned.status == 0 else { return nil }
        return scanned.stdoutText.hasSuffix("\n") ? String(scanned.stdoutText.dropLast()) : scanned.stdoutText
    }

    /// "prints (text) and shows (QR) exactly <link>#<base64 key>": on a terminal (the default
    /// there, or --format qr), with colours and without, the QR code zbarimg reads is the text
    /// `--format text` prints, byte for byte.
    @Test(.requires(.zbarimg)) func theQRCodeOnTheTerminalHoldsExactlyTheLinkAndKey() throws {
        let cli = try CLI.withKey("u")
        let link = KeyFixtures.rowndLink + "?ref=qr&x=1"
        let text = try cli.run(["transfer", "send", "u", "--rownd", "--link", link, "--format", "text"])
        #expect(text.status == 0, "\(text.stderr)")
        let expected = text.output
        #expect(expected.hasPrefix(link + "#") && expected.count == link.count + 45)
        for (format, colour) in [("", true), ("--format qr", true), ("--format qr", false)] {
            var environment = cli.environment
            environment["TERM"] = "xterm"
            environment["NO_COLOR"] = colour ? nil : "1"
            let arguments = ["transfer", "send", "u", "--rownd", "--link", link] + format.split(separator: " ").map(String.init)
            let screen = try ChildProcess.run(CLI.executable.path, arguments, environment: environment, terminal: 200)
            let shown = screen.stdoutText
            #expect(shown.contains("\u{1B}[38;5;16;48;5;231m") == colour, "\(format) colour \(colour)")
            let scanned = try Self.scanTerminalQR(shown, in: cli.home)
            #expect(scanned == expected, "\(format) colour \(colour): zbarimg read \(scanned ?? "nothing")")
            // And the same text under it, for people who copy instead of scanning.
            #expect(shown.contains(expected + "\r\n"), "\(format) colour \(colour)")
        }
    }
}

