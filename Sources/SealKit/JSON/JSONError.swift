/// Why a text is not acceptable JSON, and where.
///
/// The description is one line naming the line, the column and what was expected.
/// It never quotes the contents of a string, which may be secret.
package struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    package enum Reason: Equatable, Sendable {
        /// The input ended where `expected` should have been.
        case unexpectedEnd(expected: String)
        /// `found` (a character or a byte) stands where `expected` should have been.
        case unexpectedCharacter(found: String, expected: String)
        /// A number starts with `0` followed by more digits.
        case leadingZero
        /// A backslash in a string starts no valid escape.
        case invalidEscape
        /// A `\u` escape holds half of a UTF-16 surrogate pair without the other half.
        case loneSurrogate
        /// The bytes are not valid UTF-8.
        case invalidUTF8
        /// A string holds a raw control character (below U+0020), which JSON requires escaped.
        case controlCharacter(UInt8)
        /// Arrays and objects nest deeper than `limit`.
        case tooDeep(limit: Int)
        /// An object names the same key twice, so its meaning is ambiguous.
        case duplicateKey(String)
    }

    /// What is wrong.
    package let reason: Reason
    /// The line of the problem, from 1.
    package let line: Int
    /// The column of the problem in characters (Unicode scalars), from 1.
    package let column: Int
    /// The offset of the problem in bytes, from 0.
    package let byteOffset: Int

    /// Makes an error for `reason` at a place in the text (line and column from 1, byte offset from 0).
    package init(reason: Reason, line: Int, column: Int, byteOffset: Int) {
        self.reason = reason
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
    }

    package var description: String {
        "invalid JSON at line \(line), column \(column): \(message)"
    }

    private var message: String {
        switch reason {
        case .unexpectedEnd(let expected):
            return "unexpected end of input, expected \(expected)"
        case .unexpectedCharacter(let found, let expected):
            return "found \(found), expected \(expected)"
        case .leadingZero:
            return "a number cannot have leading zeros"
        case .invalidEscape:
            return #"invalid escape in a string: use \" \\ \/ \b \f \n \r \t or \uXXXX"#
        case .loneSurrogate:
            return #"a \u escape holds half of a surrogate pair: write both halves, \uD800-\uDBFF then \uDC00-\uDFFF"#
        case .invalidUTF8:
            return "the text is not valid UTF-8"
        case .controlCharacter(let byte):
            return "a string holds a raw control character \(JSONError.scalarName(byte)): escape it as \\u00XX"
        case .tooDeep(let limit):
            return "arrays and objects nest deeper than \(limit) levels"
        case .duplicateKey(let key):
            return "the key \"\(key)\" appears twice in one object; keys must be unique"
        }
    }

    static func scalarName(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "U+00" + String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
