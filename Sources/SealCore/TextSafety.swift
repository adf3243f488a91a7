/// Text that someone else chose (an argument, a URI, a file name, a relay's message) made safe to
/// quote in a one-line message: the one escaping rule for every message SealKit writes.
package enum TextSafety {
    /// `text` with every character that could rewrite or split a terminal line written as `\u{…}`:
    /// C0 controls (ESC, newline, BEL ...), DEL, C1 controls, format characters (bidi overrides and
    /// isolates, zero-width characters) and the Unicode line and paragraph separators. At most
    /// `limit` characters of `text` are kept; a longer text ends with `...`.
    package static func printable(_ text: String, limit: Int = 160) -> String {
        var result = ""
        var kept = 0
        for scalar in text.unicodeScalars {
            guard kept < limit else { return result + "..." }
            kept += 1
            if needsEscape(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `text` holds a character that `printable` escapes.
    package static func hasUnprintable(_ text: String) -> Bool { text.unicodeScalars.contains(where: needsEscape) }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return true }
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}
