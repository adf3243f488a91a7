import CSodium

/// Field encryption in Rownd's wire format: XSalsa20-Poly1305 (libsodium secretbox),
/// written as standard base64 of `nonce (24 bytes) ‖ tag (16) ‖ encrypted bytes`.
///
/// Ciphertexts made here decrypt in Rownd's iOS and Android SDKs and with any
/// libsodium binding (PyNaCl's `SecretBox` reads the same layout), and the reverse.
public enum FieldCipher {
    /// Bytes of the random nonce that starts every ciphertext.
    public static let nonceByteCount = Int(crypto_secretbox_NONCEBYTES)
    /// Bytes of the Poly1305 tag that follows the nonce.
    public static let tagByteCount = Int(crypto_secretbox_MACBYTES)
    /// The smallest possible ciphertext: a nonce and a tag around an empty plaintext.
    public static let minimumByteCount = nonceByteCount + tagByteCount

    /// Encrypts a string's UTF-8 bytes under `key` with a fresh random nonce.
    /// - Parameters:
    ///   - plaintext: the text to protect.
    ///   - key: the key to encrypt with.
    /// - Returns: the ciphertext as base64 text.
    public static func encrypt(_ plaintext: String, using key: SymmetricKey) -> String {
        var plaintext = plaintext
        return plaintext.withUTF8 { encrypt(bytes: UnsafeRawBufferPointer($0), using: key) }
    }

    /// Encrypts raw bytes under `key` with a fresh random nonce.
    /// - Returns: the ciphertext as base64 text.
    public static func encrypt(bytes plaintext: UnsafeRawBufferPointer, using key: SymmetricKey) -> String {
        Sodium.ready
        let sealedCount = minimumByteCount + plaintext.count
        let textCount = Base64.encodedLength(of: sealedCount)
        // One scratch buffer for the binary box, then encode straight into the string.
        let sealed = UnsafeMutableRawBufferPointer.allocate(byteCount: sealedCount, alignment: 16)
        defer { sealed.deallocate() }
        let base = sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
        randombytes_buf(base, nonceByteCount)
        key.storage.withUnsafeBytes { keyBytes in
            _ = crypto_secretbox_easy(
                base + nonceByteCount,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(base), UInt64(plaintext.count),
                base, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return String(unsafeUninitializedCapacity: textCount) { output in
            Base64.encode(UnsafeRawBufferPointer(sealed), into: UnsafeMutableRawBufferPointer(output))
            return textCount
        }
    }

    /// Decrypts a ciphertext to text.
    /// - Parameters:
    ///   - ciphertext: base64 of nonce, tag and encrypted bytes.
    ///   - key: the key it was made with.
    /// - Returns: the plaintext.
    /// - Throws: `CiphertextError` naming what is wrong: not base64, too short,
    ///   failed authentication, or a plaintext that is not UTF-8.
    public static func decrypt(_ ciphertext: String, using key: SymmetricKey) throws(CiphertextError) -> String {
        try decrypt(ciphertext, usingAnyOf: [key]).plaintext
    }

    /// Decrypts a ciphertext with the first of `keys` that authenticates it.
    ///
    /// Poly1305 authentication makes the choice unambiguous: a wrong key fails
    /// rather than yielding a wrong plaintext.
    /// - Returns: the plaintext and the index in `keys` of the key that opened it.
    public static func decrypt(
        _ ciphertext: String, usingAnyOf keys: [SymmetricKey]
    ) throws(CiphertextError) -> (plaintext: String, keyIndex: Int) {
        let (bytes, index) = try decryptBytes(ciphertext, usingAnyOf: keys)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        return (text, index)
    }

    /// Decrypts a ciphertext to bytes with the first of `keys` that authenticates it.
    /// - Returns: the plaintext bytes and the index of the key that opened them.
    public static func decryptBytes(
        _ ciphertext: String, usingAnyOf keys: [SymmetricKey]
    ) throws(CiphertextError) -> (bytes: [UInt8], keyIndex: Int) {
        let sealed = try decode(ciphertext)
        return try open(sealed, usingAnyOf: keys)
    }

    /// Decodes a ciphertext's text to its binary form, checking only its shape.
    /// - Returns: nonce, tag and encrypted bytes.
    /// - Throws: `.notBase64` or `.tooShort`.
    public static func decode(_ ciphertext: String) throws(CiphertextError) -> [UInt8] {
        guard let sealed = Base64.decode(ciphertext) else { throw .notBase64 }
        guard sealed.count >= minimumByteCount else { throw .tooShort(byteCount: sealed.count) }
        return sealed
    }

    /// Opens a decoded ciphertext with the first of `keys` that authenticates it.
    public static func open(
        _ sealed: [UInt8], usingAnyOf keys: [SymmetricKey]
    ) throws(CiphertextError) -> (bytes: [UInt8], keyIndex: Int) {
        Sodium.ready
        guard sealed.count >= minimumByteCount else { throw .tooShort(byteCount: sealed.count) }
        let plainCount = sealed.count - minimumByteCount
        var opened: Int?
        let plaintext = [UInt8](unsafeUninitializedCapacity: Swift.max(plainCount, 1)) { out, initialized in
            sealed.withUnsafeBufferPointer { box in
                let nonce = box.baseAddress!
                for (index, key) in keys.enumerated() {
                    let status = key.storage.withUnsafeBytes { keyBytes in
                        crypto_secretbox_open_easy(
                            out.baseAddress!, nonce + nonceByteCount, UInt64(box.count - nonceByteCount),
                            nonce, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                    if status == 0 {
                        opened = index
                        break
                    }
                }
            }
            initialized = opened == nil ? 0 : plainCount
        }
        guard let opened else { throw .authenticationFailed }
        return (plaintext, opened)
    }
}

/// What is wrong with a ciphertext.
public enum CiphertextError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not standard base64 with padding.
    case notBase64
    /// The decoded bytes cannot hold a nonce and a tag.
    case tooShort(byteCount: Int)
    /// No key given authenticates it: a wrong key, or tampered data.
    case authenticationFailed
    /// It decrypted, but the plaintext is not UTF-8 text.
    case notUTF8

    public var description: String {
        switch self {
        case .notBase64:
            return "not base64: a ciphertext is standard base64 with padding"
        case .tooShort(let count):
            return "too short to be a ciphertext (\(count) bytes, need at least \(FieldCipher.minimumByteCount))"
        case .authenticationFailed:
            return "authentication failed: wrong key or tampered data"
        case .notUTF8:
            return "decrypted data is not UTF-8 text"
        }
    }
}
