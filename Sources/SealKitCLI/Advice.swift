@_spi(CLI) import SealKit

/// The command's words for what a person can do about an error: the library states the problem in
/// `description`, and names the kind of remedy in `advice`; the flags, commands and environment variables that
/// carry it out are the command's, so they are worded here. Each text follows the description as it is printed.
extension SealKitError.Advice {
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
    return error.description + (error.advice?.text ?? "")
}
