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
            return try SecureBytes.allocate(count: sealed.count - FieldCipher.minimumByteCount) { out in
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

/// XChaCha20-Poly1305 (IETF) for records that are secret in part and public in part: the
/// secret bytes are encrypted, and the public bytes (a file's header) are authenticated as
/// associated data, so neither can be changed without the key. Layout: nonce (24 bytes) ‖
/// ciphertext ‖ tag (16 bytes). The 192-bit nonce is random, so it never repeats in practice.
package enum RecordSeal {
    /// Bytes added to the secret: nonce and tag.
    package static let overheadByteCount =
        Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES) + Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// Seals `secret`, authenticating `associatedData` with it.
    package static func seal(
        _ secret: SecureBytes, authenticating associatedData: [UInt8], using key: SymmetricKey
    ) -> [UInt8] {
        Sodium.ready
        let nonceCount = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        let count = overheadByteCount + secret.count
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            let base = out.baseAddress!
            randombytes_buf(base, nonceCount)
            var written: UInt64 = 0
            secret.withUnsafeBytes { message in
                key.storage.withUnsafeBytes { keyBytes in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        base + nonceCount, &written,
                        message.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                        associatedData, UInt64(associatedData.count), nil, base,
                        keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            initialized = nonceCount + Int(written)
        }
    }

    /// Opens a sealed record into guarded memory.
    /// - Throws: `CiphertextError.authenticationFailed` for a wrong key, or when the sealed
    ///   bytes or the associated data were changed; `.tooShort` for fewer bytes than the overhead.
    package static func open(
        _ sealed: [UInt8], authenticating associatedData: [UInt8], using key: SymmetricKey
    ) throws(CiphertextError) -> SecureBytes {
        Sodium.ready
        let nonceCount = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        guard sealed.count > overheadByteCount else { throw .tooShort(byteCount: sealed.count) }
        do {
            return try SecureBytes.allocate(count: sealed.count - overheadByteCount) { out in
                var opened: UInt64 = 0
                let status = sealed.withUnsafeBufferPointer { box in
                    key.storage.withUnsafeBytes { keyBytes in
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            out.baseAddress!.assumingMemoryBound(to: UInt8.self), &opened, nil,
                            box.baseAddress! + nonceCount, UInt64(box.count - nonceCount),
                            associatedData, UInt64(associatedData.count), box.baseAddress!,
                            keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
                guard status == 0, Int(opened) == out.count else { throw CiphertextError.authenticationFailed }
            }
        } catch {
            throw .authenticationFailed
        }
    }

    /// A value that tells a wrong passphrase from a tampered record: keyed BLAKE2b of a
    /// fixed label under the passphrase-derived key. It lets no one test a guess faster
    /// than the sealed record itself does.
    package static func passphraseCheck(for key: SymmetricKey) -> [UInt8] {
        Sodium.ready
        var out = [UInt8](repeating: 0, count: 16)
        let label = Array("SealKit key file passphrase check v2".utf8)
        key.storage.withUnsafeBytes { keyBytes in
            _ = crypto_generichash(
                &out, out.count, label, UInt64(label.count),
                keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes.count)
        }
        return out
    }
}
