#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The kinds of SealKit code text (`sealkit-<kind>-v<n>:`), transfer and backup alike: the text
/// layer tells them apart, so a backup pasted where a reply belongs is named as such.
package enum CodeKind: String, Sendable, Equatable, CaseIterable {
    /// An offline receiver's offer.
    case offer
    /// An offline sender's reply.
    case reply
    /// One part of a code split to fit QR codes.
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

    /// What people call it, in messages.
    package var name: String {
        switch self {
        case .offer: return "transfer offer"
        case .reply: return "transfer reply"
        case .part: return "part"
        case .backup: return "paper backup"
        case .shares: return "share backup bundle"
        }
    }
}

/// Why the text layer (codes, parts, key bundles) or a backup refused something: the cases that
/// transfers (`TransferError`) and backups (`SealKitError`) share, each with the one-line
/// description both show. None repeats key material or passphrases.
package enum CodeError: Error, Equatable, Sendable, CustomStringConvertible {
    case notCodeText(expected: CodeKind)
    case wrongKind(found: CodeKind, expected: CodeKind)
    case unsupportedVersion(CodeKind, version: String)
    case retiredVersion(CodeKind)
    case malformed(CodeKind, reason: String)
    case nothingToSend
    case tooLarge(parts: Int)
    case tooManyVersions(KeyID, count: Int)
    case tooManyKeys(count: Int)
    case partsFromTwoTransfers
    case duplicatePart(index: Int, count: Int)
    case partsMixedWithWhole
    case missingParts([Int], count: Int)
    case partsDoNotFit
    case noInput(CodeKind)
    case wrongPassphrase
    case unsupportedKDF
    case passphraseKDF(PassphraseKDFError)
    case notInBackup(KeyID, holds: [KeyID])

    /// What exactly happened, where the public reason covers cases a person would set right differently.
    package var detail: SealKitError.Detail? {
        switch self {
        case .wrongKind(.backup, _): return .paperBackupGiven
        case .wrongKind(.shares, .backup): return .shareBundleAsPaperBackup
        case .wrongKind(.offer, .reply): return .offerAsReply
        case .retiredVersion: return .retiredFormat
        case .nothingToSend: return .noKeysNamed
        default: return nil
        }
    }

    package var description: String {
        switch self {
        case .notCodeText(let expected):
            return "not a SealKit \(expected.name): expected one line starting with '\(expected.prefix)'"
        case .wrongKind(let found, let expected):
            switch (found, expected) {
            case (.backup, _):
                return "this is a paper backup, not a \(expected.name)"
            case (.shares, .backup):
                return "this is a share backup bundle, not a paper backup"
            case (.offer, .reply):
                return "this is a transfer offer, not a reply"
            default:
                return "this is a SealKit \(found.name), not a \(expected.name): check what was pasted"
            }
        case .unsupportedVersion(let kind, let version):
            return "this \(kind.name) is format \(version), which this SealKit does not read: update sealkit, or make it with a matching version"
        case .malformed(let kind, let reason):
            return "the \(kind.name) is damaged (\(reason)): copy it again in full"
        case .retiredVersion(let kind):
            return "this \(kind.name) is format v1, retired because a man in the middle could read its keys"
        case .nothingToSend:
            return "no keys to send"
        case .tooLarge(let parts):
            return "too many keys for one transfer (it would take \(parts) parts, the limit is \(CodeParts.maximumPartCount)): send fewer ids at a time"
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
