/// A JSON text rewritten in compact form, with the place of every member of the top-level object
/// and of the objects directly inside it: what a caller needs to change a few members' values and
/// copy everything else, without building a `JSONValue` tree.
///
/// `text` is byte for byte what `JSONValue.parse(input).serialized()` returns. It is read by `parse`'s
/// own loop (`JSONParser.readDocument`) with another builder, so it accepts and refuses exactly what
/// `parse` does, with the same errors.
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
            var builder = OutlineBuilder(output: CompactOutput(buffer))
            do throws(JSONError) {
                try reader.readDocument(into: &builder)
                members = builder.members
                count = builder.output.count
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
    mutating func appendEscaped(_ text: UnsafeBufferPointer<UInt8>) {
        var writer = JSONWriter(pretty: false, capacity: text.count + 16)
        writer.writeEscaped(text)
        writer.output.withUnsafeBufferPointer { append($0) }
    }
}

/// Writes compact text and records where members of the top-level object, and of objects that
/// are its members' values, sit in it.
struct OutlineBuilder: JSONBuilder {
    var output: CompactOutput
    private(set) var members: [JSONOutline.Member] = []
    /// How many containers are open.
    private var depth = 0
    /// The member being read at depth 1 and at depth 2 (an index into `members`), if recorded.
    private var openMember: (Int?, Int?) = (nil, nil)

    init(output: CompactOutput) {
        self.output = output
        members.reserveCapacity(32)
    }

    mutating func null() { output.append("null") }
    mutating func bool(_ value: Bool) { output.append(value ? "true" : "false") }
    mutating func number(_ lexeme: UnsafeBufferPointer<UInt8>) { output.append(lexeme) }
    mutating func string(_ contents: UnsafeBufferPointer<UInt8>, escaped: Bool) {
        output.append(ASCII.quote)
        // Without escapes there are no control characters, quotes or backslashes: the input bytes
        // are already in the form `serialized()` writes.
        if escaped { output.appendEscaped(contents) } else { output.append(contents) }
        output.append(ASCII.quote)
    }
    mutating func emptyArray() { output.append("[]") }
    mutating func emptyObject() { output.append("{}") }
    mutating func beginArray() {
        depth += 1
        output.append(ASCII.openBracket)
    }
    mutating func beginObject() {
        depth += 1
        output.append(ASCII.openBrace)
    }

    mutating func key(_ contents: UnsafeBufferPointer<UInt8>, escaped: Bool) {
        output.append(ASCII.quote)
        let start = output.count
        if escaped { output.appendEscaped(contents) } else { output.append(contents) }
        let key = start..<output.count
        output.append("\":")
        let value = output.count..<output.count
        if depth == 1 {
            members.append(.init(key: key, value: value, parent: nil))
            openMember.0 = members.count - 1
        } else if depth == 2, let parent = openMember.0 {
            // The innermost object is the value of the top-level member `parent`.
            members.append(.init(key: key, value: value, parent: parent))
            openMember.1 = members.count - 1
        }
    }

    mutating func addMember(_ value: Void) {
        let open = depth == 1 ? openMember.0 : depth == 2 ? openMember.1 : nil
        if let open { members[open].value = members[open].value.lowerBound..<output.count }
    }

    func addElement(_ value: Void) {}
    mutating func separator() { output.append(ASCII.comma) }

    mutating func endArray() {
        depth -= 1
        output.append(ASCII.closeBracket)
    }

    mutating func endObject() {
        depth -= 1
        output.append(ASCII.closeBrace)
    }
}
