import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKitTPM

/// `--tpm` and `--tpm-pin`, for the commands that store new keys (keys generate, keys restore,
/// transfer receive): the keys they store are sealed to the TPM `$SEALKIT_TPM_TCTI` names.
struct TPMOptions: ParsableArguments {
    @Flag(help: "Seal the keys to this machine's TPM (SEALKIT_TPM_TCTI, default device:/dev/tpmrm0): a copy opens nowhere else.")
    var tpm = false

    @Flag(help: "With --tpm: the TPM asks for a PIN before it unseals the keys (read like a passphrase), and locks out guessing.")
    var tpmPin = false

    func validate() throws {
        if tpmPin && !tpm { throw ValidationError("--tpm-pin goes with --tpm") }
    }

    /// Validates beside `--protect`, which chooses a passphrase instead.
    func validate(protect: Bool) throws {
        try validate()
        if tpm && protect { throw ValidationError("give --protect (a passphrase) or --tpm (the TPM), not both") }
    }

    /// Makes the keystores this process opens seal the ids they create to the TPM.
    func apply() { if tpm { KeystoreOptions.sealNewKeysToTPM = true } }

    /// Whether a secret is read for the new keys: a passphrase with `--protect`, a PIN with `--tpm-pin`.
    func needsSecret(protect: Bool) -> Bool { protect || tpmPin }
}

extension KeystoreOptions {
    /// With `--tpm`, ids already stored keep their protection: `--tpm` would store nothing new for them and
    /// leave them unsealed while saying otherwise, so it is refused, pointing to `keys passwd --tpm`.
    static func checkSealingToTPM(_ ids: [KeyID], in keystore: Keystore) throws {
        guard sealNewKeysToTPM else { return }
        for id in ids {
            if let existing = try keystore.entry(for: id), !existing.isSealedToTPM {
                throw CLIFailure(
                    "\(id.shown) is already stored and not sealed to the TPM, and --tpm does not change stored keys: nothing was changed; "
                        + "run 'sealkit keys passwd \(id.shellWord) --tpm' to seal them", status: .usage)
            }
        }
    }
}
