import Foundation
import SealKit
import Testing

@Suite("Base64 for ciphertexts")
struct Base64Tests {
    @Test func matchesFoundationOnRandomInputsOfEveryLength() throws {
        for length in 0..<300 {
            let bytes = SecureRandom.bytes(count: length)
            let ours = Base64.encode(bytes)
            #expect(ours == Data(bytes).base64EncodedString())
            #expect(Base64.decode(ours) == bytes)
        }
        let large = SecureRandom.bytes(count: (1 << 20) + 1)
        #expect(Base64.encode(large) == Data(large).base64EncodedString())
        #expect(Base64.decode(Base64.encode(large)) == large)
    }

    @Test(arguments: [
        "A", "AB", "ABC", "A===", "AB=A", "=AAA", "AA=A", "AAAA=", "AA AA", "AA\nA", "AA-_", "ÀAAA", "QR==", "QUJ=",
        "AAA\u{0}",
    ])
    func rejectsNonCanonicalOrInvalidText(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test func rejectsInvalidCharacterInEveryPosition() {
        let valid = Base64.encode(SecureRandom.bytes(count: 48))
        for index in 0..<valid.utf8.count {
            var bytes = Array(valid.utf8)
            bytes[index] = UInt8(ascii: "*")
            #expect(Base64.decode(String(decoding: bytes, as: UTF8.self)) == nil)
        }
    }

    @Test func acceptsCanonicalPadding() {
        #expect(Base64.decode("") == [])
        #expect(Base64.decode("QQ==") == [0x41])
        #expect(Base64.decode("QUI=") == [0x41, 0x42])
        #expect(Base64.decode("QUJD") == [0x41, 0x42, 0x43])
    }

    /// The bulk paths seal into the end of their output and encode in place: every length, each
    /// offset the encoder's eight-byte and three-byte steps and its padding meet, gives what encoding apart gives.
    @Test func encodingInPlaceFromTheOutputsEndGivesTheSameText() {
        var generator = SystemRandomNumberGenerator()
        for count in Array(0...200) + [1_000, 4_096, 65_537, 1 << 20] {
            let bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let expected = Base64.encode(bytes)
            let length = Base64.encodedLength(of: count)
            var output = [UInt8](repeating: 0xEE, count: length)
            output.withUnsafeMutableBytes { buffer in
                UnsafeMutableRawBufferPointer(rebasing: buffer[(length - count)...]).copyBytes(from: bytes)
                Base64.encodeInPlace(buffer, byteCount: count)
            }
            #expect(String(decoding: output, as: UTF8.self) == expected, "\(count) bytes")
        }
    }
}
