#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

#if canImport(Glibc)
import Glibc
#endif

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
    /// Where the lines returned and not yet taken (`takeLinesHeld`) start in `block`, and the first one's number.
    private var held = 0
    private var heldFirstLine = 1
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
            total += count
            guard total <= maximumTotal else {
                throw CLIFailure(
                    "\(what) is larger than \(InputLimits.describe(maximumTotal)), more than it can hold: check what is piped in",
                    status: .dataError)
            }
            return count
        }
    }

    /// Calls `body` with the lines returned since the last read or take, as they stand in the reader's buffer: one
    /// after the other, each with its newline (the input's last line may have none), and the number of the first.
    /// Then they are taken. Call it from `beforeRead`: after it, the next read moves them away.
    func takeLinesHeld(_ body: (UnsafeRawBufferPointer, _ firstLine: Int) throws -> Void) rethrows {
        guard held < start else { return }
        try block.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[held..<start]), heldFirstLine) }
        held = start
        heldFirstLine = lineNumber + 1
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
            // Before the lines returned move or their memory goes.
            try beforeRead()
            // Move the partial line to the front, growing the block for long lines.
            if start > 0 {
                block.withUnsafeMutableBytes { raw in
                    raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: end - start)
                }
                end -= start
                start = 0
            }
            // Lines not taken by now are gone.
            held = start
            heldFirstLine = lineNumber + 1
            scanned = end
            // One allocation per doubling (appending element by element is slow in debug and sanitizer
            // builds), never beyond the longest line and its newline.
            if end == block.count {
                let grown = min(block.count * 2, maximumLineLength + 1)
                block += [UInt8](repeating: 0, count: grown - block.count)
            }
            let count = try fill(at: end)
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
