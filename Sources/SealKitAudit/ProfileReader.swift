import SealKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One profile read from a file.
struct ProfileRecord {
    let value: JSONValue
    /// The line number (NDJSON), or the index in the top-level array (JSON; nil for a lone profile).
    let position: Int?
    /// The line the profile starts on.
    let line: Int
    /// In tagged input (`ProfileReader.tagged`), the file the line's tag names.
    var fileTag: Int? = nil
}

/// Why a file could not be read to its end as profiles.
struct ReadProblem {
    /// Where the problem is: the line (NDJSON) or the whole document (JSON).
    let location: Location
    let line: Int
    let message: String
}

/// Reads files block by block and hands out profiles, so memory holds one block and
/// one profile at a time, whatever the file's size.
///
/// `.json` files that are an array are split into elements by a structural scan (strings,
/// escapes and nesting only) and each element is parsed by SealKit's JSON reader; any other `.json`
/// file is one document, parsed whole.
struct ProfileReader {
    static let blockSize = 1 << 20
    /// The longest NDJSON line read; a longer one is reported, not buffered without end.
    static let maximumLineLength = 64 << 20

    let file: AuditFile
    /// Called with the number of bytes read after each block.
    let progress: (Int) -> Void
    /// Called for each blank NDJSON line skipped (`NDJSON.isBlank`).
    var blankLine: () -> Void = {}
    /// Whether each NDJSON line starts with its place, `FILE LINE ` (two decimal numbers, each followed
    /// by one space), as `AuditFacts` reads them: the line's number is the tag's, not its position here.
    var tagged = false
    /// In tagged input, called for each bad line with its tag's file and line and what is wrong, in
    /// place of the file's one problem.
    var badLine: (Int, Int, String) -> Void = { _, _, _ in }

    /// Reads every profile, calling `body` for each.
    /// - Returns: the first problem, if the file is not valid JSON or NDJSON; reading stops at a
    ///   JSON problem, and goes on past a bad NDJSON line.
    func forEachProfile(_ body: (ProfileRecord) -> Void) throws(AuditError) -> ReadProblem? {
        // A duplicate of stdin, so closing it below leaves descriptor 0 alone.
        let fd = file.path == AuditFile.standardInput ? dup(0) : open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(path: file.path, reason: lastError()) }
        defer { close(fd) }
        switch file.format {
        case .lines: return try readLines(fd: fd, body)
        case .json: return try readJSON(fd: fd, body)
        }
    }

    private func readBlock(fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(AuditError) -> Int {
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(path: file.path, reason: lastError()) }
            if count > 0 { progress(count) }
            return count
        }
    }

    // MARK: NDJSON

    private func readLines(fd: Int32, _ body: (ProfileRecord) -> Void) throws(AuditError) -> ReadProblem? {
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.blockSize, alignment: 16)
        defer { buffer.deallocate() }
        var start = 0, end = 0, lineNumber = 0
        var finished = false
        var firstProblem: ReadProblem?
        var badLines = 0
        var skippingLongLine = false
        var untaggedLine: Int?
        var inputLine = 0
        // buffer[start..<scanned] holds no newline: each byte is searched once, however many reads
        // a long line takes (a pipe hands over 64 KiB at a time; searching the whole partial line
        // again after each read made a 20 MB line take minutes).
        var scanned = 0
        var parser = JSONValueReader()

        func handle(_ line: UnsafeRawBufferPointer) {
            lineNumber += 1
            inputLine += 1
            var line = line
            var fileTag: Int?
            if tagged {
                guard let (tag, number, start) = Self.tag(of: line) else {
                    if untaggedLine == nil { untaggedLine = inputLine }
                    return
                }
                fileTag = tag
                lineNumber = number
                line = UnsafeRawBufferPointer(rebasing: line[start...])
            }
            if line.last == UInt8(ascii: "\r") { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
            // Blank lines (spacing between records) hold nothing; they are counted, not audited.
            if NDJSON.isBlank(line) {
                blankLine()
                return
            }
            do {
                let value = try parser.parse(line.assumingMemoryBound(to: UInt8.self))
                body(ProfileRecord(value: value, position: lineNumber, line: lineNumber, fileTag: fileTag))
            } catch {
                if let fileTag {
                    badLine(fileTag, lineNumber, "line \(lineNumber) is not valid JSON: column \(error.column): \(Self.reason(error))")
                    return
                }
                badLines += 1
                if firstProblem == nil {
                    firstProblem = ReadProblem(
                        location: .line(lineNumber), line: lineNumber,
                        message: "line \(lineNumber) is not valid JSON: column \(error.column): \(Self.reason(error))")
                }
            }
        }

        while true {
            // Hand out every complete line in the buffer.
            while true {
                let from = max(start, scanned)
                guard from < end, let hit = memchr(buffer.baseAddress! + from, 0x0A, end - from) else {
                    scanned = end
                    break
                }
                let lineEnd = UnsafeRawPointer(hit) - UnsafeRawPointer(buffer.baseAddress!)
                if skippingLongLine {
                    skippingLongLine = false
                } else {
                    handle(UnsafeRawBufferPointer(rebasing: buffer[start..<lineEnd]))
                }
                start = lineEnd + 1
            }
            if finished {
                if start < end && !skippingLongLine { handle(UnsafeRawBufferPointer(rebasing: buffer[start..<end])) }
                break
            }
            // Keep the partial line, growing the buffer for long lines up to the limit.
            if start > 0 {
                if end > start { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start) }
                end -= start
                start = 0
                scanned = end
            }
            if end == buffer.count {
                if buffer.count >= Self.maximumLineLength || skippingLongLine {
                    if !skippingLongLine, tagged {
                        inputLine += 1
                        if let (tag, number, _) = Self.tag(of: UnsafeRawBufferPointer(rebasing: buffer[0..<end])) {
                            badLine(tag, number, "line \(number) is longer than \(Self.maximumLineLength >> 20) MiB")
                        } else if untaggedLine == nil {
                            untaggedLine = inputLine
                        }
                        skippingLongLine = true
                    } else if !skippingLongLine {
                        lineNumber += 1
                        badLines += 1
                        if firstProblem == nil {
                            firstProblem = ReadProblem(
                                location: .line(lineNumber), line: lineNumber,
                                message: "line \(lineNumber) is longer than \(Self.maximumLineLength >> 20) MiB")
                        }
                        skippingLongLine = true
                    }
                    end = 0
                    scanned = 0
                } else {
                    let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 16)
                    larger.baseAddress!.copyMemory(from: buffer.baseAddress!, byteCount: end)
                    buffer.deallocate()
                    buffer = larger
                }
            }
            let count = try readBlock(fd: fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
            if count == 0 { finished = true } else { end += count }
        }
        if let untaggedLine { throw .untaggedLine(untaggedLine) }
        guard let firstProblem else { return nil }
        guard badLines > 1 else { return firstProblem }
        return ReadProblem(
            location: firstProblem.location, line: firstProblem.line,
            message: firstProblem.message + " (\(badLines) bad lines in all; the others were audited)")
    }

    // MARK: JSON

    private enum Phase {
        /// Before the top-level value.
        case start
        /// Not an array: the whole document is read and parsed at the end.
        case whole
        /// In the top-level array, where an element (or, when `first`, `]`) must come.
        case beforeElement(first: Bool)
        /// Inside an element.
        case inElement
        /// After the closing `]`: only whitespace may follow.
        case finished
    }

    private func readJSON(fd: Int32, _ body: (ProfileRecord) -> Void) throws(AuditError) -> ReadProblem? {
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.blockSize, alignment: 16)
        defer { block.deallocate() }
        var pending: [UInt8] = []
        var phase = Phase.start
        var line = 1, column = 1, offset = 0
        var depth = 0, inString = false, escaped = false
        var elementIndex = 0
        var elementLine = 1, elementColumn = 1, elementOffset = 0
        var parser = JSONValueReader()

        func problem(_ reason: JSONError.Reason, line: Int, column: Int, offset: Int) -> ReadProblem {
            let error = JSONError(reason: reason, line: line, column: column, byteOffset: offset)
            return ReadProblem(location: .pointer(""), line: line, message: "not valid JSON: \(Self.describe(error))")
        }

        func finishElement() -> ReadProblem? {
            defer {
                pending.removeAll(keepingCapacity: pending.capacity <= Self.blockSize * 4)
                elementIndex += 1
            }
            do {
                let parsed = pending.withUnsafeBufferPointer { buffer in
                    Result(catching: { () throws(JSONError) in try parser.parse(buffer) })
                }
                let value = try parsed.get()
                body(ProfileRecord(value: value, position: elementIndex, line: elementLine))
                return nil
            } catch {
                // Positions in the element become positions in the file.
                let errorLine = elementLine + error.line - 1
                let errorColumn = error.line == 1 ? elementColumn + error.column - 1 : error.column
                return problem(error.reason, line: errorLine, column: errorColumn, offset: elementOffset + error.byteOffset)
            }
        }

        while true {
            let count = try readBlock(fd: fd, into: block)
            if count == 0 { break }
            let bytes = UnsafeRawBufferPointer(rebasing: block[0..<count])
            if case .whole = phase {
                pending.append(contentsOf: bytes)
                offset += count
                continue
            }
            var segmentStart = 0
            var index = 0
            while index < count {
                let byte = bytes[index]
                switch phase {
                case .whole:
                    break
                case .start:
                    if Self.isWhitespace(byte) { break }
                    if byte == UInt8(ascii: "[") {
                        phase = .beforeElement(first: true)
                    } else {
                        // One document: keep everything from the first byte and parse it at the end.
                        phase = .whole
                        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
                        offset += count
                        index = count
                        continue
                    }
                case .beforeElement(let first):
                    if Self.isWhitespace(byte) { break }
                    if byte == UInt8(ascii: "]") && first {
                        phase = .finished
                        break
                    }
                    if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") {
                        return problem(
                            .unexpectedCharacter(found: Self.describe(byte), expected: "a value"),
                            line: line, column: column, offset: offset + index)
                    }
                    phase = .inElement
                    segmentStart = index
                    elementLine = line
                    elementColumn = column
                    elementOffset = offset + index
                    depth = 0
                    inString = false
                    escaped = false
                    fallthrough
                case .inElement:
                    if inString {
                        if escaped {
                            escaped = false
                        } else if byte == UInt8(ascii: "\\") {
                            escaped = true
                        } else if byte == UInt8(ascii: "\"") {
                            inString = false
                        }
                    } else if byte == UInt8(ascii: "\"") {
                        inString = true
                    } else if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                        depth += 1
                    } else if (byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}")) && depth > 0 {
                        depth -= 1
                    } else if depth == 0 && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]")) {
                        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[segmentStart..<index]))
                        if let failure = finishElement() { return failure }
                        phase = byte == UInt8(ascii: ",") ? .beforeElement(first: false) : .finished
                    }
                case .finished:
                    if !Self.isWhitespace(byte) {
                        return problem(
                            .unexpectedCharacter(found: Self.describe(byte), expected: "the end of the input"),
                            line: line, column: column, offset: offset + index)
                    }
                }
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
                index += 1
            }
            if case .inElement = phase {
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[segmentStart..<count]))
            }
            if case .whole = phase {} else { offset += count }
        }

        switch phase {
        case .start:
            return problem(.unexpectedEnd(expected: "a value"), line: line, column: column, offset: offset)
        case .whole:
            do {
                let value = try JSONValue.parse(pending)
                pending = []
                body(ProfileRecord(value: value, position: nil, line: 1))
                return nil
            } catch {
                return ReadProblem(location: .pointer(""), line: error.line, message: "not valid JSON: \(Self.describe(error))")
            }
        case .beforeElement, .inElement:
            return problem(.unexpectedEnd(expected: "a value, ',' or ']'"), line: line, column: column, offset: offset)
        case .finished:
            return nil
        }
    }

    /// A tagged line's file and line numbers and where its text starts, or nil when it has no tag.
    static func tag(of line: UnsafeRawBufferPointer) -> (file: Int, line: Int, start: Int)? {
        var index = 0
        func number() -> Int? {
            var value = 0
            let first = index
            while index < line.count, index - first < 18, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(line[index]) {
                value = value * 10 + Int(line[index] - UInt8(ascii: "0"))
                index += 1
            }
            guard index > first, index < line.count, line[index] == UInt8(ascii: " ") else { return nil }
            index += 1
            return value
        }
        guard let file = number(), let lineNumber = number(), lineNumber > 0 else { return nil }
        return (file, lineNumber, index)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// A byte as a message shows it: printable ASCII quoted, anything else by number.
    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    /// A JSONError's description without its "invalid JSON" prefix, which the finding's message supplies.
    static func describe(_ error: JSONError) -> String {
        let text = error.description
        let prefix = "invalid JSON "
        return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
    }

    static func reason(_ error: JSONError) -> String {
        let text = describe(error)
        guard let colon = text.firstRange(of: ": ") else { return text }
        return String(text[colon.upperBound...])
    }
}
