import SealKit
import SealKitQR
import Testing


/// The one rule of every `--qr` option, end to end at the library: images SealQR draws, read by the scanner,
/// the choice made. No display, no zbarimg, no CLI: a plain `swift test` runs it in milliseconds.
@Suite("QR one rule on images", .timeLimit(.minutes(1)))
struct QROneRuleImageTests {
    static let transferCode = QRCodeKind(name: "transfer code", prefixes: ["sealkit-transfer:"])
    static let real = "sealkit-transfer:7-guitarist-revenge?rendezvous=ws%3A%2F%2F127.0.0.1%3A9"
    static let hostile = "sealkit-transfer:4-crossover-clockwork?rendezvous=ws%3A%2F%2F127.0.0.1%3A9"

    /// One image holding a QR code of each text, side by side, each with its quiet zone; dark on light, or
    /// light on dark when `inverted`.
    static func image(_ texts: [String], scale: Int = 4, inverted: Bool = false) throws -> GrayImage {
        let codes = try texts.map { try QRCode($0).grayPixels(scale: scale) }
        let width = codes.map(\.side).reduce(0, +), height = codes.map(\.side).max() ?? 0
        var pixels = [UInt8](repeating: 255, count: width * height)
        var left = 0
        for code in codes {
            for y in 0..<code.side {
                pixels.replaceSubrange(y * width + left..<y * width + left + code.side, with: code.pixels[y * code.side..<(y + 1) * code.side])
            }
            left += code.side
        }
        if inverted { pixels = pixels.map { 255 - $0 } }
        return try GrayImage(width: width, height: height, luminance: pixels)
    }

    static func choose(_ image: GrayImage) throws(SealKitError) -> QRChoice {
        try QRScanner.choose(transferCode, from: QRScanner.scan(image), in: "photo.png")
    }

    @Test(arguments: [false, true])
    func twoCodesOfAKindInOneImageAreRefusedSayingHowManyNeverWhat(_ inverted: Bool) throws {
        let image = try Self.image([Self.real, Self.hostile], inverted: inverted)
        #expect(QRScanner.scan(image).count == 2, "the scanner must see both codes")
        do {
            let choice = try Self.choose(image)
            Issue.record("took \(choice.codes.count) code(s) from an image holding two transfer codes")
        } catch {
            #expect(error.reason == .unreadableImage)
            #expect(error.description == "photo.png holds 2 transfer codes; give an image of one transfer code alone")
            #expect(!error.description.contains("guitarist") && !error.description.contains("crossover"))
        }
    }

    @Test func theOneCodeOfTheKindIsTakenBesideAnotherKind() throws {
        let choice = try Self.choose(try Self.image(["https://example.com/menu", Self.real]))
        #expect(choice.codes == [Self.real])
        #expect(choice.ignored.count == 1)
        #expect(!choice.ignored.joined().contains("example.com"), "an ignored code is named by kind only")
    }

    @Test func theSameCodeTwiceIsOneCode() throws {
        let choice = try Self.choose(try Self.image([Self.real, Self.real]))
        #expect(choice.codes == [Self.real])
    }
}
