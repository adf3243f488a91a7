import CSodium

/// An X25519 key pair for receiving sealed boxes. The secret half lives in guarded memory.
package struct BoxKeyPair: Sendable, CustomStringConvertible {
    /// Bytes of a public key.
    package static let publicKeyByteCount = Int(crypto_box_PUBLICKEYBYTES)

    /// The public half, safe to show and send.
    package let publicKey: [UInt8]
    package let secretKey: SecureBytes

    /// Makes a fresh key pair with libsodium's randomness.
    package static func generate() -> BoxKeyPair {
        Sodium.ready
        var publicKey = [UInt8](repeating: 0, count: publicKeyByteCount)
        let secretKey = SecureBytes(count: Int(crypto_box_SECRETKEYBYTES)) { secret in
            _ = crypto_box_keypair(&publicKey, secret.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return BoxKeyPair(publicKey: publicKey, secretKey: secretKey)
    }

    package var description: String { "BoxKeyPair(public: \(Base64.encode(publicKey)))" }
}

/// Anonymous sealed boxes (`crypto_box_seal`): only the holder of the recipient's
/// secret key can open one; the sender stays anonymous, so callers that need to know
/// who sent a box must prove it inside.
package enum SealedBox {
    /// Bytes a sealed box adds to its message.
    package static let overheadByteCount = crypto_box_sealbytes()

    /// Seals secret bytes to a recipient's public key.
    /// - Throws: `SealedBoxError.badPublicKey` for a key of the wrong size or one libsodium rejects.
    package static func seal(_ secret: SecureBytes, to publicKey: [UInt8]) throws(SealedBoxError) -> [UInt8] {
        Sodium.ready
        guard publicKey.count == BoxKeyPair.publicKeyByteCount else { throw .badPublicKey }
        var box = [UInt8](repeating: 0, count: secret.count + overheadByteCount)
        let status = secret.withUnsafeBytes { message in
            crypto_box_seal(
                &box, message.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(message.count), publicKey)
        }
        guard status == 0 else { throw .badPublicKey }
        return box
    }

    /// Opens a sealed box into guarded memory.
    /// - Throws: `SealedBoxError.cannotOpen` when the box was not sealed to this key pair or was altered.
    package static func open(_ box: [UInt8], with keyPair: BoxKeyPair) throws(SealedBoxError) -> SecureBytes {
        Sodium.ready
        guard box.count > overheadByteCount else { throw .cannotOpen }
        do {
            return try SecureBytes(count: box.count - overheadByteCount) { out in
                let status = keyPair.secretKey.withUnsafeBytes { secret in
                    crypto_box_seal_open(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), box, UInt64(box.count),
                        keyPair.publicKey, secret.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
                guard status == 0 else { throw SealedBoxError.cannotOpen }
            }
        } catch {
            throw .cannotOpen
        }
    }
}

/// Why a sealed box could not be made or opened.
package enum SealedBoxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not a valid X25519 public key.
    case badPublicKey
    /// The box was sealed for another key pair, or altered.
    case cannotOpen

    package var description: String {
        switch self {
        case .badPublicKey: return "not a valid X25519 public key"
        case .cannotOpen: return "cannot open the sealed box: it was made for another receiver or altered"
        }
    }
}

/// Keyed BLAKE2b, for deriving short public codes and binding values together.
package enum GenericHash {
    /// BLAKE2b of `message` with an optional key, `byteCount` bytes long (16...64).
    package static func hash(_ message: [UInt8], key: [UInt8] = [], byteCount: Int = 32) -> [UInt8] {
        Sodium.ready
        precondition((16...64).contains(byteCount))
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_generichash(&out, byteCount, message, UInt64(message.count), key.isEmpty ? nil : key, key.count)
        return out
    }
}
