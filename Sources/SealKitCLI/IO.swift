import FoundationEssentials
import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// Writes to stderr, unbuffered.
enum StandardError {
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
                offset += count
            }
        }
    }

    static var isTerminal: Bool { isatty(2) == 1 }
}

/// Buffered stdout. Output reaches the file descriptor in large blocks, so a command that fails
/// on small input has written nothing. The buffer is raw memory, so bulk paths write ciphertexts
/// straight into it (`append(capacity:_:)`) without clearing it first.
final class StandardOutput {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private var count = 0
    private let threshold = 1 << 20

    init() {
        capacity = threshold + 4096
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(bytes: UnsafeRawBufferPointer($0)) }
    }

    func write(bytes: UnsafeRawBufferPointer) throws {
        reserve(bytes.count)
        if let source = bytes.baseAddress { (storage + count).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
        if count >= threshold { try flush() }
    }

    /// Appends up to `capacity` bytes in place; `body` returns how many it wrote.
    func append(capacity: Int, _ body: (UnsafeMutableRawBufferPointer) -> Int) throws {
        reserve(capacity)
        let used = body(UnsafeMutableRawBufferPointer(start: storage + count, count: capacity))
        precondition(used >= 0 && used <= capacity)
        count += used
        if count >= threshold { try flush() }
    }

    func flush() throws {
        var offset = 0
        while offset < count {
            let written = Glibc.write(1, storage + offset, count - offset)
            if written < 0 && errno == EINTR { continue }
            if written < 0 && errno == EPIPE {
                // The reader is gone (`| head -1`): end quietly, as cat does, by the signal
                // ignored at start-up, so a pipeline with pipefail still sees the output was cut.
                signal(SIGPIPE, SIG_DFL)
                raise(SIGPIPE)
            }
            if written <= 0 {
                throw CLIFailure("cannot write the output: \(String(cString: strerror(errno)))", status: .ioError)
            }
            offset += written
        }
        count = 0
    }

    /// Makes room for `extra` more bytes, keeping what is pending.
    private func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let grown = max(capacity * 2, count + extra)
        let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
        larger.copyMemory(from: storage, byteCount: count)
        storage.deallocate()
        storage = larger
        capacity = grown
    }

    static var isTerminal: Bool { isatty(1) == 1 }
}

/// Reads stdin.
enum StandardInput {
    /// All of stdin.
    /// - Parameters:
    ///   - limit: refuse more than this many bytes (key material is small; a mistaken pipe may not be).
    ///   - what: names the input in the error.
    ///   - fd: the descriptor to read (stdin unless `--input` named a file).
    static func readAll(fd: Int32 = 0, limit: Int = .max, what: String = "input") throws -> [UInt8] {
        var result: [UInt8] = []
        // Secrets are read with a small limit: reserving it up front means no reallocation
        // leaves an unwiped copy behind.
        if limit <= 1 << 20 { result.reserveCapacity(limit) }
        let reader = LineReader(fd: fd)
        while let chunk = try reader.readChunk() {
            guard result.count + chunk.count <= limit else {
                ConstantTime.wipe(&result)
                throw CLIFailure("the \(what) on stdin is larger than \(limit / 1024) KiB: pipe in only the \(what)", status: .dataError)
            }
            result.append(contentsOf: chunk)
        }
        return result
    }

    static var isTerminal: Bool { isatty(0) == 1 }

    /// All of stdin as text, with one trailing newline dropped.
    static func readText(fd: Int32 = 0, what: String) throws -> String {
        var bytes = try readAll(fd: fd)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIFailure("the \(what) on stdin is not UTF-8 text", status: .dataError)
        }
        return text
    }
}

/// Reads a file descriptor line by line without holding more than one line and one
/// block in memory.
final class LineReader {
    private let fd: Int32
    private var block: [UInt8]
    private var start = 0
    private var end = 0
    private var finished = false
    /// 1-based number of the last line returned.
    private(set) var lineNumber = 0

    init(fd: Int32, blockSize: Int = 1 << 16) {
        self.fd = fd
        block = [UInt8](repeating: 0, count: blockSize)
    }

    private static func tooLong(_ limit: Int) -> CLIFailure {
        CLIFailure("a line on stdin is longer than \(limit) bytes, longer than any input expected here", status: .dataError)
    }

    // What passed through may have been a secret (key text, plaintext).
    deinit { ConstantTime.wipe(&block) }

    /// Raw chunks as they come, for reading everything.
    func readChunk() throws -> ArraySlice<UInt8>? {
        let count = try fill(at: 0)
        return count == 0 ? nil : block[0..<count]
    }

    private func fill(at offset: Int) throws -> Int {
        while true {
            let count = block.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw CLIFailure("cannot read the input: \(String(cString: strerror(errno)))", status: .ioError)
            }
            return count
        }
    }

    /// Calls `body` with the next line's bytes (without its newline).
    /// - Parameter maximumLength: refuse a line longer than this many bytes instead of growing
    ///   the buffer for it (untrusted input with a known longest line).
    /// - Returns: false at the end of input.
    func nextLine(maximumLength: Int = .max, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        // Where the search for the newline resumes, so a long line arriving in many reads is
        // scanned once, not once per read.
        var scanned = start
        while true {
            let found = block.withUnsafeBytes { raw -> Int? in
                guard scanned < end, let hit = memchr(raw.baseAddress! + scanned, 0x0A, end - scanned) else { return nil }
                return UnsafeRawPointer(hit) - raw.baseAddress!
            }
            if let newline = found {
                guard newline - start <= maximumLength else { throw Self.tooLong(maximumLength) }
                lineNumber += 1
                try block.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<newline])) }
                start = newline + 1
                return true
            }
            if finished {
                guard start < end else { return false }
                guard end - start <= maximumLength else { throw Self.tooLong(maximumLength) }
                lineNumber += 1
                try block.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
                start = end
                return true
            }
            guard end - start <= maximumLength else { throw Self.tooLong(maximumLength) }
            // Move the partial line to the front, growing the block for long lines.
            if start > 0 {
                block.withUnsafeMutableBytes { raw in
                    raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: end - start)
                }
                end -= start
                start = 0
            }
            scanned = end
            // One allocation per doubling: appending element by element is slow in debug and sanitizer builds.
            if end == block.count { block += [UInt8](repeating: 0, count: block.count) }
            let count = try fill(at: end)
            if count == 0 { finished = true } else { end += count }
        }
    }
}

/// Asks for a passphrase on the controlling terminal with echo off.
enum TerminalPrompt {
    /// - Returns: nil when there is no terminal to ask on.
    static func passphrase(_ prompt: String) throws -> Passphrase? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var original = termios()
        guard tcgetattr(fd, &original) == 0 else { return nil }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        // Echo goes off before the prompt shows, so an answer typed (or pasted) the moment
        // the prompt appears is neither echoed nor flushed away by TCSAFLUSH.
        tcsetattr(fd, TCSAFLUSH, &silent)
        _ = prompt.withCString { Glibc.write(fd, $0, strlen($0)) }
        defer {
            tcsetattr(fd, TCSAFLUSH, &original)
            _ = Glibc.write(fd, "\n", 1)
        }
        var bytes: [UInt8] = []
        defer { ConstantTime.wipe(&bytes) }
        var byte: UInt8 = 0
        while Glibc.read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return try Passphrase(bytes: bytes)
    }

    /// Writes one line to the controlling terminal, if there is one (a retry hint).
    static func say(_ line: String) {
        let fd = open("/dev/tty", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = (line + "\n").withCString { Glibc.write(fd, $0, strlen($0)) }
    }

    /// Asks a yes/no question on stderr when stdin is a terminal, reading the answer from it.
    /// - Returns: nil when stdin is not a terminal (scripts are not asked), else whether
    ///   the answer was yes; anything but `y` or `yes` is no.
    static func confirm(_ question: String) -> Bool? {
        guard isatty(0) == 1 else { return nil }
        StandardError.write(question + " [y/N] ")
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while answer.count < 64, Glibc.read(0, &byte, 1) == 1, byte != UInt8(ascii: "\n") { answer.append(byte) }
        let text = String(decoding: answer, as: UTF8.self).trimmingBlanks().lowercased()
        return text == "y" || text == "yes"
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and carriage returns.
    func trimmingBlanks() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[first...last])
    }
}
