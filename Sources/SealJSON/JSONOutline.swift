#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        var members: [Member] = []
        var failure: JSONError?
        // Compact text is never longer than its input: whitespace goes, and every escape written is
        // no longer than the escape or character it came from. `CompactOutput` checks it all the same.
        text = [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            var output = CompactOutput(buffer)
            do throws(JSONError) {
                members = try reader.compactDocument(into: &output)
                count = output.count
            } catch {
                failure = error
                count = 0
            }
        }
        if let failure { throw failure }
        self.members = members
    }
}

/// The outline's text as it is written: bounds-checked appends to memory reserved in advance.
struct CompactOutput {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private(set) var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress ?? UnsafeMutablePointer(bitPattern: 1)!
        capacity = buffer.count
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        precondition(count < capacity, "compact JSON outgrew its input")
        base[count] = byte
        count &+= 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        precondition(bytes.count <= capacity &- count, "compact JSON outgrew its input")
        if let source = bytes.baseAddress { (base + count).update(from: source, count: bytes.count) }
        count &+= bytes.count
    }

    mutating func append(_ literal: StaticString) {
        append(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends `text` escaped as `serialized()` escapes strings.
    mutating func appendEscaped(_ text: [UInt8]) {
        var writer = JSONWriter(pretty: false, capacity: text.count + 16)
        text.withUnsafeBufferPointer { writer.writeEscaped($0) }
        writer.output.withUnsafeBufferPointer { append($0) }
    }
}

extension JSONParser {
    /// Reads one document with `parseDocument`'s checks, in the same order and with the same errors,
    /// writing its compact form to `output` and returning the members at the first two levels.
    fileprivate mutating func compactDocument(into output: inout CompactOutput) throws(JSONError) -> [JSONOutline.Member] {
        var members: [JSONOutline.Member] = []
        members.reserveCapacity(32)
        // Per open container: whether it is an object. Depth costs heap, never stack.
        var stack: [Bool] = []
        stack.reserveCapacity(8)
        var keys = KeyLedger(input: bytes)
        // The member being read at depth 1 and at depth 2 (an index into `members`), if recorded.
        var openMember: (Int?, Int?) = (nil, nil)

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
                    output.append("[]")
                } else {
                    stack.append(false)
                    output.append(ASCII.openBracket)
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
                    output.append("{}")
                } else {
                    stack.append(true)
                    keys.openObject()
                    output.append(ASCII.openBrace)
                    let key = try copyKey(to: &output, checkingAgainst: &keys)
                    record(key, at: stack.count, in: &members, open: &openMember, valueStart: output.count)
                    continue
                }
            case ASCII.quote:
                index += 1
                try copyString(to: &output)
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                output.append("true")
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                output.append("false")
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                output.append("null")
            case ASCII.minus, ASCII.zero...ASCII.nine:
                output.append(UnsafeBufferPointer(rebasing: bytes[try scanNumber()]))
            default:
                throw unexpected(at: index, expected: "a value")
            }

            // A value just ended; hand it to its container, and close every container it completes.
            while let isObject = stack.last {
                skipWhitespace()
                if isObject {
                    let open = stack.count == 1 ? openMember.0 : stack.count == 2 ? openMember.1 : nil
                    if let open { members[open].value = members[open].value.lowerBound..<output.count }
                    guard index < bytes.count else { throw end(expected: "',' or '}'") }
                    if bytes[index] == ASCII.comma {
                        index += 1
                        output.append(ASCII.comma)
                        let key = try copyKey(to: &output, checkingAgainst: &keys)
                        record(key, at: stack.count, in: &members, open: &openMember, valueStart: output.count)
                        break
                    } else if bytes[index] == ASCII.closeBrace {
                        index += 1
                        output.append(ASCII.closeBrace)
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
                        output.append(ASCII.comma)
                        break
                    } else if bytes[index] == ASCII.closeBracket {
                        index += 1
                        output.append(ASCII.closeBracket)
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
        return members
    }

    /// Records a member whose key was just read in an object at `depth`, when that is the top-level
    /// object or an object that is the value of one of its members.
    private func record(
        _ key: Range<Int>, at depth: Int, in members: inout [JSONOutline.Member], open: inout (Int?, Int?),
        valueStart: Int
    ) {
        if depth == 1 {
            members.append(.init(key: key, value: valueStart..<valueStart, parent: nil))
            open.0 = members.count - 1
        } else if depth == 2, let parent = open.0 {
            members.append(.init(key: key, value: valueStart..<valueStart, parent: parent))
            open.1 = members.count - 1
        }
    }

    /// Copies a string (`index` just past its opening quote) in the form `serialized()` writes.
    private mutating func copyString(to output: inout CompactOutput) throws(JSONError) {
        output.append(ASCII.quote)
        if let plain = try scanString() {
            // No escapes, no control characters: already in the form `serialized()` writes.
            output.append(UnsafeBufferPointer(rebasing: bytes[plain]))
        } else {
            output.appendEscaped(scratch)
        }
        output.append(ASCII.quote)
    }

    /// Reads `"key" :` as `parse` does, refuses a key the object already has, and writes `"key":`.
    /// - Returns: where the key's text (inside its quotes) landed in the output.
    private mutating func copyKey(
        to output: inout CompactOutput, checkingAgainst keys: inout KeyLedger
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
        let isNew = plain.map { keys.insert(inputRange: $0) } ?? keys.insert(decoded: scratch)
        if !isNew {
            let key = plain.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
            throw error(.duplicateKey(key ?? String(decoding: scratch, as: UTF8.self)), at: keyStart)
        }
        skipWhitespace()
        guard index < bytes.count else { throw end(expected: "':' after the key") }
        guard bytes[index] == ASCII.colon else { throw unexpected(at: index, expected: "':' after the key") }
        index += 1
        output.append(ASCII.quote)
        let start = output.count
        if let plain {
            output.append(UnsafeBufferPointer(rebasing: bytes[plain]))
        } else {
            output.appendEscaped(scratch)
        }
        let keyRange = start..<output.count
        output.append("\":")
        return keyRange
    }
}

/// The keys of every open object, to refuse a duplicate exactly as `parse` does. `parse` compares
/// keys as Swift strings, which are equal when canonically equivalent, so two keys that are not both
/// ASCII are compared that way here too; ASCII keys compare as bytes, which for them is the same.
private struct KeyLedger {
    /// A key: where its bytes are (in the input, or in `decoded` when it held escapes), and a
    /// fingerprint of them, or nil when they are not ASCII.
    private struct Key {
        var start: Int
        var count: Int
        var isDecoded: Bool
        var fingerprint: UInt64?
    }

    /// An open object: its first entry in `keys`, a 128-bit filter of its ASCII keys' fingerprints,
    /// whether it has a key that is not ASCII, and its keys as strings once it has many.
    private struct Object {
        var firstKey: Int
        var firstDecoded: Int
        var filter: (UInt64, UInt64) = (0, 0)
        var hasNonASCIIKey = false
        var index: Set<String>?
    }

    private let input: UnsafeBufferPointer<UInt8>
    private var decoded: [UInt8] = []
    private var keys: [Key] = []
    private var objects: [Object] = []

    init(input: UnsafeBufferPointer<UInt8>) {
        self.input = input
        keys.reserveCapacity(64)
        objects.reserveCapacity(8)
    }

    mutating func openObject() {
        objects.append(Object(firstKey: keys.count, firstDecoded: decoded.count))
    }

    mutating func closeObject() {
        let object = objects.removeLast()
        keys.removeSubrange(object.firstKey...)
        decoded.removeSubrange(object.firstDecoded...)
    }

    /// Adds a key that sits in the input, with no escapes, to the innermost open object.
    /// - Returns: false when the object already has an equal key.
    mutating func insert(inputRange range: Range<Int>) -> Bool {
        insert(Key(start: range.lowerBound, count: range.count, isDecoded: false, fingerprint: nil))
    }

    /// Adds a key that held escapes, decoded, to the innermost open object.
    /// - Returns: false when the object already has an equal key.
    mutating func insert(decoded key: [UInt8]) -> Bool {
        let start = decoded.count
        decoded.append(contentsOf: key)
        guard insert(Key(start: start, count: key.count, isDecoded: true, fingerprint: nil)) else {
            decoded.removeSubrange(start...)
            return false
        }
        return true
    }

    private mutating func insert(_ new: Key) -> Bool {
        var key = new
        key.fingerprint = withBytes(of: key) { Self.fingerprint(ofASCII: $0) }
        let top = objects.count - 1
        let first = objects[top].firstKey
        // As `parse` does: compare one by one while few, then through a set of strings.
        if objects[top].index == nil, keys.count - first >= JSONParser.linearKeyCheckLimit {
            objects[top].index = Set(keys[first...].map { string(of: $0) })
        }
        if objects[top].index != nil {
            guard objects[top].index!.insert(string(of: key)).inserted else { return false }
        } else if let fingerprint = key.fingerprint {
            // An ASCII key whose filter bit is clear equals no earlier ASCII key; only a key that is
            // not ASCII could still equal it as a string.
            let bit = (fingerprint &* 0x9E37_79B9_7F4A_7C15) &>> 57
            let mask: UInt64 = 1 &<< (bit & 63)
            let isSet = bit < 64 ? objects[top].filter.0 & mask != 0 : objects[top].filter.1 & mask != 0
            if isSet || objects[top].hasNonASCIIKey, isDuplicate(key, from: first) { return false }
            if bit < 64 { objects[top].filter.0 |= mask } else { objects[top].filter.1 |= mask }
        } else {
            if isDuplicate(key, from: first) { return false }
            objects[top].hasNonASCIIKey = true
        }
        keys.append(key)
        return true
    }

    /// Whether one of the keys from `first` on equals `key`.
    private func isDuplicate(_ key: Key, from first: Int) -> Bool {
        withBytes(of: key) { bytes in
            for earlier in keys[first...] {
                if let fingerprint = key.fingerprint, let earlierFingerprint = earlier.fingerprint {
                    // Both ASCII: equal as strings exactly when equal as bytes.
                    if earlierFingerprint == fingerprint, earlier.count == key.count,
                        withBytes(of: earlier, { $0.elementsEqual(bytes) })
                    {
                        return true
                    }
                } else if string(of: earlier) == String(decoding: bytes, as: UTF8.self) {
                    return true
                }
            }
            return false
        }
    }

    private func withBytes<Result>(of key: Key, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        guard key.isDecoded else { return body(UnsafeBufferPointer(rebasing: input[key.start..<(key.start + key.count)])) }
        return decoded.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[key.start..<(key.start + key.count)])) }
    }

    private func string(of key: Key) -> String {
        withBytes(of: key) { String(decoding: $0, as: UTF8.self) }
    }

    /// The length and first and last eight bytes mixed into one word, or nil when `key` is not ASCII:
    /// equal keys have equal fingerprints, so most unequal ones are told apart without a comparison.
    private static func fingerprint(ofASCII key: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard let base = key.baseAddress else { return 0 }
        let count = key.count
        var i = 0
        var high: UInt64 = 0
        while i &+ 8 <= count {
            high |= UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            i &+= 8
        }
        var tail: UInt64 = 0
        while i < count {
            tail = tail << 8 | UInt64(base[i])
            i &+= 1
        }
        guard (high | tail) & 0x8080_8080_8080_8080 == 0 else { return nil }
        let head = count >= 8 ? UnsafeRawPointer(base).loadUnaligned(as: UInt64.self) : tail
        let last = count >= 8 ? UnsafeRawPointer(base + count - 8).loadUnaligned(as: UInt64.self) : 0
        return (head ^ (last &* 0x9E37_79B9_7F4A_7C15)) &+ UInt64(count)
    }
}
