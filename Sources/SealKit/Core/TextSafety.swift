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

    /// `name` as names are compared when they may differ only in spelling: full-width and half-width forms
    /// as NFKC writes them (`ｓｓｎ` is `ssn`), letters in lower case, and the separators `_`, `-`, `.` and
    /// space left out, so `home_address`, `homeAddress` and `Home-Address` fold alike, and so do `SSN`,
    /// `ｓｓｎ` and `ssn`.
    package static func foldedName(_ name: String) -> String {
        var folded = ""
        folded.unicodeScalars.reserveCapacity(name.unicodeScalars.count)
        for original in name.unicodeScalars {
            let widthFolded = widthFolding(original)
            for scalar in widthFolded?.unicodeScalars ?? String.UnicodeScalarView([original]) {
                switch scalar {
                case "_", "-", ".", " ": continue
                case "A"..."Z": folded.unicodeScalars.append(Unicode.Scalar(scalar.value + 32)!)
                case _ where scalar.isASCII: folded.unicodeScalars.append(scalar)
                default: folded.unicodeScalars.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
                }
            }
        }
        return folded
    }

    /// NFKC's mapping of a full-width or half-width form (Unicode's `<wide>` and `<narrow>` decompositions), or
    /// nil for any other scalar. Ranges of scalars that map to a range (first, last, first's mapping), from
    /// Python's `unicodedata`; the one form outside them, U+FFE3 FULLWIDTH MACRON, maps to two scalars.
    /// The whole of NFKC is not applied: the standard library has none, and Foundation's would load ICU into
    /// every command.
    package static func widthFolding(_ scalar: Unicode.Scalar) -> String? {
        let value = scalar.value
        guard value == 0x3000 || (0xFF01...0xFFEE).contains(value) else { return nil }
        if value == 0xFFE3 { return "\u{20}\u{304}" }
        for (first, last, mapped) in widthRanges where (first...last).contains(value) {
            return String(Unicode.Scalar(mapped + (value - first))!)
        }
        return nil
    }

    private static let widthRanges: [(UInt32, UInt32, UInt32)] = [
        (0x3000, 0x3000, 0x20), (0xFF01, 0xFF5E, 0x21), (0xFF5F, 0xFF60, 0x2985), (0xFF61, 0xFF61, 0x3002),
        (0xFF62, 0xFF63, 0x300C), (0xFF64, 0xFF64, 0x3001), (0xFF65, 0xFF65, 0x30FB), (0xFF66, 0xFF66, 0x30F2),
        (0xFF67, 0xFF67, 0x30A1), (0xFF68, 0xFF68, 0x30A3), (0xFF69, 0xFF69, 0x30A5), (0xFF6A, 0xFF6A, 0x30A7),
        (0xFF6B, 0xFF6B, 0x30A9), (0xFF6C, 0xFF6C, 0x30E3), (0xFF6D, 0xFF6D, 0x30E5), (0xFF6E, 0xFF6E, 0x30E7),
        (0xFF6F, 0xFF6F, 0x30C3), (0xFF70, 0xFF70, 0x30FC), (0xFF71, 0xFF71, 0x30A2), (0xFF72, 0xFF72, 0x30A4),
        (0xFF73, 0xFF73, 0x30A6), (0xFF74, 0xFF74, 0x30A8), (0xFF75, 0xFF76, 0x30AA), (0xFF77, 0xFF77, 0x30AD),
        (0xFF78, 0xFF78, 0x30AF), (0xFF79, 0xFF79, 0x30B1), (0xFF7A, 0xFF7A, 0x30B3), (0xFF7B, 0xFF7B, 0x30B5),
        (0xFF7C, 0xFF7C, 0x30B7), (0xFF7D, 0xFF7D, 0x30B9), (0xFF7E, 0xFF7E, 0x30BB), (0xFF7F, 0xFF7F, 0x30BD),
        (0xFF80, 0xFF80, 0x30BF), (0xFF81, 0xFF81, 0x30C1), (0xFF82, 0xFF82, 0x30C4), (0xFF83, 0xFF83, 0x30C6),
        (0xFF84, 0xFF84, 0x30C8), (0xFF85, 0xFF8A, 0x30CA), (0xFF8B, 0xFF8B, 0x30D2), (0xFF8C, 0xFF8C, 0x30D5),
        (0xFF8D, 0xFF8D, 0x30D8), (0xFF8E, 0xFF8E, 0x30DB), (0xFF8F, 0xFF93, 0x30DE), (0xFF94, 0xFF94, 0x30E4),
        (0xFF95, 0xFF95, 0x30E6), (0xFF96, 0xFF9B, 0x30E8), (0xFF9C, 0xFF9C, 0x30EF), (0xFF9D, 0xFF9D, 0x30F3),
        (0xFF9E, 0xFF9F, 0x3099), (0xFFA0, 0xFFA0, 0x1160), (0xFFA1, 0xFFA2, 0x1100), (0xFFA3, 0xFFA3, 0x11AA),
        (0xFFA4, 0xFFA4, 0x1102), (0xFFA5, 0xFFA6, 0x11AC), (0xFFA7, 0xFFA9, 0x1103), (0xFFAA, 0xFFAF, 0x11B0),
        (0xFFB0, 0xFFB0, 0x111A), (0xFFB1, 0xFFB3, 0x1106), (0xFFB4, 0xFFB4, 0x1121), (0xFFB5, 0xFFBE, 0x1109),
        (0xFFC2, 0xFFC7, 0x1161), (0xFFCA, 0xFFCF, 0x1167), (0xFFD2, 0xFFD7, 0x116D), (0xFFDA, 0xFFDC, 0x1173),
        (0xFFE0, 0xFFE1, 0xA2), (0xFFE2, 0xFFE2, 0xAC), (0xFFE4, 0xFFE4, 0xA6), (0xFFE5, 0xFFE5, 0xA5),
        (0xFFE6, 0xFFE6, 0x20A9), (0xFFE8, 0xFFE8, 0x2502), (0xFFE9, 0xFFEC, 0x2190), (0xFFED, 0xFFED, 0x25A0),
        (0xFFEE, 0xFFEE, 0x25CB),
    ]

    /// Whether two different names are most likely one name misspelt: the rule that refuses a profile member
    /// near an encrypted field's name. Folded (`foldedName`), they are equal, or, as a length of L scalars
    /// (the longer folded name's) allows, one swap of neighbours apart when L is 3 or less (`ssn`, `sns`; not
    /// `sex` beside `ssn` nor `job` beside `dob`), one edit when L is 4 to 7 (`salary`, `salery`), two from
    /// 8 on (`date_of_birth`, `date_of_brith`). The edits scale with the length as Elasticsearch's
    /// `fuzziness: AUTO:4,8` does, with a swap allowed even for the shortest names.
    package static func isNearMiss(_ a: String, _ b: String) -> Bool {
        nearMissDistance(a, b) != nil
    }

    /// The folded edit distance of two names that `isNearMiss` finds near, else nil.
    private static func nearMissDistance(_ a: String, _ b: String) -> Int? {
        nearMissDistance(folded: foldedName(a), b)
    }

    /// `nearMissDistance` of a name already folded, so one name compared with many is folded once.
    private static func nearMissDistance(folded foldedA: String, _ b: String) -> Int? {
        let foldedB = foldedName(b)
        // Compared as strings, so a half-width voiced kana (two scalars) equals its one-scalar full-width form.
        if foldedA == foldedB { return 0 }
        let length = max(foldedA.unicodeScalars.count, foldedB.unicodeScalars.count)
        let limit = length <= 3 ? 0 : length <= 7 ? 1 : 2
        let distance = editDistance(foldedA, foldedB, limit: max(limit, 1))
        if distance <= limit { return distance }
        if distance == 1 && isOneSwap(foldedA, foldedB) { return 1 }
        return nil
    }

    /// Whether `b` is `a` with two neighbouring scalars swapped, and nothing else changed.
    private static func isOneSwap(_ a: String, _ b: String) -> Bool {
        let s = Array(a.unicodeScalars), t = Array(b.unicodeScalars)
        guard s.count == t.count, let first = s.indices.first(where: { s[$0] != t[$0] }), first + 1 < s.count else {
            return false
        }
        return s[first] == t[first + 1] && s[first + 1] == t[first] && s[(first + 2)...] == t[(first + 2)...]
    }

    /// The name of `names` that `text` is a near miss of (`isNearMiss`), the nearest one first (an exact
    /// fold before an edit), the first of equally near names; nil when none is.
    package static func nearMiss(of text: String, among names: [String]) -> String? {
        var best: (name: String, distance: Int)?
        let folded = foldedName(text)
        for name in names {
            if let distance = nearMissDistance(folded: folded, name), distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        return best?.name
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
    ///
    /// Only cells within `limit` of the diagonal are filled: a cell further off is at least that far
    /// apart, so it counts as `limit + 1` exactly as the capped full table holds it, and two names of
    /// length n cost n * (2 * limit + 1) steps rather than n * n (a 10,000-scalar name beside another
    /// took seconds).
    package static func editDistance(_ a: String, _ b: String, limit: Int) -> Int {
        let s = Array(a.unicodeScalars), t = Array(b.unicodeScalars)
        // A negative limit leaves nothing within it: every pair is "beyond", as the full table said too.
        guard limit >= 0 else { return limit + 1 }
        let cap = limit + 1
        if abs(s.count - t.count) >= cap { return cap }
        if s.isEmpty || t.isEmpty { return min(max(s.count, t.count), cap) }
        let band = cap - 1
        // Rows hold `cap` wherever the band has not reached, so reading just past it reads "too far".
        var previous2 = [Int](repeating: cap, count: t.count + 1)
        var previous = (0...t.count).map { min($0, cap) }
        var current = [Int](repeating: cap, count: t.count + 1)
        for i in 1...s.count {
            let low = max(1, i - band), high = min(t.count, i + band)
            // The array last held row i - 3, whose band reached further left than this row's.
            current[low - 1] = low == 1 ? min(i, cap) : cap
            if high < t.count { current[high + 1] = cap }
            var rowMinimum = cap
            for j in low...high {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    value = min(value, previous2[j - 2] + 1)
                }
                value = min(value, cap)
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            if rowMinimum >= cap { return cap }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return min(previous[t.count], cap)
    }
}
