#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealCore
import SealKeystore

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
    package var version: Int {
        switch self {
        case .offer, .reply: return 2
        case .part, .backup, .shares: return 1
        }
    }

    /// The text every code of this kind starts with, such as `sealkit-offer-v2:`.
    package var prefix: String { "sealkit-\(rawValue)-v\(version):" }

    var name: String {
        switch self {
        case .offer: return "transfer offer"
        case .reply: return "transfer reply"
        case .part: return "part"
        case .backup: return "paper backup"
        case .shares: return "share backup bundle"
        }
    }
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

    package var description: String {
        switch self {
        case .notTransferText(let expected):
            return "not a SealKit \(expected.name): expected one line starting with '\(expected.prefix)'"
        case .wrongKind(let found, let expected):
            switch (found, expected) {
            case (.backup, _):
                return "this is a paper backup, not a \(expected.name): restore it with 'sealkit keys restore ID'"
            case (.shares, .backup):
                return "this is a share backup bundle, not a paper backup: add --shares ('sealkit keys restore --shares --all'), "
                    + "then paste the bundle and the shares"
            case (.offer, .reply):
                return "this is a transfer offer, not a reply: give it to the sender with 'sealkit transfer send ID --to OFFER --code CODE'"
            default:
                return "this is a SealKit \(found.name), not a \(expected.name): check what was pasted"
            }
        case .unsupportedVersion(let kind, let version):
            return "this \(kind.name) is format \(version), which this SealKit does not read: update sealkit, or make it with a matching version"
        case .malformed(let kind, let reason):
            return "the \(kind.name) is damaged (\(reason)): copy it again in full"
        case .retiredVersion(let kind):
            return "this \(kind.name) is format v1, retired because a man in the middle could read its keys: update sealkit on both sides and start again with 'sealkit transfer receive --offline'"
        case .wrongCode:
            return "wrong code: the reply does not open with this receiver's code (the sender typed another code, answered another offer, or the reply was altered); nothing was stored; start again with a new 'sealkit transfer receive --offline'"
        case .badCode(let error):
            return error.description
        case .expired(let at, let now):
            return "this reply expired at \(at.formatted(.iso8601)) (\(Int(now.timeIntervalSince(at))) seconds ago): ask the sender to send again; nothing was stored"
        case .expiresTooLate(let date):
            return "this reply says it stays valid until \(date.formatted(.iso8601)), more than 24 hours ahead: refused; check both clocks and send again"
        case .madeInTheFuture(let date):
            return "this reply was made at \(date.formatted(.iso8601)), ahead of this machine's clock: check both clocks and send again"
        case .offerUsed:
            return "this offer was already used (a reply was tried): start a new 'sealkit transfer receive --offline' for another transfer"
        case .badLifetime(let seconds):
            return "a reply must expire within 1 to 86400 seconds, not \(seconds): choose --expires-in in that range"
        case .nothingToSend:
            return "no keys to send: name key ids, or use --all"
        case .tooLarge(let parts):
            return "too many keys for one transfer (it would take \(parts) parts, the limit is \(TransferParts.maximumPartCount)): send fewer ids at a time"
        case .tooManyVersions(let id, let count):
            return "key id '\(id)' has \(count) keys (current and retired), more than the \(KeyBundle.maximumVersionCount) of one id "
                + "that a backup or transfer carries, and SealKit has no command that drops retired keys: to keep or move "
                + "this id, copy its key file as it is (0600, into the same namespace folder; docs/format.md names the file)"
        case .tooManyKeys(let count):
            return "\(count) keys in all, more than the \(KeyBundle.maximumKeyCount) one backup or transfer carries: "
                + "back up or send fewer ids at a time"
        case .partsFromTwoTransfers:
            return "these parts come from two different transfers: give only the parts of one, all of them"
        case .duplicatePart(let index, let count):
            return "part \(index)/\(count) was given twice: give each part once"
        case .partsMixedWithWhole:
            return "a whole code and parts were mixed: give either one whole line, or every part of one transfer"
        case .missingParts(let missing, let count):
            return "the input ended before every part arrived (missing \(missing.map(String.init).joined(separator: ", ")) of \(count)): give all \(count) parts"
        case .partsDoNotFit:
            return "the parts do not fit together (one was altered, or copied wrongly): copy them again"
        case .noInput(let kind):
            return "no \(kind.name) on stdin: give it as one line, or one line per part"
        case .wrongPassphrase:
            return "wrong passphrase for this backup, or the backup was altered: nothing was stored"
        case .unsupportedKDF:
            return "the backup asks for Argon2id limits SealKit does not run: it is damaged or from an incompatible tool"
        case .passphraseKDF(let error):
            return error.description
        case .notInBackup(let id, let holds):
            let listed = holds.prefix(10).map { "'\($0)'" }.joined(separator: ", ") + (holds.count > 10 ? ", ..." : "")
            return "the backup holds no key for '\(id)' (it holds \(listed)): give an id it holds"
        }
    }
}
