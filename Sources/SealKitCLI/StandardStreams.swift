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
        // A block of 64 KiB or more goes out from where it is, after what is pending: a copy of it costs more than the
        // write (`encrypt --lines` writes a block of ciphertexts per read of its input).
        if bytes.count >= 1 << 16, let source = bytes.baseAddress {
            try flush()
            try writeAll(source, bytes.count)
            return
        }
        try reserve(bytes.count)
        if let source = bytes.baseAddress { (storage + count).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
        if count >= threshold { try flush() }
    }

    func flush() throws {
        try writeAll(storage, count)
        count = 0
    }

    private func writeAll(_ bytes: UnsafeRawPointer, _ byteCount: Int) throws {
        var offset = 0
        while offset < byteCount {
            let written = Glibc.write(1, bytes + offset, byteCount - offset)
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

    /// Whether stdout and stderr are the same terminal: what one writes, the person reads beside the other.
    static var sharesTerminalWithStandardError: Bool {
        guard isatty(1) == 1, isatty(2) == 1 else { return false }
        var out = stat()
        var err = stat()
        guard fstat(1, &out) == 0, fstat(2, &err) == 0 else { return false }
        return out.st_rdev == err.st_rdev
    }
}
