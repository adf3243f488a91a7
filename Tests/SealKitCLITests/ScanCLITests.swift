import Foundation
import SealTestSupport
import Testing

/// QR codes in as well as out.
@Suite("sealkit scan and --qr", .requires(.qrencode))
struct ScanCLITests {
    /// Writes `payload` as a PNG QR code with the `qrencode` CLI (an independent encoder).
    static func qrencode(_ payload: String, to path: String) throws {
        let result = try ChildProcess.run("qrencode", ["-8", "-o", path, "-t", "PNG", "-s", "4"], stdin: Array(payload.utf8))
        #expect(result.status == 0, "\(result.stderrText)")
    }

    @Test func scanPrintsEveryPayloadAndFailsByTheContract() throws {
        let cli = try CLI()
        let folder = cli.home.path
        try Self.qrencode("first", to: folder + "/a.png")
        try Self.qrencode("second", to: folder + "/b.png")
        let both = try cli.run(["scan", folder + "/a.png", folder + "/b.png"])
        #expect(both.status == 0 && both.stdout == "first\nsecond\n", "\(both.stderr)")
        let piped = try cli.run(["scan", "-"], stdinBytes: Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/b.png"))))
        #expect(piped.stdout == "second\n")

        try Self.qrencode("two\nlines", to: folder + "/n.png")
        expectCleanFailure(try cli.run(["scan", folder + "/n.png"]), containing: "--null")
        #expect(try cli.run(["scan", "--null", folder + "/n.png", folder + "/a.png"]).stdoutBytes == Array("two\nlines\0first\0".utf8))

        let blank = folder + "/blank.pbm"
        try Data(("P1 8 8 " + String(repeating: "0 ", count: 64)).utf8).write(to: URL(fileURLWithPath: blank))
        let none = try cli.run(["scan", blank])
        #expect(none.status == 65)
        expectCleanFailure(none, containing: "no QR code found in \(blank)")
        let missing = try cli.run(["scan", folder + "/missing.png"])
        #expect(missing.status == 66)
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: folder + "/x.png"))
        #expect(try cli.run(["scan", folder + "/x.png"]).status == 65)
        try Data("P5 100000 100000 255\n".utf8).write(to: URL(fileURLWithPath: folder + "/huge.pgm"))
        let huge = try cli.run(["scan", folder + "/huge.pgm"])
        #expect(huge.status == 65)
        expectCleanFailure(huge, containing: "megapixels")
    }

    @Test func aRowndAppsKeyTransferQRImports() throws {
        let cli = try CLI()
        let image = cli.home.appendingPathComponent("rownd.png").path
        try Self.qrencode("https://app.rownd.link/s/abc#4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=", to: image)
        let imported = try cli.run(["keys", "import", "rownd-user", "--qr", image])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try cli.run(["decrypt", "--key", "rownd-user", "--", KeysCLITests.rowndCiphertext]).stdout
            == "This super secret string will never be known.\n")
    }

    @Test func offlineTransferAndPaperBackupThroughImages() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let folder = sender.home.path
        // The receiver shows its offer; the sender scans it (--to-qr) and the code (--code-qr); the
        // receiver scans the reply (--qr), opened after the offer is shown.
        // A FIFO: the receiver opens it only after the offer is shown, and reads once it is written.
        let replyImage = folder + "/reply.png"
        #expect(mkfifo(replyImage, 0o600) == 0)
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text", "--yes", "--qr", replyImage])
        let offer = try #require(receiver.readLine())
        let code = try #require(receiver.readLine())
        try Self.qrencode(offer, to: folder + "/offer.png")
        try Self.qrencode(code, to: folder + "/code.png")
        let sent = try sender.run(["transfer", "send", "u", "--to-qr", folder + "/offer.png", "--code-qr", folder + "/code.png", "--format", "text"])
        #expect(sent.status == 0, "\(sent.stderr)")
        let made = try sender.run(["qr", "--format", "png"], stdin: sent.stdout.trimmingCharacters(in: .newlines))
        #expect(made.status == 0, "\(made.stderr)")
        try Data(made.stdoutBytes).write(to: URL(fileURLWithPath: replyImage))
        let received = receiver.finish()
        #expect(received.status == 0, "\(received.stderr)")
        #expect(received.stdout.contains("u\t") && received.stdout.contains("\timported"))

        // A reply photo that does not exist yet is waited for (the documented flow, with no FIFO).
        let later = try CLI()
        let laterReply = later.home.path + "/reply.png"
        let waiting = try RunningCLI(later, ["transfer", "receive", "--offline", "--format", "text", "--yes", "--qr", laterReply])
        let laterOffer = try #require(waiting.readLine())
        let laterCode = try #require(waiting.readLine())
        let laterSent = try sender.run(["transfer", "send", "u", "--to", laterOffer, "--code", laterCode, "--format", "text"])
        #expect(laterSent.status == 0, "\(laterSent.stderr)")
        let laterMade = try sender.run(["qr", "--format", "png"], stdin: laterSent.stdout.trimmingCharacters(in: .newlines))
        // Written beside it and renamed into place, as a phone's sync does.
        try Data(laterMade.stdoutBytes).write(to: URL(fileURLWithPath: laterReply + ".part"))
        #expect(rename(laterReply + ".part", laterReply) == 0)
        let laterReceived = waiting.finish()
        #expect(laterReceived.status == 0, "\(laterReceived.stderr)")
        #expect(laterReceived.stderr.contains("waiting for the reply's photo at \(laterReply)"), "\(laterReceived.stderr)")
        #expect(laterReceived.stdout.contains("u\t") && laterReceived.stdout.contains("\timported"))

        // The receiver's hint names --to-qr, the way to take a photographed offer.
        let hinted = try later.run(["transfer", "receive", "--offline", "--format", "qr"])
        #expect(hinted.stderr.contains("--to-qr PHOTO --code <code>"), "\(hinted.stderr)")

        // A paper backup as a QR image restores with --qr.
        let backup = try sender.run(["keys", "backup", "u", "--format", "text"], environment: ["SEALKIT_PASSPHRASE": "paper pass phrase"])
        #expect(try sender.run(["qr", "--output", folder + "/backup.png"], stdin: backup.stdout.trimmingCharacters(in: .newlines)).status == 0)
        let other = try CLI()
        let restored = try other.run(["keys", "restore", "--all", "--qr", folder + "/backup.png"], environment: ["SEALKIT_PASSPHRASE": "paper pass phrase"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.hasPrefix("u\t"))
    }
}
