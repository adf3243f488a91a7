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

    /// `name` as names are compared when they may differ only in spelling: ASCII letters in lower case,
    /// and the separators `_`, `-`, `.` and space left out, so `home_address`, `homeAddress` and
    /// `Home-Address` fold alike, and so do `SSN` and `ssn`.
    package static func foldedName(_ name: String) -> String {
        var folded = ""
        folded.unicodeScalars.reserveCapacity(name.unicodeScalars.count)
        for scalar in name.unicodeScalars {
            switch scalar {
            case "_", "-", ".", " ": continue
            case "A"..."Z": folded.unicodeScalars.append(Unicode.Scalar(scalar.value + 32)!)
            default: folded.unicodeScalars.append(scalar)
            }
        }
        return folded
    }

    /// How near two names are: the fewer of their edit distance as written and once folded
    /// (`foldedName`), so a name equal to another but for case and separators is at 0. At most `limit + 1`.
    package static func nameDistance(_ a: String, _ b: String, limit: Int) -> Int {
        let written = editDistance(a, b, limit: limit)
        if written == 0 { return 0 }
        return min(written, editDistance(foldedName(a), foldedName(b), limit: limit))
    }

    /// The one rule for "did you mean": the name of `names` nearest to `text` (`nameDistance`) within two
    /// edits, or equal once case and separators are left out; the first of equally near names; nil when
    /// none is that near.
    package static func nearestName(to text: String, among names: [String]) -> String? {
        var best: (name: String, distance: Int)?
        for name in names {
            let distance = nameDistance(text, name, limit: 2)
            if distance <= 2, distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        return best?.name
    }

    /// Damerau-Levenshtein distance (optimal string alignment: insertions, deletions,
    /// substitutions and swaps of neighbours), by Unicode scalar. Anything beyond `limit`
    /// comes back as `limit + 1`, so long keys cost little. Every "did you mean" SealKit says comes from it (schema keys, code and passphrase words, commands).
    package static func editDistance(_ a: String, _ b: String, limit: Int) -> Int {
        let s = Array(a.unicodeScalars), t = Array(b.unicodeScalars)
        if abs(s.count - t.count) > limit { return limit + 1 }
        var previous2 = [Int](repeating: 0, count: t.count + 1)
        var previous = Array(0...t.count)
        var current = [Int](repeating: 0, count: t.count + 1)
        for i in 1...max(s.count, 1) where !s.isEmpty {
            current[0] = i
            var rowMinimum = current[0]
            for j in 1...max(t.count, 1) where !t.isEmpty {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    value = min(value, previous2[j - 2] + 1)
                }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            if rowMinimum > limit { return limit + 1 }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return min(s.isEmpty ? t.count : previous[t.count], limit + 1)
    }
}
