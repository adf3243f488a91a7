import CSodium

/// A 256-bit secret key for field encryption (XSalsa20-Poly1305).
///
/// The bytes live in libsodium guarded memory and are wiped when the last copy of
/// the key goes away. Printing, dumping or interpolating a key shows only its
/// fingerprint; the bytes leave only through the package's explicit export paths
/// (key transfer and backup).
package struct SymmetricKey: Sendable {
    /// The size of a key in bytes.
    package static let byteCount = Int(crypto_secretbox_KEYBYTES)

    package let storage: SecureBytes

    package init(storage: SecureBytes) {
        precondition(storage.count == Self.byteCount)
        self.storage = storage
    }

    /// Makes a new random key with libsodium's `crypto_secretbox_keygen`.
    /// - Returns: the key.
    package static func generate() -> SymmetricKey {
        Sodium.ready
        let storage = SecureBytes(count: byteCount) { buffer in
            crypto_secretbox_keygen(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return SymmetricKey(storage: storage)
    }

    /// Reads a key from its text form: standard base64 with padding, 44 characters.
    ///
    /// Decoding runs in constant time and writes straight into guarded memory.
    /// - Parameter text: the base64 characters; the caller should wipe its copy.
    /// - Throws: `KeyFormatError` when the text is not a 32-byte base64 key.
    package init(base64Encoded text: some ContiguousByteSource) throws(KeyFormatError) {
        Sodium.ready
        let storage: SecureBytes? = text.withUnsafeBytes { raw in
            guard raw.count == Base64.encodedLength(of: Self.byteCount) else { return nil }
            return try? SecureBytes(count: Self.byteCount) { buffer in
                var decoded = 0
                var end: UnsafePointer<CChar>?
                let status = raw.withMemoryRebound(to: CChar.self) { chars in
                    sodium_base642bin(
                        buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), buffer.count,
                        chars.baseAddress, chars.count, nil, &decoded, &end,
                        sodium_base64_VARIANT_ORIGINAL)
                }
                let consumedAll = end.map { $0 == raw.baseAddress!.assumingMemoryBound(to: CChar.self) + raw.count } ?? false
                guard status == 0, decoded == Self.byteCount, consumedAll else { throw KeyFormatError.notAKey }
            }
        }
        guard let storage else { throw KeyFormatError.notAKey }
        self.init(storage: storage)
    }

    /// Reads a key from its text form. Prefer the byte overload where the text can be wiped.
    package init(base64Encoded text: String) throws(KeyFormatError) {
        var bytes = Array(text.utf8)
        defer { ConstantTime.wipe(&bytes) }
        try self.init(base64Encoded: bytes)
    }

    /// Makes `count` keys that share ONE guarded allocation, so a ring of thousands of keys
    /// costs a few memory mappings rather than three per key.
    /// - Parameters:
    ///   - count: how many keys.
    ///   - fill: writes key `index`'s 32 bytes into the buffer it is given.
    /// - Throws: `SecureMemoryError` when the memory cannot be had, or what `fill` throws.
    package static func batch(
        count: Int, fill: (_ index: Int, _ key: UnsafeMutableRawBufferPointer) throws -> Void
    ) throws -> [SymmetricKey] {
        guard count > 0 else { return [] }
        let storage = try SecureBytes.allocate(count: count * byteCount) { buffer in
            for index in 0..<count {
                try fill(index, UnsafeMutableRawBufferPointer(rebasing: buffer[(index * byteCount)..<((index + 1) * byteCount)]))
            }
        }
        return (0..<count).map { SymmetricKey(storage: storage.slice((($0) * byteCount)..<(($0 + 1) * byteCount))) }
    }

    /// The keys held back to back in `storage` (a multiple of 32 bytes), as views of it:
    /// no further allocation.
    package static func keys(slicing storage: SecureBytes) -> [SymmetricKey] {
        precondition(storage.count % byteCount == 0)
        return (0..<(storage.count / byteCount)).map {
            SymmetricKey(storage: storage.slice(($0 * byteCount)..<(($0 + 1) * byteCount)))
        }
    }

    /// Makes a key from 32 raw bytes.
    package init(bytes: some ContiguousByteSource) throws(KeyFormatError) {
        guard bytes.withUnsafeBytes({ $0.count }) == Self.byteCount else { throw KeyFormatError.notAKey }
        self.init(storage: SecureBytes(copying: bytes))
    }

    /// The key as padded standard base64, encoded in constant time. An export path:
    /// only key transfer and backup call it.
    package func base64EncodedBytes() -> SecureBytes {
        let length = Base64.encodedLength(of: Self.byteCount)
        // libsodium writes a terminating NUL; encode into room for it, then keep the text alone.
        let terminated = SecureBytes(count: length + 1) { buffer in
            storage.withUnsafeBytes { key in
                _ = sodium_bin2base64(
                    buffer.baseAddress!.assumingMemoryBound(to: CChar.self), buffer.count,
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count,
                    sodium_base64_VARIANT_ORIGINAL)
            }
        }
        return terminated.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
    }

    /// A short, non-secret identifier of the key for people to compare, such as `3f9a:07c2:d41e:8b65`.
    package var fingerprint: KeyFingerprint { KeyFingerprint(of: storage) }
}

extension SymmetricKey: Equatable {
    /// Compares two keys in constant time.
    package static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        ConstantTime.equals(lhs.storage, rhs.storage)
    }
}

extension SymmetricKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "SymmetricKey(fingerprint: \(fingerprint))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["fingerprint": fingerprint.description]) }
}

/// Text that is not a key.
package enum KeyFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not 32 bytes in standard base64 with padding.
    case notAKey

    package var description: String {
        "not a key: expected 32 bytes as standard base64 with padding (44 characters)"
    }
}

/// A short, non-secret digest of a key for people to compare on two screens.
///
/// BLAKE2b over the key, keyed with a SealKit-specific label so the value is useless
/// as a digest of the key anywhere else; 8 bytes shown as four groups of hex.
public struct KeyFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The digest bytes.
    package let bytes: [UInt8]

    /// A fingerprint as stored beside a key that is still locked.
    package init(bytes: [UInt8]) { self.bytes = bytes }

    package init(of secret: SecureBytes) {
        Sodium.ready
        var out = [UInt8](repeating: 0, count: 8)
        let label = Array("SealKit key fingerprint v1".utf8)
        secret.withUnsafeBytes { key in
            _ = crypto_generichash(
                &out, out.count, key.baseAddress!.assumingMemoryBound(to: UInt8.self),
                UInt64(key.count), label, label.count)
        }
        bytes = out
    }

    /// A fingerprint in the form `description` writes, and only that form (lowercase hex in groups of four).
    package init?(text: String) {
        guard text.utf8.count == 19, let bytes = Hex.decode(text.split(separator: ":").joined()), bytes.count == 8 else { return nil }
        self.bytes = bytes
        guard description == text else { return nil }
    }

    /// Hex in groups of four, such as `3f9a:07c2:d41e:8b65`.
    public var description: String {
        let hex = Array(Hex.encode(bytes).utf8)
        return stride(from: 0, to: hex.count, by: 4).map { String(decoding: hex[$0..<min($0 + 4, hex.count)], as: UTF8.self) }
            .joined(separator: ":")
    }
}
