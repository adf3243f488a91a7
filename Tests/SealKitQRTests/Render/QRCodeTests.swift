import CQREncode
@_spi(CLI) import SealKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

import SealKitQR

@Suite("Encoding")
struct QRCodeTests {
    // Byte-mode capacities of versions 1 and 2 from ISO/IEC 18004 table 7.
    static let versionOneCapacity: [QRErrorCorrection: Int] = [.low: 17, .medium: 14, .quartile: 11, .high: 7]

    @Test("The smallest version that fits is chosen", arguments: QRErrorCorrection.allCases)
    func smallestVersion(correction: QRErrorCorrection) throws {
        let capacity = try #require(Self.versionOneCapacity[correction])
        let full = try QRCode([UInt8](repeating: 0xA5, count: capacity), correction: correction)
        #expect(full.version == 1)
        #expect(full.size == 21)
        let overflowing = try QRCode([UInt8](repeating: 0xA5, count: capacity + 1), correction: correction)
        #expect(overflowing.version == 2)
        #expect(overflowing.size == 25)
        #expect(overflowing.correction == correction)
    }

    @Test("The largest payload fits version 40; one byte more is refused", arguments: QRErrorCorrection.allCases)
    func largestPayload(correction: QRErrorCorrection) throws {
        let maximum = QRCode.maximumPayload(correction: correction)
        let largest = try QRCode(pseudoRandomBytes(count: maximum, seed: 7), correction: correction)
        #expect(largest.version == 40)
        #expect(largest.size == 177)

        #expect(throws: SealKitError(QRCodeError.payloadTooLong(byteCount: maximum + 1, maximum: maximum, correction: correction))) {
            try QRCode([UInt8](repeating: 0x41, count: maximum + 1), correction: correction)
        }
        #expect(throws: SealKitError(QRCodeError.payloadTooLong(byteCount: 100_000, maximum: maximum, correction: correction))) {
            try QRCode([UInt8](repeating: 0x41, count: 100_000), correction: correction)
        }
    }

    @Test("The capacity table agrees with libqrencode itself", arguments: QRErrorCorrection.allCases)
    func capacityMatchesLibrary(correction: QRErrorCorrection) throws {
        let maximum = QRCode.maximumPayload(correction: correction)
        let bytes = [UInt8](repeating: 0x5A, count: maximum + 1)
        let fits = QRcode_encodeData(Int32(maximum), bytes, 40, correction.level)
        #expect(fits != nil)
        QRcode_free(fits)
        errno = 0
        let overflows = QRcode_encodeData(Int32(maximum + 1), bytes, 40, correction.level)
        #expect(overflows == nil)
        #expect(errno == ERANGE)
        QRcode_free(overflows)
    }

    @Test func emptyPayloadIsRefused() {
        #expect(throws: SealKitError(QRCodeError.emptyPayload)) { try QRCode([UInt8]()) }
        #expect(throws: SealKitError(QRCodeError.emptyPayload)) { try QRCode("") }
    }

    /// The library says what fits, as a fact an app can word advice from; the command words the lower error
    /// correction that holds more as its `--ecc` flag (`AdviceTests` pins the line).
    @Test func tooLongMessageSaysWhatFitsAndWhatHelps() {
        let medium = SealKitError(QRCodeError.payloadTooLong(byteCount: 2400, maximum: 2331, correction: .medium))
        #expect(medium.description.contains("2400 bytes"))
        #expect(medium.description.contains("at most 2331 bytes"))
        #expect(!medium.description.contains("\n") && !medium.description.contains("--ecc"))
        #expect(medium.reason == .tooLarge && medium.detail == .qrPayloadTooLong && medium.limit == 2331)
        let low = SealKitError(QRCodeError.payloadTooLong(byteCount: 3000, maximum: 2953, correction: .low))
        #expect(low.description.contains("at most 2953 bytes"))
        #expect(low.detail == .qrPayloadTooLong && low.limit == 2953)
    }

    @Test func textIsEncodedAsItsUTF8Bytes() throws {
        let text = "Grüße — 東京 🔐"
        let fromText = try QRCode(text, correction: .quartile)
        let fromBytes = try QRCode(Array(text.utf8), correction: .quartile)
        #expect(ModuleGrid(expected: fromText) == ModuleGrid(expected: fromBytes))
    }

    @Test func modulesOutsideTheSymbolAreLight() throws {
        let code = try QRCode("x")
        // The top-left finder pattern's corner is dark; its neighbours outside the symbol are not.
        #expect(code.isDark(x: 0, y: 0))
        #expect(code.isDark(x: code.size - 1, y: 0))
        for (x, y) in [(-1, 0), (0, -1), (code.size, 0), (0, code.size), (Int.min, Int.max), (Int.max, 3)] {
            #expect(!code.isDark(x: x, y: y))
        }
    }
}
