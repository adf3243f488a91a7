import SystemPackage

/// What went wrong in a keystore, with what to do about it. Never carries key material.
package enum KeystoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No key is stored under this id.
    case notFound(KeyID, namespace: String)
    /// `generate` or `create` met an id that already holds a key.
    case alreadyExists(KeyID)
    /// An import would replace a different key, orphaning its ciphertexts.
    case conflictingKey(KeyID)
    /// The key is passphrase-protected and no passphrase was given.
    case locked(KeyID)
    /// The passphrase given does not unlock the key.
    case wrongPassphrase(KeyID)
    /// A key file that group or others can access, or a keystore folder or lock file that
    /// they can write; refused as ssh's StrictModes does. `mode` includes the file type.
    case insecurePermissions(path: String, mode: UInt32)
    /// A keystore file or folder owned by another user: it could have been planted.
    case unsafeOwner(path: String, owner: UInt32, user: UInt32)
    /// A symbolic link, or something other than a folder, where the keystore expects its own folder or file.
    case notOwnFile(path: String, reason: String)
    /// Another process held the keystore's lock for longer than the timeout.
    case lockTimeout(path: String, seconds: Double)
    /// An id would hold more keys than one may.
    case tooManyKeys(KeyID, limit: Int)
    /// Guarded memory could not be had.
    case outOfMemory(String)
    /// A key file that cannot be parsed.
    case damagedKeyFile(path: String, reason: String)
    /// A file-system operation failed.
    case fileSystem(operation: String, path: String, errno: Errno)
    /// The desktop keyring (Secret Service) could not do what was asked.
    case keyring(KeyringProblem)
    /// The TPM cannot be reached (no device, no TCTI library, nothing answering), or this keystore was
    /// opened without one; `detail` says which.
    case tpmUnavailable(tcti: String, detail: String)
    /// A system library the keystore opens on first use (tpm2-tss, libsecret and GLib) cannot be loaded: the whole
    /// line, naming the library and its Debian package.
    case libraryUnavailable(String)
    /// The keys are sealed to the TPM under a PIN and no PIN was given.
    case pinRequired(KeyID)
    /// The TPM refused the PIN (and counted one failure towards its lockout).
    case wrongPIN(KeyID)
    /// The TPM is in dictionary-attack lockout after too many wrong PINs; `hasPIN` false: the key has none (it
    /// was sealed before keys without a PIN were kept out of the lockout), so other keys' wrong PINs caused it.
    case tpmLockout(KeyID, hasPIN: Bool)
    /// The TPM takes one more wrong PIN before it locks out, so no PIN is asked for on the terminal;
    /// `interval` is the seconds after which it forgets one (0: never).
    case lastPINTry(KeyID, interval: Int)
    /// The TPM did not answer within the keystore's time limit for a TPM call (`seconds`).
    case tpmTimedOut(tcti: String, seconds: Int)
    /// The keys were sealed to another TPM (or this TPM's owner hierarchy was cleared since).
    case sealedToAnotherTPM(KeyID)
    /// The TPM refused something else; `detail` is the TSS's response code.
    case tpmFailed(String)
    /// A migration met keys sealed to the TPM, which only the file keystore holds.
    case sealedToTPMStaysHere(KeyID)
    /// A TPM PIN longer than a sealed object's authorization value may be.
    case pinTooLong(limit: Int)

    package var description: String {
        switch self {
        case .notFound(let id, let namespace):
            return "no key for '\(id)' in namespace '\(namespace)'"
        case .alreadyExists(let id):
            return "a key for '\(id)' already exists"
        case .conflictingKey(let id):
            return "a different key is already stored under '\(id)': storing this one would orphan every ciphertext made with the stored key; delete it first or use another id"
        case .locked(let id):
            return "key '\(id)' is passphrase-protected"
        case .wrongPassphrase(let id):
            return "wrong passphrase for key '\(id)': nothing was changed"
        case .insecurePermissions(let path, let mode):
            let octal = String(mode & 0o7777, radix: 8)
            if mode & 0o170000 == 0o040000 {
                return "keystore folder \(path) is writable by group or others (mode \(octal)): run 'chmod 700 \(path)'"
            }
            if path.hasSuffix("/.lock") {
                return "keystore lock file \(path) is writable by group or others (mode \(octal)): run 'chmod 600 \(path)'"
            }
            return "\(Self.fileKind(path)) \(path) is accessible by group or others (mode \(octal)): run 'chmod 600 \(path)'"
        case .unsafeOwner(let path, let owner, let user):
            return "\(path) is owned by uid \(owner), not by the current user (uid \(user)), so another user could have planted or changed it: check it, then run 'chown \(user) \(path)', or delete it"
        case .notOwnFile(let path, let reason):
            return "cannot use \(path): it \(reason), and the keystore uses only real files and folders of its own"
        case .lockTimeout(let path, let seconds):
            let shown = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
            return "the keystore is locked by another process (waited \(shown) s for \(path)): try again"
        case .tooManyKeys(let id, let limit):
            return "'\(id)' would hold more than \(limit) keys, the most one id may have: delete the id or restore it from a backup with fewer keys"
        case .outOfMemory(let reason):
            return reason
        case .damagedKeyFile(let path, let reason):
            if Self.isSealRecord(path) {
                // Backups do not carry records, so there is nothing to restore it from.
                return "profile seal record \(path) is damaged (\(reason)): delete it to start rollback detection again from the "
                    + "next profile read"
            }
            return "key file \(path) is damaged (\(reason)): restore it from a backup or delete it"
        case .fileSystem(let operation, let path, let errno):
            return "cannot \(operation) \(path): \(errno.description.lowercasedFirst)"
        case .keyring(let problem):
            return problem.description
        case .libraryUnavailable(let message):
            return message
        case .tpmUnavailable(let tcti, let detail):
            return "cannot reach the TPM at '\(TextSafety.printable(tcti))' (\(detail)): check that the machine has a TPM 2.0 and that you may "
                + "use it (the 'tss' group for /dev/tpmrm0)"
        case .pinRequired(let id):
            return "key '\(id)' is sealed to the TPM under a PIN"
        case .wrongPIN(let id):
            return "wrong TPM PIN for key '\(id)': nothing was changed; the TPM locks out after a few wrong PINs"
        case .tpmLockout(let id, hasPIN: true):
            return "the TPM refuses PINs for now (dictionary-attack lockout after too many wrong PINs), so key '\(id)' cannot be opened: wait for the lockout to end (by default 1000 s per failure) or have the TPM's owner reset it"
        case .tpmLockout(let id, hasPIN: false):
            return "key '\(id)' has no PIN, but it was sealed when keys without a PIN still fell under the TPM's dictionary-attack lockout, "
                + "which wrong PINs for other keys have now set off: wait for the lockout to end (by default 1000 s per failure) or have the TPM's "
                + "owner reset it"
        case .lastPINTry(let id, let interval):
            let wait = interval > 0 ? "wait \(interval) s for the TPM to forget a wrong PIN" : "have the TPM's owner reset its lockout"
            return "the TPM takes one more wrong PIN before it locks out every key with a PIN, so the PIN for key '\(id)' is not asked for "
                + "on the terminal: \(wait)"
        case .tpmTimedOut(let tcti, let seconds):
            return "the TPM at '\(TextSafety.printable(tcti))' did not answer within \(seconds) s: nothing was changed"
        case .sealedToAnotherTPM(let id):
            return "key '\(id)' is sealed to another machine's TPM (or this TPM was cleared since): it opens only there"
        case .tpmFailed(let detail):
            return "the TPM refused the operation (\(detail))"
        case .sealedToTPMStaysHere(let id):
            return "key '\(id)' is sealed to this machine's TPM, which only the file keystore does: nothing was moved"
        case .pinTooLong(let limit):
            return "a TPM PIN is at most \(limit) bytes: choose a shorter one (nothing was changed)"
        }
    }
}

extension KeystoreError {
    /// Whether `path` is an id's profile seal record (beside its key file, `.seal` for `.key`), which the keystore
    /// reads under the key files' rules but which holds no key.
    static func isSealRecord(_ path: String) -> Bool { path.hasSuffix(".seal") }

    /// What a message calls the file at `path`: a key file, or the seal record, which is no key.
    static func fileKind(_ path: String) -> String { isSealRecord(path) ? "profile seal record" : "key file" }
}

extension KeystoreError {
    /// What exactly happened, where the public reason covers cases a person would set right differently.
    package var detail: SealKitError.Detail? {
        switch self {
        case .pinRequired: return .pinRequired
        case .notOwnFile: return .notOwnFile
        case .lockTimeout: return .lockTimedOut
        case .tpmUnavailable: return .tpmUnreachable
        case .tpmTimedOut: return .tpmTimedOut
        case .tpmLockout(_, hasPIN: false): return .pinlessKeyInLockout
        case .lastPINTry: return .lastPINTry
        case .sealedToTPMStaysHere: return .sealedToTPM
        case .keyring(let problem): return problem.detail
        default: return nil
        }
    }
}

extension String {
    fileprivate var lowercasedFirst: String {
        guard let first else { return self }
        return first.lowercased() + dropFirst()
    }
}
