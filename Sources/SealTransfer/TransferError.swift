#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealCore
import SealBackup
import SealKeystore
import SealMailbox

/// The kinds of text key transfer and backups exchange.
package enum TransferTextKind: String, Sendable, Equatable {
    /// An offline receiver's offer.
    case offer
    /// An offline sender's reply.
    case reply
    /// One part of a reply split to fit QR codes.
    case part
    /// A paper backup under a passphrase.
    case backup
    /// The sealed bundle of a share backup (SLIP-39 shares hold its key).
    case shares

    /// The format version SealKit writes and reads: 2 for offers and replies (the PAKE-authenticated
    /// transfer; version 1 is retired), 1 for parts and backups.
    package var version: Int { code.version }

    /// The text every code of this kind starts with, such as `sealkit-offer-v2:`.
    package var prefix: String { code.prefix }

    /// The text layer's kind of the same name.
    package var code: CodeKind { CodeKind(rawValue: rawValue)! }

    package init(_ kind: CodeKind) { self.init(rawValue: kind.rawValue)! }
}

/// Why an offer, reply, part or backup was refused. Each description is one line that
/// says what went wrong and what to do; none repeats key material or passphrases.
package enum TransferError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not a SealKit code of the expected kind.
    case notTransferText(expected: TransferTextKind)
    /// A SealKit code of another kind where this one was expected (a backup pasted into `receive`).
    case wrongKind(found: TransferTextKind, expected: TransferTextKind)
    /// A SealKit code of a format version this SealKit does not read.
    case unsupportedVersion(TransferTextKind, version: String)
    /// A version 1 offer or reply: retired, because a man in the middle could read its keys.
    case retiredVersion(TransferTextKind)
    /// The code has the right prefix but its contents are damaged.
    case malformed(TransferTextKind, reason: String)
    /// The reply does not open with this receiver's code: the sender typed another code,
    /// answered another offer, or the reply was altered.
    case wrongCode
    /// A typed code that is not a code.
    case badCode(WormholeCodeError)
    /// The reply is past its expiry time.
    case expired(at: Date, now: Date)
    /// The reply claims a lifetime longer than receivers accept.
    case expiresTooLate(Date)
    /// The reply was made later than this machine's clock allows.
    case madeInTheFuture(Date)
    /// The offer already served a reply.
    case offerUsed
    /// `expiresIn` is outside what a reply may ask for.
    case badLifetime(seconds: Int)
    /// No keys were given to send or back up.
    case nothingToSend
    /// The payload needs more parts than a transfer allows.
    case tooLarge(parts: Int)
    /// One id has more keys (current and retired) than a backup or transfer carries for one id (255,
    /// a one-byte count), though a key file holds up to 4,096.
    case tooManyVersions(KeyID, count: Int)
    /// More keys in all than one backup or transfer carries (4,096).
    case tooManyKeys(count: Int)
    /// Parts whose transfer ids differ.
    case partsFromTwoTransfers
    /// The same part number was given twice.
    case duplicatePart(index: Int, count: Int)
    /// A whole code arrived while parts were being collected, or a part after a whole code.
    case partsMixedWithWhole
    /// The input ended before every part arrived.
    case missingParts([Int], count: Int)
    /// Every part arrived but together they are not the payload their transfer id names.
    case partsDoNotFit
    /// Nothing arrived at all.
    case noInput(TransferTextKind)
    /// The backup passphrase is wrong, or the backup was altered.
    case wrongPassphrase
    /// The backup's Argon2id limits are outside what SealKit runs.
    case unsupportedKDF
    /// Argon2id could not run (for example, not enough memory).
    case passphraseKDF(PassphraseKDFError)
    /// The backup holds no key for the id asked for.
    case notInBackup(KeyID, holds: [KeyID])

    /// What the `sealkit` command adds after the description.
    package var advice: SealKitError.Advice? {
        switch self {
        case .wrongCode: return .startOfflineReceivingAgain
        case .offerUsed: return .startAnotherOfflineReceive
        case .badLifetime: return .chooseExpiry
        default: return CodeError(self)?.advice
        }
    }

    package var description: String {
        switch self {
        case .wrongCode:
            return "wrong code: the reply does not open with this receiver's code (the sender typed another code, answered another offer, or the reply was altered); nothing was stored"
        case .badCode(let error):
            return error.description
        case .expired(let at, let now):
            return "this reply expired at \(at.formatted(.iso8601)) (\(Int(now.timeIntervalSince(at))) seconds ago): ask the sender to send again; nothing was stored"
        case .expiresTooLate(let date):
            return "this reply says it stays valid until \(date.formatted(.iso8601)), more than 24 hours ahead: refused; check both clocks and send again"
        case .madeInTheFuture(let date):
            return "this reply was made at \(date.formatted(.iso8601)), ahead of this machine's clock: check both clocks and send again"
        case .offerUsed:
            return "this offer was already used (a reply was tried)"
        case .badLifetime(let seconds):
            return "a reply must expire within 1 to 86400 seconds, not \(seconds)"
        default:
            // Every other case is the text layer's (above).
            return "\(CodeError(self)!)"
        }
    }

    /// The text layer's error as a transfer's.
    package init(_ error: CodeError) {
        switch error {
        case .notCodeText(let expected): self = .notTransferText(expected: TransferTextKind(expected))
        case .wrongKind(let found, let expected): self = .wrongKind(found: TransferTextKind(found), expected: TransferTextKind(expected))
        case .unsupportedVersion(let kind, let version): self = .unsupportedVersion(TransferTextKind(kind), version: version)
        case .retiredVersion(let kind): self = .retiredVersion(TransferTextKind(kind))
        case .malformed(let kind, let reason): self = .malformed(TransferTextKind(kind), reason: reason)
        case .nothingToSend: self = .nothingToSend
        case .tooLarge(let parts): self = .tooLarge(parts: parts)
        case .tooManyVersions(let id, let count): self = .tooManyVersions(id, count: count)
        case .tooManyKeys(let count): self = .tooManyKeys(count: count)
        case .partsFromTwoTransfers: self = .partsFromTwoTransfers
        case .duplicatePart(let index, let count): self = .duplicatePart(index: index, count: count)
        case .partsMixedWithWhole: self = .partsMixedWithWhole
        case .missingParts(let missing, let count): self = .missingParts(missing, count: count)
        case .partsDoNotFit: self = .partsDoNotFit
        case .noInput(let kind): self = .noInput(TransferTextKind(kind))
        case .wrongPassphrase: self = .wrongPassphrase
        case .unsupportedKDF: self = .unsupportedKDF
        case .passphraseKDF(let error): self = .passphraseKDF(error)
        case .notInBackup(let id, let holds): self = .notInBackup(id, holds: holds)
        }
    }

    /// Runs `body`, giving its text-layer error as a transfer's.
    package static func converting<R>(_ body: () throws(CodeError) -> R) throws(TransferError) -> R {
        do {
            return try body()
        } catch {
            throw TransferError(error)
        }
    }
}

extension CodeError {
    /// The text layer's case a transfer error is, if it is one of those.
    init?(_ error: TransferError) {
        switch error {
        case .notTransferText(let expected): self = .notCodeText(expected: expected.code)
        case .wrongKind(let found, let expected): self = .wrongKind(found: found.code, expected: expected.code)
        case .unsupportedVersion(let kind, let version): self = .unsupportedVersion(kind.code, version: version)
        case .retiredVersion(let kind): self = .retiredVersion(kind.code)
        case .malformed(let kind, let reason): self = .malformed(kind.code, reason: reason)
        case .nothingToSend: self = .nothingToSend
        case .tooLarge(let parts): self = .tooLarge(parts: parts)
        case .tooManyVersions(let id, let count): self = .tooManyVersions(id, count: count)
        case .tooManyKeys(let count): self = .tooManyKeys(count: count)
        case .partsFromTwoTransfers: self = .partsFromTwoTransfers
        case .duplicatePart(let index, let count): self = .duplicatePart(index: index, count: count)
        case .partsMixedWithWhole: self = .partsMixedWithWhole
        case .missingParts(let missing, let count): self = .missingParts(missing, count: count)
        case .partsDoNotFit: self = .partsDoNotFit
        case .noInput(let kind): self = .noInput(kind.code)
        case .wrongPassphrase: self = .wrongPassphrase
        case .unsupportedKDF: self = .unsupportedKDF
        case .passphraseKDF(let error): self = .passphraseKDF(error)
        case .notInBackup(let id, let holds): self = .notInBackup(id, holds: holds)
        case .wrongCode, .badCode, .expired, .expiresTooLate, .madeInTheFuture, .offerUsed, .badLifetime: return nil
        }
    }
}
