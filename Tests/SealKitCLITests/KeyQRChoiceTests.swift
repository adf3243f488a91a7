import Foundation
import SealKitQR
import SealTestSupport
import Testing

@testable import SealKitCLI

/// `keys import --qr` on the one QR rule: a key is told apart by its shape, so a key photographed beside
/// a transfer code (or a menu's link) is taken alone, and two keys are refused. It used to take every
/// code as a key, and refused a key beside any other code as "2 keys".
@Suite("keys import --qr: the one QR rule", .timeLimit(.minutes(2)))
struct KeyQRChoiceTests {
    static let key = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="
    static let otherKey = "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE="
    static let rownd = "https://app.rownd.link/s/abc#" + key
    static let transfer = "sealkit-transfer:7-guitarist-revenge?version=0&rendezvous=ws%3A%2F%2F127.0.0.1%3A9&role=leader"

    static func payloads(_ texts: [String]) -> [[UInt8]] { texts.map { Array($0.utf8) } }

    /// The CLI's own kind, on decoded payloads: no image, no display.
    @Test func theKeyKindTakesTheKeyBesideOtherCodesAndRefusesTwo() throws {
        for keyText in [Self.key, Self.rownd, "{\"data\":\"\(Self.rownd)\"}", "https://app.rownd.link/s/abc#" + Self.key.replacing("/", with: "%2F")] {
            for order in [[Self.transfer, keyText], [keyText, "https://example.com/menu", Self.transfer]] {
                let choice = try QRScanner.choose(.key, from: Self.payloads(order))
                #expect(choice.codes == [keyText], "\(order)")
                #expect(choice.ignored.allSatisfy { $0 == "a sealkit-transfer: code" || $0 == "a https: code" }, "\(choice.ignored)")
            }
        }
        do {
            _ = try QRScanner.choose(.key, from: Self.payloads([Self.rownd, Self.transfer, Self.otherKey]))
            Issue.record("two keys were taken")
        } catch {
            #expect(error.description == "the image holds 2 keys; give an image of one key alone")
        }
        // The transfer code's option, given the same photo, takes the transfer code.
        #expect(try QRScanner.choose(.transferCode, from: Self.payloads([Self.key, Self.transfer])).codes == [Self.transfer])
        // A lone code that is no key is still handed on, for the key's reading to say what is wrong.
        #expect(try QRScanner.choose(.key, from: Self.payloads(["https://example.com/menu"])).codes == ["https://example.com/menu"])
    }

    /// QR codes side by side on white, as one 8-bit PGM: what a photo of two codes is to the scanner.
    static func sideBySide(_ texts: [String]) throws -> [UInt8] {
        let images = try texts.map { try GrayImage(imageFile: try QRCode($0).rendered(as: .pbm)) }
        let gap = 40
        let width = images.reduce(gap) { $0 + $1.width + gap }, height = images.map(\.height).max()! + 2 * gap
        var pixels = [UInt8](repeating: 0xFF, count: width * height)
        var left = gap
        for image in images {
            for row in 0..<image.height {
                let start = (gap + row) * width + left
                pixels.replaceSubrange(start..<start + image.width, with: image.pixels[(row * image.width)..<((row + 1) * image.width)])
            }
            left += image.width + gap
        }
        return Array("P5\n\(width) \(height)\n255\n".utf8) + pixels
    }

    @Test func keysImportTakesTheKeyBesideATransferCode() throws {
        let cli = try CLI()
        let photo = cli.home.appendingPathComponent("photo.pgm").path
        try Data(try Self.sideBySide([Self.transfer, Self.rownd])).write(to: URL(fileURLWithPath: photo))
        let scanned = try cli.run(["scan", photo])
        #expect(Set(scanned.stdout.split(separator: "\n").map(String.init)) == [Self.transfer, Self.rownd], "\(scanned.stderr)")

        let imported = try cli.run(["keys", "import", "rownd-user", "--qr", photo])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr == "sealkit: \(photo): took the key; ignored a sealkit-transfer: code\n")
        #expect(imported.stdout.hasPrefix("rownd-user\t") && imported.stdout.hasSuffix("\timported\n"), "\(imported.stdout)")
        #expect(try cli.run(["decrypt", "--key", "rownd-user", "--", KeysCLITests.rowndCiphertext]).stdout
            == "This super secret string will never be known.\n")

        // Two keys in one photo: refused, saying how many and never which, and nothing stored.
        let other = try CLI()
        let two = other.home.appendingPathComponent("two.pgm").path
        try Data(try Self.sideBySide([Self.rownd, Self.otherKey])).write(to: URL(fileURLWithPath: two))
        let refused = try other.run(["keys", "import", "u", "--qr", two])
        #expect(refused.status == 65)
        expectCleanFailure(refused, containing: "\(two) holds 2 keys; give an image of one key alone")
        #expect(!refused.stderr.contains("4f4a") && !refused.stderr.contains("Zm9v"))
        #expect(try other.run(["keys", "list"]).status != 0, "a keystore was made")
    }
}
