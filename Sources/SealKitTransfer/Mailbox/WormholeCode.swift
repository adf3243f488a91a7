import SealKit

/// A magic-wormhole code such as `7-guitarist-revenge`: a nameplate number and two words
/// of the PGP word list, the first from its odd list and the second from its even list.
///
/// The whole code is the SPAKE2 password; the nameplate alone is public (the mailbox server
/// sees it), the words are the secret: 16 bits, so an attacker who joins in with a guess
/// succeeds once in 65,536 attempts, and every failed attempt is seen by both people.
///
/// The text lives in guarded memory; `description` shows only the nameplate. Parsing
/// forgives what people do when typing a code they were read: capitals, spaces instead of
/// hyphens, surrounding blanks, leading zeros.
package struct WormholeCode: Sendable {
    /// The longest text `init(parsing:)` reads; real codes are under 30 characters.
    package static let maximumTextLength = 100
    /// The most digits a nameplate may have.
    static let maximumNameplateDigits = 9

    /// The nameplate: decimal digits without leading zeros. Public: the mailbox server sees it.
    package let nameplate: String
    /// The canonical code text, `nameplate-odd-even`, in lower case (the SPAKE2 password).
    package let storage: SecureBytes

    private init(nameplate: String, oddWord: String, evenWord: String) {
        self.nameplate = nameplate
        var text = Array("\(nameplate)-\(oddWord)-\(evenWord)".utf8)
        storage = SecureBytes(copying: text)
        ConstantTime.wipe(&text)
    }

    /// A new code with two words from libsodium's randomness (`SecureRandom.uniform`, no modulo bias).
    /// - Parameter nameplate: the nameplate the mailbox server allocated.
    /// - Returns: the code.
    /// - Throws: `WormholeCodeError.badNameplate` unless the nameplate is decimal digits.
    package static func generate(nameplate: String) throws(WormholeCodeError) -> WormholeCode {
        let nameplate = try canonicalNameplate(nameplate)
        return WormholeCode(
            nameplate: nameplate,
            oddWord: PGPWordList.odd[Int(SecureRandom.uniform(below: 256))],
            evenWord: PGPWordList.even[Int(SecureRandom.uniform(below: 256))])
    }

    /// A new code for a transfer without a mailbox server: a nameplate from 1 to 99 (part of
    /// the secret there, as no server sees it) and two words, all from libsodium's randomness.
    /// - Returns: the code.
    package static func generate() -> WormholeCode {
        // The nameplate is valid by construction.
        return try! generate(nameplate: String(SecureRandom.uniform(below: 99) + 1))
    }

    /// Reads a code someone typed.
    /// - Parameter text: the code, such as `7-guitarist-revenge` or ` 7 Guitarist revenge `.
    /// - Throws: `WormholeCodeError` saying what is wrong, without repeating the code.
    package init(parsing text: String) throws(WormholeCodeError) {
        var utf8 = Array(text.utf8)
        defer { ConstantTime.wipe(&utf8) }
        guard utf8.count <= Self.maximumTextLength else { throw .tooLong }
        let separators: Set<UInt8> = [UInt8(ascii: "-"), UInt8(ascii: " "), UInt8(ascii: "\t")]
        var parts: [String] = []
        var current: [UInt8] = []
        for byte in utf8 + [UInt8(ascii: " ")] {
            if separators.contains(byte) || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") {
                if !current.isEmpty { parts.append(String(decoding: current, as: UTF8.self)) }
                ConstantTime.wipe(&current)
                current.removeAll(keepingCapacity: true)
            } else if byte >= 0x80 || byte < 0x20 || byte == 0x7F {
                throw .notAWord
            } else {
                // ASCII lower case: the word lists are lower case, and people type capitals.
                current.append((UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte)
            }
        }
        guard !parts.isEmpty else { throw .empty }
        if Self.runsNumberAndWordTogether(parts[0]) { throw .missingHyphen }
        let nameplate = try Self.canonicalNameplate(parts[0])
        guard parts.count == 3 else { throw .wrongWordCount(parts.count - 1) }
        let (first, second) = (parts[1], parts[2])
        if !PGPWordList.odd.contains(first) || !PGPWordList.even.contains(second) {
            if PGPWordList.even.contains(first) && PGPWordList.odd.contains(second) { throw .wordsSwapped }
            let position = PGPWordList.odd.contains(first) ? 2 : 1
            // A word of the other half of the list: heard right, put in the wrong place.
            if (position == 1 ? PGPWordList.even : PGPWordList.odd).contains(position == 1 ? first : second) {
                throw .wordInOtherHalf(position: position)
            }
            throw .unknownWord(position: position)
        }
        self.init(nameplate: nameplate, oddWord: first, evenWord: second)
    }

    /// The code as text, to show to the person who reads it to the other side. It is the
    /// secret: never log it, put it in an error, or pass it on a command line.
    package var revealedText: String {
        storage.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The PGP word lists codes are made of, for tests that compare them with magic-wormhole's.
    package static var wordLists: (even: [String], odd: [String]) { (PGPWordList.even, PGPWordList.odd) }

    /// Whether `part` is a number with letters after it (`8vocalist`): the code's first hyphen left out.
    package static func runsNumberAndWordTogether(_ part: String) -> Bool {
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let bytes = Array(part.utf8)
        let digits = bytes.prefix(while: isDigit).count
        return digits > 0 && digits < bytes.count && !bytes[digits...].contains(where: isDigit)
    }

    private static func canonicalNameplate(_ text: String) throws(WormholeCodeError) -> String {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .badNameplate
        }
        let significant = digits.drop { $0 == UInt8(ascii: "0") }
        guard !significant.isEmpty, significant.count <= maximumNameplateDigits else { throw .badNameplate }
        return String(decoding: significant, as: UTF8.self)
    }
}

extension WormholeCode: Equatable {
    /// Compares two codes in constant time.
    package static func == (lhs: WormholeCode, rhs: WormholeCode) -> Bool {
        ConstantTime.equals(lhs.storage, rhs.storage)
    }
}

extension WormholeCode: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Shows the nameplate, never the words.
    package var description: String { "WormholeCode(nameplate: \(nameplate), words: hidden)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["nameplate": nameplate]) }
}

/// Why typed text is not a wormhole code. The messages never repeat the code.
package enum WormholeCodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing but blanks.
    case empty
    /// Longer than `WormholeCode.maximumTextLength`.
    case tooLong
    /// The part before the first hyphen is not a number from 1 to 999,999,999.
    case badNameplate
    /// Not two words after the number (the count found).
    case wrongWordCount(Int)
    /// A word (1 or 2) that is not in its PGP word list.
    case unknownWord(position: Int)
    /// The two words in the wrong order.
    case wordsSwapped
    /// A word (1 or 2) of the PGP word list's other half: a first word where the second belongs, or
    /// the reverse.
    case wordInOtherHalf(position: Int)
    /// A character no code has (outside ASCII letters, digits, hyphens and spaces).
    case notAWord
    /// The number and the first word run together (`8vocalist-optic`): the first hyphen is missing.
    case missingHyphen

    package var description: String {
        let form = "expected a code like 7-guitarist-revenge (a number and two words)"
        switch self {
        case .empty: return "no code given: \(form)"
        case .tooLong: return "too long for a code: \(form)"
        case .badNameplate: return "the code must start with a number: \(form)"
        case .wrongWordCount(let count): return "the code has \(count) word\(count == 1 ? "" : "s") after the number: \(form)"
        case .unknownWord(let position):
            return "the code's \(position == 1 ? "first" : "second") word is not in the PGP word list: check its spelling"
        case .wordsSwapped: return "the code's two words are in the wrong order: \(form)"
        case .wordInOtherHalf(let position):
            return "the code's \(position == 1 ? "first" : "second") word is a PGP word for the \(position == 1 ? "second" : "first") "
                + "place, not this one: check the code with the other side"
        case .notAWord: return "the code holds a character no code has: \(form)"
        case .missingHyphen:
            return "the hyphen after the code's number is missing: \(form), the number and the first word apart"
        }
    }
}
