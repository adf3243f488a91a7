#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// Writes to stderr, unbuffered.
enum StandardError {
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Writes bytes as they are: a secret shown to the user (a made passphrase) never becomes a String.
    static func write(bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let count = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            offset += count
        }
    }

    static var isTerminal: Bool { isatty(2) == 1 }
}

/// Buffered stdout. Output reaches the file descriptor in large blocks, so a command that fails
/// on small input has written nothing.
final class StandardOutput {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private var count = 0
    private let threshold = 1 << 20

    init() {
        capacity = threshold + 4096
        // malloc, so `reserve` can grow it with realloc and report failure (glibc aligns to 16).
        guard let memory = malloc(capacity) else {
            StandardError.write("sealkit: out of memory at start\n")
            exit(ExitStatus.ioError.rawValue)
        }
        storage = memory
    }

    deinit { free(storage) }

    func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Writes `text` and a newline, in one copy (`--lines` writes one per value).
    func writeLine(_ text: String) throws {
        var text = text
        try text.withUTF8 { bytes in
            try reserve(bytes.count + 1)
            if let source = bytes.baseAddress { (storage + count).copyMemory(from: source, byteCount: bytes.count) }
            storage.storeBytes(of: UInt8(ascii: "\n"), toByteOffset: count + bytes.count, as: UInt8.self)
            count += bytes.count + 1
        }
        if count >= threshold { try flush() }
    }

    func write(bytes: UnsafeRawBufferPointer) throws {
        try reserve(bytes.count)
        if let source = bytes.baseAddress { (storage + count).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
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
    /// - Throws: `CLIFailure` when the memory cannot be had: an error, not a crash.
    private func reserve(_ extra: Int) throws {
        guard count + extra > capacity else { return }
        let grown = max(capacity * 2, count + extra)
        guard let larger = realloc(storage, grown) else {
            throw CLIFailure("out of memory: cannot hold \(InputLimits.describe(grown)) of output", status: .ioError)
        }
        storage = larger
        capacity = grown
    }

    static var isTerminal: Bool { isatty(1) == 1 }
}

/// How much of each untrusted input the CLI reads before it stops with one line on stderr.
///
/// Every read of input someone else may control has a cap suited to it, so `/dev/zero`, a FIFO that
/// never ends or a mistaken pipe ends in an error within seconds and a few tens of MiB, never in
/// "failed to allocate". Each is far above what the input can legitimately hold.
enum InputLimits {
    /// One line of a transfer offer, reply or backup, or a prompt's answer: a part is at most 1,200
    /// characters (`TransferParts.maximumLineLength`).
    static let codeLine = 64 << 10
    /// All of a code read from stdin: 99 parts of 1,200 characters are 119 KB; the rest is room for
    /// blank lines and pasting mistakes.
    static let code = 1 << 20
    /// One value for `encrypt` (whole stdin, or one `--lines` line): a profile field, not a file.
    static let plaintext = 16 << 20
    /// One ciphertext for `decrypt` (whole stdin, or one `--lines` line): above the 21.3 MiB text of
    /// the largest plaintext `encrypt` takes, so everything encrypt makes decrypts.
    static let ciphertext = 24 << 20
    /// One profile: the whole input of `profile`, or one `--ndjson` line.
    static let profile = 16 << 20
    /// A schema file.
    static let schema = 16 << 20
    /// What `qr` encodes: a QR code holds at most 2,953 bytes.
    static let qrPayload = 64 << 10
    /// Key text for `keys import`.
    static let keyMaterial = 64 << 10

    /// A byte count as people read it ("64 KiB", "16 MiB").
    static func describe(_ count: Int) -> String {
        count >= 1 << 20 && count % (1 << 20) == 0 ? "\(count >> 20) MiB" : "\(count >> 10) KiB"
    }
}

/// Reads stdin.
enum StandardInput {
    /// The descriptor to read an input from: stdin for no path or `-`, else the file opened
    /// read-only. Callers close a descriptor other than 0.
    /// - Parameters:
    ///   - path: the file the person named, if any.
    ///   - what: names the file in the error ("input file", "profile file").
    static func fileDescriptor(_ path: String?, what: String) throws -> Int32 {
        guard let path, path != "-" else { return 0 }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CLIFailure("cannot read the \(what) \(path): \(reason)", status: errno == ENOENT ? .noInput : .ioError)
        }
        return fd
    }

    /// All of stdin.
    /// - Parameters:
    ///   - limit: refuse more than this many bytes (see `InputLimits`).
    ///   - what: names the input in the error.
    ///   - fd: the descriptor to read (stdin unless `--input` named a file).
    static func readAll(fd: Int32 = 0, limit: Int, what: String = "input") throws -> [UInt8] {
        let place = fd == 0 ? "on stdin" : "in the input file"
        return try readAll(fd: fd, limit: limit, what: "the \(what) \(place)", advice: "give only the \(what)")
    }

    /// All of a file descriptor, at most `limit` bytes.
    /// - Parameters:
    ///   - what: names the input in the error ("the profile in p.json").
    ///   - advice: what to do instead, for the error.
    static func readAll(fd: Int32, limit: Int, what: String, advice: String) throws -> [UInt8] {
        var result: [UInt8] = []
        // Secrets are read with a small limit: reserving it up front means no reallocation
        // leaves an unwiped copy behind.
        if limit <= 1 << 20 { result.reserveCapacity(limit) }
        let reader = LineReader(fd: fd, what: what, maximumLineLength: limit, maximumTotal: .max)
        while let chunk = try reader.readChunk() {
            guard result.count + chunk.count <= limit else {
                wipe(&result)
                throw CLIFailure("\(what) is larger than \(InputLimits.describe(limit)): \(advice)", status: .dataError)
            }
            result.append(contentsOf: chunk)
        }
        return result
    }

    static var isTerminal: Bool { isatty(0) == 1 }

    /// All of stdin as text, with one trailing newline dropped.
    static func readText(fd: Int32 = 0, what: String, limit: Int) throws -> String {
        var bytes = try readAll(fd: fd, limit: limit, what: what)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIFailure("the \(what)\(fd == 0 ? " on stdin" : "") is not UTF-8 text", status: .dataError)
        }
        return text
    }
}

/// Reads a file descriptor line by line without holding more than one line and one
/// block in memory, and never more than its caps.
final class LineReader {
    private let fd: Int32
    private var block: [UInt8]
    private var start = 0
    private var end = 0
    private var finished = false
    /// 1-based number of the last line returned.
    private(set) var lineNumber = 0
    /// Names the input in errors ("the reply on stdin").
    private let what: String
    /// The longest line returned, newline excluded; a longer one is an error.
    let maximumLineLength: Int
    /// The most bytes read in all; more is an error.
    let maximumTotal: Int
    private var total = 0

    /// - Parameters:
    ///   - what: names the input in errors.
    ///   - maximumLineLength: the longest line; the default suits codes and answers.
    ///   - maximumTotal: the most bytes in all; the default suits codes and answers (`yes ''` ends too).
    init(
        fd: Int32, what: String = "the input on stdin", maximumLineLength: Int = InputLimits.codeLine,
        maximumTotal: Int = InputLimits.code, blockSize: Int = 1 << 16
    ) {
        self.fd = fd
        self.what = what
        self.maximumLineLength = maximumLineLength
        self.maximumTotal = maximumTotal
        block = [UInt8](repeating: 0, count: min(blockSize, max(maximumLineLength, 4096) + 1))
    }

    // What passed through may have been a secret (key text, plaintext).
    deinit { wipe(&block) }

    /// Raw chunks as they come, for reading everything.
    func readChunk() throws -> ArraySlice<UInt8>? {
        let count = try fill(at: 0, beforeRead: {})
        return count == 0 ? nil : block[0..<count]
    }

    private func fill(at offset: Int, beforeRead: () throws -> Void) throws -> Int {
        try beforeRead()
        while true {
            let count = block.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw CLIFailure("cannot read the input: \(String(cString: strerror(errno)))", status: .ioError)
            }
            total += count
            guard total <= maximumTotal else {
                throw CLIFailure(
                    "\(what) is larger than \(InputLimits.describe(maximumTotal)), more than it can hold: check what is piped in",
                    status: .dataError)
            }
            return count
        }
    }

    /// Calls `body` with the next line's bytes (without its newline).
    /// - Parameter beforeRead: runs before each read from the descriptor, which may block:
    ///   `encrypt --lines` encrypts the lines it holds there, so no nonce drawn waits in memory for more input.
    /// - Returns: false at the end of input.
    /// - Throws: `CLIFailure` for a line longer than `maximumLineLength` or more than `maximumTotal`.
    func nextLine(beforeRead: () throws -> Void = {}, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        // Where the search for the newline resumes, so a long line arriving in many reads is
        // scanned once, not once per read.
        var scanned = start
        while true {
            let found = block.withUnsafeBytes { raw -> Int? in
                guard scanned < end, let hit = memchr(raw.baseAddress! + scanned, 0x0A, end - scanned) else { return nil }
                return UnsafeRawPointer(hit) - raw.baseAddress!
            }
            if let newline = found {
                try checkLength(newline - start)
                lineNumber += 1
                try block.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<newline])) }
                start = newline + 1
                return true
            }
            try checkLength(end - start)
            if finished {
                guard start < end else { return false }
                lineNumber += 1
                try block.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
                start = end
                return true
            }
            // Move the partial line to the front, growing the block for long lines.
            if start > 0 {
                block.withUnsafeMutableBytes { raw in
                    raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: end - start)
                }
                end -= start
                start = 0
            }
            scanned = end
            // One allocation per doubling (appending element by element is slow in debug and sanitizer
            // builds), never beyond the longest line and its newline.
            if end == block.count {
                let grown = min(block.count * 2, maximumLineLength + 1)
                block += [UInt8](repeating: 0, count: grown - block.count)
            }
            let count = try fill(at: end, beforeRead: beforeRead)
            if count == 0 { finished = true } else { end += count }
        }
    }

    private func checkLength(_ length: Int) throws {
        guard length > maximumLineLength else { return }
        throw CLIFailure(
            "line \(lineNumber + 1) of \(what) is longer than \(InputLimits.describe(maximumLineLength)), "
                + "more than one can hold: check what is piped in",
            status: .dataError)
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
        // Room reserved up front, so no reallocation leaves an unwiped copy of what was typed behind.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(KeystoreOptions.passphraseFileLimit)
        defer { wipe(&bytes) }
        var byte: UInt8 = 0
        var tooLong = false
        while Glibc.read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            if bytes.count < KeystoreOptions.passphraseFileLimit { bytes.append(byte) } else { tooLong = true }
        }
        if tooLong {
            throw CLIFailure("the passphrase is longer than \(KeystoreOptions.passphraseFileLimit) bytes", status: .usage)
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return try bytes.withUnsafeBytes { try Passphrase(utf8: $0) }
    }

    /// Writes `question` (ending in `[y/N] `) to stderr and reads the answer's line from `reader`:
    /// true for y or yes, in any case; anything else, end of input included, is no.
    static func confirm(_ question: String, reading reader: LineReader = LineReader(fd: 0)) throws -> Bool {
        StandardError.write(question)
        var answer = ""
        _ = try reader.nextLine { answer = String(decoding: $0, as: UTF8.self) }
        return isYes(answer)
    }

    /// Whether an answer to a [y/N] question is yes.
    static func isYes(_ answer: String) -> Bool { ["y", "yes"].contains(answer.trimmingBlanks().lowercased()) }

    /// Waits for Enter on the controlling terminal; what was typed is dropped. Throws `terminalGone`
    /// when there is no terminal or its input ends.
    static func line() throws {
        let fd = open("/dev/tty", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw terminalGone }
        defer { close(fd) }
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            // End of input or a terminal that went away: a caller looping on Enter must stop, not spin.
            guard count == 1 else { throw terminalGone }
            if byte == UInt8(ascii: "\n") { return }
        }
    }

    /// What a prompt that waits for Enter throws when the terminal closes under it.
    static let terminalGone = CLIFailure("the terminal closed while waiting for Enter", status: .ioError)

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

/// Overwrites secret bytes the command line read (a passphrase, pasted key text, a plaintext) before their
/// memory is given back. The library wipes its own buffers through libsodium, which is the crypto core's
/// alone; the command line, a client of the library, uses libc's `explicit_bzero`, which the compiler may
/// not drop as a dead store either.
func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress { explicit_bzero(base, buffer.count) }
    }
}
