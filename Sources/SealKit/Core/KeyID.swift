// The standard library's own NFC normalizer, the one `String` equality is defined by. It is SPI in
// this toolchain (no public normalization API yet); Foundation's `precomposedStringWithCanonicalMapping`
// would pull all of Foundation into the keystore, which FoundationEssentials keeps out.
@_spi(_Unicode) import Swift

/// The name a key is stored under: in Rownd's model, the user id. Any text is allowed
/// except what could escape or confuse a path or a terminal.
public struct KeyID: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The id in Unicode Normalization Form C: `café` typed as one scalar or as `e` and a combining
    /// accent is one id, stored under one file, since Swift already compares the two as equal.
    public let rawValue: String

    /// The longest id accepted, in UTF-8 bytes.
    package static let maximumByteCount = 255

    /// Validates an id, normalizing it to NFC first.
    /// - Throws: `KeyIDError` for an empty id, one over 255 bytes, `.` or `..`, or one
    ///   containing `/`, control characters, or invisible and formatting characters.
    public init(_ given: String) throws(SealKitError) {
        do {
            try self.init(validating: given)
        } catch {
            throw SealKitError(error)
        }
    }

    /// `init(_:)` with the reason an id was refused.
    package init(validating given: String) throws(KeyIDError) {
        let rawValue = Self.normalized(given)
        if rawValue.isEmpty { throw .empty }
        if rawValue.utf8.count > Self.maximumByteCount { throw .tooLong(byteCount: rawValue.utf8.count) }
        if rawValue == "." || rawValue == ".." { throw .dotName }
        if rawValue.contains("/") { throw .containsSlash }
        // C0, DEL and C1 controls: they could rewrite a terminal line showing the id.
        if rawValue.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            throw .containsControlCharacter
        }
        // Ids are shown to people ("Received 'id'"): a character that is invisible or
        // reorders text could make one id look like another.
        if let hidden = rawValue.unicodeScalars.first(where: Self.isInvisibleOrFormatting) {
            throw .containsInvisibleCharacter(hidden.value)
        }
        self.rawValue = rawValue
    }

    /// `text` in Unicode Normalization Form C.
    package static func normalized(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text._nfc { scalars.append(scalar) }
        return String(scalars)
    }

    /// Whether `text` is already in Normalization Form C, byte for byte.
    package static func isNormalized(_ text: String) -> Bool { normalized(text).utf8.elementsEqual(text.utf8) }

    /// Control (Cc), format (Cf: bidi controls U+202A-202E, U+2066-2069, U+200E, U+200F,
    /// U+061C, zero-width characters), line and paragraph separators (Zl, Zp), and whatever
    /// Unicode marks as default-ignorable (rendered as nothing: U+034F, variation
    /// selectors, Hangul fillers).
    static func isInvisibleOrFormatting(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate: return true
        default: return scalar.properties.isDefaultIgnorableCodePoint
        }
    }

    /// The file name for this id: a hash, so any id, however long or unusual, maps
    /// to a short, safe name, and ids differing only in case never collide.
    package var fileName: String {
        let digest = GenericHash.hash(Array(rawValue.utf8), key: Array("SealKit key id v1 ".utf8), byteCount: 20)
        return Hex.encode(digest) + ".key"
    }

    /// The id as stored.
    public var description: String { rawValue }
    /// Ids sort by their stored text.
    public static func < (lhs: KeyID, rhs: KeyID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why a key id was refused.
package enum KeyIDError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The id has no characters.
    case empty
    /// The id is longer than 255 bytes of UTF-8.
    case tooLong(byteCount: Int)
    /// The id is `.` or `..`, which name folders.
    case dotName
    /// The id holds a `/`, which would name a folder.
    case containsSlash
    /// The id holds a control character.
    case containsControlCharacter
    /// The code point of the first invisible or formatting character.
    case containsInvisibleCharacter(UInt32)

    package var description: String {
        switch self {
        case .empty: return "invalid key id: it is empty"
        case .tooLong(let count):
            return "invalid key id: it is \(count) bytes long, the limit is \(KeyID.maximumByteCount) bytes of UTF-8"
        case .dotName: return "invalid key id: '.' and '..' are not allowed"
        case .containsSlash: return "invalid key id: it contains '/'"
        case .containsControlCharacter: return "invalid key id: it contains a control character"
        case .containsInvisibleCharacter(let value):
            let hex = String(value, radix: 16, uppercase: true)
            return "invalid key id: it contains an invisible or formatting character (U+\(String(repeating: "0", count: max(0, 4 - hex.count)) + hex)) that could make it look like another id"
        }
    }
}
