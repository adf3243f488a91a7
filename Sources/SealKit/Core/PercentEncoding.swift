/// RFC 3986 percent-decoding, for key text in a link's fragment and for transfer URIs. Escapes are
/// decoded byte by byte with no temporary left behind, since a key's bytes may pass through.
package enum PercentEncoding {
    /// The bytes with every `%XX` decoded; nil for a `%` not followed by two hex digits.
    package static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 2 < text.endIndex, let high = hexValue(text[index + 1]), let low = hexValue(text[index + 2]) else {
                ConstantTime.wipe(&out)
                return nil
            }
            out.append(high << 4 | low)
            index += 3
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
