import SealCore
import SealKeystore

/// Why a backup could not be made or restored: paper backups, share backups and their shares.
///
/// Switch on ``reason``; ``description`` is one line that says what went wrong and what to do,
/// and never repeats key material, a passphrase or a share's words (a share is named by its first
/// four words at most, which hold no part of its value).
public struct BackupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, for code that decides what to do next.
    public enum Reason: Sendable, Hashable {
        /// The text is no backup of the kind expected: not SealKit text, or SealKit text of another kind.
        case notABackup
        /// A backup of a format version this SealKit does not read.
        case unsupportedVersion
        /// The backup is damaged: cut short, mistyped, parts that do not fit, or Argon2id limits
        /// SealKit does not run.
        case damaged
        /// Parts of the backup are missing, or none was given.
        case incomplete
        /// No keys were given to back up.
        case noKeys
        /// More keys than one backup carries, in all or for one id (``BackupError/keyID``).
        case tooManyKeys
        /// The passphrase is wrong, or the backup was altered: the two cannot be told apart.
        case wrongPassphrase
        /// A passphrase chosen for a new backup is shorter than ``PaperBackup/minimumChosenLength``.
        case passphraseTooShort
        /// Argon2id could not run (not enough memory).
        case passphraseKDFFailed
        /// The backup holds no key for the id asked for (``BackupError/keyID``).
        case keyNotInBackup
        /// Share groups or thresholds that SLIP-39 does not allow.
        case invalidShareLayout
        /// A share that does not read as one: a word not on the list, a length, a checksum.
        case invalidShare
        /// Shares that do not belong together: of different backups, or one of them damaged.
        case mismatchedShares
        /// More shares are needed.
        case notEnoughShares
        /// The shares are whole but do not open this bundle: they belong to another backup.
        case sharesOfAnotherBackup
    }

    /// What went wrong.
    public let reason: Reason
    /// The key id the error is about, when it is about one.
    public let keyID: KeyID?
    /// One line saying what went wrong and what to do.
    public let description: String

    package init(_ reason: Reason, keyID: KeyID? = nil, _ description: String) {
        self.reason = reason
        self.keyID = keyID
        self.description = description
    }

    /// The text layer's error as a backup's, with the same description.
    package init(_ error: CodeError) {
        let reason: Reason
        var keyID: KeyID?
        switch error {
        case .notCodeText, .wrongKind: reason = .notABackup
        case .unsupportedVersion, .retiredVersion: reason = .unsupportedVersion
        case .malformed, .partsFromTwoTransfers, .duplicatePart, .partsMixedWithWhole, .partsDoNotFit, .unsupportedKDF:
            reason = .damaged
        case .missingParts, .noInput: reason = .incomplete
        case .nothingToSend: reason = .noKeys
        case .tooLarge, .tooManyKeys: reason = .tooManyKeys
        case .tooManyVersions(let id, _):
            reason = .tooManyKeys
            keyID = id
        case .wrongPassphrase: reason = .wrongPassphrase
        case .passphraseKDF: reason = .passphraseKDFFailed
        case .notInBackup(let id, _):
            reason = .keyNotInBackup
            keyID = id
        }
        self.init(reason, keyID: keyID, error.description)
    }

    /// A SLIP-39 error as a backup's, with the same description.
    package init(_ error: SLIP39Error) {
        let reason: Reason
        switch error {
        case .unknownWord, .tooShort, .badLength, .badChecksum, .badPadding, .groupThresholdExceedsCount, .iterationExponentTooHigh:
            reason = .invalidShare
        case .noShares, .needMore: reason = .notEnoughShares
        case .mixedBackups, .conflictingShares, .badDigest: reason = .mismatchedShares
        case .invalidParameters: reason = .invalidShareLayout
        }
        self.init(reason, error.description)
    }

    /// Runs `body`, giving its text-layer error as a backup's.
    package static func converting<R>(_ body: () throws(CodeError) -> R) throws(BackupError) -> R {
        do {
            return try body()
        } catch {
            throw BackupError(error)
        }
    }
}
