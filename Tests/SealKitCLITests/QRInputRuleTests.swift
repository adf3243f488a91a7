import Foundation
import SealKitQR
import SealTestSupport
import Testing

/// One rule for every `--qr` input. The whole image is read (both decoders,
/// upright and inverted) before anything is decided; the one code of the wanted kind is taken; a second
/// one (a hostile code laid beside the real one, light-on-dark or one only zxing-cpp reads) is refused,
/// saying how many; other kinds are named by kind only.
@Suite("--qr options: one rule, the whole image read", .requires(.zbarimg), .requires(.screenshots))
struct QRInputRuleTests {
    /// How a code is drawn in a photo.
    enum Style: String {
        /// Dark on light, upright: what zbar reads first.
        case plain
        /// Light on dark, as SealKit draws it with NO_COLOR on a dark theme.
        case negated
        /// Seen at a steep angle: zxing-cpp reads it, zbar does not.
        case tilted
    }

    /// A photo of codes side by side on white, each drawn by qrencode in its style, written as PNG.
    static func photo(_ codes: [(String, Style)], to path: String) throws {
        var arguments: [String] = []
        for (index, (payload, style)) in codes.enumerated() {
            let file = "\(path).\(index).png"
            try ScanCLITests.qrencode(payload, to: file)
            arguments += [style.rawValue, file]
        }
        let made = try ChildProcess.run("python3", ["-c", Self.composer, CLI.executable.path, path] + arguments)
        #expect(made.status == 0, "\(made.stderrText)")
    }

    /// Pillow: each code padded, negated or put in perspective (as Scripts/make-qr-corpus.py does: a tilted
    /// code is tilted a little more at each step, at its size and then at twice its size, until zbarimg no
    /// longer reads it alone while `sealkit scan` still does: zxing-cpp alone reads it), then laid left to right.
    static let composer = """
        import subprocess, sys
        from PIL import Image, ImageOps
        def coefficients(w, h, d):
            src = [(0, 0), (w, 0), (w, h), (0, h)]
            dst = [(d, d // 2), (w - d, 0), (w, h), (0, h - d // 2)]
            rows = []
            for (x, y), (u, v) in zip(dst, src):
                rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y, u])
                rows.append([0, 0, 0, x, y, 1, -v * x, -v * y, v])
            for i in range(8):
                pivot = max(range(i, 8), key=lambda r: abs(rows[r][i]))
                rows[i], rows[pivot] = rows[pivot], rows[i]
                for r in range(8):
                    if r != i:
                        f = rows[r][i] / rows[i][i]
                        rows[r] = [a - f * b for a, b in zip(rows[r], rows[i])]
            return [rows[i][8] / rows[i][i] for i in range(8)]
        sealkit, out, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
        tiles = []
        for style, path in zip(rest[::2], rest[1::2]):
            image = ImageOps.expand(Image.open(path).convert("RGBA").convert("L"), 60, fill=255)
            if style == "negated":
                image = ImageOps.invert(image)
            elif style == "tilted":
                code = Image.open(path).convert("RGBA").convert("L")
                def tilts():
                    for scale in (1, 2):
                        big = ImageOps.expand(code.resize((code.width * scale, code.height * scale), Image.NEAREST), 60, fill=255)
                        w, h = big.size
                        for step in range(16):
                            yield big.transform((w, h), Image.PERSPECTIVE, coefficients(w, h, int(min(w, h) * (0.1 + 0.02 * step))), Image.BICUBIC, fillcolor=255)
                for tilted in tilts():
                    tilted.save(path + ".tilted.png")
                    zbar = subprocess.run(["zbarimg", "--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", path + ".tilted.png"], capture_output=True)
                    if zbar.returncode != 0 and subprocess.run([sealkit, "scan", path + ".tilted.png"], capture_output=True).returncode == 0:
                        break
                else:
                    sys.exit("no tilt that zxing-cpp reads and zbar does not")
                image = tilted
            tiles.append(image)
        gap = 40
        canvas = Image.new("L", (sum(t.width for t in tiles) + gap * (len(tiles) + 1), max(t.height for t in tiles) + 2 * gap), 255)
        left = gap
        for tile in tiles:
            canvas.paste(tile, (left, gap))
            left += tile.width + gap
        canvas.save(out, "PNG")
        """

    /// What zbarimg alone reads in `path`: the premise of a zxing-only photo is that it misses a code.
    static func zbarimg(_ path: String) throws -> String {
        try ChildProcess.run("zbarimg", ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", path]).stdoutText
    }

    /// `sealkit scan` lists every code of the photo (the premise of each case).
    static func expectScanned(_ cli: CLI, _ path: String, _ payloads: [String]) throws {
        let scanned = try cli.run(["scan", path])
        #expect(scanned.status == 0 && Set(scanned.stdout.split(separator: "\n").map(String.init)) == Set(payloads), "\(scanned.stderr)")
    }

    static func network(_ word: String) -> String {
        "sealkit-transfer:\(word)?version=0&rendezvous=ws%3A%2F%2F127.0.0.1%3A9&role=leader"
    }

    @Test(arguments: [Style.negated, .tilted])
    func codeQRRefusesASecondTransferCode(real style: Style) throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let folder = sender.home.path
        let real = Self.network("7-guitarist-revenge"), hostile = Self.network("4-crossover-clockwork")
        try Self.photo([(real, style), (hostile, .plain)], to: folder + "/photo.png")
        try Self.expectScanned(sender, folder + "/photo.png", [real, hostile])
        if style == .tilted { #expect(try !Self.zbarimg(folder + "/photo.png").contains("7-guitarist")) }

        let sent = try sender.run([
            "transfer", "send", "u", "--code-qr", folder + "/photo.png", "--relay", "ws://127.0.0.1:9/v1", "--timeout", "3", "--yes",
        ])
        #expect(sent.status == 65, "\(sent.stderr)")
        expectCleanFailure(sent, containing: "\(folder)/photo.png holds 2 transfer codes; give an image of one transfer code alone")
        #expect(!sent.stderr.contains("guitarist") && !sent.stderr.contains("crossover"))
    }

    @Test(arguments: [Style.negated, .tilted])
    func toQRRefusesASecondOffer(real style: Style) throws {
        let sender = try CLI(), receiving = try CLI(), attacking = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let folder = sender.home.path
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text", "--yes"])
        let attacker = try RunningCLI(attacking, ["transfer", "receive", "--offline", "--format", "text", "--yes"])
        let offer = try #require(receiver.readLine()), code = try #require(receiver.readLine())
        let hostile = try #require(attacker.readLine())
        try Self.photo([(offer, style), (hostile, .plain)], to: folder + "/photo.png")
        try Self.expectScanned(sender, folder + "/photo.png", [offer, hostile])

        let sent = try sender.run(["transfer", "send", "u", "--to-qr", folder + "/photo.png", "--code", code, "--format", "text"])
        #expect(sent.status == 65, "\(sent.stderr)")
        expectCleanFailure(sent, containing: "\(folder)/photo.png holds 2 offers; give an image of one offer alone")
        receiver.write([""])
        attacker.write([""])
        _ = receiver.finish()
        _ = attacker.finish()
    }

    @Test(arguments: [Style.negated, .tilted])
    func receiveQRRefusesASecondReply(real style: Style) throws {
        let sender = try CLI(), attacking = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        #expect(try attacking.run(["keys", "generate", "u"]).status == 0)
        let folder = receiving.home.path
        let replyImage = folder + "/reply.png"
        #expect(mkfifo(replyImage, 0o600) == 0)
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text", "--yes", "--qr", replyImage])
        let offer = try #require(receiver.readLine()), code = try #require(receiver.readLine())
        // The attacker saw the offer and heard the code: a reply as well made as the sender's.
        let real = try sender.run(["transfer", "send", "u", "--to", offer, "--code", code, "--format", "text"])
        let hostile = try attacking.run(["transfer", "send", "u", "--to", offer, "--code", code, "--format", "text"])
        #expect(real.status == 0 && hostile.status == 0, "\(real.stderr) \(hostile.stderr)")
        let replies = [real.stdout, hostile.stdout].map { $0.trimmingCharacters(in: .newlines) }
        #expect(replies.allSatisfy { !$0.contains("\n") }, "a reply in parts")
        try Self.photo([(replies[0], style), (replies[1], .plain)], to: folder + "/photo.png")
        try Self.expectScanned(receiving, folder + "/photo.png", replies)

        try Data(contentsOf: URL(fileURLWithPath: folder + "/photo.png")).write(to: URL(fileURLWithPath: replyImage))
        let received = receiver.finish()
        #expect(received.status == 65, "\(received.stderr)")
        #expect(received.stderr.contains("\(replyImage) holds 2 replies; give an image of one reply alone"), "\(received.stderr)")
        #expect(!received.stdout.contains("imported"))
        #expect(try receiving.run(["keys", "list"]).status != 0 || !(try receiving.run(["keys", "list"]).stdout.contains("u\t")))
    }

    @Test(arguments: [Style.negated, .tilted])
    func restoreQRRefusesASecondBackup(real style: Style) throws {
        let owner = try CLI(), attacking = try CLI()
        #expect(try owner.run(["keys", "generate", "u"]).status == 0)
        #expect(try attacking.run(["keys", "generate", "u"]).status == 0)
        let folder = owner.home.path
        let passphrase = ["SEALKIT_PASSPHRASE": "paper pass phrase"]
        let real = try owner.run(["keys", "backup", "u", "--format", "text"], environment: passphrase)
        let hostile = try attacking.run(["keys", "backup", "u", "--format", "text"], environment: passphrase)
        let backups = [real.stdout, hostile.stdout].map { $0.trimmingCharacters(in: .newlines) }
        #expect(backups.allSatisfy { $0.hasPrefix("sealkit-backup-v1:") && !$0.contains("\n") })
        try Self.photo([(backups[0], style), (backups[1], .plain)], to: folder + "/photo.png")
        try Self.expectScanned(owner, folder + "/photo.png", backups)

        let other = try CLI()
        let restored = try other.run(["keys", "restore", "--all", "--qr", folder + "/photo.png"], environment: passphrase)
        #expect(restored.status == 65, "\(restored.stderr)")
        expectCleanFailure(restored, containing: "\(folder)/photo.png holds 2 paper backups; give an image of one paper backup alone")

        // One backup beside a code of another kind: the backup is taken, the other named by kind only.
        try Self.photo([(backups[0], style), ("https://example.com/menu", .plain)], to: folder + "/one.png")
        let one = try other.run(["keys", "restore", "--all", "--qr", folder + "/one.png"], environment: passphrase)
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stderr.contains("sealkit: \(folder)/one.png: took the paper backup; ignored a https: code\n"), "\(one.stderr)")
        #expect(!one.stderr.contains("example.com"))
        #expect(try other.run(["keys", "list"]).stdout.contains(try field(1, of: try owner.run(["keys", "list"]).stdout)))
    }

    /// Finding 5: `import -window root` of the receiver's desktop, the offer's window beside the reply's
    /// (xterm under Xvfb, Scripts/make-qr-screenshots.py --pair): the reply is taken, the offer named.
    @Test func receiveQRTakesTheReplyFromAScreenshotOfBothWindows() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let folder = receiving.home.path
        let replyImage = folder + "/reply.png"
        #expect(mkfifo(replyImage, 0o600) == 0)
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text", "--yes", "--qr", replyImage])
        let offer = try #require(receiver.readLine()), code = try #require(receiver.readLine())
        let sent = try sender.run(["transfer", "send", "u", "--to", offer, "--code", code, "--format", "text"])
        let reply = sent.stdout.trimmingCharacters(in: .newlines)
        #expect(sent.status == 0 && !reply.contains("\n"), "\(sent.stderr)")
        let made = try ChildProcess.run(
            "python3",
            [Repository.root.appendingPathComponent("Scripts/make-qr-screenshots.py").path, CLI.executable.path, folder + "/screen.png", "--pair", offer, reply])
        #expect(made.status == 0, "\(made.stderrText)")
        try Self.expectScanned(receiving, folder + "/screen.png", [offer, reply])

        try Data(contentsOf: URL(fileURLWithPath: folder + "/screen.png")).write(to: URL(fileURLWithPath: replyImage))
        let received = receiver.finish()
        #expect(received.status == 0, "\(received.stderr)")
        #expect(received.stdout.contains("u\t") && received.stdout.contains("\timported"))
        #expect(received.stderr.contains("sealkit: \(replyImage): took the reply; ignored a sealkit-offer-v2: code\n"), "\(received.stderr)")
    }
}
