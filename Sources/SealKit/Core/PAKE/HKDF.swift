import CSodium

/// SHA-256 (FIPS 180-4) through libsodium's `crypto_hash_sha256`.
///
/// SPAKE2's transcript and magic-wormhole's phase purposes are SHA-256 digests; the inputs
/// hashed here are public or already-hashed values, so an ordinary array is the right result.
package enum SHA256 {
    /// The size of a digest in bytes.
    package static let byteCount = Int(crypto_hash_sha256_BYTES)

    /// Hashes `message`.
    /// - Parameter message: the bytes to hash.
    /// - Returns: the 32-byte digest.
    package static func hash(_ message: some ContiguousByteSource) -> [UInt8] {
        Sodium.ready
        var out = [UInt8](repeating: 0, count: byteCount)
        var empty: UInt8 = 0
        message.withUnsafeBytes { bytes in
            // An empty buffer may have no address; libsodium still wants a pointer.
            _ = crypto_hash_sha256(
                &out, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? withUnsafePointer(to: &empty) { $0 },
                UInt64(bytes.count))
        }
        return out
    }
}

/// HKDF with HMAC-SHA256 (RFC 5869), built on libsodium's `crypto_auth_hmacsha256`
/// because libsodium 1.0.18 has no HKDF of its own.
///
/// magic-wormhole derives every key from the SPAKE2 key this way (no salt, the purpose as
/// `info`), and python-spake2 turns a password into a scalar the same way.
package enum HKDF {
    /// The most output one derivation can give: 255 blocks of 32 bytes (RFC 5869 §2.3).
    package static let maximumOutputByteCount = 255 * SHA256.byteCount

    /// Derives `outputByteCount` bytes into guarded memory.
    ///
    /// - Parameters:
    ///   - inputKeyMaterial: the secret to derive from.
    ///   - salt: the extract step's salt; empty means RFC 5869's default of 32 zero bytes
    ///     (HMAC pads a short key with zeros, so both give the same result).
    ///   - info: the context, such as magic-wormhole's purpose string.
    ///   - outputByteCount: 1 through `maximumOutputByteCount`.
    /// - Returns: the output keying material, wiped when released.
    package static func deriveBytes(
        inputKeyMaterial: some ContiguousByteSource, salt: [UInt8] = [], info: [UInt8], outputByteCount: Int
    ) -> SecureBytes {
        Sodium.ready
        precondition((1...maximumOutputByteCount).contains(outputByteCount), "HKDF output length out of range")
        // Extract: PRK = HMAC(salt, IKM). The pseudo-random key is secret, so it lives in guarded memory.
        let prk = SecureBytes(count: SHA256.byteCount) { prk in
            salt.withUnsafeBytes { salt in
                inputKeyMaterial.withUnsafeBytes { ikm in hmac(key: salt, parts: [ikm], into: prk) }
            }
        }
        // Expand: T(i) = HMAC(PRK, T(i-1) || info || i). The blocks go one after another into one
        // guarded buffer, where each reads the one before it; the output is their first bytes.
        let blockCount = (outputByteCount + SHA256.byteCount - 1) / SHA256.byteCount
        let blocks = SecureBytes(count: blockCount * SHA256.byteCount) { blocks in
            prk.withUnsafeBytes { key in
                info.withUnsafeBytes { info in
                    for index in 0..<blockCount {
                        let start = index * SHA256.byteCount
                        let previous = UnsafeRawBufferPointer(
                            rebasing: blocks[max(0, start - SHA256.byteCount)..<start])
                        withUnsafeBytes(of: UInt8(index + 1)) { counter in
                            hmac(
                                key: key, parts: [previous, info, counter],
                                into: UnsafeMutableRawBufferPointer(rebasing: blocks[start..<start + SHA256.byteCount]))
                        }
                    }
                }
            }
        }
        return blocks.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(outputByteCount))) }
    }

    /// HMAC-SHA256 of the concatenated `parts` under `key`, written into `output` (32 bytes).
    /// libsodium's streaming interface hashes a key longer than the block size first, as RFC 2104 says.
    package static func hmac(
        key: UnsafeRawBufferPointer, parts: [UnsafeRawBufferPointer], into output: UnsafeMutableRawBufferPointer
    ) {
        precondition(output.count == SHA256.byteCount)
        var state = crypto_auth_hmacsha256_state()
        defer { withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress!, $0.count) } }
        if let base = key.baseAddress, key.count > 0 {
            _ = crypto_auth_hmacsha256_init(&state, base.assumingMemoryBound(to: UInt8.self), key.count)
        } else {
            // No salt: RFC 5869 uses HashLen zero bytes, which is what HMAC makes of an empty key.
            let zeros = [UInt8](repeating: 0, count: SHA256.byteCount)
            _ = crypto_auth_hmacsha256_init(&state, zeros, zeros.count)
        }
        for part in parts where part.count > 0 {
            _ = crypto_auth_hmacsha256_update(
                &state, part.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(part.count))
        }
        _ = crypto_auth_hmacsha256_final(&state, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
}
