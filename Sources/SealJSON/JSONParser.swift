extension JSONValue {
    /// The deepest nesting of arrays and objects that `parse` accepts.
    public static let maximumDepth = 512

    /// Parses one JSON text (RFC 8259), strictly.
    ///
    /// Rejects trailing commas, comments, leading zeros, invalid escapes, lone surrogates,
    /// invalid UTF-8, raw control characters in strings, duplicate keys, nesting deeper
    /// than `maximumDepth`, and anything but whitespace after the value. Nesting is
    /// tracked on the heap, so no input can exhaust the stack.
    /// - Parameter bytes: the UTF-8 text.
    /// - Returns: the value, with object members in their order and numbers as written.
    /// - Throws: `JSONError` naming the line, the column and what was expected.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONError) -> JSONValue {
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
    public static func parse(_ text: String) throws(JSONError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            Result(catching: { () throws(JSONError) in try parse(buffer: buffer) })
        }
        return try result.get()
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes: buffer)
        return try parser.parseDocument()
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

/// An open array or object while its contents are being read.
private struct Container {
    var isObject: Bool
    var elements: [JSONValue] = []
    var members: [(key: String, value: JSONValue)] = []
    /// The key whose value is being read.
    var pendingKey = ""
    /// Keys seen so far, once an object is large enough that scanning members costs more.
    var keyIndex: Set<String>?
}

/// A strict JSON parser over a contiguous UTF-8 buffer. Containers live on a heap
/// stack rather than in recursive calls, so depth costs memory, never stack.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// Decoded contents of the last string that held escapes.
    var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw unexpected(at: index, expected: "the end of the input after the value")
        }
        return value
    }

    private mutating func parseValue() throws(JSONError) -> JSONValue {
        var stack: [Container] = []
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw end(expected: "a value") }
            var value: JSONValue
            switch bytes[index] {
            case ASCII.openBracket:
                guard stack.count < JSONValue.maximumDepth else {
                    throw error(.tooDeep(limit: JSONValue.maximumDepth), at: index)
                }
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == ASCII.closeBracket {
                    index += 1
                    value = .array([])
                } else {
                    stack.append(Container(isObject: false))
                    continue
                }
            case ASCII.openBrace:
                guard stack.count < JSONValue.maximumDepth else {
                    throw error(.tooDeep(limit: JSONValue.maximumDepth), at: index)
                }
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == ASCII.closeBrace {
                    index += 1
                    value = .object([])
                } else {
                    var container = Container(isObject: true)
                    try readKey(into: &container)
                    stack.append(container)
                    continue
                }
            case ASCII.quote:
                index += 1
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case ASCII.minus, ASCII.zero...ASCII.nine:
                value = .number(try parseNumber())
            default:
                throw unexpected(at: index, expected: "a value")
            }

            // Hand the finished value to its container; a closing bracket finishes
            // that container in turn, so one value can close several levels.
            while let top = stack.indices.last {
                skipWhitespace()
                if stack[top].isObject {
                    stack[top].members.append((key: stack[top].pendingKey, value: value))
                    guard index < bytes.count else { throw end(expected: "',' or '}'") }
                    if bytes[index] == ASCII.comma {
                        index += 1
                        try readKey(into: &stack[top])
                        break
                    } else if bytes[index] == ASCII.closeBrace {
                        index += 1
                        value = .object(stack.removeLast().members)
                    } else {
                        throw unexpected(at: index, expected: "',' or '}' after an object member")
                    }
                } else {
                    stack[top].elements.append(value)
                    guard index < bytes.count else { throw end(expected: "',' or ']'") }
                    if bytes[index] == ASCII.comma {
                        index += 1
                        skipWhitespace()
                        if index < bytes.count, bytes[index] == ASCII.closeBracket {
                            throw unexpected(at: index, expected: "a value after ',' (no trailing commas)")
                        }
                        break
                    } else if bytes[index] == ASCII.closeBracket {
                        index += 1
                        value = .array(stack.removeLast().elements)
                    } else {
                        throw unexpected(at: index, expected: "',' or ']' after an array element")
                    }
                }
            }
            if stack.isEmpty { return value }
        }
    }

    /// Up to this many members, a new key is compared with each earlier one; beyond it, keys go
    /// into a set. Comparing short keys is cheaper than hashing them, so typical objects (a
    /// profile's 20-odd fields) never pay for the set, and large ones stay linear overall.
    static let linearKeyCheckLimit = 32

    /// Reads `"key" :` and checks the key is new to the object.
    private mutating func readKey(into container: inout Container) throws(JSONError) {
        skipWhitespace()
        guard index < bytes.count else { throw end(expected: "a string key") }
        guard bytes[index] == ASCII.quote else {
            let expected = bytes[index] == ASCII.closeBrace ? "a string key (no trailing commas)" : "a string key"
            throw unexpected(at: index, expected: expected)
        }
        let keyStart = index
        index += 1
        let key = try parseString()
        if container.keyIndex == nil, container.members.count >= Self.linearKeyCheckLimit {
            container.keyIndex = Set(container.members.map(\.key))
        }
        let isDuplicate: Bool
        if container.keyIndex != nil {
            isDuplicate = !container.keyIndex!.insert(key).inserted
        } else {
            isDuplicate = container.members.contains { $0.key == key }
        }
        if isDuplicate { throw error(.duplicateKey(key), at: keyStart) }
        skipWhitespace()
        guard index < bytes.count else { throw end(expected: "':' after the key") }
        guard bytes[index] == ASCII.colon else { throw unexpected(at: index, expected: "':' after the key") }
        index += 1
        container.pendingKey = key
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

    /// Reads `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` and returns it as written.
    private mutating func parseNumber() throws(JSONError) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[try scanNumber()]), as: UTF8.self)
    }

    /// Reads a number, as `parseNumber`, and returns where it sits in the input.
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
    private mutating func parseString() throws(JSONError) -> String {
        if let plain = try scanString() {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[plain]), as: UTF8.self)
        }
        return String(decoding: scratch, as: UTF8.self)
    }

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

    /// Decodes a string with escapes into `scratch`, through its closing quote.
    private mutating func decodeEscapedString(start: Int, firstEscape: Int) throws(JSONError) {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<firstEscape]))
        var i = firstEscape
        while i < bytes.count {
            let byte = bytes[i]
            if byte == ASCII.quote {
                index = i + 1
                return
            } else if byte == ASCII.backslash {
                i = try readEscape(at: i, into: &scratch)
            } else if byte < 0x20 {
                throw error(.controlCharacter(byte), at: i)
            } else if byte < 0x80 {
                scratch.append(byte)
                i += 1
            } else {
                let next = try validateUTF8Sequence(at: i)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<next]))
                i = next
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
