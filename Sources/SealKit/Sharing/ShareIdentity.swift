import CSodium

/// The public half of a key id's sharing identity: an X25519 key that receives shared values and an Ed25519 key
/// that signs what the person shares. It is public: it travels as text (`sealkit-identity-v1:`), in QR codes and
/// in group texts.
package struct PublicIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The text that starts an identity's text form.
    package static let prefix = "sealkit-identity-v1:"
    /// The X25519 public key (age's recipient).
    package let agreement: [UInt8]
    /// The Ed25519 public key.
    package let signing: [UInt8]

    /// An identity from its two 32-byte keys; nil when either has another length.
    package init?(agreement: [UInt8], signing: [UInt8]) {
        guard agreement.count == 32, signing.count == 32 else { return nil }
        self.agreement = agreement
        self.signing = signing
    }

    /// The 64 bytes: X25519 key, then Ed25519 key.
    package var bytes: [UInt8] { agreement + signing }

    /// An identity from its 64 bytes.
    package init?(bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        guard bytes.count == 64 else { return nil }
        self.init(agreement: Array(bytes[..<32]), signing: Array(bytes[32...]))
    }

    /// `sealkit-identity-v1:` then URL-safe unpadded base64 of the 64 bytes.
    package var text: String { Self.prefix + UnpaddedBase64.encode(bytes, .urlSafe) }

    /// Reads an identity's text (surrounding blanks allowed, as when pasted).
    /// - Throws: `ShareError.malformed` when it is not one.
    package init(text: String) throws(ShareError) {
        let trimmed = text.unicodeScalars.drop(while: { $0.properties.isWhitespace })
        let text = String(String.UnicodeScalarView(trimmed.reversed().drop(while: { $0.properties.isWhitespace }).reversed()))
        guard text.hasPrefix(Self.prefix) else {
            throw .malformed(what: "an identity", reason: "an identity's text starts with '\(Self.prefix)'")
        }
        guard let bytes = UnpaddedBase64.decode(text.utf8.dropFirst(Self.prefix.utf8.count), .urlSafe),
            let identity = PublicIdentity(bytes: bytes)
        else { throw .malformed(what: "an identity", reason: "its text is damaged (64 bytes in URL-safe base64 expected)") }
        Sodium.ready
        // An all-zero or low-order X25519 key would make every shared secret public.
        var check = [UInt8](repeating: 0, count: 32)
        let scalar = [UInt8](repeating: 0, count: 31) + [1]
        guard crypto_scalarmult(&check, scalar, identity.agreement) == 0 else {
            throw .malformed(what: "an identity", reason: "its X25519 key is a low-order point")
        }
        self = identity
    }

    /// The safety number people compare aloud.
    package var fingerprint: SafetyNumber { SafetyNumber(of: self) }

    package var description: String { "PublicIdentity(\(fingerprint))" }
}

/// A short number for two people to compare aloud: six groups of five digits, as `12345 67890 …`. BLAKE2b over
/// the identity under a SealKit label; each group is five bytes of it, big-endian, modulo 100,000 (as Signal's
/// safety numbers), about 99 bits in all.
package struct SafetyNumber: Hashable, Sendable, CustomStringConvertible {
    /// The 30 digits.
    package let digits: String

    init(of identity: PublicIdentity) {
        Sodium.ready
        var hash = [UInt8](repeating: 0, count: 30)
        let label = Array("SealKit identity fingerprint v1".utf8)
        let bytes = identity.bytes
        _ = crypto_generichash(&hash, hash.count, bytes, UInt64(bytes.count), label, label.count)
        var digits = ""
        for group in 0..<6 {
            var value: UInt64 = 0
            for byte in hash[(group * 5)..<(group * 5 + 5)] { value = value << 8 | UInt64(byte) }
            let text = String(value % 100_000)
            digits += String(repeating: "0", count: 5 - text.count) + text
        }
        self.digits = digits
    }

    /// A safety number as people type it: 30 digits, in any grouping by spaces or hyphens; nil otherwise.
    package init?(text: String) {
        let kept = text.unicodeScalars.filter { $0 != " " && $0 != "-" && $0 != "\t" }
        guard kept.count == 30, kept.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        digits = String(String.UnicodeScalarView(kept))
    }

    /// Six groups of five digits, separated by spaces.
    package var description: String {
        let chars = Array(digits)
        return stride(from: 0, to: 30, by: 5).map { String(chars[$0..<($0 + 5)]) }.joined(separator: " ")
    }
}

/// A key id's sharing identity with its secrets, derived from one of the id's keys: every device holding the key
/// has it, and every way a key travels (transfers, backups) carries it. `crypto_kdf_derive_from_key` under the
/// context `sk-ident` gives subkey 1, the X25519 secret, and subkey 2, the Ed25519 seed.
package struct ShareIdentity: Sendable {
    /// `crypto_kdf` context and subkey ids.
    static let kdfContext = Array("sk-ident".utf8)
    static let agreementSubkeyID: UInt64 = 1
    static let signingSubkeyID: UInt64 = 2

    /// The X25519 secret (age's identity), 32 bytes.
    package let agreementSecret: SecureBytes
    /// The Ed25519 secret key (seed and public key), 64 bytes.
    let signingSecret: SecureBytes
    /// The public identity.
    package let publicIdentity: PublicIdentity

    /// Derives the identity of `key`.
    package init(deriving key: SymmetricKey) {
        Sodium.ready
        var seed = [UInt8](repeating: 0, count: 32)
        defer { ConstantTime.wipe(&seed) }
        let agreement = SecureBytes(count: 32) { out in
            key.storage.withUnsafeBytes { master in
                Self.kdfContext.withUnsafeBufferPointer { context in
                    context.withMemoryRebound(to: CChar.self) { context in
                        _ = crypto_kdf_derive_from_key(
                            out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, Self.agreementSubkeyID, context.baseAddress!,
                            master.baseAddress!.assumingMemoryBound(to: UInt8.self))
                        _ = crypto_kdf_derive_from_key(
                            &seed, 32, Self.signingSubkeyID, context.baseAddress!, master.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        var agreementPublic = [UInt8](repeating: 0, count: 32)
        agreement.withUnsafeBytes { _ = crypto_scalarmult_base(&agreementPublic, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        var signingPublic = [UInt8](repeating: 0, count: 32)
        signingSecret = SecureBytes(count: 64) { out in
            _ = crypto_sign_seed_keypair(&signingPublic, out.baseAddress!.assumingMemoryBound(to: UInt8.self), seed)
        }
        agreementSecret = agreement
        publicIdentity = PublicIdentity(agreement: agreementPublic, signing: signingPublic)!
    }

    /// The identities of every key in `ring`, current first: a rotation gives a new identity and the old ones still
    /// open what was shared with them.
    package static func all(of ring: KeyRing) -> [ShareIdentity] { ring.all.map(ShareIdentity.init(deriving:)) }

    /// An Ed25519 signature of `message`.
    func sign(_ message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 64)
        signingSecret.withUnsafeBytes { secret in
            _ = crypto_sign_detached(
                &signature, nil, message, UInt64(message.count), secret.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return signature
    }
}

extension ShareIdentity: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "ShareIdentity(\(publicIdentity.fingerprint))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["fingerprint": publicIdentity.fingerprint.description]) }
}

extension PublicIdentity {
    /// Whether `signature` is this identity's Ed25519 signature of `message`.
    func verifies(_ signature: some Collection<UInt8>, of message: [UInt8]) -> Bool {
        Sodium.ready
        let signature = Array(signature)
        guard signature.count == 64 else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), signing) == 0
    }
}
