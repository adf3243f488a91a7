extension JSONValue {
    /// Writes the value as JSON text.
    ///
    /// Object members keep their order and numbers are written as their exact lexeme.
    /// Strings escape `"`, `\` and control characters (`\b \f \n \r \t`, others as
    /// `\u00XX`); everything else, `/` and non-ASCII included, is written as UTF-8.
    /// The output matches Python's `json.dumps(value, ensure_ascii=False)` with
    /// `separators=(",", ":")` (compact) or `indent=2` (pretty).
    /// - Parameter pretty: two-space indentation and one member or element per line;
    ///   otherwise no whitespace at all.
    /// - Returns: the JSON text.
    public func serialized(pretty: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty)
        writer.write(self, depth: 0)
        return String(decoding: writer.output, as: UTF8.self)
    }
}

struct JSONWriter {
    let pretty: Bool
    var output: [UInt8] = []

    init(pretty: Bool) {
        self.pretty = pretty
        output.reserveCapacity(256)
    }

    /// Recursion follows the value's depth, which `parse` bounds at `maximumDepth`.
    mutating func write(_ value: JSONValue, depth: Int) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let lexeme): output.append(contentsOf: lexeme.utf8)
        case .string(let text): writeString(text)
        case .array(let elements):
            if elements.isEmpty {
                output.append(contentsOf: "[]".utf8)
                return
            }
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth: depth + 1)
                write(element, depth: depth + 1)
            }
            newline(depth: depth)
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                output.append(contentsOf: "{}".utf8)
                return
            }
            output.append(UInt8(ascii: "{"))
            for (offset, member) in members.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth: depth + 1)
                writeString(member.key)
                output.append(UInt8(ascii: ":"))
                if pretty { output.append(UInt8(ascii: " ")) }
                write(member.value, depth: depth + 1)
            }
            newline(depth: depth)
            output.append(UInt8(ascii: "}"))
        }
    }

    private mutating func newline(depth: Int) {
        guard pretty else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
    }

    private mutating func writeString(_ text: String) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { writeEscaped($0) }
        output.append(UInt8(ascii: "\""))
    }

    private mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for (i, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
            runStart = i + 1
            output.append(UInt8(ascii: "\\"))
            switch byte {
            case 0x22: output.append(0x22)
            case 0x5C: output.append(0x5C)
            case 0x08: output.append(UInt8(ascii: "b"))
            case 0x0C: output.append(UInt8(ascii: "f"))
            case 0x0A: output.append(UInt8(ascii: "n"))
            case 0x0D: output.append(UInt8(ascii: "r"))
            case 0x09: output.append(UInt8(ascii: "t"))
            default:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                output.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }
}
