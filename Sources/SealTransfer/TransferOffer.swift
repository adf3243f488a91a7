import FoundationEssentials
import SealCore
import SealKeystore

/// What a receiver shows to ask for keys: its one-time X25519 public key and a one-time
/// secret, as `sealkit-offer-v1:<base64url of public key (32) ‖ secret (32)>`.
///
/// The sender seals its reply to the public key (`crypto_box_seal`) and proves inside it
/// that it saw the secret, so a reply made without seeing this offer is refused.
public struct TransferOffer: Sendable, CustomStringConvertible {
    /// How long a reply stays valid unless the sender says otherwise: 10 minutes.
    public static let defaultLifetime: TimeInterval = 600
    /// The longest lifetime a reply may ask for, and a receiver accepts: 24 hours.
    public static let maximumLifetime: TimeInterval = 86_400
    /// How far the sender's and receiver's clocks may disagree: 2 minutes.
    public static let allowedClockSkew: TimeInterval = 120

    static let secretByteCount = 32

    /// The receiver's one-time public key.
    public let publicKey: [UInt8]
    /// The one-time secret a reply must prove it knows.
    let secret: SecureBytes

    init(publicKey: [UInt8], secret: SecureBytes) {
        self.publicKey = publicKey
        self.secret = secret
    }

    /// Reads an offer as the receiver showed it.
    /// - Parameter text: the offer's one line; surrounding whitespace is ignored.
    /// - Throws: `TransferError` when it is not a version 1 offer, or is damaged.
    public init(_ text: String) throws(TransferError) {
        var bytes = try TransferText.body(of: TransferText.trimmed(text), as: .offer)
        defer { ConstantTime.wipe(&bytes) }
        guard bytes.count == BoxKeyPair.publicKeyByteCount + Self.secretByteCount else {
            throw .malformed(.offer, reason: "it holds \(bytes.count) bytes, an offer holds 64")
        }
        publicKey = Array(bytes[..<BoxKeyPair.publicKeyByteCount])
        secret = SecureBytes(copying: bytes[BoxKeyPair.publicKeyByteCount...])
    }

    /// The offer's one line of text, for the sender.
    public var text: String {
        var bytes = publicKey + secret.withUnsafeBytes(Array.init)
        defer { ConstantTime.wipe(&bytes) }
        return TransferKind.offer.prefix + TransferText.encode(bytes)
    }

    /// A short code both sides show, such as `482-915`, so people can confirm the sender
    /// answers this receiver's offer and not one an attacker put in its place.
    public var verificationCode: String {
        var message = Array("SealKit transfer code v1".utf8) + publicKey + secret.withUnsafeBytes(Array.init)
        defer { ConstantTime.wipe(&message) }
        let digest = GenericHash.hash(message, byteCount: 16)
        let number = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 1_000_000
        let digits = String(number)
        let padded = String(repeating: "0", count: 6 - digits.count) + digits
        return padded.prefix(3) + "-" + padded.suffix(3)
    }

    public var description: String { "TransferOffer(code: \(verificationCode))" }

    /// Seals keys to this offer.
    ///
    /// The reply holds, sealed to the offer's public key: the proof of the offer's secret,
    /// a random reply id, its creation and expiry time, and each id's keys (current and
    /// retired, with fingerprints and times). See docs/transfer.md.
    /// - Parameters:
    ///   - keys: the ids and keys to send, each id once.
    ///   - expiresIn: seconds until the receiver refuses the reply (1 to 86400; default 600).
    ///   - now: the time the reply counts as made.
    /// - Returns: the reply's lines: one, or numbered parts when it is too long for one QR code.
    /// - Throws: `TransferError` for no keys, a bad lifetime, too many keys, or a damaged offer.
    public func reply(
        sending keys: [KeyHistory], expiresIn: TimeInterval = defaultLifetime, now: Date = Date()
    ) throws(TransferError) -> [String] {
        guard expiresIn >= 1, expiresIn <= Self.maximumLifetime else { throw .badLifetime(seconds: Int(expiresIn)) }
        try KeyBundle.validate(keys)
        let created = unixTime(now)
        return try sealReply(sending: keys, created: created, expires: created + Int64(expiresIn.rounded(.down)))
    }

    /// Seals a reply with the times given, unchecked: tests use it to make replies a sender would refuse.
    func sealReply(sending keys: [KeyHistory], created: Int64, expires: Int64) throws(TransferError) -> [String] {
        let plaintext = SecureBytes(count: Self.replyHeaderByteCount + KeyBundle.byteCount(of: keys)) { buffer in
            var writer = ByteWriter(buffer)
            writer.write(Self.replyFormatVersion)
            writer.write(proof)
            writer.write(SecureRandom.bytes(count: Self.replyIDByteCount))
            writer.write(created)
            writer.write(expires)
            KeyBundle.write(keys, into: &writer)
        }
        let sealed: [UInt8]
        do {
            sealed = try SealedBox.seal(plaintext, to: publicKey)
        } catch {
            throw .malformed(.offer, reason: "its public key is not a usable X25519 key")
        }
        return try TransferParts.split(TransferKind.reply.prefix + TransferText.encode(recipientTag + sealed))
    }

    // MARK: Shared with the receiver

    static let replyFormatVersion: UInt8 = 1
    static let replyIDByteCount = 16
    static let proofByteCount = 32
    static let recipientTagByteCount = 8
    static let replyHeaderByteCount = 1 + proofByteCount + replyIDByteCount + 8 + 8

    /// Keyed BLAKE2b of the public key under the one-time secret: only someone who saw
    /// the offer can compute it.
    var proof: [UInt8] {
        var key = secret.withUnsafeBytes(Array.init)
        defer { ConstantTime.wipe(&key) }
        return GenericHash.hash(Array("SealKit transfer proof v1".utf8) + publicKey, key: key, byteCount: Self.proofByteCount)
    }

    /// Names the receiver a reply is for, outside the sealed box, so a reply for another
    /// receiver can be told apart from an altered one.
    var recipientTag: [UInt8] {
        Array(GenericHash.hash(Array("SealKit transfer recipient v1".utf8) + publicKey, byteCount: 16)
            .prefix(Self.recipientTagByteCount))
    }
}

typealias TransferKind = TransferTextKind
