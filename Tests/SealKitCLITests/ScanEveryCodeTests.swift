import Foundation
import SealKitQR
import SealTestSupport
import Testing

/// Every code in the picture, whatever its colours; `--expect`; `--qr` options that take
/// the code they need from a screenshot holding several; codes drawn for dark terminals.
@Suite("sealkit scan: every code in the picture")
struct ScanEveryCodeTests {
    /// Lays PNG files side by side on one white PGM, 40 pixels apart, each negated (light modules on
    /// a dark square) where `negate` says.
    static func sideBySide(_ paths: [String], negate: [Bool], to output: String) throws {
        let images = try paths.map { try QRScanner.decode(Array(try Data(contentsOf: URL(fileURLWithPath: $0)))) }
        let gap = 40
        let width = images.reduce(gap) { $0 + $1.width + gap }, height = images.map(\.height).max()! + 2 * gap
        var pixels = [UInt8](repeating: 255, count: width * height)
        var left = gap
        for (image, negated) in zip(images, negate) {
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let value = image.pixels[y * image.width + x]
                    pixels[(gap + y) * width + left + x] = negated ? 255 - value : value
                }
            }
            left += image.width + gap
        }
        try Data(Array("P5 \(width) \(height) 255\n".utf8) + pixels).write(to: URL(fileURLWithPath: output))
    }

    @Test(.requires(.zbarimg), .requires(.qrencode)) func anUprightAndAnInvertedCodeBothPrintInReadingOrder() throws {
        let cli = try CLI()
        let folder = cli.home.path
        try ScanCLITests.qrencode("left, dark on light", to: folder + "/a.png")
        try ScanCLITests.qrencode("right, light on dark", to: folder + "/b.png")
        try Self.sideBySide([folder + "/a.png", folder + "/b.png"], negate: [false, true], to: folder + "/both.pgm")
        // zbar alone stops at the upright code: it tries the negative only when it finds nothing.
        let zbar = try ChildProcess.run("zbarimg", ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", folder + "/both.pgm"])
        #expect(zbar.stdoutText.hasPrefix("left, dark on light") && !zbar.stdoutText.contains("right"))

        let scanned = try cli.run(["scan", folder + "/both.pgm"])
        #expect(scanned.status == 0 && scanned.stdout == "left, dark on light\nright, light on dark\n", "\(scanned.stderr)")
        #expect(scanned.stderr.isEmpty)

        // --expect N: the count said on stderr per image; fewer than N is 65, saying how many.
        let two = try cli.run(["scan", "--expect", "2", folder + "/both.pgm", folder + "/b.png", folder + "/both.pgm"])
        #expect(two.status == 65)
        #expect(two.stderr == "sealkit: \(folder)/both.pgm: 2 QR codes\nsealkit: \(folder)/b.png holds 1 QR code, fewer than the 2 expected\n")
        let twice = try cli.run(["scan", "--expect", "2", folder + "/both.pgm", folder + "/both.pgm"])
        #expect(twice.status == 0 && twice.stdout == String(repeating: "left, dark on light\nright, light on dark\n", count: 2))
        #expect(twice.stderr == String(repeating: "sealkit: \(folder)/both.pgm: 2 QR codes\n", count: 2))
        let three = try cli.run(["scan", "--expect", "3", folder + "/both.pgm"])
        #expect(three.status == 65 && three.stdout.isEmpty)
        expectCleanFailure(three, containing: "holds 2 QR codes, fewer than the 3 expected")
        let one = try cli.run(["scan", "--expect", "1", folder + "/a.png"])
        #expect(one.status == 0 && one.stdout == "left, dark on light\n" && one.stderr.isEmpty)
        #expect(try cli.run(["scan", "--expect", "0", folder + "/a.png"]).status == 64)
    }

    @Test(.requires(.qrencode)) func toQRTakesTheOfferFromAScreenshotOfOfferAndCode() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let folder = sender.home.path
        let replyImage = folder + "/reply.png"
        #expect(mkfifo(replyImage, 0o600) == 0)
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text", "--yes", "--qr", replyImage])
        let offer = try #require(receiver.readLine())
        let code = try #require(receiver.readLine())
        try ScanCLITests.qrencode(offer, to: folder + "/offer.png")
        try ScanCLITests.qrencode(code, to: folder + "/code.png")
        // The receiver's whole screen: the code's QR on the left, the offer's on the right.
        try Self.sideBySide([folder + "/code.png", folder + "/offer.png"], negate: [false, false], to: folder + "/screen.pgm")
        #expect(try sender.run(["scan", folder + "/screen.pgm"]).stdout == code + "\n" + offer + "\n")

        let sent = try sender.run(["transfer", "send", "u", "--to-qr", folder + "/screen.pgm", "--code", code, "--format", "text"])
        #expect(sent.status == 0, "\(sent.stderr)")
        // The code ignored is named by kind and size, never by its contents.
        #expect(sent.stderr.contains("sealkit: \(folder)/screen.pgm: took the offer; ignored a code of \(code.utf8.count) bytes\n"))
        #expect(!sent.stderr.contains(code))
        let made = try sender.run(["qr", "--format", "png"], stdin: sent.stdout.trimmingCharacters(in: .newlines))
        #expect(made.status == 0, "\(made.stderr)")
        try Data(made.stdoutBytes).write(to: URL(fileURLWithPath: replyImage))
        let received = receiver.finish()
        #expect(received.status == 0, "\(received.stderr)")

        // Two codes and neither the one asked for: refused, saying so.
        let none = try sender.run(["transfer", "send", "u", "--to", offer, "--code-qr", folder + "/screen.pgm", "--format", "text"])
        #expect(none.status == 65)
        expectCleanFailure(
            none, containing: "holds 2 QR codes, none of them a transfer code (a code of \(code.utf8.count) bytes, a sealkit-offer-v2: code); "
                + "give an image of the transfer code alone")
    }

    @Test func invertSwapsTheGlyphsForDarkTerminals() throws {
        let cli = try CLI()
        let plain = try cli.run(["qr", "--format", "utf8", "--", "dark terminal"])
        let inverted = try cli.run(["qr", "--format", "utf8", "--invert", "--", "dark terminal"])
        #expect(plain.status == 0 && inverted.status == 0)
        let swapped = String(plain.stdout.map { (glyph: Character) -> Character in
            switch glyph {
            case "█": return " "
            case " ": return "█"
            case "▀": return "▄"
            case "▄": return "▀"
            default: return glyph
            }
        })
        #expect(inverted.stdout == swapped && inverted.stdout != plain.stdout)
        #expect(try cli.run(["qr", "--format", "utf8", "--", "dark terminal"], environment: ["SEALKIT_QR_INVERT": "1"]).stdout == inverted.stdout)
        #expect(try cli.run(["qr", "--format", "utf8", "--", "dark terminal"], environment: ["SEALKIT_QR_INVERT": "0"]).stdout == plain.stdout)
        // ansi draws its own colours: --invert leaves it alone.
        #expect(try cli.run(["qr", "--format", "ansi", "--invert", "--", "x"]).stdout == (try cli.run(["qr", "--format", "ansi", "--", "x"])).stdout)
        // --help says what ascii is for.
        #expect(try cli.run(["qr", "--help"]).stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
            .contains("ascii (for copying, not scanning)"))
    }
}

/// A test-sized subset of the real-screenshot corpus (Scripts/make-qr-screenshots.py --small: xterm
/// under Xvfb, SealKit's own codes, light and dark, with and without colours, two windows, and
/// photo-like variants): `sealkit scan` reads every code of every image. Scripts/bench runs the whole
/// corpus against zbarimg and zxing-cpp.
@Suite("sealkit scan: real screenshots", .requires(.screenshots))
struct RealScreenshotTests {
    @Test func everyCodeOfEveryScreenshotReads() throws {
        let folder = try TemporaryFolder.make()
        defer { try? FileManager.default.removeItem(at: folder) }
        let made = try ChildProcess.run(
            "python3", [Repository.root.appendingPathComponent("Scripts/make-qr-screenshots.py").path, CLI.executable.path, folder.path, "--small"])
        #expect(made.status == 0, "\(made.stderrText)")
        let expected = try JSONDecoder().decode([String: [String]].self, from: Data(contentsOf: folder.appendingPathComponent("expected.json")))
        #expect(expected.count == 26)
        let cli = try CLI()
        var missed: [String] = []
        for (name, payloads) in expected.sorted(by: { $0.key < $1.key }) {
            let scanned = try cli.run(["scan", "--expect", String(payloads.count), folder.appendingPathComponent(name).path])
            let lines = scanned.stdout.split(separator: "\n").map(String.init)
            if scanned.status != 0 || Set(lines) != Set(payloads) { missed.append(name) }
        }
        #expect(missed.isEmpty, "not read: \(missed)")
    }
}
