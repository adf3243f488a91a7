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
