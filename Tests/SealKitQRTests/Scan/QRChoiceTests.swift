import SealKit
import Testing

import SealKitQR

/// The one rule of every `--qr` option, on decoded payloads alone: no image, no decoder, no display, so
/// a plain `swift test` catches a change to the rule in milliseconds (the CLI suites that photograph
/// codes need zbarimg, Pillow and a screen).
@Suite("QR choice: the one code of a kind", .timeLimit(.minutes(1)))
struct QRChoiceTests {
    static let transferCode = QRCodeKind(name: "transfer code", prefixes: ["sealkit-transfer:"])
    static let reply = QRCodeKind(name: "reply", plural: "replies", prefixes: ["sealkit-reply-v2:"], partPrefix: "sealkit-reply-part:")
    static let shareBackup = QRCodeKind(name: "share backup", prefixes: ["sealkit-shares-v1:"]) { text in
        !text.isEmpty && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || $0 == " " }
    }
    /// Told apart by shape, as `keys import --qr`'s keys are: here, 44 characters ending in `=`.
    static let key = QRCodeKind(name: "key") { $0.utf8.count == 44 && $0.hasSuffix("=") }

    static let real = "sealkit-transfer:7-guitarist-revenge?rendezvous=ws%3A%2F%2F127.0.0.1%3A9"
    static let hostile = "sealkit-transfer:4-crossover-clockwork?rendezvous=ws%3A%2F%2F127.0.0.1%3A9"
    static let aKey = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="
    static let anotherKey = "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE="

    static func payloads(_ texts: String...) -> [[UInt8]] { texts.map { Array($0.utf8) } }

    /// The refusal `body` throws, as its message; nil when it chose.
    static func refusal(_ body: () throws(SealKitError) -> QRChoice) -> SealKitError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func twoCodesOfTheKindAreRefusedSayingHowManyNeverWhat() throws {
        let error = try #require(Self.refusal { () throws(SealKitError) in
            try QRScanner.choose(Self.transferCode, from: Self.payloads(Self.real, Self.hostile), in: "photo.png")
        })
        #expect(error.reason == .unreadableImage)
        #expect(error.description == "photo.png holds 2 transfer codes; give an image of one transfer code alone")
        #expect(!error.description.contains("guitarist") && !error.description.contains("crossover"))
        // In whichever order they were read, and with a third code of another kind between them.
        for order in [[Self.hostile, "https://example.com/menu", Self.real], [Self.real.uppercased(), Self.hostile]] {
            let error = try #require(Self.refusal { () throws(SealKitError) in
                try QRScanner.choose(Self.transferCode, from: order.map { Array($0.utf8) })
            })
            #expect(error.description.hasPrefix("the image holds 2 transfer codes"), "\(error)")
        }
    }

    @Test func twoImagesHoldingTwoOfTheKindSayHold() throws {
        let error = try #require(Self.refusal { () throws(SealKitError) in
            try QRScanner.choose(Self.reply, from: Self.payloads("sealkit-reply-v2:AAAA", "sealkit-reply-v2:BBBB"), in: "a.png and b.png")
        })
        #expect(error.description == "a.png and b.png hold 2 replies; give an image of one reply alone")
    }

    @Test func theOneCodeOfTheKindIsTakenAndTheOthersNamedByKindOnly() throws {
        let choice = try QRScanner.choose(
            Self.transferCode, from: Self.payloads("https://example.com/menu", Self.real, Self.aKey) + [[0xFF, 0x00, 0x3A]])
        #expect(choice.codes == [Self.real])
        #expect(choice.ignored == ["a https: code", "a code of 44 bytes", "a code of 3 bytes"])
        #expect(!choice.ignored.joined().contains("example") && !choice.ignored.joined().contains("4f4a"))
    }

    @Test func theSameCodeTwiceIsOneCode() throws {
        let choice = try QRScanner.choose(Self.transferCode, from: Self.payloads(Self.real, Self.real))
        #expect(choice.codes == [Self.real])
    }

    @Test func partsOfOneWholeAreTakenPartsOfTwoAreRefused() throws {
        let parts = Self.payloads("sealkit-reply-part:ab12:2/2:BBB", "sealkit-reply-part:ab12:1/2:AAA", "sealkit-reply-part:ab12:1/2:AAA")
        #expect(try QRScanner.choose(Self.reply, from: parts).codes == ["sealkit-reply-part:ab12:2/2:BBB", "sealkit-reply-part:ab12:1/2:AAA"])
        let mixed = parts + Self.payloads("sealkit-reply-part:cd34:1/2:CCC")
        let error = try #require(Self.refusal { () throws(SealKitError) in try QRScanner.choose(Self.reply, from: mixed) })
        #expect(error.description == "the image holds parts of 2 replies; give an image of one reply alone")
        // A whole reply beside parts of another is two replies too.
        let wholeAndParts = Self.payloads("sealkit-reply-v2:AAAA", "sealkit-reply-part:ab12:1/2:AAA")
        #expect(Self.refusal { () throws(SealKitError) in try QRScanner.choose(Self.reply, from: wholeAndParts) } != nil)
    }

    @Test func companionsGoAlongWithoutCountingAsASecondWhole() throws {
        let choice = try QRScanner.choose(
            Self.shareBackup, from: Self.payloads("academic acid acne", "sealkit-shares-v1:XYZ", "academic agency aide", "https://example.com"))
        #expect(choice.codes == ["academic acid acne", "sealkit-shares-v1:XYZ", "academic agency aide"])
        #expect(choice.ignored == ["a https: code"])
        let two = Self.payloads("sealkit-shares-v1:XYZ", "academic acid acne", "sealkit-shares-v1:UVW")
        #expect(Self.refusal { () throws(SealKitError) in try QRScanner.choose(Self.shareBackup, from: two) }?.description
            == "the image holds 2 share backups; give an image of one share backup alone")
    }

    /// A kind told apart by shape takes its one code beside codes of other kinds, and refuses two:
    /// a key beside a transfer code is a key, not "2 keys".
    @Test func aKindToldApartByShapeTakesItsCodeBesideOthers() throws {
        let beside = try QRScanner.choose(Self.key, from: Self.payloads(Self.real, Self.aKey, "https://example.com/menu"))
        #expect(beside.codes == [Self.aKey])
        #expect(beside.ignored == ["a sealkit-transfer: code", "a https: code"])
        // The transfer code's option, given the same photo, takes the transfer code.
        #expect(try QRScanner.choose(Self.transferCode, from: Self.payloads(Self.aKey, Self.real)).codes == [Self.real])
        let two = try #require(Self.refusal { () throws(SealKitError) in
            try QRScanner.choose(Self.key, from: Self.payloads(Self.aKey, Self.real, Self.anotherKey))
        })
        #expect(two.description == "the image holds 2 keys; give an image of one key alone")
        #expect(!two.description.contains("4f4a") && !two.description.contains("Zm9v"))
    }

    @Test func noCodeOfTheKind() throws {
        // One code of another kind: taken for the caller, whose own reading says what it is not.
        #expect(try QRScanner.choose(Self.key, from: Self.payloads("https://example.com/menu")).codes == ["https://example.com/menu"])
        #expect(try QRScanner.choose(Self.transferCode, from: Self.payloads("7-guitarist-revenge")).codes == ["7-guitarist-revenge"])
        // Several, none of the kind: refused, by kind only.
        let several = try #require(Self.refusal { () throws(SealKitError) in
            try QRScanner.choose(Self.transferCode, from: Self.payloads("https://example.com/menu", Self.aKey))
        })
        #expect(several.description == "the image holds 2 QR codes, none of them a transfer code (a https: code, a code of 44 bytes); "
            + "give an image of the transfer code alone")
        #expect(!several.description.contains("example.com") && !several.description.contains("4f4a"))
        // A lone code that is not text can be no SealKit code; no code at all is said so.
        #expect(Self.refusal { () throws(SealKitError) in try QRScanner.choose(Self.key, from: [[0xFF, 0xFE]]) }?.description
            == "the code in the image is not text, so it is no key")
        #expect(Self.refusal { () throws(SealKitError) in try QRScanner.choose(Self.key, from: [], in: "x.png") }?.description
            == "no QR code found in x.png")
    }

    /// Prefixes are compared ignoring ASCII case: a code in alphanumeric mode holds capitals.
    @Test func prefixesIgnoreCase() throws {
        #expect(try QRScanner.choose(Self.transferCode, from: Self.payloads("x", Self.real.uppercased())).codes == [Self.real.uppercased()])
    }
}
