#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

extension KeyTransfer {
    /// How long an offline reply stays valid unless the sender chooses otherwise: ten minutes.
    public static let defaultReplyLifetime = Duration.seconds(TransferOffer.defaultLifetime)
}

/// The receiving side of an offline transfer: texts carried by hand (pasted, or photographed as QR
/// codes), authenticated by a one-time code through SPAKE2.
///
/// Show `offer` to the sender, and tell it `code` apart from the offer (the code is the secret).
/// The sender answers with a reply (``OfflineOffer/reply(sending:code:expiresIn:)``); ``accept(_:)``
/// opens it, once: a wrong code or a reply for another offer ends the transfer, so an attacker gets
/// one guess. A damaged paste is found before that (``check(_:)``), so a person can paste again.
public final class OfflineKeyReceiver: Sendable {
    private let receiver: TransferReceiver

    /// Makes a fresh code and offer, kept in this process's memory only.
    public init() {
        receiver = TransferReceiver()
    }

    /// The offer to show the sender: one line starting `sealkit-offer-v2:`.
    public var offer: String { receiver.offer.text }

    /// The code to tell the sender apart from the offer.
    public var code: TransferCode { TransferCode(receiver.code) }

    /// Checks that `reply` is a whole, undamaged reply, without opening it or using up anything.
    /// - Parameter reply: the reply's line (parts joined with ``ReplyAssembler``).
    /// - Throws: `SealKitError.Reason.invalidTransfer` saying what is wrong with the text.
    public func check(_ reply: String) throws(SealKitError) {
        do {
            try receiver.check(reply)
        } catch {
            throw SealKitError(error)
        }
    }

    /// Whether `reply` starts as a reply but is damaged or cut short: a line a terminal wrapped, whose
    /// rest may follow. False for a whole reply and for text that is no reply at all.
    /// - Parameter reply: the text so far.
    /// - Returns: true when more text could make it whole.
    public func mayBeIncomplete(_ reply: String) -> Bool {
        do {
            try receiver.check(reply)
            return false
        } catch {
            if case .code(.malformed) = error { return true }
            return false
        }
    }

    /// Opens a reply and checks its times. The first reply that gets this far uses up the offer.
    /// - Parameter reply: the reply's line (parts joined with ``ReplyAssembler``).
    /// - Returns: the keys it holds, to show and then store (`Keystore.importKeys(_:passphrase:)`).
    /// - Throws: `SealKitError.Reason.wrongCode` when it does not open with this receiver's code (the
    ///   sender typed another code, answered another offer, or the reply was altered);
    ///   `SealKitError.Reason.invalidTransfer`: damaged (nothing used up), expired, or the offer already used.
    public func accept(_ reply: String) throws(SealKitError) -> [KeyHistory] {
        do {
            return try receiver.accept(reply).keys
        } catch {
            throw SealKitError(error)
        }
    }
}

/// A receiver's offer, on the sending side of an offline transfer.
public struct OfflineOffer: Sendable {
    /// The text every offer starts with.
    public static let prefix = CodeKind.offer.prefix
    private let offer: TransferOffer

    /// Reads an offer.
    /// - Parameter text: the offer's line, `sealkit-offer-v2:...`.
    /// - Throws: `SealKitError.Reason.invalidTransfer` saying what is wrong with it.
    public init(_ text: String) throws(SealKitError) {
        do {
            offer = try TransferOffer(text)
        } catch {
            throw SealKitError(error)
        }
    }

    /// Seals `keys` for the receiver that showed this offer and `code`. A wrong code is not noticed here
    /// (nothing can tell without the receiver); the receiver refuses the reply.
    /// - Parameters:
    ///   - keys: the keys to send.
    ///   - code: the code the receiver shows.
    ///   - expiresIn: how long until the receiver refuses the reply: one second to a day (whole seconds, rounded down).
    /// - Returns: the reply's lines: one, or numbered parts when it is too long for one QR code.
    /// - Throws: `SealKitError`: `.invalidArgument` for a bad lifetime, `.tooLarge`, `.invalidTransfer`
    ///   for an offer that is not valid.
    public func reply(sending keys: [KeyHistory], code: TransferCode, expiresIn: Duration = KeyTransfer.defaultReplyLifetime)
        throws(SealKitError) -> [String]
    {
        let (seconds, attoseconds) = expiresIn.components
        do {
            return try offer.reply(sending: keys, code: code.code, expiresIn: TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18)
        } catch {
            throw SealKitError(error)
        }
    }
}

/// Joins a reply given as numbered parts (`sealkit-part-v1:...`, one per QR code or line, in any
/// order) back into its one line; a reply given whole passes through.
public struct ReplyAssembler: Sendable {
    /// The longest line of a reply or part that SealKit writes.
    @_spi(CLI) public static let maximumLineLength = TransferParts.maximumLineLength
    /// The text every part starts with; a whole reply starts with `sealkit-reply-v2:`.
    public static let partPrefix = CodeKind.part.prefix
    /// The text a whole reply starts with.
    public static let replyPrefix = CodeKind.reply.prefix
    private var assembler = PartAssembler()

    /// Makes an empty assembler.
    public init() {}

    /// Adds one line.
    /// - Parameter line: a whole reply, a part, or a blank line (skipped).
    /// - Returns: the whole reply once it is complete, else nil.
    /// - Throws: `SealKitError.Reason.invalidTransfer` for a damaged or repeated part. After parts that
    ///   do not belong together (from two transfers, mixed with a whole reply, or altered) the
    ///   assembler starts over, so the person can give every part again.
    public mutating func add(_ line: String) throws(SealKitError) -> String? {
        do {
            return try assembler.add(line)
        } catch {
            switch error {
            case .code(.partsDoNotFit), .code(.partsFromTwoTransfers), .code(.partsMixedWithWhole): assembler = PartAssembler()
            default: break
            }
            throw SealKitError(error)
        }
    }

    /// The part numbers still missing, in order; empty before the first part.
    public var missingParts: [Int] { assembler.missing }

    /// The error for input that ends now, before a whole reply arrived: nothing at all, or missing parts.
    public var incompleteError: SealKitError { SealKitError(assembler.incompleteError(expecting: .reply)) }
}
