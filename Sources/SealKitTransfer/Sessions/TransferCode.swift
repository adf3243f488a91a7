import SealKit

/// The code that joins the two sides of a transfer, such as `7-guitarist-revenge`: a number, then
/// one word of each half of the PGP word list.
///
/// The code is the transfer's secret: only someone who knows it can send keys to the receiver that
/// shows it. `description` shows only the number; `text` is the code itself, to show a person.
public struct TransferCode: Sendable, Equatable, CustomStringConvertible {
    package let code: WormholeCode

    package init(_ code: WormholeCode) { self.code = code }

    /// Parses a code as a person typed it: upper or lower case, words joined by hyphens or spaces.
    /// - Parameter text: the code, such as `7-guitarist-revenge`.
    /// - Throws: `SealKitError.Reason.invalidArgument` saying what is wrong with it (never the code): it is
    ///   what the person typed, as a well-formed code that is not the other side's is `.wrongCode`.
    public init(_ text: String) throws(SealKitError) {
        do {
            code = try WormholeCode(parsing: text)
        } catch {
            throw SealKitError(transferFailure: TransferError.badCode(error))
        }
    }

    /// The code's text, to show to the person who tells it to the other side. Never log it.
    public var text: String { code.revealedText }

    /// The code's number only: the words are the secret.
    public var description: String { "TransferCode(\(code.nameplate)-...)" }

    /// Whether two codes are the same, compared in constant time.
    /// - Parameters:
    ///   - lhs: a code.
    ///   - rhs: another code.
    /// - Returns: true when both hold the same number and words.
    public static func == (lhs: TransferCode, rhs: TransferCode) -> Bool { lhs.code == rhs.code }

    /// The words a code may hold at `position` (0 is the number, 1 the first word, 2 the second),
    /// for completing a code as it is typed: none for the number.
    /// - Parameter position: how many words stand before the one being typed.
    /// - Returns: the words of that position's half of the PGP word list, in lower case.
    @_spi(CLI) public static func words(at position: Int) -> [String] {
        switch position {
        case 1: return PGPWordList.odd
        case 2: return PGPWordList.even
        default: return []
        }
    }

    /// The one code a mistyped code most likely meant: its two words swapped back; a word of the
    /// other half of the PGP list moved to its place (the two words of one byte); each unknown word
    /// replaced by the one word of its list within two edits.
    /// - Parameter typed: what a person typed.
    /// - Returns: the suggested code's text; nil when `typed` is well formed already or no single
    ///   correction exists.
    @_spi(CLI) public static func suggestion(for typed: String) -> String? {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        let trimmed = typed.drop(while: isBlank).reversed().drop(while: isBlank).reversed()
        var parts = String(trimmed).lowercased().split(whereSeparator: { $0 == "-" || $0 == " " }).map(String.init)
        // `8vocalist-optic`: the first hyphen left out.
        if parts.count == 2, WormholeCode.runsNumberAndWordTogether(parts[0]) {
            let number = parts[0].prefix(while: { $0.isASCII && $0.isNumber })
            parts = [String(number), String(parts[0].dropFirst(number.count)), parts[1]]
            if PGPWordList.odd.contains(parts[1]) && PGPWordList.even.contains(parts[2]) { return parts.joined(separator: "-") }
        }
        guard parts.count == 3, Int(parts[0]) != nil else { return nil }
        let lists = [1: PGPWordList.odd, 2: PGPWordList.even]
        if !PGPWordList.odd.contains(parts[1]) && !PGPWordList.even.contains(parts[2])
            && PGPWordList.even.contains(parts[1]) && PGPWordList.odd.contains(parts[2])
        {
            parts.swapAt(1, 2)
            return parts.joined(separator: "-")
        }
        var changed = false
        for index in [1, 2] {
            let list = lists[index]!, other = lists[3 - index]!
            guard !list.contains(parts[index]) else { continue }
            if let byte = other.firstIndex(of: parts[index]) {
                // The word of the same byte in this position's half.
                parts[index] = list[byte]
                changed = true
                continue
            }
            // The same distance as "did you mean" for commands: swaps of neighbours count as one edit.
            let near = list.filter { SchemaLint.editDistance(parts[index], $0, limit: 2) <= 2 }
            guard near.count == 1 else { return nil }
            parts[index] = near[0]
            changed = true
        }
        return changed ? parts.joined(separator: "-") : nil
    }
}
