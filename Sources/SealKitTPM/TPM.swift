// Keys sealed to the machine's TPM 2.0 (through tpm2-tss), on top of SealKit's file keystore.
@_exported import SealKit

/// A TPM 2.0, reached through a tpm2-tss TCTI: the machine's own (`device:/dev/tpmrm0`), or any other
/// the TCTI names, such as a software TPM (`swtpm:host=127.0.0.1,port=2321`).
///
/// Keys sealed to a TPM open only with that TPM: their wrapping key is a sealed object under the TPM's
/// storage primary key, which never leaves it. A copy of the keystore (a backup of `$HOME`, a disk image)
/// opens nowhere else. A PIN, when given, is the sealed object's authorization value, so the TPM's own
/// dictionary-attack lockout limits guessing.
public struct TPM: Sendable, Equatable {
    /// The TCTI string that names the TPM.
    public let tcti: String

    /// The longest one TPM call may take, connecting included (30 s by default): a TPM that accepts and never
    /// answers fails the call with `.tpmUnavailable` instead of hanging it.
    public var timeout = TPMSealer.defaultTimeout

    /// The kernel's resource manager for the machine's TPM: `device:/dev/tpmrm0`.
    public static let defaultTCTI = TPMSealer.defaultTCTI

    /// Whether `tcti` names one of the TCTIs tpm2-tss documents (device, swtpm, mssim, tabrmd), the only ones a
    /// TPM call opens: a TCTI is a library loaded into the process, so a path would load code.
    /// - Parameter tcti: a TCTI string, such as `swtpm:host=127.0.0.1,port=2321`.
    /// - Returns: whether a TPM call would open it.
    public static func isNamedTCTI(_ tcti: String) -> Bool { TPMSealer.isNamedTCTI(tcti) }

    /// Why `tcti` must not be opened: `device:` naming something other than a character device (a regular file,
    /// a folder, a FIFO), which tpm2-tss would write TPM commands into. A TPM call refuses such a TCTI too; this
    /// lets a program say so before it uses the TPM.
    /// - Parameter tcti: a TCTI string, such as `device:/dev/tpmrm0`.
    /// - Returns: what is wrong, in words; nil when it may be opened.
    public static func deviceProblem(_ tcti: String) -> String? { TPMSealer.deviceProblem(tcti) }

    /// A TPM reached through `tcti`. Nothing connects until a key is sealed or unsealed.
    /// - Parameter tcti: a tpm2-tss TCTI string naming one of the TCTIs tpm2-tss documents (`device`, `swtpm`,
    ///   `mssim`, `tabrmd`) with its configuration after `:`; by default the machine's TPM. Another name, or a
    ///   library path, is refused when the TPM is first used.
    public init(tcti: String = TPM.defaultTCTI) { self.tcti = tcti }
}

extension Keystore {
    /// This keystore, able to open keys sealed to `tpm`; with `sealingNewKeys`, the ids it creates (a
    /// generated, imported, restored or received key) are sealed to `tpm` too, and the passphrase given
    /// with them is their PIN (none: no PIN). Only file keystores hold TPM-sealed keys; others are returned
    /// as they are.
    /// - Parameters:
    ///   - tpm: the TPM that unseals keys (and seals new ones).
    ///   - sealingNewKeys: seal the ids this keystore creates to `tpm`.
    /// - Returns: the keystore.
    public func using(_ tpm: TPM, sealingNewKeys: Bool = false) -> Keystore {
        guard var files = storage as? FileKeystore else { return self }
        files.tpm = TPMSealer(tcti: tpm.tcti, timeout: tpm.timeout)
        files.sealsNewKeysToTPM = sealingNewKeys
        return Keystore(files)
    }

    /// Seals every key of `id` to `tpm`, in one atomic write: a crash leaves the keys as they were or
    /// sealed, never neither. Keys already sealed are sealed again (a new PIN, or none).
    /// - Parameters:
    ///   - id: the key id.
    ///   - tpm: the TPM to seal them to.
    ///   - pin: the PIN the TPM asks for before it unseals them; nil for none.
    ///   - current: unlocks the keys as they are protected now (their passphrase or TPM PIN).
    /// - Returns: the entry afterwards.
    /// - Throws: `SealKitError`: `.keyNotFound`, `.wrongPassphrase`, `.wrongPIN`, `.tpmUnavailable`, ...; nothing changes then.
    @discardableResult
    public func sealKeys(of id: KeyID, to tpm: TPM, pin: Passphrase?, unlockingWith current: Passphrase?) throws(SealKitError) -> KeyEntry {
        guard let files = using(tpm).storage as? FileKeystore else {
            throw SealKitError(.invalidArgument, keyID: id, "only the file keystore seals keys to the TPM", detail: .tpmNeedsFileKeystore)
        }
        do {
            return try files.changeProtection(of: id, from: current, to: .tpm(pin: pin))
        } catch {
            throw SealKitError(error)
        }
    }
}

extension Keystore {
    /// How many PINs a terminal prompt may try for `id`: at most `limit`, and fewer than the wrong PINs the TPM
    /// takes before its dictionary-attack lockout (which stops every key with a PIN); `limit` for ids without a
    /// TPM PIN, and for keystores other than files.
    /// - Parameters:
    ///   - id: the key id a PIN is asked for.
    ///   - limit: the most tries the prompt would offer.
    /// - Returns: how many PINs to ask for, at least 1.
    /// - Throws: `SealKitError`: `.tpmLockout` when the TPM is locked out now or one more wrong PIN would lock it,
    ///   `.tpmUnavailable` when its counters cannot be read.
    public func pinPromptTries(for id: KeyID, atMost limit: Int) throws(SealKitError) -> Int {
        guard let files = storage as? FileKeystore else { return limit }
        do {
            return try files.pinPromptTries(for: id, atMost: limit)
        } catch {
            throw SealKitError(error)
        }
    }
}
