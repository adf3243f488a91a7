
/// A key file's wrapping key sealed to a TPM: what the file's `protection tpm` line holds.
package struct TPMSealedKey: Sendable, Equatable {
    /// Whether the sealed object has a PIN (its authorization value); without one, any process of the
    /// user's on this machine can unseal it.
    package var hasPIN: Bool
    /// The name of the TPM's storage primary key the object was sealed under: a different one means
    /// another TPM (or this TPM's owner hierarchy cleared).
    package var primaryName: [UInt8]
    /// The sealed object's public and private parts, as the TPM marshals them (TPM2B_PUBLIC ‖ TPM2B_PRIVATE).
    package var blob: [UInt8]

    /// Makes the record of a sealed key.
    package init(hasPIN: Bool, primaryName: [UInt8], blob: [UInt8]) {
        self.hasPIN = hasPIN
        self.primaryName = primaryName
        self.blob = blob
    }
}

/// A TPM's dictionary-attack counters (TPM2_GetCapability, TPM_PT_LOCKOUT_COUNTER and the three after it): every
/// object with a PIN (and, before keys without one were sealed outside it, every sealed object) is locked out
/// together once `failures` reaches `maximum`.
package struct TPMLockoutState: Sendable, Equatable {
    /// The wrong PINs the TPM counts now (it forgets one every `interval` seconds).
    package var failures: Int
    /// The count of wrong PINs that puts the TPM in lockout.
    package var maximum: Int
    /// The seconds after which the TPM forgets one wrong PIN (0: it never does, only its owner's reset).
    package var interval: Int

    /// The counters as the TPM reports them.
    package init(failures: Int, maximum: Int, interval: Int) {
        self.failures = failures
        self.maximum = maximum
        self.interval = interval
    }

    /// The wrong PINs the TPM still takes before it locks out.
    package var remaining: Int { max(0, maximum - failures) }

    /// How many PINs a prompt may offer, at most `limit`: always fewer than the TPM has left, so that a
    /// mistyped session never puts the TPM in lockout. 0 when one more wrong PIN would.
    package func promptTries(atMost limit: Int) -> Int { max(0, min(limit, remaining - 1)) }
}

/// Seals and unseals key files' wrapping keys with a TPM. SealKit links no TPM library: the
/// SealKitTPM product supplies this, and a keystore is given one to open TPM-protected key files.
package protocol TPMKeySealer: Sendable {
    /// Seals `key` to the TPM, with `pin` (when given) as the sealed object's authorization value.
    /// - Throws: `.tpmUnavailable`, or `.tpmFailed`.
    func seal(_ key: SymmetricKey, pin: Passphrase?) throws(KeystoreError) -> TPMSealedKey

    /// Unseals a key `seal` made.
    /// - Parameters:
    ///   - sealed: what the key file holds.
    ///   - pin: the PIN, when the object has one.
    ///   - id: names the key in errors.
    /// - Throws: `.tpmUnavailable`, `.wrongPIN`, `.tpmLockout`, `.sealedToAnotherTPM`, `.damagedKeyFile`, `.tpmFailed`.
    func unseal(_ sealed: TPMSealedKey, pin: Passphrase?, id: KeyID) throws(KeystoreError) -> SymmetricKey

    /// The TPM's dictionary-attack counters now.
    /// - Throws: `.tpmUnavailable`, or `.tpmFailed`.
    func lockoutState() throws(KeystoreError) -> TPMLockoutState
}

/// How an id's keys are to be protected at rest after a protection change.
package enum NewProtection: Sendable {
    /// Stored unprotected.
    case none
    /// Under a passphrase (Argon2id).
    case passphrase(Passphrase)
    /// Sealed to the keystore's TPM, with an optional PIN.
    case tpm(pin: Passphrase?)
}
