import SealCore

/// Where a user's keys live: files in a folder of the user's own, or this process's memory.
///
/// Keys go in and are used through a ``Vault`` (or a transfer or backup); there is deliberately no call
/// that hands key bytes back out. A keystore on disk is safe under crashes and concurrent processes:
/// files are 0600 in 0700 folders owned by the user, every write is atomic and durable, and a failed
/// operation changes nothing.
///
/// ```swift
/// let keystore = try Keystore(directory: "/home/ada/.local/share/sealkit")
/// let vault = Vault(keystore: keystore, user: try KeyID("user-123"))
/// ```
public struct Keystore: Sendable {
    /// The backend, for the package's own capabilities (transfer, backups, the keyring, the command line).
    package let storage: any KeyStorage

    /// Wraps a backend.
    package init(_ storage: any KeyStorage) {
        self.storage = storage
    }

    /// A keystore in `directory`, which is made (0700) on first write.
    /// - Parameters:
    ///   - directory: the keystore's folder; `sealkit` uses `$SEALKIT_HOME`, by default `~/.local/share/sealkit`.
    ///   - namespace: keeps the keys of different apps or environments apart: 1 to 64 letters, digits, `.`, `_`, `-`.
    /// - Throws: ``SealKitError/Reason/invalidArgument`` for a bad namespace.
    public init(directory: String, namespace: String = "default") throws(SealKitError) {
        self.init(FileKeystore(root: directory, namespace: try Self.namespace(namespace)))
    }

    /// A keystore in this process's memory only, for tests and for apps that keep keys themselves;
    /// its keys are gone when the last copy of it is.
    /// - Parameter namespace: keeps the keys of different apps or environments apart.
    /// - Throws: ``SealKitError/Reason/invalidArgument`` for a bad namespace.
    public static func inMemory(namespace: String = "default") throws(SealKitError) -> Keystore {
        Keystore(InMemoryKeystore(namespace: try Self.namespace(namespace)))
    }

    /// Every stored id's public facts, sorted by id. Unlocks nothing.
    /// - Throws: ``SealKitError`` for an unusable keystore or entry.
    public func entries() throws(SealKitError) -> [KeyEntry] {
        do {
            return try storage.entries()
        } catch {
            throw SealKitError(error)
        }
    }

    /// The public facts of the keys stored under `id`; nil when there are none. Unlocks nothing.
    /// - Throws: ``SealKitError`` for an unusable keystore or entry.
    public func entry(for id: KeyID) throws(SealKitError) -> KeyEntry? {
        do {
            return try storage.entry(for: id)
        } catch {
            throw SealKitError(error)
        }
    }

    package static func namespace(_ name: String) throws(SealKitError) -> Namespace {
        do {
            return try Namespace(name)
        } catch {
            throw SealKitError(.invalidArgument, String(describing: error))
        }
    }
}

extension SealKitError {
    /// The keystore's error, with its message unchanged.
    package init(_ error: KeystoreError) {
        let reason: Reason
        var keyID: KeyID?
        switch error {
        case .notFound(let id, _): reason = .keyNotFound; keyID = id
        case .alreadyExists(let id): reason = .keyExists; keyID = id
        case .conflictingKey(let id): reason = .conflictingKey; keyID = id
        case .locked(let id): reason = .passphraseRequired; keyID = id
        case .wrongPassphrase(let id): reason = .wrongPassphrase; keyID = id
        case .insecurePermissions, .unsafeOwner, .notOwnFile: reason = .unsafeFile
        case .lockTimeout: reason = .keystoreBusy
        case .tooManyKeys(let id, _): reason = .damagedKey; keyID = id
        case .damagedKeyFile: reason = .damagedKey
        case .outOfMemory, .fileSystem: reason = .fileSystem
        case .keyring(let problem):
            switch problem {
            case .locked: reason = .keyringLocked
            case .damagedItem(let id, _, _): reason = .damagedKey; keyID = id
            case .unavailable, .timedOut, .failed: reason = .keyringUnavailable
            }
        }
        self.init(reason, keyID: keyID, String(describing: error))
    }

    /// A key history that breaks the keystore's rules (from a transfer or backup).
    package init(_ error: KeyHistoryError) {
        self.init(.invalidKeyText, String(describing: error))
    }
}
