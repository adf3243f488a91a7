
/// Splits a code too long for one QR code into numbered parts, and joins them back:
/// `sealkit-part-v1:<transfer id>:<i>/<n>:<piece>`.
///
/// The pieces are consecutive slices of the whole code's text. The transfer id is a
/// BLAKE2b digest of the whole code, so parts of two transfers never mix and a joined
/// code is checked as a whole before anything reads it.
package enum TransferParts {
    /// The longest line `split` makes: well inside a QR code's byte capacity at error
    /// correction level M (2331 bytes), so printed and on-screen codes stay easy to scan.
    package static let maximumLineLength = CodeParts.maximumLineLength
    /// The most parts one transfer may have.
    package static let maximumPartCount = CodeParts.maximumPartCount

    /// Splits a code into lines of at most `maximumLineLength` characters.
    /// - Parameter payload: a whole code (reply or backup).
    /// - Returns: the code itself when it fits one line, else its parts, in order.
    /// - Throws: `.tooLarge` when it would need more than `maximumPartCount` parts.
    package static func split(_ payload: String) throws(TransferError) -> [String] {
        try TransferError.converting { () throws(CodeError) in try CodeParts.split(payload) }
    }

    /// Joins lines into one code: a whole code alone, or every part of one transfer in any order.
    /// Blank lines are skipped.
    /// - Returns: the whole code.
    /// - Throws: `TransferError` for missing, repeated or foreign parts, or parts that do not fit.
    package static func join(_ lines: [String]) throws(TransferError) -> String {
        try TransferError.converting { () throws(CodeError) in try CodeParts.join(lines) }
    }
}

/// Collects lines as they arrive (pasted, scanned, or piped) until one whole code is there.
package struct PartAssembler: Sendable {
    private var assembler = CodeAssembler()

    /// Makes an empty assembler.
    package init() {}

    /// Adds one line.
    /// - Parameter line: a whole code, a part, or a blank line (skipped).
    /// - Returns: the whole code once it is complete, else nil. After that, the assembler
    ///   refuses further codes.
    /// - Throws: `TransferError` for a damaged, repeated or foreign part, or a whole code mixed with parts.
    package mutating func add(_ line: String) throws(TransferError) -> String? {
        try TransferError.converting { () throws(CodeError) in try assembler.add(line) }
    }

    /// Part numbers still missing, in order; empty before the first part.
    package var missing: [Int] { assembler.missing }

    /// The error for input that ended before a whole code arrived.
    /// - Parameter kind: what was expected, for the message when nothing arrived at all.
    package func incompleteError(expecting kind: CodeKind) -> TransferError {
        .code(assembler.incompleteError(expecting: kind))
    }
}
