import CSodium

/// The one place libsodium gets initialised. Every entry point that touches
/// libsodium reads `Sodium.ready` first; Swift runs the initialiser once, thread-safely.
enum Sodium {
    static let ready: Void = {
        // sodium_init returns 1 when already initialised, -1 only when the
        // system offers no usable randomness; nothing safe can run after that.
        guard sodium_init() >= 0 else {
            fatalError("libsodium could not initialise (no system randomness available)")
        }
    }()
}

/// Cryptographically secure random bytes from libsodium.
package enum SecureRandom {
    /// Returns `count` random bytes from libsodium's generator.
    /// - Parameter count: how many bytes to produce.
    /// - Returns: the bytes.
    package static func bytes(count: Int) -> [UInt8] {
        Sodium.ready
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return out
    }

    /// Fills `buffer` (guarded memory, say) with random bytes from libsodium's generator.
    package static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        Sodium.ready
        if let base = buffer.baseAddress, buffer.count > 0 { randombytes_buf(base, buffer.count) }
    }

    /// A uniformly random number below `upperBound`, from libsodium's generator (no modulo bias).
    /// - Parameter upperBound: at least 1.
    /// - Returns: a number in `0..<upperBound`.
    package static func uniform(below upperBound: UInt32) -> UInt32 {
        Sodium.ready
        precondition(upperBound > 0, "an empty range has no random member")
        return randombytes_uniform(upperBound)
    }
}

/// Constant-time operations for comparing and erasing secrets.
package enum ConstantTime {
    /// Compares two byte sequences without leaking where they differ.
    /// - Returns: true when both have the same length and the same bytes.
    package static func equals(_ a: some ContiguousByteSource, _ b: some ContiguousByteSource) -> Bool {
        Sodium.ready
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                pa.count == pb.count
                    && (pa.count == 0 || sodium_memcmp(pa.baseAddress!, pb.baseAddress!, pa.count) == 0)
            }
        }
    }

    /// Overwrites a buffer's bytes with zeros in a way the compiler cannot elide.
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
    }

    /// Overwrites an array's bytes with zeros in a way the compiler cannot elide.
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
        }
    }
}

/// Types whose contiguous bytes can be read without copying.
package protocol ContiguousByteSource {
    /// Calls `body` with the bytes, valid only during the call.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}
extension Array: ContiguousByteSource where Element == UInt8 {}
extension ArraySlice: ContiguousByteSource where Element == UInt8 {}
/// Raw bytes are a byte source as they are.
extension UnsafeRawBufferPointer: ContiguousByteSource {
    /// Calls `body` with these bytes.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(self)
    }
}
