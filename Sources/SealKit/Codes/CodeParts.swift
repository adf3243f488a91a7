
/// Splits a code too long for one QR code into numbered parts, and joins them back (transfer
/// replies and paper backups alike):
/// `sealkit-part-v1:<transfer id>:<i>/<n>:<piece>`.
///
/// The pieces are consecutive slices of the whole code's text. The transfer id is a
/// BLAKE2b digest of the whole code, so parts of two transfers never mix and a joined
/// code is checked as a whole before anything reads it.
package enum CodeParts {
    /// The longest line `split` makes: well inside a QR code's byte capacity at error
    /// correction level M (2331 bytes), so printed and on-screen codes stay easy to scan.
    package static let maximumLineLength = 1200
    /// The most parts one transfer may have.
    package static let maximumPartCount = 99

    package static let transferIDByteCount = 9
    package static let transferIDLength = 12
    /// Prefix, transfer id, `:`, the longest `i/n`, `:`.
    package static let headerMaximumLength = CodeKind.part.prefix.count + transferIDLength + 1 + 5 + 1

    /// Splits a code into lines of at most `maximumLineLength` characters.
    /// - Parameter payload: a whole code (reply or backup).
    /// - Returns: the code itself when it fits one line, else its parts, in order.
    /// - Throws: `.tooLarge` when it would need more than `maximumPartCount` parts.
    package static func split(_ payload: String) throws(CodeError) -> [String] {
        let bytes = Array(payload.utf8)
        if bytes.count <= maximumLineLength { return [payload] }
        let room = maximumLineLength - headerMaximumLength
        let count = (bytes.count + room - 1) / room
        guard count <= maximumPartCount else { throw .tooLarge(parts: count) }
        let size = (bytes.count + count - 1) / count
        let id = transferID(of: bytes)
        return (0..<count).map { index in
            let piece = bytes[(index * size)..<min(bytes.count, (index + 1) * size)]
            return CodeKind.part.prefix + id + ":\(index + 1)/\(count):" + String(decoding: piece, as: UTF8.self)
        }
    }

    /// Joins lines into one code: a whole code alone, or every part of one transfer in any order.
    /// Blank lines are skipped.
    /// - Returns: the whole code.
    /// - Throws: `CodeError` for missing, repeated or foreign parts, or parts that do not fit.
    package static func join(_ lines: [String]) throws(CodeError) -> String {
        var assembler = CodeAssembler()
        var joined: String?
        for line in lines {
            if let whole = try assembler.add(line) { joined = whole }
        }
        guard let joined else { throw assembler.incompleteError(expecting: .reply) }
        return joined
    }

    package static func transferID(of payload: [UInt8]) -> String {
        let digest = GenericHash.hash(Array("SealKit transfer parts v1".utf8) + payload, byteCount: 16)
        return CodeText.encode(Array(digest.prefix(transferIDByteCount)))
    }
}

/// Collects lines as they arrive (pasted, scanned, or piped) until one whole code is there.
package struct CodeAssembler: Sendable {
    private var transferID: Substring?
    private var count = 0
    private var pieces: [Int: Substring] = [:]
    private var done = false

    /// Makes an empty assembler.
    package init() {}

    /// Adds one line.
    /// - Parameter line: a whole code, a part, or a blank line (skipped).
    /// - Returns: the whole code once it is complete, else nil. After that, the assembler
    ///   refuses further codes.
    /// - Throws: `CodeError` for a damaged, repeated or foreign part, or a whole code mixed with parts.
    package mutating func add(_ line: String) throws(CodeError) -> String? {
        let text = CodeText.trimmed(line)
        if text.isEmpty { return nil }
        guard !done else { throw .partsMixedWithWhole }
        guard try CodeText.kind(of: text) == .part else {
            guard transferID == nil else { throw .partsMixedWithWhole }
            done = true
            return String(text)
        }
        let fields = text.dropFirst(CodeKind.part.prefix.count).split(
            separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0].utf8.count == CodeParts.transferIDLength,
            CodeText.decode(fields[0]) != nil
        else { throw .malformed(.part, reason: "bad transfer id") }
        let numbers = fields[1].split(separator: "/", omittingEmptySubsequences: false)
        guard numbers.count == 2, let index = Self.number(numbers[0]), let total = Self.number(numbers[1]),
            (2...CodeParts.maximumPartCount).contains(total), (1...total).contains(index)
        else { throw .malformed(.part, reason: "bad part number") }
        let piece = fields[2]
        guard !piece.isEmpty, piece.utf8.allSatisfy(Self.isCodeCharacter) else {
            throw .malformed(.part, reason: "bad characters")
        }
        if let transferID {
            guard transferID == fields[0], count == total else { throw .partsFromTwoTransfers }
        } else {
            transferID = fields[0]
            count = total
        }
        guard pieces[index] == nil else { throw .duplicatePart(index: index, count: total) }
        pieces[index] = piece
        guard pieces.count == count else { return nil }

        let joined = (1...count).compactMap { pieces[$0] }.joined()
        guard let transferID, CodeParts.transferID(of: Array(joined.utf8)) == transferID else { throw .partsDoNotFit }
        done = true
        return joined
    }

    /// Part numbers still missing, in order; empty before the first part.
    package var missing: [Int] { count == 0 ? [] : (1...count).filter { pieces[$0] == nil } }

    /// The error for input that ended before a whole code arrived.
    /// - Parameter kind: what was expected, for the message when nothing arrived at all.
    package func incompleteError(expecting kind: CodeKind) -> CodeError {
        count == 0 ? .noInput(kind) : .missingParts(missing, count: count)
    }

    /// A decimal without leading zeros, up to three digits.
    private static func number(_ text: Substring) -> Int? {
        guard (1...3).contains(text.utf8.count), text.first != "0", text.utf8.allSatisfy({ (48...57).contains($0) }) else {
            return nil
        }
        return Int(text)
    }

    private static func isCodeCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"):
            return true
        default:
            return false
        }
    }
}
