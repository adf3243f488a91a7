#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

#if canImport(Glibc)
import Glibc
#endif

extension UnsafeRawBufferPointer {
    /// Whether the bytes are UTF-8 text, without making a String of them: ASCII a word at a time (nearly every
    /// value), the standard library's validator for the rest. The library checks the same (SealKit's
    /// `UTF8Validation`, package API, which the command line, a client of the products, does not use); when it
    /// refuses a block of lines, this check finds which input line is bad, to write those before it and name it.
    var isUTF8: Bool {
        guard let base = baseAddress else { return true }
        var index = 0
        while index + 8 <= count {
            if base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
            index += 8
        }
        while index < count, base.load(fromByteOffset: index, as: UInt8.self) < 0x80 { index += 1 }
        return index == count
            || String(validating: UnsafeRawBufferPointer(rebasing: self[index...]).assumingMemoryBound(to: UInt8.self), as: UTF8.self) != nil
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
