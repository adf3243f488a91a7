import SealKit

/// Backups throw the one public error type; the name says, in this target's code, which reasons it uses.
package typealias BackupError = SealKitError

extension SealKitError {
    /// The text layer's error as a backup's, with the same description.
    package init(_ error: CodeError) {
        let reason: Reason
        var keyID: KeyID?
        switch error {
        case .notCodeText, .wrongKind: reason = .notABackup
        case .unsupportedVersion, .retiredVersion: reason = .unsupportedFormat
        case .malformed, .partsFromTwoTransfers, .duplicatePart, .partsMixedWithWhole, .partsDoNotFit, .unsupportedKDF:
            reason = .damagedBackup
        case .missingParts, .noInput: reason = .incompleteBackup
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
        self.init(reason, keyID: keyID, error.description, detail: error.detail)
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
