#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// `bytes` as text, or nil when they are not UTF-8. A short ASCII line (nearly every value) takes
    /// `String(decoding:as:)`, which is specialized; `String(validating:as:)` is generic over the encoding and
    /// looked up its metadata on every call, 3% of `encrypt --lines` of 64-byte values. A long line amortizes
    /// that, and the validator's own ASCII scan is faster than this byte loop (1 MiB values: 20% slower).
    init?(utf8Line bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.count <= 4096, bytes.allSatisfy({ $0 < 0x80 }) {
            self.init(decoding: bytes, as: UTF8.self)
        } else {
            guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
            self = text
        }
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
