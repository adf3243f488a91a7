#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

#if canImport(Glibc)
import Glibc
#endif

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
