import CZXing
import SealKit
import Testing

import SealKitQR

#if canImport(Glibc)
import Glibc
#endif

/// zxing-cpp's helper answers at most `capacity` codes. An image holding more must not come back as a whole
/// reading of the first ones: a code past the limit that only zxing-cpp reads (a tilted one) would be left
/// out, and the one-code rule would choose from part of the image.
@Suite("QR scanner: more codes than an answer holds", .timeLimit(.minutes(1)))
struct WholeReadingCapacityTests {
    static let texts = ["https://example.com/menu", "https://example.com/wine"]

    @Test func moreCodesThanTheAnswerHoldsIsNoWholeReading() throws {
        let image = try QROneRuleImageTests.image(Self.texts)
        // The premise: zxing-cpp reads both codes when the answer may hold them.
        #expect(Set(QRScanner.zxingScan(image)) == Set(Self.texts.map { Array($0.utf8) }))

        var job = sealkit_zxing_job(pid: -1, fd: -1, deadline: 0, answer: nil, limit: 0, state: 0, budget: 0, cutoff: 0)
        let started = image.pixels.withUnsafeBufferPointer { pixels in
            sealkit_zxing_start(pixels.baseAddress, Int32(image.width), Int32(image.height), 1, 5_000, 1, &job)
        }
        try #require(started == 0)
        var codes = [sealkit_zxing_code](repeating: sealkit_zxing_code(), count: 1)
        let count = sealkit_zxing_finish(&job, &codes, 1)
        if count > 0 { for code in codes.prefix(count) { free(code.bytes) } }
        #expect(count == SEALKIT_ZXING_FAILED, "an answer of one code came back whole from an image of two: \(count)")
    }
}
