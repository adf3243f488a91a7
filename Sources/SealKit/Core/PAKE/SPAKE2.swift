import CSodium
import Synchronization

/// One side of a symmetric SPAKE2 exchange on Ed25519, byte for byte as python-spake2's
/// `SPAKE2_Symmetric` with its default parameters, which magic-wormhole speaks.
///
/// Both sides make one with the same password (a wormhole code) and identity (the app id),
/// send each other their `message`, and call `sharedSecret(peerMessage:)`. With the same password
/// both get the same 32-byte secret; with different passwords each gets a secret the other cannot
/// use, and an eavesdropper or a man in the middle learns nothing that lets it test more than
/// one password guess per exchange.
///
/// This is the group arithmetic alone, package-only: the magic-wormhole client (the mailbox client) makes
/// its codes, keys and phase keys from it, so SealKit's core stays the only code that calls libsodium.
///
/// The group arithmetic is libsodium's (`crypto_core_ed25519_*`,
/// `crypto_scalarmult_ed25519_*noclamp`); the secret scalars live in guarded memory and are
/// wiped when the value is released. An instance finishes once: a second `sharedSecret(peerMessage:)` throws,
/// because reusing the secret scalar with a second peer message could reveal the key.
///
/// ```swift
/// let mine = SPAKE2Symmetric(password: code, identity: Array("sealkit/key-transfer/v1".utf8))
/// send(mine.message)
/// let secret = try mine.sharedSecret(peerMessage: received)
/// ```
///
/// Sendable: every stored property is immutable (guarded bytes that are never written after they
/// are made) except whether the exchange finished, which lives in a `Mutex`.
package final class SPAKE2Symmetric: Sendable {
    /// Bytes of a message: the side byte `S` and a 32-byte Ed25519 element.
    package static let messageByteCount = 1 + elementByteCount

    /// The message to send to the other side (public).
    package let message: [UInt8]

    static let elementByteCount = Int(crypto_core_ed25519_BYTES)
    static let scalarByteCount = Int(crypto_core_ed25519_SCALARBYTES)
    /// python-spake2's side byte for symmetric mode; `A` and `B` belong to the asymmetric modes.
    static let symmetricSide = UInt8(ascii: "S")

    /// The blinding element S: python-spake2's `arbitrary_element(b"symmetric")` on Ed25519,
    /// a point nobody knows the discrete logarithm of. Fixtures/pake/vectors.json pins it.
    package static let blindingElement: [UInt8] = [
        0x6f, 0x00, 0xda, 0xe8, 0x7c, 0x1b, 0xe1, 0xa7, 0x3b, 0x59, 0x22, 0xef, 0x43, 0x1c, 0xd8, 0xf5,
        0x78, 0x79, 0x56, 0x9c, 0x22, 0x2d, 0x22, 0xb1, 0xcd, 0x71, 0xe8, 0x54, 0x6a, 0xb8, 0xe6, 0xf1,
    ]

    /// The random scalar x (guarded).
    private let secretScalar: SecureBytes
    /// S·pw, subtracted from the peer's element (guarded: with it, passwords could be tested offline).
    private let passwordBlinding: SecureBytes
    /// SHA-256(password) and SHA-256(identity), the transcript's first parts (the first is
    /// as good as the password to a guesser, so it is guarded too).
    private let passwordDigest: SecureBytes
    private let identityDigest: [UInt8]
    private let finished = Mutex(false)

    /// Starts an exchange with libsodium's randomness.
    /// - Parameters:
    ///   - password: the shared low-entropy secret, such as a wormhole code's UTF-8 bytes.
    ///   - identity: the symmetric identity both sides share, such as the app id.
    package convenience init(password: some ContiguousByteSource, identity: some ContiguousByteSource) {
        self.init(password: password, identity: identity, entropy: SecureRandom.bytes(count:))
    }

    /// Starts an exchange with the given source of entropy: tests pass fixed bytes to
    /// reproduce python-spake2's vectors. Everything else uses libsodium's randomness.
    /// - Parameter entropy: returns the asked number of random bytes, as `os.urandom` does.
    package init(
        password: some ContiguousByteSource, identity: some ContiguousByteSource, entropy: (Int) -> [UInt8]
    ) {
        Sodium.ready
        let elementCount = Self.elementByteCount
        let passwordScalar = Self.passwordScalar(password)
        // python-spake2's random_scalar: 64 bytes of entropy, big-endian, reduced mod L.
        var randomBytes = entropy(64)
        precondition(randomBytes.count == 64, "SPAKE2 needs 64 bytes of entropy")
        let guardedRandom = SecureBytes(copying: randomBytes)
        ConstantTime.wipe(&randomBytes)
        let secretScalar = Self.reduce(bigEndian: guardedRandom)

        let passwordBlinding = SecureBytes(count: elementCount) { out in
            passwordScalar.withUnsafeBytes { scalar in
                let status = crypto_scalarmult_ed25519_noclamp(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    scalar.baseAddress!.assumingMemoryBound(to: UInt8.self), Self.blindingElement)
                // Fails only for a zero scalar, one chance in 2^252.
                precondition(status == 0, "SPAKE2 password scalar is zero")
            }
        }
        // The message element: x·G + pw·S.
        var element = [UInt8](repeating: 0, count: elementCount)
        let publicPart = SecureBytes(count: elementCount) { out in
            secretScalar.withUnsafeBytes { scalar in
                let status = crypto_scalarmult_ed25519_base_noclamp(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    scalar.baseAddress!.assumingMemoryBound(to: UInt8.self))
                precondition(status == 0, "SPAKE2 random scalar is zero")
            }
        }
        publicPart.withUnsafeBytes { xG in
            passwordBlinding.withUnsafeBytes { pwS in
                _ = crypto_core_ed25519_add(
                    &element, xG.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    pwS.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        self.secretScalar = secretScalar
        self.passwordBlinding = passwordBlinding
        message = [Self.symmetricSide] + element
        passwordDigest = SecureBytes(copying: SHA256.hash(password))
        identityDigest = SHA256.hash(identity)
    }

    /// Completes the exchange with the other side's message.
    ///
    /// - Parameter peerMessage: the 33 bytes the other side sent.
    /// - Returns: the shared secret, 32 bytes in guarded memory. It matches the other side's only
    ///   when both used the same password; a wrong password shows up later, when the other side's
    ///   first sealed message does not open.
    /// - Throws: `SPAKE2Error` for a message of the wrong length, from an asymmetric side,
    ///   holding an invalid or small-order element, reflecting our own message, or when this
    ///   exchange already finished.
    package func sharedSecret(peerMessage: [UInt8]) throws(SPAKE2Error) -> SecureBytes {
        let alreadyFinished = finished.withLock { finished in
            defer { finished = true }
            return finished
        }
        guard !alreadyFinished else { throw .alreadyFinished }
        guard peerMessage.count == Self.messageByteCount else { throw .wrongLength }
        guard peerMessage[0] == Self.symmetricSide else { throw .wrongSide }
        let peerElement = Array(peerMessage[1...])
        // Canonical encoding, on the curve, in the prime-order subgroup, not of small order:
        // python-spake2's bytes_to_element refuses the same points (and the identity).
        guard crypto_core_ed25519_is_valid_point(peerElement) == 1 else { throw .invalidElement }
        let ownElement = Array(message[1...])
        guard peerElement != ownElement else { throw .reflection }

        // K = x·(Y* − pw·S); python-spake2 adds (−pw)·S, the same point.
        var subtracted: Int32 = -1
        let unblinded = SecureBytes(count: Self.elementByteCount) { out in
            subtracted = passwordBlinding.withUnsafeBytes { pwS in
                crypto_core_ed25519_sub(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), peerElement,
                    pwS.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard subtracted == 0 else { throw .invalidElement }
        var multiplied: Int32 = -1
        let shared = SecureBytes(count: Self.elementByteCount) { out in
            multiplied = secretScalar.withUnsafeBytes { scalar in
                unblinded.withUnsafeBytes { point in
                    crypto_scalarmult_ed25519_noclamp(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        scalar.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        point.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        // Fails for the identity: the peer sent exactly pw·S, which only a peer that knows the
        // password can; python-spake2 would go on with the identity, but there is nothing to agree on.
        guard multiplied == 0 else { throw .invalidElement }

        // key = SHA-256(SHA-256(pw) || SHA-256(id) || lower message || higher message || K),
        // the messages sorted because neither side knows which one went first.
        let (first, second) = peerElement.lexicographicallyPrecedes(ownElement)
            ? (peerElement, ownElement) : (ownElement, peerElement)
        let transcriptCount = 2 * SHA256.byteCount + 3 * Self.elementByteCount
        let transcript = SecureBytes(count: transcriptCount) { out in
            var offset = 0
            func append(_ part: UnsafeRawBufferPointer) {
                out.baseAddress!.advanced(by: offset).copyMemory(from: part.baseAddress!, byteCount: part.count)
                offset += part.count
            }
            passwordDigest.withUnsafeBytes(append)
            identityDigest.withUnsafeBytes(append)
            first.withUnsafeBytes(append)
            second.withUnsafeBytes(append)
            shared.withUnsafeBytes(append)
        }
        let key = SecureBytes(count: SHA256.byteCount) { out in
            transcript.withUnsafeBytes { bytes in
                _ = crypto_hash_sha256(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
            }
        }
        return key
    }

    /// python-spake2's `password_to_scalar`: HKDF-SHA256 (salt "", info "SPAKE2 pw") to 48 bytes,
    /// read big-endian, reduced modulo L; the result little-endian, as libsodium takes scalars.
    package static func passwordScalar(_ password: some ContiguousByteSource) -> SecureBytes {
        let expanded = HKDF.deriveBytes(
            inputKeyMaterial: password, info: Array("SPAKE2 pw".utf8), outputByteCount: scalarByteCount + 16)
        return reduce(bigEndian: expanded)
    }

    /// Reduces a big-endian number of up to 64 bytes modulo the group order L, as python-spake2
    /// does with Python integers, into a 32-byte little-endian scalar (guarded).
    private static func reduce(bigEndian number: SecureBytes) -> SecureBytes {
        precondition(number.count <= 64)
        let wide = SecureBytes(count: 64) { wide in
            wide.initializeMemory(as: UInt8.self, repeating: 0)
            number.withUnsafeBytes { bytes in
                for index in 0..<bytes.count { wide[index] = bytes[bytes.count - 1 - index] }
            }
        }
        return SecureBytes(count: scalarByteCount) { out in
            wide.withUnsafeBytes { wide in
                crypto_core_ed25519_scalar_reduce(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    wide.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
    }
}

extension SPAKE2Symmetric: CustomStringConvertible {
    /// Shows the public message only.
    package var description: String { "SPAKE2Symmetric(message: \(Base64.encode(message)))" }
}

/// Why a peer's SPAKE2 message was refused.
package enum SPAKE2Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not 33 bytes.
    case wrongLength
    /// The side byte is not `S` (python-spake2's asymmetric sides are `A` and `B`).
    case wrongSide
    /// Not a valid element of the prime-order group (off the curve, small order, non-canonical).
    case invalidElement
    /// Our own message came back.
    case reflection
    /// This exchange already finished once.
    case alreadyFinished

    package var description: String {
        switch self {
        case .wrongLength: return "not a SPAKE2 message: expected \(SPAKE2Symmetric.messageByteCount) bytes"
        case .wrongSide: return "not a symmetric SPAKE2 message: the side byte is not 'S'"
        case .invalidElement: return "the SPAKE2 message does not hold a valid Ed25519 group element"
        case .reflection: return "the SPAKE2 message is our own, sent back"
        case .alreadyFinished: return "this SPAKE2 exchange already finished; start a new one"
        }
    }
}
