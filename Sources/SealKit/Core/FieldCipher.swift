import CSodium

/// Field encryption in Rownd's wire format: XSalsa20-Poly1305 (libsodium secretbox),
/// written as standard base64 of `nonce (24 bytes) ‖ tag (16) ‖ encrypted bytes`.
///
/// Ciphertexts made here decrypt in Rownd's iOS and Android SDKs and with any
/// libsodium binding (PyNaCl's `SecretBox` reads the same layout), and the reverse.
package enum FieldCipher {
    /// Bytes of the random nonce that starts every ciphertext.
    package static let nonceByteCount = Int(crypto_secretbox_NONCEBYTES)
    /// Bytes of the Poly1305 tag that follows the nonce.
    package static let tagByteCount = Int(crypto_secretbox_MACBYTES)
    /// The smallest possible ciphertext: a nonce and a tag around an empty plaintext.
    package static let minimumByteCount = nonceByteCount + tagByteCount

    /// Encrypts a string's UTF-8 bytes under `key` with a fresh random nonce.
    /// - Parameters:
    ///   - plaintext: the text to protect.
    ///   - key: the key to encrypt with.
    /// - Returns: the ciphertext as base64 text.
    package static func encrypt(_ plaintext: String, using key: SymmetricKey) -> String {
        var plaintext = plaintext
        return plaintext.withUTF8 { encrypt(bytes: UnsafeRawBufferPointer($0), using: key) }
    }

    /// Encrypts raw bytes under `key` with a fresh random nonce.
    /// - Returns: the ciphertext as base64 text.
    package static func encrypt(bytes plaintext: UnsafeRawBufferPointer, using key: SymmetricKey) -> String {
        let textCount = ciphertextLength(forPlaintextByteCount: plaintext.count)
        return String(unsafeUninitializedCapacity: textCount) { output in
            encrypt(bytes: plaintext, using: key, into: UnsafeMutableRawBufferPointer(output))
            return textCount
        }
    }

    /// The length of the base64 text of a ciphertext for `byteCount` plaintext bytes.
    package static func ciphertextLength(forPlaintextByteCount byteCount: Int) -> Int {
        Base64.encodedLength(of: minimumByteCount + byteCount)
    }

    /// Encrypts raw bytes and writes the ciphertext's base64 text into `output`, with a nonce of its
    /// own straight from libsodium.
    /// - Parameters:
    ///   - plaintext: the bytes to protect.
    ///   - key: the key to encrypt with.
    ///   - output: exactly `ciphertextLength(forPlaintextByteCount: plaintext.count)` bytes.
    package static func encrypt(
        bytes plaintext: UnsafeRawBufferPointer, using key: SymmetricKey, into output: UnsafeMutableRawBufferPointer
    ) {
        Sodium.ready
        seal(plaintext, using: key, into: output) { randombytes_buf($0, nonceByteCount) }
    }

    /// Encrypts raw bytes and writes the ciphertext's base64 text into `output`, taking the nonce from
    /// the operation's batch, for bulk paths that build their output in place (`--lines`, profiles).
    /// - Parameters:
    ///   - plaintext: the bytes to protect.
    ///   - key: the key to encrypt with.
    ///   - nonces: the current operation's nonces.
    ///   - output: exactly `ciphertextLength(forPlaintextByteCount: plaintext.count)` bytes.
    package static func encrypt(
        bytes plaintext: UnsafeRawBufferPointer, using key: SymmetricKey, nonces: inout NonceBatch,
        into output: UnsafeMutableRawBufferPointer
    ) {
        seal(plaintext, using: key, into: output) { nonces.take(into: $0) }
    }

    private static func seal(
        _ plaintext: UnsafeRawBufferPointer, using key: SymmetricKey, into output: UnsafeMutableRawBufferPointer,
        nonce: (UnsafeMutableRawPointer) -> Void
    ) {
        let sealedCount = minimumByteCount + plaintext.count
        precondition(output.count == Base64.encodedLength(of: sealedCount))
        // The binary box is made in the output's last bytes, then turned into base64 in place: no scratch buffer,
        // which for a large value was a fresh allocation (and its page faults) per value.
        let sealed = output.baseAddress! + (output.count - sealedCount)
        let base = sealed.assumingMemoryBound(to: UInt8.self)
        nonce(sealed)
        key.storage.withUnsafeBytes { keyBytes in
            _ = crypto_secretbox_easy(
                base + nonceByteCount,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(base),
                UInt64(plaintext.count), base, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        Base64.encodeInPlace(output, byteCount: sealedCount)
    }

    /// Decrypts a ciphertext to text.
    /// - Parameters:
    ///   - ciphertext: base64 of nonce, tag and encrypted bytes.
    ///   - key: the key it was made with.
    /// - Returns: the plaintext.
    /// - Throws: `CiphertextError` naming what is wrong: not base64, too short,
    ///   failed authentication, or a plaintext that is not UTF-8.
    package static func decrypt(_ ciphertext: String, using key: SymmetricKey) throws(CiphertextError) -> String {
        try decrypt(ciphertext, usingAnyOf: CollectionOfOne(key)).plaintext
    }

    /// Decrypts a ciphertext with the first of `keys` that authenticates it.
    ///
    /// Poly1305 authentication makes the choice unambiguous: a wrong key fails
    /// rather than yielding a wrong plaintext.
    /// - Returns: the plaintext and the index in `keys` of the key that opened it.
    package static func decrypt(
        _ ciphertext: String, usingAnyOf keys: [SymmetricKey]
    ) throws(CiphertextError) -> (plaintext: String, keyIndex: Int) {
        try decrypt(ciphertext, usingAnyOf: keys[...])
    }

    /// Decrypts with the first key of any collection, so callers with a key ring need
    /// not build an array per call.
    static func decrypt(
        _ ciphertext: String, usingAnyOf keys: some Collection<SymmetricKey>
    ) throws(CiphertextError) -> (plaintext: String, keyIndex: Int) {
        var ciphertext = ciphertext
        // `withUTF8` rethrows untyped errors, so the typed one travels in a Result.
        return try ciphertext.withUTF8 { text in
            Result { () throws(CiphertextError) in try decrypt(utf8: UnsafeRawBufferPointer(text), usingAnyOf: keys) }
        }.get()
    }

    /// Decrypts the UTF-8 bytes of a ciphertext's text with the first of `keys` that
    /// authenticates it, for bulk paths that read text without making a `String`.
    /// - Returns: the plaintext and the index in `keys` of the key that opened it.
    /// - Throws: `CiphertextError`, as `decrypt(_:usingAnyOf:)`.
    package static func decrypt(
        utf8 text: UnsafeRawBufferPointer, usingAnyOf keys: some Collection<SymmetricKey>
    ) throws(CiphertextError) -> (plaintext: String, keyIndex: Int) {
        Sodium.ready
        guard let sealedCount = Base64.decodedLength(of: text) else { throw .notBase64 }
        // Decode to scratch space (on the stack when small), then open straight into the
        // result's storage, checking UTF-8 before the string exists.
        return try withUnsafeTemporaryAllocation(byteCount: Swift.max(sealedCount, 1), alignment: 16) {
            (scratch) throws(CiphertextError) in
            let sealed = UnsafeMutableRawBufferPointer(rebasing: scratch[..<sealedCount])
            guard Base64.decode(text, into: sealed) else { throw .notBase64 }
            guard sealedCount >= minimumByteCount else { throw .tooShort(byteCount: sealedCount) }
            let box = UnsafeRawBufferPointer(sealed)
            let plainCount = sealedCount - minimumByteCount
            var opened: Int?
            var isText = true
            if plainCount == 0 {
                var empty: UInt8 = 0
                opened = open(box, usingAnyOf: keys, into: &empty)
                guard let opened else { throw .authenticationFailed }
                return ("", opened)
            }
            let plaintext = String(unsafeUninitializedCapacity: plainCount) { output in
                opened = open(box, usingAnyOf: keys, into: output.baseAddress!)
                guard opened != nil else { return 0 }
                isText = UTF8Validation.isValid(UnsafeRawBufferPointer(output))
                return isText ? plainCount : 0
            }
            guard let opened else { throw .authenticationFailed }
            guard isText else { throw .notUTF8 }
            return (plaintext, opened)
        }
    }

    /// Decrypts a ciphertext to bytes with the first of `keys` that authenticates it.
    /// - Returns: the plaintext bytes and the index of the key that opened them.
    package static func decryptBytes(
        _ ciphertext: String, usingAnyOf keys: [SymmetricKey]
    ) throws(CiphertextError) -> (bytes: [UInt8], keyIndex: Int) {
        let sealed = try decode(ciphertext)
        return try open(sealed, usingAnyOf: keys)
    }

    /// Decodes a ciphertext's text to its binary form, checking only its shape.
    /// - Returns: nonce, tag and encrypted bytes.
    /// - Throws: `.notBase64` or `.tooShort`.
    package static func decode(_ ciphertext: String) throws(CiphertextError) -> [UInt8] {
        guard let sealed = Base64.decode(ciphertext) else { throw .notBase64 }
        guard sealed.count >= minimumByteCount else { throw .tooShort(byteCount: sealed.count) }
        return sealed
    }

    /// Opens a decoded ciphertext with the first of `keys` that authenticates it.
    package static func open(
        _ sealed: [UInt8], usingAnyOf keys: [SymmetricKey]
    ) throws(CiphertextError) -> (bytes: [UInt8], keyIndex: Int) {
        Sodium.ready
        guard sealed.count >= minimumByteCount else { throw .tooShort(byteCount: sealed.count) }
        let plainCount = sealed.count - minimumByteCount
        var opened: Int?
        let plaintext = [UInt8](unsafeUninitializedCapacity: Swift.max(plainCount, 1)) { out, initialized in
            opened = sealed.withUnsafeBytes { open($0, usingAnyOf: keys, into: out.baseAddress!) }
            initialized = opened == nil ? 0 : plainCount
        }
        guard let opened else { throw .authenticationFailed }
        return (plaintext, opened)
    }

    /// Opens `box` (nonce ‖ tag ‖ body, at least `minimumByteCount` bytes) into `output`,
    /// which holds `box.count - minimumByteCount` bytes.
    /// - Returns: the offset in `keys` of the key that authenticated it, or nil.
    private static func open(
        _ box: UnsafeRawBufferPointer, usingAnyOf keys: some Collection<SymmetricKey>, into output: UnsafeMutablePointer<UInt8>
    ) -> Int? {
        let nonce = box.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for (index, key) in keys.enumerated() {
            let status = key.storage.withUnsafeBytes { keyBytes in
                crypto_secretbox_open_easy(
                    output, nonce + nonceByteCount, UInt64(box.count - nonceByteCount),
                    nonce, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            if status == 0 { return index }
        }
        return nil
    }
}

/// UTF-8 validation for bytes that are about to become text.
package enum UTF8Validation {
    /// Whether `bytes` are well-formed UTF-8. ASCII, the common case, is checked a word
    /// at a time; anything else goes through the standard library's validator.
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var i = 0
        while i &+ 8 <= count {
            if base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
            i &+= 8
        }
        while i < count, base.load(fromByteOffset: i, as: UInt8.self) < 0x80 { i &+= 1 }
        if i == count { return true }
        // Everything before `i` is ASCII, so `i` starts a scalar.
        let rest = UnsafeRawBufferPointer(rebasing: bytes[i...]).assumingMemoryBound(to: UInt8.self)
        return String(validating: rest, as: UTF8.self) != nil
    }
}

/// What is wrong with a ciphertext.
package enum CiphertextError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not standard base64 with padding.
    case notBase64
    /// The decoded bytes cannot hold a nonce and a tag.
    case tooShort(byteCount: Int)
    /// No key given authenticates it: a wrong key, or tampered data.
    case authenticationFailed
    /// It decrypted, but the plaintext is not UTF-8 text.
    case notUTF8
    /// A v2 ciphertext whose body is too short for its header, nonce and tag.
    case truncated(byteCount: Int)
    /// SealKit's prefix, or a body, of a format version this SealKit does not read.
    case unsupportedVersion
    /// A v2 ciphertext sealed under a key none of the given keys is: the fingerprint in its header.
    case unknownKey(KeyFingerprint)
    /// A v2 ciphertext under one of the given keys, but sealed for another id, field or context.
    case sealedForAnotherPlace
    /// The body of a v2 ciphertext under one of the given keys with its `sk2:` prefix removed; it
    /// never opens as v1.
    case headerStripped
    /// A well-formed v1 value where only v2 opens (a field the schema makes v2, a caller's
    /// context): v1 names no place, so it could have been copied from any field.
    case notBound

    package var description: String {
        switch self {
        case .notBase64:
            return "not base64: a ciphertext is standard base64 with padding"
        case .tooShort(let count):
            return "too short to be a ciphertext (\(count) bytes, need at least \(FieldCipher.minimumByteCount))"
        case .authenticationFailed:
            return "authentication failed: wrong key or tampered data"
        case .notUTF8:
            return "decrypted data is not UTF-8 text"
        case .truncated(let count):
            return "too short to be a v2 ciphertext (\(count) bytes, need at least \(BoundCipher.minimumByteCount))"
        case .unsupportedVersion:
            return "not a ciphertext format this SealKit reads (it reads v1 and v2, 'sk2:')"
        case .unknownKey(let tag):
            return "sealed under key \(tag), which this keystore does not have"
        case .sealedForAnotherPlace:
            return "sealed for another field or user: the ciphertext was moved"
        case .headerStripped:
            return "a v2 ciphertext stripped of its 'sk2:' header, which does not open as v1"
        case .notBound:
            return "not bound to this place: a v1 value names no field or context, and only v2 opens here"
        }
    }
}
