#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit
import Synchronization

/// The receiving side of an offline transfer: makes a one-time code and SPAKE2 exchange,
/// kept only in memory, shows the offer and (separately) the code, and accepts exactly one
/// reply.
///
/// One reply is opened at most: the SPAKE2 exchange finishes once, so a wrong code, or a
/// reply made for another offer, ends the transfer, and an attacker gets one guess per offer.
/// A damaged paste is found before that (`check(_:)`), so the person can paste again.
///
/// ```swift
/// let receiver = TransferReceiver(code: .generate())
/// show(receiver.offer.text); tell(receiver.code.revealedText)
/// let reply = try receiver.accept(replyText)     // joined parts, if it came in parts
/// try keystore.storeAll(reply.keys, passphrase: nil)
/// ```
package final class TransferReceiver: Sendable {
    /// The offer to show the sender.
    package let offer: TransferOffer
    /// The code to show the sender apart from the offer (it is the secret).
    package let code: WormholeCode
    private let spake: SPAKE2Symmetric
    /// Whether a reply has used up the offer.
    private let used = Mutex(false)

    /// Makes a fresh code and SPAKE2 exchange with libsodium's randomness.
    package convenience init() {
        self.init(code: WormholeCode.generate())
    }

    /// A receiver for a given code, with fixed entropy for test vectors when given.
    package init(code: WormholeCode, entropy: ((Int) -> [UInt8])? = nil) {
        self.code = code
        let identity = Array(TransferOffer.appID.utf8)
        spake = entropy.map { SPAKE2Symmetric(password: code.storage, identity: identity, entropy: $0) }
            ?? SPAKE2Symmetric(code: code, appID: TransferOffer.appID)
        offer = TransferOffer(message: spake.message)
    }

    /// Checks that `text` is a whole, undamaged version 2 reply, without opening it or using
    /// up anything: for asking again after a damaged paste.
    /// - Parameter text: the reply's line (parts joined).
    /// - Throws: `TransferError` saying what is wrong with the text.
    package func check(_ text: String) throws(TransferError) {
        _ = try Self.parse(text)
    }

    /// Opens and checks a reply. The first reply that gets this far uses up the offer.
    /// - Parameters:
    ///   - text: the reply's line (join parts first with `TransferParts` or `PartAssembler`).
    ///   - now: the receiver's clock.
    /// - Returns: the reply's times and keys, to show and then store.
    /// - Throws: `TransferError`: damaged (nothing used up), `.wrongCode` (the sender typed
    ///   another code, answered another offer, or the reply was altered), expired, or offer
    ///   already used.
    package func accept(_ text: String, now: Date = Date()) throws(TransferError) -> TransferReply {
        let (peerMessage, sealed) = try Self.parse(text)
        let alreadyUsed = used.withLock { used in
            defer { used = true }
            return used
        }
        guard !alreadyUsed else { throw .offerUsed }
        let key: WormholeKey
        do {
            key = try spake.finish(peerMessage: peerMessage)
        } catch {
            // A message that is no group element comes from no honest sender: as good as a wrong code.
            throw .wrongCode
        }
        let plaintext: SecureBytes?
        do {
            plaintext = try TransferOffer.replyKey(key).openSecret(sealed)
        } catch {
            throw .wrongCode
        }
        guard let plaintext else { throw .code(.malformed(.reply, reason: "empty")) }
        let (created, expires, keys) = try TransferError.converting { () throws(CodeError) in try plaintext.reading {
            (raw) throws(CodeError) -> (Int64, Int64, [KeyHistory]) in
            var reader = ByteReader(raw, kind: .reply)
            let version = try reader.byte()
            guard version == TransferOffer.replyFormatVersion else {
                throw .malformed(.reply, reason: "inner format \(version) does not match its prefix")
            }
            _ = try reader.bytes(TransferOffer.replyIDByteCount)
            let created = try reader.int64()
            let expires = try reader.int64()
            let keys = try KeyBundle.read(from: &reader, as: .reply)
            try reader.finish()
            return (created, expires, keys)
        } }
        guard expires > created else { throw .code(.malformed(.reply, reason: "it expires before it was made")) }
        let createdDate = Date(timeIntervalSince1970: TimeInterval(created))
        let expiresDate = Date(timeIntervalSince1970: TimeInterval(expires))
        if now.timeIntervalSince(expiresDate) > TransferOffer.allowedClockSkew { throw .expired(at: expiresDate, now: now) }
        if expiresDate.timeIntervalSince(now) > TransferOffer.maximumLifetime + TransferOffer.allowedClockSkew {
            throw .expiresTooLate(expiresDate)
        }
        if createdDate.timeIntervalSince(now) > TransferOffer.allowedClockSkew { throw .madeInTheFuture(createdDate) }
        return TransferReply(created: createdDate, expires: expiresDate, keys: keys)
    }

    /// The sender's SPAKE2 message and the sealed box of a reply: `sealkit-reply-v2:` and
    /// base64url of message (33) ‖ nonce (24) ‖ secretbox ‖ check (4).
    private static func parse(_ text: String) throws(TransferError) -> ([UInt8], [UInt8]) {
        let body = try TransferError.converting { () throws(CodeError) in try CodeText.checkedBody(of: CodeText.trimmed(text), as: .reply) }
        let messageCount = SPAKE2Symmetric.messageByteCount
        guard body.count > messageCount + WormholeKey.sealOverhead else { throw .code(.malformed(.reply, reason: "truncated")) }
        return (Array(body[..<messageCount]), Array(body[messageCount...]))
    }
}

/// An accepted reply: what the sender sent, checked and ready to store.
package struct TransferReply: Sendable {
    /// When the sender made the reply (the sender's clock).
    package let created: Date
    /// When the reply stops being accepted.
    package let expires: Date
    /// Each id's keys, current first, in the order sent.
    package let keys: [KeyHistory]
}
