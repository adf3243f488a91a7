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
    package func serialized(pretty: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty)
        writer.write(self, depth: 0)
        return String(decoding: writer.output, as: UTF8.self)
    }
}

struct JSONWriter {
    let pretty: Bool
    var output: [UInt8] = []

    init(pretty: Bool, capacity: Int = 256) {
        self.pretty = pretty
        output.reserveCapacity(capacity)
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

    mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        // Most strings need no escape at all: skip to the first word that might hold a byte
        // that does, eight bytes at a time, then look byte by byte from there.
        var clean = 0
        if let base = utf8.baseAddress {
            while clean &+ 8 <= utf8.count,
                !SWAR.mayNeedEscape(UnsafeRawPointer(base + clean).loadUnaligned(as: UInt64.self))
            {
                clean &+= 8
            }
        }
        var runStart = 0
        for i in clean..<utf8.count {
            let byte = utf8[i]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
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

/// Byte tests on eight bytes at once. Each says whether *some* byte of the word may match;
/// callers then check byte by byte, so a false alarm costs time, never correctness.
package enum SWAR {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether some byte is below `limit` (at most 0x80).
    @inline(__always)
    static func hasByte(below limit: UInt64, in word: UInt64) -> Bool {
        (word &- ones &* limit) & ~word & highBits != 0
    }

    /// Whether some byte equals `byte`.
    @inline(__always)
    static func hasByte(_ byte: UInt64, in word: UInt64) -> Bool {
        hasByte(below: 1, in: word ^ (ones &* byte))
    }

    /// A control character, `"` or `\`: what a JSON string must escape.
    @inline(__always)
    static func mayNeedEscape(_ word: UInt64) -> Bool {
        hasByte(below: 0x20, in: word) || hasByte(0x22, in: word) || hasByte(0x5C, in: word)
    }

    /// A mask with 0x80 set in bytes that end a run of plain string content (a control character,
    /// `"`, `\` or a byte of 0x80 and above). Only its lowest set byte is exact, which is all a
    /// scanner looking for the first such byte needs.
    @inline(__always)
    package static func plainStringStops(_ word: UInt64) -> UInt64 {
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let control = (word &- (ones &* 0x20)) & ~word
        let quote = (quotes &- ones) & ~quotes
        let backslash = (backslashes &- ones) & ~backslashes
        return (control | quote | backslash | word) & highBits
    }
}

