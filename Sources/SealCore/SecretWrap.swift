import CSodium

/// Secretbox for secrets: seals bytes that are themselves secret (a key, a bundle of
/// keys) and opens them straight into guarded memory, so no plaintext copy is left
/// in ordinary memory. Layout as in `FieldCipher`: nonce ‖ tag ‖ encrypted bytes.
package enum SecretWrap {
    /// Seals `secret` under `key` with a fresh random nonce.
    package static func seal(_ secret: SecureBytes, using key: SymmetricKey) -> [UInt8] {
        Sodium.ready
        let count = FieldCipher.minimumByteCount + secret.count
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            let base = out.baseAddress!
            randombytes_buf(base, FieldCipher.nonceByteCount)
            secret.withUnsafeBytes { message in
                key.storage.withUnsafeBytes { keyBytes in
                    _ = crypto_secretbox_easy(
                        base + FieldCipher.nonceByteCount,
                        message.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                        base, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            initialized = count
        }
    }

    /// Opens a sealed secret into guarded memory.
    /// - Throws: `CiphertextError.authenticationFailed` for a wrong key or tampered bytes.
    package static func open(_ sealed: [UInt8], using key: SymmetricKey) throws(CiphertextError) -> SecureBytes {
        Sodium.ready
        guard sealed.count > FieldCipher.minimumByteCount else { throw .tooShort(byteCount: sealed.count) }
        do {
            return try SecureBytes(count: sealed.count - FieldCipher.minimumByteCount) { out in
                let status = sealed.withUnsafeBufferPointer { box in
                    key.storage.withUnsafeBytes { keyBytes in
                        crypto_secretbox_open_easy(
                            out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            box.baseAddress! + FieldCipher.nonceByteCount,
                            UInt64(box.count - FieldCipher.nonceByteCount), box.baseAddress!,
                            keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
                guard status == 0 else { throw CiphertextError.authenticationFailed }
            }
        } catch {
            throw .authenticationFailed
        }
    }
}
