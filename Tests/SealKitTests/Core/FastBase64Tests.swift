import CSodium
import Foundation
import SealKit
import Testing

/// The word-at-a-time codec against two independent ones: Foundation's and libsodium's
/// (constant-time, strict, padded) base64.
@Suite("Fast base64 against Foundation and libsodium")
struct FastBase64Tests {
    @Test func encodeMatchesBothOnRandomBytesOfEveryLengthTo2000() {
        for length in 0...2000 {
            let bytes = SecureRandom.bytes(count: length)
            let ours = Base64.encode(bytes)
            #expect(ours == Data(bytes).base64EncodedString(), "length \(length)")
            #expect(ours == Sodium64.encode(bytes), "length \(length)")
            #expect(Base64.decode(ours) == bytes, "length \(length)")
        }
    }

    @Test func edgeCaseBytesForEveryTailLength() {
        // All zero bits, all one bits, and every byte value, at lengths that exercise both
        // word loops, the 3-byte loop and each tail.
        let patterns: [(String, (Int) -> UInt8)] = [
            ("zeros", { _ in 0x00 }), ("ones", { _ in 0xFF }), ("ramp", { UInt8(truncatingIfNeeded: $0) }),
            ("alternating", { $0 % 2 == 0 ? 0xAA : 0x55 }), ("high", { _ in 0xFB }), ("plus-slash", { _ in 0xFB ^ 0x04 }),
        ]
        for (name, pattern) in patterns {
            for length in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 40, 64, 255, 256, 257, 1000] {
                let bytes = (0..<length).map(pattern)
                let ours = Base64.encode(bytes)
                #expect(ours == Sodium64.encode(bytes), "\(name) \(length)")
                #expect(Base64.decode(ours) == bytes, "\(name) \(length)")
            }
        }
    }

    @Test func largeInputsMatchFoundation() {
        for extra in 0..<3 {
            let bytes = SecureRandom.bytes(count: (1 << 20) + extra)
            let ours = Base64.encode(bytes)
            #expect(ours == Data(bytes).base64EncodedString())
            #expect(Base64.decode(ours) == bytes)
        }
    }

    /// Whatever byte replaces whichever character, we accept exactly what libsodium's strict
    /// decoder accepts, and decode it to the same bytes.
    @Test func acceptsExactlyWhatLibsodiumAcceptsUnderSingleByteMutations() {
        let replacements: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x20, 0x2A, 0x2B, 0x2D, 0x2F, 0x3D, 0x41, 0x5F, 0x61, 0x7F, 0x80, 0xC3, 0xFF]
        for length in 0...40 {
            let text = Array(Base64.encode(SecureRandom.bytes(count: length)).utf8)
            for position in text.indices {
                for replacement in replacements {
                    var mutated = text
                    mutated[position] = replacement
                    let ours = decode(mutated)
                    if replacement >= 0x80 {
                        // libsodium 1.0.18 reads bytes of 0x80 and above as alphabet characters
                        // (its constant-time compares see a negative `char`); RFC 4648 and
                        // Foundation do not, and neither do we.
                        #expect(ours == nil, "length \(length), \(replacement) at \(position)")
                        #expect(Data(base64Encoded: Data(mutated)) == nil)
                        continue
                    }
                    let theirs = Sodium64.decode(mutated)
                    #expect(ours == theirs, "length \(length), \(replacement) at \(position) in \(mutated)")
                }
            }
        }
    }

    @Test func invalidCharacterAnywhereInLongTextIsRejected() {
        // Long enough that the eight-character loop runs; every position, in both loops and the tail.
        for length in [45, 46, 47, 48, 100] {
            let text = Array(Base64.encode(SecureRandom.bytes(count: length)).utf8)
            for position in text.indices {
                for replacement: UInt8 in [UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "_"), 0x00, 0xFF] {
                    var mutated = text
                    mutated[position] = replacement
                    #expect(decode(mutated) == nil, "length \(length), \(replacement) at \(position)")
                }
                if position < text.count - 2 {
                    var padded = text
                    padded[position] = UInt8(ascii: "=")
                    #expect(decode(padded) == nil, "'=' at \(position) of \(text.count)")
                }
            }
        }
    }

    @Test func nonCanonicalTrailingBitsAreRejectedLikeLibsodium() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for prefix in ["", "QUJD", "QUJDREVGR0hJSktM"] {
            for (value, character) in alphabet.enumerated() {
                // One byte: the second character's low four bits are unused.
                let one = Array((prefix + "Q").utf8) + [character] + Array("==".utf8)
                #expect((decode(one) != nil) == (value & 0x0F == 0), "\(String(decoding: one, as: UTF8.self))")
                #expect(decode(one) == Sodium64.decode(one))
                // Two bytes: the third character's low two bits are unused.
                let two = Array((prefix + "QU").utf8) + [character] + [UInt8(ascii: "=")]
                #expect((decode(two) != nil) == (value & 0x03 == 0), "\(String(decoding: two, as: UTF8.self))")
                #expect(decode(two) == Sodium64.decode(two))
            }
        }
        for text in ["QQ=", "QQ", "Q===", "QQ=A", "QUI", "=QUI", "QUJD=", "QUJDQQ", "QUJDQ===", "QUJD===="] {
            #expect(Base64.decode(text) == nil, "\(text)")
            #expect(Sodium64.decode(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func decodeIntoRefusesAWrongOutputSize() {
        let text = Array(Base64.encode([1, 2, 3, 4, 5]).utf8)
        var small = [UInt8](repeating: 0, count: 4)
        var large = [UInt8](repeating: 0, count: 6)
        text.withUnsafeBytes { raw in
            #expect(!small.withUnsafeMutableBytes { Base64.decode(raw, into: $0) })
            #expect(!large.withUnsafeMutableBytes { Base64.decode(raw, into: $0) })
        }
    }

    private func decode(_ text: [UInt8]) -> [UInt8]? {
        text.withUnsafeBytes { raw -> [UInt8]? in
            guard let length = Base64.decodedLength(of: raw) else { return nil }
            var out = [UInt8](repeating: 0, count: length)
            return out.withUnsafeMutableBytes { Base64.decode(raw, into: $0) } ? out : nil
        }
    }
}

/// libsodium's own base64, padded standard alphabet, nothing ignored.
enum Sodium64 {
    static func encode(_ bytes: [UInt8]) -> String {
        _ = sodium_init()
        let capacity = sodium_base64_encoded_len(bytes.count, sodium_base64_VARIANT_ORIGINAL)
        var text = [CChar](repeating: 0, count: capacity)
        _ = sodium_bin2base64(&text, capacity, bytes, bytes.count, sodium_base64_VARIANT_ORIGINAL)
        return String(decoding: text.prefix(capacity - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes, or nil when libsodium rejects the text or stops before its end.
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        _ = sodium_init()
        var out = [UInt8](repeating: 0, count: text.count)
        var length = 0
        let status = text.withUnsafeBufferPointer { chars in
            chars.withMemoryRebound(to: CChar.self) { chars in
                sodium_base642bin(&out, out.count, chars.baseAddress, chars.count, nil, &length, nil, sodium_base64_VARIANT_ORIGINAL)
            }
        }
        return status == 0 ? Array(out.prefix(length)) : nil
    }
}
