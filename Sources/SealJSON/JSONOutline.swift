/// A JSON text rewritten in compact form, with the place of every member of the top-level object
/// and of the objects directly inside it: what a caller needs to change a few members' values and
/// copy everything else, without building a `JSONValue` tree.
///
/// `text` is byte for byte what `JSONValue.parse(input).serialized()` returns, and reading an input
/// accepts and refuses exactly what `parse` does, with the same errors.
package struct JSONOutline: Sendable {
    /// One member's key and value, as ranges of `text`.
    package struct Member: Sendable, Equatable {
        /// The key's compact text, without its quotes (escaped as `serialized()` escapes).
        package var key: Range<Int>
        /// The value's compact text.
        package var value: Range<Int>
        /// The index in `members` of the member whose object value holds this one; nil at the top level.
        package var parent: Int?
    }

    /// The whole document in compact form.
    package let text: [UInt8]
    /// Members of the top-level object and of objects that are its members' values, in text order
    /// (a member comes before the members of its value).
    package let members: [Member]

    /// Reads one JSON text.
    /// - Throws: `JSONError`, exactly as `JSONValue.parse` would for the same bytes.
    package init(compacting bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) {
        var reader = JSONParser(bytes: bytes)
        (text, members) = try reader.compactDocument()
    }
}

extension JSONParser {
    /// Reads one document with `parseDocument`'s checks, in the same order and with the same errors,
    /// returning its compact form and the members at the first two levels.
    fileprivate mutating func compactDocument() throws(JSONError) -> (text: [UInt8], members: [JSONOutline.Member]) {
        var writer = JSONWriter(pretty: false, capacity: bytes.count)
        var members: [JSONOutline.Member] = []
        // Per open container: whether it is an object. Depth costs heap, never stack.
        var stack: [Bool] = []
        var keys = KeyLedger()
        // The member being read at depth 1 and at depth 2 (an index into `members`), if recorded.
        var openMember: (Int?, Int?) = (nil, nil)

        func recordKey(_ key: Range<Int>) {
            switch stack.count {
            case 1:
                members.append(.init(key: key, value: writer.output.count..<writer.output.count, parent: nil))
                openMember.0 = members.count - 1
            case 2 where openMember.0 != nil:
                members.append(.init(key: key, value: writer.output.count..<writer.output.count, parent: openMember.0))
                openMember.1 = members.count - 1
            default:
                break
            }
        }

        while true {
            skipWhitespace()
            guard index < bytes.count else { throw end(expected: "a value") }
            switch bytes[index] {
            case ASCII.openBracket:
                guard stack.count < JSONValue.maximumDepth else {
                    throw error(.tooDeep(limit: JSONValue.maximumDepth), at: index)
                }
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == ASCII.closeBracket {
                    index += 1
                    writer.output.append(contentsOf: "[]".utf8)
                } else {
                    stack.append(false)
                    writer.output.append(ASCII.openBracket)
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
                    writer.output.append(contentsOf: "{}".utf8)
                } else {
                    stack.append(true)
                    keys.openObject()
                    writer.output.append(ASCII.openBrace)
                    recordKey(try copyKey(to: &writer, checkingAgainst: &keys))
                    continue
                }
            case ASCII.quote:
                index += 1
                try copyString(to: &writer)
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                writer.output.append(contentsOf: "true".utf8)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                writer.output.append(contentsOf: "false".utf8)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                writer.output.append(contentsOf: "null".utf8)
            case ASCII.minus, ASCII.zero...ASCII.nine:
                writer.output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[try scanNumber()]))
            default:
                throw unexpected(at: index, expected: "a value")
            }

            // A value just ended; hand it to its container, and close every container it completes.
            while let isObject = stack.last {
                skipWhitespace()
                if isObject {
                    let open = stack.count == 1 ? openMember.0 : stack.count == 2 ? openMember.1 : nil
                    if let open { members[open].value = members[open].value.lowerBound..<writer.output.count }
                    guard index < bytes.count else { throw end(expected: "',' or '}'") }
                    if bytes[index] == ASCII.comma {
                        index += 1
                        writer.output.append(ASCII.comma)
                        recordKey(try copyKey(to: &writer, checkingAgainst: &keys))
                        break
                    } else if bytes[index] == ASCII.closeBrace {
                        index += 1
                        writer.output.append(ASCII.closeBrace)
                        stack.removeLast()
                        keys.closeObject()
                    } else {
                        throw unexpected(at: index, expected: "',' or '}' after an object member")
                    }
                } else {
                    guard index < bytes.count else { throw end(expected: "',' or ']'") }
                    if bytes[index] == ASCII.comma {
                        index += 1
                        skipWhitespace()
                        if index < bytes.count, bytes[index] == ASCII.closeBracket {
                            throw unexpected(at: index, expected: "a value after ',' (no trailing commas)")
                        }
                        writer.output.append(ASCII.comma)
                        break
                    } else if bytes[index] == ASCII.closeBracket {
                        index += 1
                        writer.output.append(ASCII.closeBracket)
                        stack.removeLast()
                    } else {
                        throw unexpected(at: index, expected: "',' or ']' after an array element")
                    }
                }
            }
            if stack.isEmpty { break }
        }
        skipWhitespace()
        if index < bytes.count {
            throw unexpected(at: index, expected: "the end of the input after the value")
        }
        return (writer.output, members)
    }

    /// Copies a string (`index` just past its opening quote) in the form `serialized()` writes.
    private mutating func copyString(to writer: inout JSONWriter) throws(JSONError) {
        writer.output.append(ASCII.quote)
        if let plain = try scanString() {
            // No escapes, no control characters: already in the form `serialized()` writes.
            writer.output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plain]))
        } else {
            scratch.withUnsafeBufferPointer { writer.writeEscaped($0) }
        }
        writer.output.append(ASCII.quote)
    }

    /// Reads `"key" :` as `parse` does, refuses a key the object already has, and writes `"key":`.
    /// - Returns: where the key's text (inside its quotes) landed in the output.
    private mutating func copyKey(
        to writer: inout JSONWriter, checkingAgainst keys: inout KeyLedger
    ) throws(JSONError) -> Range<Int> {
        skipWhitespace()
        guard index < bytes.count else { throw end(expected: "a string key") }
        guard bytes[index] == ASCII.quote else {
            let expected = bytes[index] == ASCII.closeBrace ? "a string key (no trailing commas)" : "a string key"
            throw unexpected(at: index, expected: expected)
        }
        let keyStart = index
        index += 1
        let plain = try scanString()
        let isNew =
            plain.map { range in keys.insert(UnsafeBufferPointer(rebasing: bytes[range])) }
            ?? scratch.withUnsafeBufferPointer { keys.insert($0) }
        if !isNew {
            let key = plain.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
            throw error(.duplicateKey(key ?? String(decoding: scratch, as: UTF8.self)), at: keyStart)
        }
        skipWhitespace()
        guard index < bytes.count else { throw end(expected: "':' after the key") }
        guard bytes[index] == ASCII.colon else { throw unexpected(at: index, expected: "':' after the key") }
        index += 1
        writer.output.append(ASCII.quote)
        let start = writer.output.count
        if let plain {
            writer.output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plain]))
        } else {
            scratch.withUnsafeBufferPointer { writer.writeEscaped($0) }
        }
        let keyRange = start..<writer.output.count
        writer.output.append(contentsOf: "\":".utf8)
        return keyRange
    }
}

/// The keys of every open object, to refuse a duplicate exactly as `parse` does. `parse` compares
/// keys as Swift strings, which are equal when canonically equivalent, so two keys that are not both
/// ASCII are compared that way here too; ASCII keys compare as bytes, which for them is the same.
private struct KeyLedger {
    private var bytes: [UInt8] = []
    /// Each key of the open objects, innermost object last: its bytes and whether they are ASCII.
    private var keys: [(bytes: Range<Int>, isASCII: Bool)] = []
    /// Per open object: its first entry in `keys`, and its keys as strings once it has many.
    private var objects: [(firstKey: Int, index: Set<String>?)] = []

    mutating func openObject() {
        objects.append((keys.count, nil))
    }

    mutating func closeObject() {
        let first = objects.removeLast().firstKey
        if first < keys.count {
            bytes.removeSubrange(keys[first].bytes.lowerBound...)
            keys.removeSubrange(first...)
        }
    }

    /// Adds a key to the innermost open object.
    /// - Returns: false when the object already has an equal key.
    mutating func insert(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let top = objects.count - 1
        let first = objects[top].firstKey
        let isASCII = !key.contains { $0 >= 0x80 }
        // As `parse` does: compare one by one while few, then through a set of strings.
        if objects[top].index == nil, keys.count - first >= JSONParser.linearKeyCheckLimit {
            objects[top].index = Set(keys[first...].map { string(at: $0.bytes) })
        }
        if objects[top].index != nil {
            guard objects[top].index!.insert(String(decoding: key, as: UTF8.self)).inserted else { return false }
        } else {
            for earlier in keys[first...] {
                let isEqual =
                    isASCII && earlier.isASCII
                    ? bytes.withUnsafeBufferPointer { stored in
                        stored[earlier.bytes].elementsEqual(key)
                    }
                    : string(at: earlier.bytes) == String(decoding: key, as: UTF8.self)
                if isEqual { return false }
            }
        }
        let start = bytes.count
        bytes.append(contentsOf: key)
        keys.append((start..<bytes.count, isASCII))
        return true
    }

    private func string(at range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }
}
