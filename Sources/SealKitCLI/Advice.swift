@_spi(CLI) import SealKit
import SealKitQR

/// What a person at the command can do about an error, which the command words after the library's
/// `description`. The library says what happened (the reason, its detail, the key id, the namespace, the limit);
/// the remedy names the command's own commands, flags and environment variables, so it is chosen and worded here.
enum Advice: Equatable {
    /// The relay cannot be reached or stopped taking messages.
    case chooseAnotherRelay
    /// A network transfer timed out.
    case raiseTimeout
    /// The receiver of a network transfer went away.
    case startReceivingAgain
    /// An offline reply did not open with the receiver's code.
    case startOfflineReceivingAgain
    /// An offline offer was used already.
    case startAnotherOfflineReceive
    /// An offline reply's lifetime is out of range.
    case chooseExpiry
    /// A paper backup was given where another code was expected.
    case restorePaperBackup
    /// A share bundle was given where a paper backup was expected.
    case restoreShares
    /// A transfer offer was given where a reply was expected.
    case giveOfferToSender
    /// An offline code of format v1.
    case updateAndReceiveOffline
    /// Nothing to send was named.
    case nameIDsToSend
    /// The schema asks for seals and Rownd's mode was asked for.
    case dropRowndForSeals
    /// A field asks for v2 and Rownd's mode was asked for.
    case dropRowndForV2
    /// Strict processing failed in a way a Rownd app's profile would.
    case tryRownd
    /// A seal is missing from a profile that may predate seals.
    case sealWithEncrypt
    /// Two devices wrote one version.
    case readConflictOnPurpose
    /// The user's data is sealed under a key this device lacks.
    case receiveTheUsersKey
    /// Profile fields are sealed under a key this device lacks.
    case receiveTheUsersKeyForFields
    /// v1 values in fields written as v2: the profile predates v2.
    case migrateFieldsToV2
    /// The TPM needs the file keystore.
    case useFileKeystoreForTPM
    /// The desktop keyring is not available.
    case useFileKeystore
    /// A keyring item no longer parses.
    case deleteKeyringItem(KeyID, namespace: String)
    /// No key under the id.
    case makeOrReceiveKey(KeyID)
    /// A key exists under the id already.
    case rotateInstead
    /// A passphrase is needed.
    case givePassphrase
    /// A TPM PIN is needed.
    case givePIN
    /// A keystore path is not the user's own file or folder.
    case chooseAnotherHome
    /// The keystore's lock was held too long.
    case raiseLockTimeout
    /// The TPM cannot be reached.
    case chooseTPM
    /// The TPM did not answer in time.
    case raiseTPMTimeout
    /// A key without a PIN sealed inside the TPM's dictionary-attack lockout: seal it again.
    case resealOutsideLockout(KeyID)
    /// The TPM PIN must be given without a prompt.
    case givePINWithoutPrompt
    /// A key sealed to another TPM is in the way of bringing it here.
    case replaceKeyFromAnotherTPM(KeyID)
    /// Keys sealed to the TPM cannot leave the file keystore.
    case unsealFromTPM(KeyID)
    /// `--from-facts` was given lines that are not tagged.
    case tagFacts
    /// A QR payload too long at the chosen error correction: a lower one that holds more, if any.
    case shrinkQRPayload(lowerCorrection: String?, holding: Int?)
    /// No contact of the name given.
    case addContact
    /// No group of the name given.
    case joinGroup
    /// A shared value from someone who is not a contact.
    case checkSenderThenAddContact

    /// The remedy for `error`, from its reason and facts; nil when the description says all a person can do.
    /// A detail is read before the reason, since it is the finer of the two; an error with neither a remedy of its
    /// own nor a detail takes the remedy of the keystore error beneath it (a profile's seal record).
    init?(for error: SealKitError) {
        switch error.detail {
        case .relayUnreachable?, .relayStalled?: self = .chooseAnotherRelay
        case .nobodyCompleted?: self = .raiseTimeout
        case .receiverGone?: self = .startReceivingAgain
        case .replyDoesNotOpen?: self = .startOfflineReceivingAgain
        case .offerUsed?: self = .startAnotherOfflineReceive
        case .lifetimeOutOfRange?: self = .chooseExpiry
        case .paperBackupGiven?: self = .restorePaperBackup
        case .shareBundleAsPaperBackup?: self = .restoreShares
        case .offerAsReply?: self = .giveOfferToSender
        case .retiredFormat?: self = .updateAndReceiveOffline
        case .noKeysNamed?: self = .nameIDsToSend
        case .rowndWithSeals?: self = .dropRowndForSeals
        case .rowndWithV2Field?: self = .dropRowndForV2
        case .fieldsFailedStrictly?: self = .tryRownd
        case .fieldsUnderUnknownKey?: self = .receiveTheUsersKeyForFields
        case .v1InV2Field?: self = .migrateFieldsToV2
        case .tpmNeedsFileKeystore?: self = .useFileKeystoreForTPM
        case .keyringNotRunning?: self = .useFileKeystore
        case .damagedKeyringItem?:
            guard let id = error.keyID, let namespace = error.namespace else { return nil }
            self = .deleteKeyringItem(id, namespace: namespace)
        case .pinRequired?: self = .givePIN
        case .notOwnFile?: self = .chooseAnotherHome
        case .lockTimedOut?: self = .raiseLockTimeout
        case .tpmUnreachable?: self = .chooseTPM
        case .tpmTimedOut?: self = .raiseTPMTimeout
        case .pinlessKeyInLockout?:
            guard let id = error.keyID else { return nil }
            self = .resealOutsideLockout(id)
        case .lastPINTry?: self = .givePINWithoutPrompt
        case .sealedToTPM?:
            guard let id = error.keyID else { return nil }
            self = .unsealFromTPM(id)
        case .untaggedLine?: self = .tagFacts
        case .noSuchGroup?: self = .joinGroup
        case .qrPayloadTooLong?:
            guard let limit = error.limit else { return nil }
            let lower = QRErrorCorrection.allCases.first { QRCode.maximumPayload(correction: $0) > limit }
            self = .shrinkQRPayload(lowerCorrection: lower?.rawValue, holding: lower.map { QRCode.maximumPayload(correction: $0) })
        case .some:
            // A detail without a remedy of the command's: the reason's remedy may not fit it, so none.
            return nil
        case nil:
            switch error.reason {
            case .keyNotFound:
                guard let id = error.keyID else { return nil }
                self = .makeOrReceiveKey(id)
            case .keyExists: self = .rotateInstead
            case .contactNotFound: self = .addContact
            case .untrustedSender: self = .checkSenderThenAddContact
            case .passphraseRequired: self = .givePassphrase
            case .sealMissing: self = .sealWithEncrypt
            case .sealConflict: self = .readConflictOnPurpose
            case .keyElsewhere: self = .receiveTheUsersKey
            case .sealedToAnotherTPM:
                guard let id = error.keyID else { return nil }
                self = .replaceKeyFromAnotherTPM(id)
            default:
                guard let beneath = error.underlying, let advice = Advice(for: beneath) else { return nil }
                self = advice
            }
        }
    }

    /// The words, as they follow the description.
    var text: String {
        switch self {
        case .chooseAnotherRelay: return ": check the network, or choose another relay with --relay URL"
        case .raiseTimeout: return " (or raise --timeout)"
        case .startReceivingAgain: return ": start 'sealkit transfer receive' again and use its new code"
        case .startOfflineReceivingAgain: return "; start again with a new 'sealkit transfer receive --offline'"
        case .startAnotherOfflineReceive: return ": start a new 'sealkit transfer receive --offline' for another transfer"
        case .chooseExpiry: return ": choose --expires-in in that range"
        case .restorePaperBackup: return ": restore it with 'sealkit keys restore ID'"
        case .restoreShares: return ": add --shares ('sealkit keys restore --shares --all'), then paste the bundle and the shares"
        case .giveOfferToSender: return ": give it to the sender with 'sealkit transfer send ID --to OFFER --code CODE'"
        case .updateAndReceiveOffline:
            return ": update sealkit on both sides and start again with 'sealkit transfer receive --offline'"
        case .nameIDsToSend: return ": name key ids, or use --all"
        case .dropRowndForSeals: return ": --rownd never writes or checks a seal, so drop --rownd or the schema's \"sealkit\" member"
        case .dropRowndForV2: return "; --rownd writes v1 only, so drop --rownd or the field's \"sealkit\": {\"format\": 2}"
        case .tryRownd: return " (written by a Rownd app? try --rownd)"
        case .sealWithEncrypt:
            return "; if it is the id's latest profile (one that predates the seal, or a new one), seal it with "
                + "'sealkit profile encrypt --reseal', "
                + "which vouches for every field as it stands"
        case .readConflictOnPurpose: return "; read it with --accept-conflict, merge the changes, and write it again (a higher version)"
        case .receiveTheUsersKey:
            return ": receive the user's key from a device that has it ('sealkit transfer receive') instead of making a new one"
        case .receiveTheUsersKeyForFields: return " ('sealkit transfer receive')"
        case .migrateFieldsToV2: return " ('sealkit profile rotate --format v2 --from-v1')"
        case .useFileKeystoreForTPM: return ": use --keystore file"
        case .useFileKeystore:
            return ": run inside a desktop session with GNOME Keyring or KWallet, or use the file keystore (--keystore file, the default)"
        case .deleteKeyringItem(let id, let namespace):
            return "; delete it with 'sealkit keys delete --keystore secret-service --namespace \(namespace) -- \(id.shellWord)' "
                + "and restore the key from a backup"
        case .makeOrReceiveKey(let id):
            return ": make one with 'sealkit keys generate \(id.argument)', or bring it from another device with "
                + "'sealkit transfer receive' (or 'keys restore' from a backup)"
        case .rotateInstead: return ": use another id, or 'sealkit keys rotate' to replace it and keep the old one for decryption"
        case .givePassphrase:
            return ": give the passphrase with SEALKIT_PASSPHRASE or --passphrase-file, or run on a terminal to be asked"
        case .givePIN: return ": give the PIN with SEALKIT_PASSPHRASE or --passphrase-file, or run on a terminal to be asked"
        case .chooseAnotherHome: return "; move it away or choose another SEALKIT_HOME"
        case .raiseLockTimeout: return ", or set SEALKIT_LOCK_TIMEOUT to the seconds to wait"
        case .chooseTPM: return ", or set SEALKIT_TPM_TCTI to the TPM to use"
        case .raiseTPMTimeout: return "; check that the TPM SEALKIT_TPM_TCTI names is running, or set SEALKIT_TPM_TIMEOUT to the seconds to wait"
        case .resealOutsideLockout(let id):
            let reseal = id.rawValue.hasPrefix("-") ? "--tpm -- \(id.shellWord)" : "\(id.shellWord) --tpm"
            return "; then run 'sealkit keys passwd \(reseal)' to seal it again outside the lockout"
        case .givePINWithoutPrompt: return ", or give the PIN with SEALKIT_PASSPHRASE or --passphrase-file"
        case .replaceKeyFromAnotherTPM(let id):
            return "; to use it here, run 'sealkit keys delete \(id.argument)', then 'sealkit keys restore' from a backup of it or "
                + "'sealkit transfer receive'"
        case .addContact: return ": add one with 'sealkit contacts add NAME TEXT'"
        case .joinGroup: return ": join it with 'sealkit groups join --key ID TEXT'"
        case .checkSenderThenAddContact:
            return ": add the sender with 'sealkit contacts add NAME TEXT --fingerprint FP' once you have checked the fingerprint"
        case .unsealFromTPM(let id):
            let remove = id.rawValue.hasPrefix("-") ? "--remove -- \(id.shellWord)" : "\(id.shellWord) --remove"
            return "; run 'sealkit keys passwd \(remove)' (or 'keys passwd \(id.argument)' for a passphrase) first"
        case .tagFacts: return ": --facts reads tagged lines"
        case .shrinkQRPayload(let lower?, let holding?):
            return "; use lower error correction (--ecc \(lower) holds \(holding) bytes) or split the data"
        case .shrinkQRPayload: return "; split the data"
        }
    }
}

extension KeyID {
    /// The id as the last argument of a command the advice tells a person to run: one shell word, after `--`
    /// when it starts with `-` (`keys generate -- -rf`), so neither the shell nor the parser reads it as more.
    fileprivate var argument: String { (rawValue.hasPrefix("-") ? "-- " : "") + shellWord }
}

/// An error as the command prints it: a library error's description followed by the command's advice;
/// any other error as it describes itself.
func said(_ error: any Error) -> String {
    guard let error = error as? SealKitError else { return String(describing: error) }
    return error.description + (Advice(for: error)?.text ?? "")
}
