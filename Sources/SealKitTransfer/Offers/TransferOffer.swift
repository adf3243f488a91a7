#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

/// What a receiver shows to ask for keys offline: its SPAKE2 message, as
/// `sealkit-offer-v2:<base64url of SPAKE2 message (33) ‖ check (4)>`.
///
/// The code the receiver shows beside it is the SPAKE2 password and never travels in the
/// offer. The sender answers with `reply(sending:code:)`: only a sender that typed the
/// receiver's code can make a reply this receiver opens, and only this receiver can open
/// it, whoever carried, read or swapped the offer. The check bytes only catch a damaged
/// paste early, before the one-time exchange is spent; they protect nothing.
package struct TransferOffer: Sendable, CustomStringConvertible {
    /// The application id of every key transfer, offline and network: SPAKE2's identity, and
    /// the network transfer's magic-wormhole app id. Both sides must use it.
    package static let appID = "sealkit/key-transfer/v1"
    /// How long a reply stays valid unless the sender says otherwise: 10 minutes.
    package static let defaultLifetime: TimeInterval = 600
    /// The longest lifetime a reply may ask for, and a receiver accepts: 24 hours.
    package static let maximumLifetime: TimeInterval = 86_400
    /// How far the sender's and receiver's clocks may disagree: 2 minutes.
    package static let allowedClockSkew: TimeInterval = 120

    /// The receiver's SPAKE2 message (public).
    package let message: [UInt8]

    init(message: [UInt8]) {
        self.message = message
    }

    /// Reads an offer as the receiver showed it.
    /// - Parameter text: the offer's one line; surrounding whitespace is ignored.
    /// - Throws: `TransferError` when it is not a version 2 offer, or is damaged.
    package init(_ text: String) throws(TransferError) {
        let body = try TransferError.converting { () throws(CodeError) in try CodeText.checkedBody(of: CodeText.trimmed(text), as: .offer) }
        guard body.count == SPAKE2Symmetric.messageByteCount else {
            throw .code(.malformed(.offer, reason: "it holds \(body.count) bytes, an offer holds \(SPAKE2Symmetric.messageByteCount)"))
        }
        message = body
    }

    /// The offer's one line of text, for the sender.
    package var text: String { CodeText.checkedText(message, as: .offer) }

    package var description: String { "TransferOffer(\(text))" }

    /// Seals keys for the receiver that showed this offer and `code`.
    ///
    /// Runs the sender's half of SPAKE2 with the code, and seals under a key derived from
    /// the result: a random reply id, its creation and expiry time, and each id's keys
    /// (current and retired, with fingerprints and times). See docs/transfer.md. A wrong code
    /// is not noticed here (nothing can tell without the receiver); the receiver refuses the reply.
    /// - Parameters:
    ///   - keys: the ids and keys to send, each id once.
    ///   - code: the code the receiver shows.
    ///   - expiresIn: seconds until the receiver refuses the reply (1 to 86400; default 600).
    ///   - now: the time the reply counts as made.
    /// - Returns: the reply's lines: one, or numbered parts when it is too long for one QR code.
    /// - Throws: `TransferError` for no keys, a bad lifetime, too many keys, or an offer
    ///   whose SPAKE2 message is not valid.
    package func reply(
        sending keys: [KeyHistory], code: WormholeCode, expiresIn: TimeInterval = defaultLifetime, now: Date = Date()
    ) throws(TransferError) -> [String] {
        // Clamped for the message: a lifetime of any size (an app's `Duration`) is refused, never a crash.
        guard expiresIn >= 1, expiresIn <= Self.maximumLifetime else { throw .badLifetime(seconds: Int(max(-1e15, min(expiresIn, 1e15)))) }
        try TransferError.converting { () throws(CodeError) in try KeyBundle.validate(keys) }
        let created = unixTime(now)
        return try sealReply(sending: keys, code: code, created: created, expires: created + Int64(expiresIn.rounded(.down)))
    }

    /// Seals a reply with the times given, unchecked: tests use it to make replies a sender would refuse.
    func sealReply(
        sending keys: [KeyHistory], code: WormholeCode, created: Int64, expires: Int64,
        entropy: ((Int) -> [UInt8])? = nil, nonce: [UInt8]? = nil, replyID: [UInt8]? = nil
    ) throws(TransferError) -> [String] {
        let spake = entropy.map { SPAKE2Symmetric(password: code.storage, identity: Array(Self.appID.utf8), entropy: $0) }
            ?? SPAKE2Symmetric(code: code, appID: Self.appID)
        let key: WormholeKey
        do {
            key = try spake.finish(peerMessage: message)
        } catch {
            throw .code(.malformed(.offer, reason: error.description))
        }
        let plaintext = SecureBytes(count: Self.replyHeaderByteCount + KeyBundle.byteCount(of: keys)) { buffer in
            var writer = ByteWriter(buffer)
            writer.write(Self.replyFormatVersion)
            writer.write(replyID ?? SecureRandom.bytes(count: Self.replyIDByteCount))
            writer.write(created)
            writer.write(expires)
            KeyBundle.write(keys, into: &writer)
        }
        let replyKey = Self.replyKey(key)
        let sealed = nonce.map { replyKey.seal(plaintext, nonce: $0) } ?? replyKey.seal(plaintext)
        return try TransferParts.split(CodeText.checkedText(spake.message + sealed, as: .reply))
    }

    // MARK: Shared with the receiver

    static let replyFormatVersion: UInt8 = 2
    static let replyIDByteCount = 16
    static let replyHeaderByteCount = 1 + replyIDByteCount + 8 + 8
    /// The purpose of the key that seals an offline reply: kept apart from the network
    /// transfer's phase keys, so no key does two jobs.
    static let replyPurpose = Array("sealkit/key-transfer/v1:offline-reply".utf8)

    static func replyKey(_ key: WormholeKey) -> WormholeKey { key.derive(purpose: replyPurpose) }
}

