import CSodium

/// libsodium's `crypto_secretbox` (XSalsa20-Poly1305) written as `nonce ‖ box`, under a raw
/// 32-byte key in guarded memory, with empty plaintexts allowed: what the magic-wormhole client
/// protocol (the mailbox client) seals its phases with. The protocol lives there; the calls into
/// libsodium stay here, as every other one does.
package enum Secretbox {
    /// Bytes of a key.
    package static let keyByteCount = Int(crypto_secretbox_KEYBYTES)
    /// Bytes of a nonce.
    package static let nonceByteCount = Int(crypto_secretbox_NONCEBYTES)
    /// Bytes `seal` adds: the nonce and a 16-byte tag.
    package static let overheadByteCount = Int(crypto_secretbox_NONCEBYTES) + Int(crypto_secretbox_MACBYTES)

    /// Seals `plaintext` under `key` with a fresh random nonce.
    package static func seal(_ plaintext: some ContiguousByteSource, key: SecureBytes) -> [UInt8] {
        seal(plaintext, key: key, nonce: SecureRandom.bytes(count: nonceByteCount))
    }

    /// Seals with a given nonce, for test vectors only: a repeated nonce under one key loses secrecy.
    package static func seal(_ plaintext: some ContiguousByteSource, key: SecureBytes, nonce: [UInt8]) -> [UInt8] {
        Sodium.ready
        precondition(key.count == keyByteCount && nonce.count == nonceByteCount)
        let nonceCount = nonce.count
        return plaintext.withUnsafeBytes { message in
            [UInt8](unsafeUninitializedCapacity: message.count + overheadByteCount) { out, initialized in
                for index in 0..<nonceCount { out[index] = nonce[index] }
                key.withUnsafeBytes { key in
                    _ = crypto_secretbox_easy(
                        out.baseAddress! + nonceCount, message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        UInt64(message.count), nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
                initialized = message.count + overheadByteCount
            }
        }
    }

    /// The key does not open the box: another key, or altered bytes.
    package struct CannotOpen: Error {}

    /// Opens `nonce ‖ box` into guarded memory.
    /// - Returns: the plaintext; nil for an empty one.
    /// - Throws: `CannotOpen` when the key does not open it (another key, or altered bytes).
    package static func open(_ sealed: [UInt8], key: SecureBytes) throws(CannotOpen) -> SecureBytes? {
        Sodium.ready
        guard sealed.count >= overheadByteCount, key.count == keyByteCount else { throw CannotOpen() }
        let nonceCount = nonceByteCount
        let plaintextCount = sealed.count - overheadByteCount
        func open(into out: UnsafeMutablePointer<UInt8>?) -> Bool {
            sealed.withUnsafeBufferPointer { sealed in
                key.withUnsafeBytes { key in
                    crypto_secretbox_open_easy(
                        out, sealed.baseAddress! + nonceCount, UInt64(sealed.count - nonceCount),
                        sealed.baseAddress!, key.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
                }
            }
        }
        if plaintextCount == 0 {
            var nothing: UInt8 = 0
            guard open(into: &nothing) else { throw CannotOpen() }
            return nil
        }
        do {
            return try SecureBytes(count: plaintextCount) { out throws(CannotOpen) in
                guard open(into: out.baseAddress!.assumingMemoryBound(to: UInt8.self)) else { throw CannotOpen() }
            }
        } catch {
            throw CannotOpen()
        }
    }
}
