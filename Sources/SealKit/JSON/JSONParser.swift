extension JSONValue {
    /// The deepest nesting of arrays and objects that `parse` accepts.
    package static let maximumDepth = 512

    /// Parses one JSON text (RFC 8259), strictly.
    ///
    /// Rejects trailing commas, comments, leading zeros, invalid escapes, lone surrogates,
    /// invalid UTF-8, raw control characters in strings, duplicate keys, nesting deeper
    /// than `maximumDepth`, and anything but whitespace after the value. Nesting is
    /// tracked on the heap, so no input can exhaust the stack.
    /// - Parameter bytes: the UTF-8 text.
    /// - Returns: the value, with object members in their order and numbers as written.
    /// - Throws: `JSONError` naming the line, the column and what was expected.
    package static func parse(_ bytes: some Collection<UInt8>) throws(JSONError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result(catching: { () throws(JSONError) in try parse(buffer: buffer) })
        }
        if let result { return try result.get() }
        return try parse(Array(bytes))
    }

    /// Parses one JSON text (RFC 8259), strictly. See `parse(_:)` for bytes.
    /// - Parameter text: the JSON text.
    /// - Returns: the value, with object members in their order and numbers as written.
    /// - Throws: `JSONError` naming the line, the column and what was expected.
    package static func parse(_ text: String) throws(JSONError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            Result(catching: { () throws(JSONError) in try parse(buffer: buffer) })
        }
        return try result.get()
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes: buffer)
        var builder = ValueBuilder()
        return try parser.readDocument(into: &builder)
    }
}

/// Parses one JSON text after another, as `JSONValue.parse` does, keeping its working memory (the
/// open containers, the keys of open objects) from one text to the next: a reader of many small texts,
/// such as an NDJSON file's lines, then allocates only for the values it returns.
package struct JSONValueReader {
    private var builder = ValueBuilder()
    private var keys = KeyLedger(input: UnsafeBufferPointer(start: nil, count: 0))
    private var stack: [Bool] = []

    /// Makes a reader.
    package init() {}

    /// Parses one JSON text, strictly, exactly as `JSONValue.parse(_:)` does.
    /// - Parameter bytes: the UTF-8 text.
    /// - Returns: the value, with object members in their order and numbers as written.
    /// - Throws: `JSONError` naming the line, the column and what was expected.
    package mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSONValue {
        // A text that failed leaves what it had open behind.
        builder.removeAll()
        keys.removeAll(input: bytes)
        stack.removeAll(keepingCapacity: true)
        var parser = JSONParser(bytes: bytes)
        return try parser.readDocument(into: &builder, keys: &keys, stack: &stack)
    }
}

enum ASCII {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let newline = UInt8(ascii: "\n")
}

/// What the parser's one reading loop hands its results to: the value tree (`JSONValue.parse`) or
/// compact text (`JSONOutline`). The loop checks everything (syntax, depth, duplicate keys) and
/// reports every error, so both accept, refuse and report exactly the same; a builder only builds.
protocol JSONBuilder {
    associatedtype Value
    mutating func null() -> Value
    mutating func bool(_ value: Bool) -> Value
    /// A number's lexeme, already checked.
    mutating func number(_ lexeme: UnsafeBufferPointer<UInt8>) -> Value
    /// A string's contents: the input bytes when `escaped` is false, else the decoded bytes.
    mutating func string(_ contents: UnsafeBufferPointer<UInt8>, escaped: Bool) -> Value
    mutating func emptyArray() -> Value
    mutating func emptyObject() -> Value
    mutating func beginArray()
    mutating func beginObject()
    /// The next member's key in the innermost object, known to be new to it, as `string` gets it.
    mutating func key(_ contents: UnsafeBufferPointer<UInt8>, escaped: Bool)
    /// The value of the member whose key came last.
    mutating func addMember(_ value: Value)
    mutating func addElement(_ value: Value)
    /// A comma between members or elements.
    mutating func separator()
    mutating func endArray() -> Value
    mutating func endObject() -> Value
}

/// Builds `JSONValue`s. Open containers live on a heap stack rather than in recursive calls, so
/// depth costs memory, never stack.
struct ValueBuilder: JSONBuilder {
    private var arrays: [[JSONValue]] = []
    /// The members of every open object, innermost last.
    private let members = MemberStack()
    private var objects: [(firstMember: Int, pendingKey: String)] = []

    /// Forgets every open container, keeping the memory.
    mutating func removeAll() {
        arrays.removeAll(keepingCapacity: true)
        members.removeAll()
        objects.removeAll(keepingCapacity: true)
    }

    func null() -> JSONValue { .null }
    func bool(_ value: Bool) -> JSONValue { .bool(value) }
    func number(_ lexeme: UnsafeBufferPointer<UInt8>) -> JSONValue { .number(String(decoding: lexeme, as: UTF8.self)) }
    func string(_ contents: UnsafeBufferPointer<UInt8>, escaped: Bool) -> JSONValue {
        .string(String(decoding: contents, as: UTF8.self))
    }
    func emptyArray() -> JSONValue { .array([]) }
    func emptyObject() -> JSONValue { .object([]) }
    mutating func beginArray() { arrays.append([]) }
    mutating func beginObject() { objects.append((members.count, "")) }
    mutating func key(_ contents: UnsafeBufferPointer<UInt8>, escaped: Bool) {
        objects[objects.count - 1].pendingKey = String(decoding: contents, as: UTF8.self)
    }
    mutating func addMember(_ value: JSONValue) {
        members.append((key: objects[objects.count - 1].pendingKey, value: value))
    }
    mutating func addElement(_ value: JSONValue) { arrays[arrays.count - 1].append(value) }
    func separator() {}
    mutating func endArray() -> JSONValue { .array(arrays.removeLast()) }
    mutating func endObject() -> JSONValue {
        .object(members.popMembers(from: objects.removeLast().firstMember))
    }
}

/// The members of every open object, innermost last, in memory of the stack's own: when an object closes, its
/// members move into one array of their exact size, without a copy or a release, and the stack's memory serves
/// the next object (and, through `JSONValueReader`, the next text). An array of members would copy them out
/// and release them in place, and an array that spans the whole stack would share its storage, so the
/// stack would be made anew for every text.
final class MemberStack {
    typealias Member = (key: String, value: JSONValue)

    // Each member reads and writes these; no access overlaps another, so the dynamic exclusivity checks a class's
    // stored properties get are off.
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<Member>?
    @exclusivity(unchecked) private var capacity = 0
    @exclusivity(unchecked) private(set) var count = 0

    deinit {
        removeAll()
        base?.deallocate()
    }

    func append(_ member: Member) {
        if count == capacity {
            let larger = UnsafeMutablePointer<Member>.allocate(capacity: max(16, capacity * 2))
            if let base {
                larger.moveInitialize(from: base, count: count)
                base.deallocate()
            }
            base = larger
            capacity = max(16, capacity * 2)
        }
        (base! + count).initialize(to: member)
        count += 1
    }

    /// The members from index `first` on, in order, taken off the stack.
    func popMembers(from first: Int) -> [Member] {
        precondition(first >= 0 && first <= count)
        let taken = count - first
        guard taken > 0, let base else { return [] }
        let members = [Member](unsafeUninitializedCapacity: taken) { buffer, initialized in
            buffer.baseAddress!.moveInitialize(from: base + first, count: taken)
            initialized = taken
        }
        count = first
        return members
    }

    /// Drops every member, keeping the memory.
    func removeAll() {
        base?.deinitialize(count: count)
        count = 0
    }
}

/// A strict JSON reader over a contiguous UTF-8 buffer.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// Decoded contents of the last string that held escapes.
    var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads one JSON text, handing what it finds to `builder`, and checks that only whitespace follows.
    mutating func readDocument<Builder: JSONBuilder>(into builder: inout Builder) throws(JSONError) -> Builder.Value {
        var keys = KeyLedger(input: bytes)
        var stack: [Bool] = []
        return try readDocument(into: &builder, keys: &keys, stack: &stack)
    }

    /// `readDocument(into:)` with working memory of the caller's, empty: `keys` over this parser's bytes,
    /// and `stack`, which holds for each open container whether it is an object.
    mutating func readDocument<Builder: JSONBuilder>(
        into builder: inout Builder, keys: inout KeyLedger, stack: inout [Bool]
    ) throws(JSONError) -> Builder.Value {
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw end(expected: "a value") }
            var value: Builder.Value
            switch bytes[index] {
            case ASCII.openBracket:
                if try openContainer(depth: stack.count, closedBy: ASCII.closeBracket) {
                    value = builder.emptyArray()
                } else {
                    stack.append(false)
                    builder.beginArray()
                    continue
                }
            case ASCII.openBrace:
                if try openContainer(depth: stack.count, closedBy: ASCII.closeBrace) {
                    value = builder.emptyObject()
                } else {
                    stack.append(true)
                    keys.openObject()
                    builder.beginObject()
                    try readKey(checkingAgainst: &keys, into: &builder)
                    continue
                }
            case ASCII.quote:
                index += 1
                let plain = try scanString()
                value = withContents(plain) { builder.string($0, escaped: plain == nil) }
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = builder.bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = builder.bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = builder.null()
            case ASCII.minus, ASCII.zero...ASCII.nine:
                value = builder.number(UnsafeBufferPointer(rebasing: bytes[try scanNumber()]))
            default:
                throw unexpected(at: index, expected: "a value")
            }

            // Hand the finished value to its container; a closing bracket finishes
            // that container in turn, so one value can close several levels.
            while let isObject = stack.last {
                skipWhitespace()
                if isObject {
                    builder.addMember(value)
                    guard index < bytes.count else { throw end(expected: "',' or '}'") }
                    if bytes[index] == ASCII.comma {
                        index += 1
                        builder.separator()
                        try readKey(checkingAgainst: &keys, into: &builder)
                        break
                    } else if bytes[index] == ASCII.closeBrace {
                        index += 1
                        stack.removeLast()
                        keys.closeObject()
                        value = builder.endObject()
                    } else {
                        throw unexpected(at: index, expected: "',' or '}' after an object member")
                    }
                } else {
                    builder.addElement(value)
                    guard index < bytes.count else { throw end(expected: "',' or ']'") }
                    if bytes[index] == ASCII.comma {
                        index += 1
                        skipWhitespace()
                        if index < bytes.count, bytes[index] == ASCII.closeBracket {
                            throw unexpected(at: index, expected: "a value after ',' (no trailing commas)")
                        }
                        builder.separator()
                        break
                    } else if bytes[index] == ASCII.closeBracket {
                        index += 1
                        stack.removeLast()
                        value = builder.endArray()
                    } else {
                        throw unexpected(at: index, expected: "',' or ']' after an array element")
                    }
                }
            }
            if stack.isEmpty {
                skipWhitespace()
                if index < bytes.count {
                    throw unexpected(at: index, expected: "the end of the input after the value")
                }
                return value
            }
        }
    }

    /// Consumes the `[` or `{` at `index` once the nesting allows another level, then any whitespace.
    /// - Returns: whether `closing` follows at once, an empty container (and consumes it too).
    private mutating func openContainer(depth: Int, closedBy closing: UInt8) throws(JSONError) -> Bool {
        guard depth < JSONValue.maximumDepth else {
            throw error(.tooDeep(limit: JSONValue.maximumDepth), at: index)
        }
        index += 1
        skipWhitespace()
        guard index < bytes.count, bytes[index] == closing else { return false }
        index += 1
        return true
    }

    /// Up to this many members, a new key is compared with each earlier one; beyond it, keys go
    /// into a set. Comparing short keys is cheaper than hashing them, so typical objects (a
    /// profile's 20-odd fields) never pay for the set, and large ones stay linear overall.
    static let linearKeyCheckLimit = 32

    /// Reads `"key" :`, checks the key is new to the object, and hands it to `builder`.
    private mutating func readKey<Builder: JSONBuilder>(
        checkingAgainst keys: inout KeyLedger, into builder: inout Builder
    ) throws(JSONError) {
        skipWhitespace()
        guard index < bytes.count else { throw end(expected: "a string key") }
        guard bytes[index] == ASCII.quote else {
            let expected = bytes[index] == ASCII.closeBrace ? "a string key (no trailing commas)" : "a string key"
            throw unexpected(at: index, expected: expected)
        }
        let keyStart = index
        index += 1
        let plain = try scanString()
        let isNew = plain.map { keys.insert(inputRange: $0) } ?? keys.insert(decoded: scratch)
        guard isNew else {
            throw error(.duplicateKey(withContents(plain) { String(decoding: $0, as: UTF8.self) }), at: keyStart)
        }
        skipWhitespace()
        guard index < bytes.count else { throw end(expected: "':' after the key") }
        guard bytes[index] == ASCII.colon else { throw unexpected(at: index, expected: "':' after the key") }
        index += 1
        withContents(plain) { builder.key($0, escaped: plain == nil) }
    }

    /// Lends the contents of the string just scanned: its input bytes, or the decoded ones.
    private func withContents<Result>(_ plain: Range<Int>?, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let plain { return body(UnsafeBufferPointer(rebasing: bytes[plain])) }
        return scratch.withUnsafeBufferPointer(body)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for offset in 0..<count {
            guard index + offset < bytes.count else { throw end(expected: "'\(literal)'") }
            guard bytes[index + offset] == text[offset] else {
                throw unexpected(at: index + offset, expected: "'\(literal)'")
            }
        }
        index += count
    }

    // MARK: Numbers

    private func isDigit(_ position: Int) -> Bool {
        position < bytes.count && bytes[position] >= ASCII.zero && bytes[position] <= ASCII.nine
    }

    /// Reads `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` and returns where it sits in the input.
    mutating func scanNumber() throws(JSONError) -> Range<Int> {
        let start = index
        var i = index
        if bytes[i] == ASCII.minus { i += 1 }
        guard i < bytes.count else { throw error(.unexpectedEnd(expected: "a digit after '-'"), at: i) }
        if bytes[i] == ASCII.zero {
            i += 1
            if isDigit(i) { throw error(.leadingZero, at: start) }
        } else if isDigit(i) {
            while isDigit(i) { i += 1 }
        } else {
            throw unexpected(at: i, expected: "a digit after '-'")
        }
        if i < bytes.count, bytes[i] == ASCII.dot {
            i += 1
            try requireDigit(at: i, after: "'.'")
            while isDigit(i) { i += 1 }
        }
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < bytes.count, bytes[i] == ASCII.plus || bytes[i] == ASCII.minus { i += 1 }
            try requireDigit(at: i, after: "the exponent")
            while isDigit(i) { i += 1 }
        }
        index = i
        return start..<i
    }

    private func requireDigit(at position: Int, after what: String) throws(JSONError) {
        guard position < bytes.count else { throw error(.unexpectedEnd(expected: "a digit after \(what)"), at: position) }
        guard isDigit(position) else { throw unexpected(at: position, expected: "a digit after \(what)") }
    }

    // MARK: Strings

    /// Reads a string's contents and closing quote; `index` is just past the opening quote.
    /// - Returns: where the contents sit in the input when they hold no escape (the common case,
    ///   whose bytes then are the string); otherwise nil, with the decoded contents in `scratch`.
    mutating func scanString() throws(JSONError) -> Range<Int>? {
        let start = index
        var i = index
        // Eight bytes at a time: jump to the first byte that is not plain ASCII content; a quote ends
        // the string, UTF-8 is checked and skipped, and an escape or a control character goes to the
        // byte loop below, which decodes or reports it.
        if let base = bytes.baseAddress {
            while i &+ 8 <= bytes.count {
                let stops = SWAR.plainStringStops(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                if stops == 0 {
                    i &+= 8
                    continue
                }
                i &+= stops.trailingZeroBitCount &>> 3
                let byte = base[i]
                if byte == ASCII.quote {
                    index = i + 1
                    return start..<i
                }
                guard byte >= 0x80 else { break }
                i = try validateUTF8Sequence(at: i)
            }
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte == ASCII.quote {
                index = i + 1
                return start..<i
            } else if byte == ASCII.backslash {
                try decodeEscapedString(start: start, firstEscape: i)
                return nil
            } else if byte < 0x20 {
                throw error(.controlCharacter(byte), at: i)
            } else if byte < 0x80 {
                i += 1
            } else {
                i = try validateUTF8Sequence(at: i)
            }
        }
        throw error(.unexpectedEnd(expected: "'\"' to close the string"), at: bytes.count)
    }

    /// Decodes a string with escapes into `scratch`, through its closing quote, in time linear in its length.
    private mutating func decodeEscapedString(start: Int, firstEscape: Int) throws(JSONError) {
        // The decoded bytes go to a local array that owns `scratch`'s memory for the while. Passed as
        // `&scratch` to a method of `self`, the array would be shared by the copy of `self` the call
        // reads, and every escape would copy all that was decoded so far: quadratic in the escapes.
        var output: [UInt8] = []
        swap(&output, &scratch)
        defer { swap(&output, &scratch) }
        output.removeAll(keepingCapacity: true)
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<firstEscape]))
        // Plain bytes between escapes are copied a run at a time; `runStart` is where the current run began.
        var i = firstEscape
        var runStart = firstEscape
        while true {
            if let base = bytes.baseAddress {
                while i &+ 8 <= bytes.count {
                    let stops = SWAR.plainStringStops(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                    if stops == 0 {
                        i &+= 8
                        continue
                    }
                    i &+= stops.trailingZeroBitCount &>> 3
                    break
                }
            }
            guard i < bytes.count else { break }
            let byte = bytes[i]
            if byte == ASCII.quote {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                index = i + 1
                return
            } else if byte == ASCII.backslash {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                i = try readEscape(at: i, into: &output)
                runStart = i
            } else if byte < 0x20 {
                throw error(.controlCharacter(byte), at: i)
            } else if byte < 0x80 {
                i += 1
            } else {
                i = try validateUTF8Sequence(at: i)
            }
        }
        throw error(.unexpectedEnd(expected: "'\"' to close the string"), at: bytes.count)
    }

    /// Decodes the escape starting with the backslash at `position`; returns the index after it.
    private func readEscape(at position: Int, into output: inout [UInt8]) throws(JSONError) -> Int {
        guard position + 1 < bytes.count else {
            throw error(.unexpectedEnd(expected: "an escape after '\\'"), at: position + 1)
        }
        let replacement: UInt8
        switch bytes[position + 1] {
        case ASCII.quote: replacement = ASCII.quote
        case ASCII.backslash: replacement = ASCII.backslash
        case UInt8(ascii: "/"): replacement = UInt8(ascii: "/")
        case UInt8(ascii: "b"): replacement = 0x08
        case UInt8(ascii: "f"): replacement = 0x0C
        case UInt8(ascii: "n"): replacement = 0x0A
        case UInt8(ascii: "r"): replacement = 0x0D
        case UInt8(ascii: "t"): replacement = 0x09
        case UInt8(ascii: "u"):
            var scalar = try readHex4(at: position + 2)
            var next = position + 6
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard next + 1 < bytes.count, bytes[next] == ASCII.backslash, bytes[next + 1] == UInt8(ascii: "u") else {
                    throw error(.loneSurrogate, at: position)
                }
                let low = try readHex4(at: next + 2)
                guard low >= 0xDC00 && low <= 0xDFFF else { throw error(.loneSurrogate, at: position) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                next += 6
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw error(.loneSurrogate, at: position)
            }
            appendUTF8(scalar, to: &output)
            return next
        default:
            throw error(.invalidEscape, at: position)
        }
        output.append(replacement)
        return position + 2
    }

    private func readHex4(at position: Int) throws(JSONError) -> UInt32 {
        var value: UInt32 = 0
        for i in position..<(position + 4) {
            guard i < bytes.count else { throw error(.unexpectedEnd(expected: "four hex digits after '\\u'"), at: i) }
            let byte = bytes[i]
            let digit: UInt8
            switch byte {
            case ASCII.zero...ASCII.nine: digit = byte - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidEscape, at: position - 2)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
        switch scalar {
        case ..<0x80:
            output.append(UInt8(scalar))
        case ..<0x800:
            output.append(UInt8(0xC0 | scalar >> 6))
            output.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            output.append(UInt8(0xE0 | scalar >> 12))
            output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(0x80 | scalar & 0x3F))
        default:
            output.append(UInt8(0xF0 | scalar >> 18))
            output.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Checks one multi-byte UTF-8 sequence starting at `position` (Unicode table 3-7:
    /// no overlong forms, no surrogates, nothing above U+10FFFF).
    /// - Returns: the index after the sequence.
    private func validateUTF8Sequence(at position: Int) throws(JSONError) -> Int {
        let lead = bytes[position]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw error(.invalidUTF8, at: position)
        }
        guard position + length <= bytes.count else { throw error(.invalidUTF8, at: position) }
        let second = bytes[position + 1]
        guard second >= low && second <= high else { throw error(.invalidUTF8, at: position) }
        for i in (position + 2)..<(position + length) where bytes[i] & 0xC0 != 0x80 {
            throw error(.invalidUTF8, at: position)
        }
        return position + length
    }

    // MARK: Errors

    func end(expected: String) -> JSONError {
        error(.unexpectedEnd(expected: expected), at: bytes.count)
    }

    func unexpected(at position: Int, expected: String) -> JSONError {
        error(.unexpectedCharacter(found: describe(at: position), expected: expected), at: position)
    }

    /// Names the byte at `position` without quoting more of the input than that one character.
    private func describe(at position: Int) -> String {
        let byte = bytes[position]
        switch byte {
        case 0x21...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        case 0x20: return "a space"
        case 0..<0x20, 0x7F: return JSONError.scalarName(byte)
        default:
            let digits = Array("0123456789ABCDEF")
            return "byte 0x" + String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }
    }

    /// Builds the error, working out the line and column only now that they are needed.
    func error(_ reason: JSONError.Reason, at position: Int) -> JSONError {
        let position = min(position, bytes.count)
        var line = 1
        var column = 1
        for i in 0..<position {
            let byte = bytes[i]
            if byte == ASCII.newline {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONError(reason: reason, line: line, column: column, byteOffset: position)
    }
}
