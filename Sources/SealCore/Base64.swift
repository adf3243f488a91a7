import CSodium

/// Standard base64 (RFC 4648 §4, with padding), as Rownd's SDKs write ciphertexts.
///
/// Two implementations on purpose:
/// - `encode`/`decode` are table-driven and fast. They are for public data only
///   (ciphertexts), where timing that depends on the bytes reveals nothing.
/// - Keys go through libsodium's constant-time codec (`SymmetricKey(base64Encoded:)`,
///   `SymmetricKey.base64EncodedString()`), so encoding a secret leaks nothing through timing.
public enum Base64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0...63 for alphabet characters, 0xFF for everything else.
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// The length of the base64 text for `byteCount` bytes.
    public static func encodedLength(of byteCount: Int) -> Int { (byteCount + 2) / 3 * 4 }

    /// Encodes bytes as padded standard base64.
    /// - Parameter bytes: public data; use the key APIs for secrets.
    /// - Returns: the base64 text.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let length = encodedLength(of: bytes.count)
        if length == 0 { return "" }
        return String(unsafeUninitializedCapacity: length) { output in
            encode(bytes, into: UnsafeMutableRawBufferPointer(output))
            return length
        }
    }

    /// Encodes bytes as padded standard base64.
    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    /// Writes the base64 text of `bytes` into `output`, which must hold
    /// exactly `encodedLength(of: bytes.count)` bytes.
    public static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count == encodedLength(of: bytes.count))
        alphabet.withUnsafeBufferPointer { table in
            let count = bytes.count
            var i = 0
            var o = 0
            while i + 3 <= count {
                let word = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                output[o] = table[Int(word >> 18)]
                output[o + 1] = table[Int((word >> 12) & 0x3F)]
                output[o + 2] = table[Int((word >> 6) & 0x3F)]
                output[o + 3] = table[Int(word & 0x3F)]
                i += 3
                o += 4
            }
            let remaining = count - i
            if remaining > 0 {
                let b0 = UInt32(bytes[i])
                let b1 = remaining == 2 ? UInt32(bytes[i + 1]) : 0
                let word = b0 << 16 | b1 << 8
                output[o] = table[Int(word >> 18)]
                output[o + 1] = table[Int((word >> 12) & 0x3F)]
                output[o + 2] = remaining == 2 ? table[Int((word >> 6) & 0x3F)] : UInt8(ascii: "=")
                output[o + 3] = UInt8(ascii: "=")
            }
        }
    }

    /// The number of bytes that `text` decodes to, or nil when its length or padding
    /// cannot be base64. Checks only the shape; `decode` checks every character.
    public static func decodedLength(of text: UnsafeRawBufferPointer) -> Int? {
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
    ///   - output: must hold exactly `decodedLength(of: text)` bytes.
    /// - Returns: false when `text` is not canonical base64.
    public static func decode(_ text: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard let length = decodedLength(of: text), length == output.count else { return false }
        if length == 0 { return true }
        return reverse.withUnsafeBufferPointer { table in
            let blocks = text.count / 4
            var invalid: UInt8 = 0
            var i = 0
            var o = 0
            // Every block but the last has no padding.
            for _ in 0..<(blocks - 1) {
                let a = table[Int(text[i])], b = table[Int(text[i + 1])]
                let c = table[Int(text[i + 2])], d = table[Int(text[i + 3])]
                invalid |= a | b | c | d
                let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                output[o] = UInt8(truncatingIfNeeded: word >> 16)
                output[o + 1] = UInt8(truncatingIfNeeded: word >> 8)
                output[o + 2] = UInt8(truncatingIfNeeded: word)
                i += 4
                o += 3
            }
            // 0xFF marks an invalid character; all valid values are below 64.
            guard invalid & 0xC0 == 0 else { return false }
            let a = table[Int(text[i])], b = table[Int(text[i + 1])]
            let tail = length - o
            guard a | b < 64 else { return false }
            switch tail {
            case 3:
                let c = table[Int(text[i + 2])], d = table[Int(text[i + 3])]
                guard c | d < 64 else { return false }
                let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                output[o] = UInt8(truncatingIfNeeded: word >> 16)
                output[o + 1] = UInt8(truncatingIfNeeded: word >> 8)
                output[o + 2] = UInt8(truncatingIfNeeded: word)
            case 2:
                let c = table[Int(text[i + 2])]
                guard c < 64, c & 0x03 == 0 else { return false }
                let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                output[o] = UInt8(truncatingIfNeeded: word >> 16)
                output[o + 1] = UInt8(truncatingIfNeeded: word >> 8)
            case 1:
                guard b & 0x0F == 0 else { return false }
                output[o] = UInt8(truncatingIfNeeded: (UInt32(a) << 2) | (UInt32(b) >> 4))
            default:
                return false
            }
            return true
        }
    }

    /// Decodes strict, canonical, padded standard base64.
    /// - Returns: the bytes, or nil when `text` is not canonical base64.
    public static func decode(_ text: String) -> [UInt8]? {
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
}
