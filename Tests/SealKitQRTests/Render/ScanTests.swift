import SealTestSupport
import Testing

import SealKitQR

/// Every scannable rendering, decoded by zbarimg, gives back exactly the payload.
@Suite("Scanning with zbarimg", .requires(.zbarimg))
struct ScanTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var correction: QRErrorCorrection
        var byteCount: Int
        var testDescription: String { "\(byteCount) bytes at \(correction.rawValue)" }
    }

    /// One byte, a few middle sizes, and the largest that fits, at every level.
    static let cases: [Case] = QRErrorCorrection.allCases.flatMap { correction in
        [1, 42, 700, QRCode.maximumPayload(correction: correction)].map { Case(correction: correction, byteCount: $0) }
    }

    static let scannedFormats: [QRFormat] = [.png, .pbm, .utf8, .ansi, .ascii, .svg]

    @Test("Binary payloads round-trip", arguments: cases)
    func binaryPayload(_ testCase: Case) throws {
        let payload = pseudoRandomBytes(count: testCase.byteCount, seed: UInt64(testCase.byteCount))
        let code = try QRCode(payload, correction: testCase.correction)
        // zbarimg takes a quarter second on each 8-pixel-per-module version-40 image, so the
        // largest codes go through every format at M only and through the image formats elsewhere.
        let isLargest = testCase.byteCount == QRCode.maximumPayload(correction: testCase.correction)
        let formats = isLargest && testCase.correction != .medium ? [.png, .pbm] : Self.scannedFormats
        for format in formats {
            let scanned = try scan(code, as: format)
            #expect(scanned == payload, "\(format.rawValue): \(scanned.count) bytes back, \(payload.count) sent")
        }
    }

    @Test("Every byte value, NUL included, round-trips")
    func everyByteValue() throws {
        let payload = (0...255).map { UInt8($0) } + [0, 0xFF, 0x0A, 0x0D]
        let code = try QRCode(payload)
        for format in [QRFormat.png, .utf8] {
            #expect(try scan(code, as: format) == payload, "\(format.rawValue)")
        }
    }

    @Test("Non-ASCII UTF-8 text round-trips", arguments: [
        "é", "Grüße aus Köln", "東京の鍵 🔐 ключ — ¿sí?", String(repeating: "🔑", count: 100),
    ])
    func unicodeText(_ text: String) throws {
        let code = try QRCode(text)
        for format in Self.scannedFormats {
            let scanned = try scan(code, as: format)
            #expect(scanned == Array(text.utf8), "\(format.rawValue)")
            #expect(String(validating: scanned, as: UTF8.self) == text, "\(format.rawValue)")
        }
    }
}
