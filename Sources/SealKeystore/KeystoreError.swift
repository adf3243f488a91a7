import SystemPackage

/// What went wrong in a keystore, with what to do about it. Never carries key material.
public enum KeystoreError: Error, Equatable, Sendable, CustomStringConvertible {
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
    /// A key file that group or others can access; refused as ssh does.
    case insecurePermissions(path: String, mode: UInt32)
    /// A key file that cannot be parsed.
    case damagedKeyFile(path: String, reason: String)
    /// A file-system operation failed.
    case fileSystem(operation: String, path: String, errno: Errno)
    /// The desktop keyring (Secret Service) could not do what was asked.
    case keyring(KeyringProblem)

    public var description: String {
        switch self {
        case .notFound(let id, let namespace):
            return "no key for '\(id)' in namespace '\(namespace)': create one with 'sealkit keys generate' or import it"
        case .alreadyExists(let id):
            return "a key for '\(id)' already exists: use another id, or 'sealkit keys rotate' to replace it and keep the old one for decryption"
        case .conflictingKey(let id):
            return "a different key is already stored under '\(id)': storing this one would orphan every ciphertext made with the stored key; delete it first or use another id"
        case .locked(let id):
            return "key '\(id)' is passphrase-protected: give the passphrase with SEALKIT_PASSPHRASE or --passphrase-file, or run on a terminal to be asked"
        case .wrongPassphrase(let id):
            return "wrong passphrase for key '\(id)': nothing was changed"
        case .insecurePermissions(let path, let mode):
            return "key file \(path) is accessible by group or others (mode \(String(mode & 0o777, radix: 8))): run 'chmod 600 \(path)'"
        case .damagedKeyFile(let path, let reason):
            return "key file \(path) is damaged (\(reason)): restore it from a backup or delete it"
        case .fileSystem(let operation, let path, let errno):
            return "cannot \(operation) \(path): \(errno.description.lowercasedFirst)"
        case .keyring(let problem):
            return problem.description
        }
    }
}

extension String {
    fileprivate var lowercasedFirst: String {
        guard let first else { return self }
        return first.lowercased() + dropFirst()
    }
}
