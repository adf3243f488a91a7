import FoundationEssentials
import SealCore
import SealKeystore

/// The receiving side of a sealed transfer: makes a one-time key pair and secret, kept
/// only in memory, shows them as an offer, and accepts exactly one reply to it.
///
/// ```swift
/// let receiver = TransferReceiver()
/// show(receiver.offer.text, receiver.offer.verificationCode)
/// let reply = try receiver.accept(replyText)     // joined parts, if it came in parts
/// try keystore.storeAll(reply.keys, passphrase: nil)
/// ```
public final class TransferReceiver: @unchecked Sendable {
    /// The offer to show the sender.
    public let offer: TransferOffer
    private let keyPair: BoxKeyPair
    private let lock = Lock()
    private var acceptedReplyIDs: [[UInt8]] = []

    /// Makes a fresh key pair and one-time secret.
    public init() {
        keyPair = BoxKeyPair.generate()
        var secret = SecureRandom.bytes(count: TransferOffer.secretByteCount)
        defer { ConstantTime.wipe(&secret) }
        offer = TransferOffer(publicKey: keyPair.publicKey, secret: SecureBytes(copying: secret))
    }

    /// Opens and checks a reply. The first reply accepted uses up the offer: any later
    /// one is refused, so a receiver stores keys from one sender, once.
    /// - Parameters:
    ///   - text: the reply's line (join parts first with `TransferParts` or `PartAssembler`).
    ///   - now: the receiver's clock.
    /// - Returns: the reply's times and keys, to show and then store.
    /// - Throws: `TransferError`: sealed for another receiver, altered, made without
    ///   seeing this offer, expired, replayed, offer already used, or damaged.
    public func accept(_ text: String, now: Date = Date()) throws(TransferError) -> TransferReply {
        let body = try TransferText.body(of: TransferText.trimmed(text), as: .reply)
        guard body.count > TransferOffer.recipientTagByteCount + SealedBox.overheadByteCount else {
            throw .malformed(.reply, reason: "truncated")
        }
        guard ConstantTime.equals(body.prefix(TransferOffer.recipientTagByteCount), offer.recipientTag) else {
            throw .sealedForAnotherReceiver
        }
        let plaintext: SecureBytes
        do {
            plaintext = try SealedBox.open(Array(body.dropFirst(TransferOffer.recipientTagByteCount)), with: keyPair)
        } catch {
            throw .altered
        }
        let (replyID, created, expires, keys) = try plaintext.reading {
            (raw) throws(TransferError) -> ([UInt8], Int64, Int64, [KeyHistory]) in
            var reader = ByteReader(raw, kind: .reply)
            let version = try reader.byte()
            guard version == TransferOffer.replyFormatVersion else {
                throw .malformed(.reply, reason: "inner format \(version) does not match its prefix")
            }
            guard ConstantTime.equals(try reader.bytes(TransferOffer.proofByteCount), offer.proof) else {
                throw .offerNotSeen
            }
            let replyID = try reader.array(TransferOffer.replyIDByteCount)
            let created = try reader.int64()
            let expires = try reader.int64()
            let keys = try KeyBundle.read(from: &reader, as: .reply)
            try reader.finish()
            return (replyID, created, expires, keys)
        }
        guard expires > created else { throw .malformed(.reply, reason: "it expires before it was made") }
        let createdDate = Date(timeIntervalSince1970: TimeInterval(created))
        let expiresDate = Date(timeIntervalSince1970: TimeInterval(expires))

        lock.lock()
        defer { lock.unlock() }
        if acceptedReplyIDs.contains(replyID) { throw .replayed }
        guard acceptedReplyIDs.isEmpty else { throw .offerUsed }
        if now.timeIntervalSince(expiresDate) > TransferOffer.allowedClockSkew { throw .expired(at: expiresDate, now: now) }
        if expiresDate.timeIntervalSince(now) > TransferOffer.maximumLifetime + TransferOffer.allowedClockSkew {
            throw .expiresTooLate(expiresDate)
        }
        if createdDate.timeIntervalSince(now) > TransferOffer.allowedClockSkew { throw .madeInTheFuture(createdDate) }
        acceptedReplyIDs.append(replyID)
        return TransferReply(created: createdDate, expires: expiresDate, keys: keys)
    }
}

/// An accepted reply: what the sender sent, checked and ready to store.
public struct TransferReply: Sendable {
    /// When the sender made the reply (the sender's clock).
    public let created: Date
    /// When the reply stops being accepted.
    public let expires: Date
    /// Each id's keys, current first, in the order sent.
    public let keys: [KeyHistory]
}
