import Foundation
import SealKitQR
import SealTestSupport
import Testing

/// An image the scanner cannot read whole in its time budget (a code beside a screen of finder patterns,
/// which zxing-cpp cannot finish) gives no code at all: `scan` says so, and no `--qr` option takes the code
/// zbar read there, which could be a hostile one beside a real one only zxing-cpp reads.
@Suite("--qr and scan: an image not read whole")
struct QRWholeImageCLITests {
    /// A gray PGM: `text`'s code, drawn by SealKit 6 pixels a module with a light margin, over the top-left
    /// corner of a 1920 × 1080 screen of finder patterns.
    static func photo(_ text: String, to path: String) throws {
        let pixels = finderTilePixels(width: 1_920, height: 1_080, with: try QRCode(text).grayPixels(scale: 6))
        try Data(Array("P5 1920 1080 255\n".utf8) + pixels).write(to: URL(fileURLWithPath: path))
    }

    @Test func scanSaysTheImageWasNotReadWhole() throws {
        let cli = try CLI()
        let path = cli.home.appendingPathComponent("photo.pgm").path
        try Self.photo("sealkit-transfer:4-crossover-clockwork", to: path)
        let scanned = try cli.run(["scan", path])
        expectCleanFailure(
            scanned,
            containing: "\(path): the image was not read whole: zxing-cpp did not finish within its budget of 1.7 s of CPU time; give a smaller image, or one of the code alone")
        #expect(scanned.status == 65)
        #expect(scanned.stdout.isEmpty, "part of the image's codes: \(scanned.stdout)")
        #expect(!scanned.stderr.contains("crossover"))
    }

    @Test func noOfferIsTakenFromAnImageNotReadWhole() throws {
        let sender = try CLI(), receiving = try CLI(), attacking = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text", "--yes"])
        let attacker = try RunningCLI(attacking, ["transfer", "receive", "--offline", "--format", "text", "--yes"])
        _ = try #require(receiver.readLine())
        let code = try #require(receiver.readLine())
        let hostile = try #require(attacker.readLine())
        let path = sender.home.appendingPathComponent("photo.pgm").path
        try Self.photo(hostile, to: path)

        let sent = try sender.run(["transfer", "send", "u", "--to-qr", path, "--code", code, "--format", "text"])
        expectCleanFailure(sent, containing: "the image was not read whole")
        #expect(sent.status == 65)
        #expect(sent.stdout.isEmpty, "a reply was made to the offer zbar read: \(sent.stdout.prefix(80))")
        receiver.write([""])
        attacker.write([""])
        _ = receiver.finish()
        _ = attacker.finish()
    }
}
