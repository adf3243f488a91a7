/// Standard base64 (RFC 4648 §4, with padding), as Rownd's SDKs write ciphertexts.
///
/// Two implementations on purpose:
/// - `encode`/`decode` are table-driven and fast. They are for public data only
///   (ciphertexts), where timing that depends on the bytes reveals nothing.
/// - Keys go through libsodium's constant-time codec (`SymmetricKey(base64Encoded:)`,
///   `SymmetricKey.base64EncodedString()`), so encoding a secret leaks nothing through timing.
///
/// The fast paths read and write whole words (8 input bytes → 8 characters for 6 bytes,
/// 8 characters → 6 bytes), so ciphertexts of any size run near memory speed instead of
/// being bound by the codec. The last block is always handled one character at a time,
/// where the padding and canonical-bits rules apply.
package enum Base64 {
    /// The length of the base64 text for `byteCount` bytes.
    package static func encodedLength(of byteCount: Int) -> Int { (byteCount + 2) / 3 * 4 }

    /// Encodes bytes as padded standard base64.
    /// - Parameter bytes: public data; use the key APIs for secrets.
    /// - Returns: the base64 text.
    package static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let length = encodedLength(of: bytes.count)
        if length == 0 { return "" }
        return String(unsafeUninitializedCapacity: length) { output in
            encode(bytes, into: UnsafeMutableRawBufferPointer(output))
            return length
        }
    }

    /// Encodes bytes as padded standard base64.
    package static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    /// Writes the base64 text of `bytes` into `output`, which must hold
    /// exactly `encodedLength(of: bytes.count)` bytes.
    package static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        encode(bytes.baseAddress, count: bytes.count, into: output)
    }

    /// Encodes, in place, the `byteCount` bytes that fill the end of `output` (which holds exactly
    /// `encodedLength(of: byteCount)` bytes), writing the text over them from the front: a bulk path seals into
    /// its output and needs no scratch buffer (for a 1 MiB value, one fresh megabyte less per value).
    ///
    /// Safe because the encoder reads every byte before anything is written over it: the text of the input's
    /// first `i` bytes takes `4i/3` bytes, and the input starts at least a third of its length into `output`,
    /// so each write (8 bytes at `4i/3`) ends before the next read (at the input's start plus `i + 6`).
    package static func encodeInPlace(_ output: UnsafeMutableRawBufferPointer, byteCount: Int) {
        precondition(output.count == encodedLength(of: byteCount))
        encode(output.baseAddress.map { UnsafeRawPointer($0 + (output.count - byteCount)) }, count: byteCount, into: output)
    }

    private static func encode(_ input: UnsafeRawPointer?, count: Int, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count == encodedLength(of: count))
        guard count > 0, let input, let out = output.baseAddress else { return }
        let pairs = tables.characterPairs
        var i = 0
        var o = 0
        // Six bytes to eight characters, loading eight bytes at once while eight remain.
        while i &+ 8 <= count {
            let word = UInt64(bigEndian: input.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let first = Int(truncatingIfNeeded: word >> 40)
            let second = Int(truncatingIfNeeded: word >> 16) & 0xFF_FFFF
            let characters =
                UInt64(pairs[first >> 12]) | UInt64(pairs[first & 0xFFF]) << 16
                | UInt64(pairs[second >> 12]) << 32 | UInt64(pairs[second & 0xFFF]) << 48
            out.storeBytes(of: characters.littleEndian, toByteOffset: o, as: UInt64.self)
            i &+= 6
            o &+= 8
        }
        while i &+ 3 <= count {
            let word = Int(input.load(fromByteOffset: i, as: UInt8.self)) << 16
                | Int(input.load(fromByteOffset: i &+ 1, as: UInt8.self)) << 8
                | Int(input.load(fromByteOffset: i &+ 2, as: UInt8.self))
            let characters = UInt32(pairs[word >> 12]) | UInt32(pairs[word & 0xFFF]) << 16
            out.storeBytes(of: characters.littleEndian, toByteOffset: o, as: UInt32.self)
            i &+= 3
            o &+= 4
        }
        let remaining = count &- i
        guard remaining > 0 else { return }
        let alphabet = tables.alphabet
        let b0 = Int(input.load(fromByteOffset: i, as: UInt8.self))
        let b1 = remaining == 2 ? Int(input.load(fromByteOffset: i &+ 1, as: UInt8.self)) : 0
        let padding = UInt8(ascii: "=")
        out.storeBytes(of: alphabet[b0 >> 2], toByteOffset: o, as: UInt8.self)
        out.storeBytes(of: alphabet[(b0 & 0x03) << 4 | b1 >> 4], toByteOffset: o &+ 1, as: UInt8.self)
        out.storeBytes(of: remaining == 2 ? alphabet[(b1 & 0x0F) << 2] : padding, toByteOffset: o &+ 2, as: UInt8.self)
        out.storeBytes(of: padding, toByteOffset: o &+ 3, as: UInt8.self)
    }

    /// The number of bytes that `text` decodes to, or nil when its length or padding
    /// cannot be base64. Checks only the shape; `decode` checks every character.
    package static func decodedLength(of text: UnsafeRawBufferPointer) -> Int? {
        let count = text.count
        guard count % 4 == 0 else { return nil }
        if count == 0 { return 0 }
        var padding = 0
        if text[count - 1] == UInt8(ascii: "=") { padding += 1 }
        if text[count - 2] == UInt8(ascii: "=") { padding += 1 }
        return count / 4 * 3 - padding
    }

    /// Decodes strict, canonical, padded standard base64 into `output`.
    ///
    /// Rejects whitespace, URL-safe characters, missing or misplaced padding, and
    /// non-zero bits after the last character: every byte string has exactly one
    /// accepted encoding, so equal ciphertexts always have equal text.
    /// - Parameters:
    ///   - text: the base64 characters.
    ///   - output: must hold exactly `decodedLength(of: text)` bytes. Its contents are
    ///     unspecified when decoding fails.
    /// - Returns: false when `text` is not canonical base64.
    package static func decode(_ text: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard let length = decodedLength(of: text), length == output.count else { return false }
        guard length > 0, let input = text.baseAddress, let out = output.baseAddress else { return true }
        // Four tables, one per position in a block, give each character's bits already
        // shifted into place in a little-endian word of three bytes; an invalid character
        // sets bit 24, so OR-ing every word together finds any invalid one at the end.
        let lookup = tables.shiftedValues
        let unpadded = text.count &- 4  // the last block may hold padding
        var invalid: UInt32 = 0
        var i = 0
        var o = 0
        // Eight characters to six bytes, storing eight bytes while eight fit.
        while i &+ 8 <= unpadded && o &+ 8 <= length {
            let word = UInt64(littleEndian: input.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let first = lookup[Int(truncatingIfNeeded: word) & 0xFF]
                | lookup[256 | Int(truncatingIfNeeded: word >> 8) & 0xFF]
                | lookup[512 | Int(truncatingIfNeeded: word >> 16) & 0xFF]
                | lookup[768 | Int(truncatingIfNeeded: word >> 24) & 0xFF]
            let second = lookup[Int(truncatingIfNeeded: word >> 32) & 0xFF]
                | lookup[256 | Int(truncatingIfNeeded: word >> 40) & 0xFF]
                | lookup[512 | Int(truncatingIfNeeded: word >> 48) & 0xFF]
                | lookup[768 | Int(truncatingIfNeeded: word >> 56)]
            invalid |= first | second
            let bytes = UInt64(first & 0xFF_FFFF) | UInt64(second & 0xFF_FFFF) << 24
            out.storeBytes(of: bytes.littleEndian, toByteOffset: o, as: UInt64.self)
            i &+= 8
            o &+= 6
        }
        while i < unpadded {
            let word = lookup[Int(input.load(fromByteOffset: i, as: UInt8.self))]
                | lookup[256 | Int(input.load(fromByteOffset: i &+ 1, as: UInt8.self))]
                | lookup[512 | Int(input.load(fromByteOffset: i &+ 2, as: UInt8.self))]
                | lookup[768 | Int(input.load(fromByteOffset: i &+ 3, as: UInt8.self))]
            invalid |= word
            out.storeBytes(of: UInt8(truncatingIfNeeded: word), toByteOffset: o, as: UInt8.self)
            out.storeBytes(of: UInt8(truncatingIfNeeded: word >> 8), toByteOffset: o &+ 1, as: UInt8.self)
            out.storeBytes(of: UInt8(truncatingIfNeeded: word >> 16), toByteOffset: o &+ 2, as: UInt8.self)
            i &+= 4
            o &+= 3
        }
        guard invalid & 0xFF00_0000 == 0 else { return false }

        // The last block: padding is allowed only here, and the bits it leaves unused must be zero.
        let values = tables.values
        let a = values[Int(input.load(fromByteOffset: i, as: UInt8.self))]
        let b = values[Int(input.load(fromByteOffset: i &+ 1, as: UInt8.self))]
        guard a | b < 64 else { return false }
        switch length &- o {
        case 3:
            let c = values[Int(input.load(fromByteOffset: i &+ 2, as: UInt8.self))]
            let d = values[Int(input.load(fromByteOffset: i &+ 3, as: UInt8.self))]
            guard c | d < 64 else { return false }
            out.storeBytes(of: a << 2 | b >> 4, toByteOffset: o, as: UInt8.self)
            out.storeBytes(of: b << 4 | c >> 2, toByteOffset: o &+ 1, as: UInt8.self)
            out.storeBytes(of: c << 6 | d, toByteOffset: o &+ 2, as: UInt8.self)
        case 2:
            let c = values[Int(input.load(fromByteOffset: i &+ 2, as: UInt8.self))]
            guard c < 64, c & 0x03 == 0 else { return false }
            out.storeBytes(of: a << 2 | b >> 4, toByteOffset: o, as: UInt8.self)
            out.storeBytes(of: b << 4 | c >> 2, toByteOffset: o &+ 1, as: UInt8.self)
        case 1:
            guard b & 0x0F == 0 else { return false }
            out.storeBytes(of: a << 2 | b >> 4, toByteOffset: o, as: UInt8.self)
        default:
            return false
        }
        return true
    }

    /// Decodes strict, canonical, padded standard base64.
    /// - Returns: the bytes, or nil when `text` is not canonical base64.
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { utf8 in
            let raw = UnsafeRawBufferPointer(utf8)
            guard let length = decodedLength(of: raw) else { return nil }
            var ok = false
            let bytes = [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
                ok = decode(raw, into: UnsafeMutableRawBufferPointer(buffer))
                initialized = ok ? length : 0
            }
            return ok ? bytes : nil
        }
    }

    // MARK: Tables

    /// Lookup tables, built once and never written again. `@unchecked Sendable`: immutable after
    /// they are built.
    private struct Tables: @unchecked Sendable {
        /// The 64 characters.
        let alphabet: UnsafePointer<UInt8>
        /// For every 12-bit value, its two characters: the first in the low byte.
        let characterPairs: UnsafePointer<UInt16>
        /// 0...63 for alphabet characters, 0xFF for everything else.
        let values: UnsafePointer<UInt8>
        /// Four 256-entry tables, one per position in a block: each character's six bits
        /// in their place among three little-endian bytes, or 0x01FF_FFFF when invalid.
        let shiftedValues: UnsafePointer<UInt32>

        init() {
            let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
            let alphabet = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
            alphabet.initialize(from: characters, count: 64)

            let pairs = UnsafeMutablePointer<UInt16>.allocate(capacity: 4096)
            for value in 0..<4096 {
                pairs[value] = UInt16(characters[value >> 6]) | UInt16(characters[value & 0x3F]) << 8
            }

            let values = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
            values.initialize(repeating: 0xFF, count: 256)
            let shifted = UnsafeMutablePointer<UInt32>.allocate(capacity: 1024)
            shifted.initialize(repeating: 0x01FF_FFFF, count: 1024)
            for (index, character) in characters.enumerated() {
                let value = UInt32(index)
                let c = Int(character)
                values[c] = UInt8(index)
                shifted[c] = value << 2  // byte 0, bits 7...2
                shifted[256 | c] = value >> 4 | (value & 0x0F) << 12  // byte 0 bits 1...0, byte 1 bits 7...4
                shifted[512 | c] = (value >> 2) << 8 | (value & 0x03) << 22  // byte 1 bits 3...0, byte 2 bits 7...6
                shifted[768 | c] = value << 16  // byte 2, bits 5...0
            }
            self.alphabet = UnsafePointer(alphabet)
            self.characterPairs = UnsafePointer(pairs)
            self.values = UnsafePointer(values)
            self.shiftedValues = UnsafePointer(shifted)
        }
    }

    private static let tables = Tables()
}
