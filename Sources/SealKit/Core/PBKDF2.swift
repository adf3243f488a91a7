import CSodium

/// PBKDF2 with HMAC-SHA256 (RFC 8018 §5.2), built on libsodium's `crypto_auth_hmacsha256`, which
/// has no PBKDF2 of its own. SLIP-39's Feistel rounds use it; `Tests/SealKitTests/Core` pins it against
/// Python's `hashlib.pbkdf2_hmac`.
package enum PBKDF2 {
    /// Derives `output.count` bytes from `password` and `salt` with `iterations` rounds, writing them
    /// into `output` (the caller's, guarded when the result is secret).
    /// - Precondition: `iterations` ≥ 1.
    package static func sha256(
        password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, iterations: Int, into output: UnsafeMutableRawBufferPointer
    ) {
        Sodium.ready
        precondition(iterations >= 1)
        // HMAC's key schedule depends on the password alone: it is done once and its state copied
        // for every block and iteration.
        var keyed = crypto_auth_hmacsha256_state()
        defer { withUnsafeMutableBytes(of: &keyed) { sodium_memzero($0.baseAddress!, $0.count) } }
        var empty: UInt8 = 0
        withUnsafePointer(to: &empty) { emptyPointer in
            _ = crypto_auth_hmacsha256_init(
                &keyed, password.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, password.count)
        }
        let blockBytes = SHA256.byteCount
        withUnsafeTemporaryAllocation(byteCount: 2 * blockBytes, alignment: 16) { scratch in
            defer { sodium_memzero(scratch.baseAddress!, scratch.count) }
            let u = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let t = u + blockBytes
            var block: UInt32 = 1
            var written = 0
            while written < output.count {
                var state = keyed
                if salt.count > 0 {
                    _ = crypto_auth_hmacsha256_update(&state, salt.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(salt.count))
                }
                var counter = block.bigEndian
                withUnsafeBytes(of: &counter) {
                    _ = crypto_auth_hmacsha256_update(&state, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 4)
                }
                _ = crypto_auth_hmacsha256_final(&state, u)
                t.update(from: u, count: blockBytes)
                for _ in 1..<iterations {
                    state = keyed
                    _ = crypto_auth_hmacsha256_update(&state, u, UInt64(blockBytes))
                    _ = crypto_auth_hmacsha256_final(&state, u)
                    for i in 0..<blockBytes { t[i] ^= u[i] }
                }
                withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress!, $0.count) }
                let take = min(blockBytes, output.count - written)
                (output.baseAddress! + written).copyMemory(from: t, byteCount: take)
                written += take
                block += 1
            }
        }
    }

    /// `sha256(password:salt:iterations:into:)` into a new array, for tests and public inputs.
    package static func sha256(password: [UInt8], salt: [UInt8], iterations: Int, byteCount: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: byteCount)
        password.withUnsafeBytes { password in
            salt.withUnsafeBytes { salt in
                output.withUnsafeMutableBytes { sha256(password: password, salt: salt, iterations: iterations, into: $0) }
            }
        }
        return output
    }
}
