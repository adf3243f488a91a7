
/// Where a user's keys live: files in a folder of the user's own, or this process's memory.
///
/// Keys go in and are used through a `Vault` (or a transfer or backup); there is deliberately no call
/// that hands key bytes back out. A keystore on disk is safe under crashes and concurrent processes:
/// files are 0600 in 0700 folders owned by the user, every write is atomic and durable, and a failed
/// operation changes nothing.
///
/// ```swift
/// let keystore = try Keystore(directory: "/home/ada/.local/share/sealkit")
/// let vault = Vault(keystore: keystore, user: try KeyID("user-123"), format: .v2)
/// ```
public struct Keystore: Sendable {
    /// The backend, for the package's own capabilities (transfer, backups, the keyring, the command line).
    package let storage: any KeyStorage

    /// Wraps a backend.
    package init(_ storage: any KeyStorage) {
        self.storage = storage
    }

    /// A keystore in `directory`, which is made (0700) on first write; each namespace is a folder in it.
    /// - Parameters:
    ///   - directory: the keystore's folder; `sealkit` uses `$SEALKIT_HOME`, by default `~/.local/share/sealkit`.
    ///   - namespace: keeps the keys of different apps or environments apart: 1 to 64 letters, digits, `.`, `_`, `-`.
    ///   - lockTimeout: how long a change waits for another process that holds the keystore's lock.
    /// - Throws: `SealKitError.Reason.invalidArgument` for a bad namespace.
    public init(directory: String, namespace: String = "default", lockTimeout: Duration = .seconds(10)) throws(SealKitError) {
        self.init(FileKeystore(root: directory, namespace: try Self.namespace(namespace), lockTimeout: lockTimeout))
    }

    /// The namespace this keystore works in.
    public var namespace: String { storage.namespace.name }

    /// Where the keys are, for people: the namespace's folder, or the backend's name.
    public var location: String {
        switch storage {
        case let files as FileKeystore: return files.folder
        case is InMemoryKeystore: return "memory"
        default: return "the desktop keyring (Secret Service)"
        }
    }

    /// A keystore in this process's memory only, for tests and for apps that keep keys themselves;
    /// its keys are gone when the last copy of it is.
    /// - Parameter namespace: keeps the keys of different apps or environments apart.
    /// - Throws: `SealKitError.Reason.invalidArgument` for a bad namespace.
    public static func inMemory(namespace: String = "default") throws(SealKitError) -> Keystore {
        Keystore(InMemoryKeystore(namespace: try Self.namespace(namespace)))
    }

    /// Every stored id's public facts, sorted by id. Unlocks nothing.
    /// - Throws: `SealKitError` for an unusable keystore or entry.
    public func entries() throws(SealKitError) -> [KeyEntry] {
        do {
            return try storage.entries()
        } catch {
            throw SealKitError(error)
        }
    }

    /// The public facts of the keys stored under `id`; nil when there are none. Unlocks nothing.
    /// - Throws: `SealKitError` for an unusable keystore or entry.
    public func entry(for id: KeyID) throws(SealKitError) -> KeyEntry? {
        do {
            return try storage.entry(for: id)
        } catch {
            throw SealKitError(error)
        }
    }

    /// Every usable id's public facts, sorted by id, and a problem for each entry that cannot be used
    /// (damaged, open to other users, not the user's own), so one bad entry does not hide the others.
    /// - Returns: the entries, and the problems, each naming its key id where the entry still shows it.
    /// - Throws: `SealKitError` only for a problem with the keystore as a whole (its folders).
    public func survey() throws(SealKitError) -> (entries: [KeyEntry], problems: [SealKitError]) {
        do {
            let survey = try storage.survey()
            return (survey.entries, survey.problems.map { SealKitError($0.error, keyID: $0.id) })
        } catch {
            throw SealKitError(error)
        }
    }

    /// The keys of `ids`, current and retired, unlocked, to carry to another keystore (a transfer, a backup).
    /// - Parameters:
    ///   - ids: the ids whose keys to export, each at most once.
    ///   - passphrase: unlocks protected keys.
    /// - Throws: `SealKitError`: `.keyNotFound`, `.passphraseRequired`, `.wrongPassphrase`, ...
    public func exportKeys(_ ids: [KeyID], passphrase: Passphrase?) throws(SealKitError) -> [KeyHistory] {
        do {
            return try ids.map { id throws(KeystoreError) in try storage.history(for: id, passphrase: passphrase) }
        } catch {
            throw SealKitError(error)
        }
    }

    /// Stores keys received from another keystore, all of them or none: every id is checked first, and an id
    /// that holds a different current key here refuses the whole import. The same current key merges (retired
    /// keys it lacks are added, since they only decrypt).
    /// - Parameters:
    ///   - keys: the ids and their keys.
    ///   - passphrase: protects new entries at rest, and unlocks protected ones already here.
    /// - Returns: for each id in order, whether anything was written (false: the keys were here already).
    /// - Throws: `SealKitError`: `.conflictingKey` naming the id (nothing written), `.wrongPassphrase`, ...
    @discardableResult
    public func importKeys(_ keys: [KeyHistory], passphrase: Passphrase?) throws(SealKitError) -> [Bool] {
        do {
            return try storage.storeAll(keys, passphrase: passphrase).map { $0 == .stored }
        } catch {
            throw SealKitError(error)
        }
    }

    /// Moves `id`'s keys, current and retired, into `destination`, then deletes them here.
    ///
    /// The destination stores all of them or none: an id it lacks gets every key, the same current key
    /// merges, a different one is refused. The keys are deleted here only after the destination has been
    /// read back and holds every one of them, so a failure at any step leaves them at least here, and
    /// moving again finishes the job. Protected keys stay protected under the same passphrase.
    /// - Parameters:
    ///   - id: the id to move.
    ///   - destination: the keystore to move it into.
    ///   - passphrase: unlocks protected keys on either side.
    /// - Returns: the id's entry as the destination now holds it.
    /// - Throws: `SealKitError`: `.keyNotFound`, `.conflictingKey`, `.passphraseRequired`, `.wrongPassphrase`, ...
    @discardableResult
    public func move(_ id: KeyID, to destination: Keystore, passphrase: Passphrase?) throws(SealKitError) -> KeyEntry? {
        do {
            try storage.move(id, to: destination.storage, passphrase: passphrase)
            return try destination.storage.entry(for: id)
        } catch {
            throw SealKitError(error)
        }
    }

    /// Checks that `move(_:to:passphrase:)` would succeed, changing nothing: `keys migrate` checks every id
    /// before it moves any.
    @_spi(CLI) public func checkMove(_ id: KeyID, to destination: Keystore, passphrase: Passphrase?) throws(SealKitError) {
        do {
            try storage.checkMove(id, to: destination.storage, passphrase: passphrase)
        } catch {
            throw SealKitError(error)
        }
    }

    /// The ids that an earlier SealKit, before ids were normalized, stored under another Unicode form of
    /// their id (`café` typed as `e` and a combining accent), with whether each is passphrase-protected.
    /// Always empty for keystores other than files.
    @_spi(CLI) public func unnormalizedIDs() throws(SealKitError) -> [(id: KeyID, isProtected: Bool)] {
        guard let files = storage as? FileKeystore else { return [] }
        do {
            return try files.unnormalizedFiles().map { ($0.id, $0.isProtected) }
        } catch {
            throw SealKitError(error)
        }
    }

    /// Moves the keys stored under another Unicode form of `id` to `id` itself (its NFC form): a `id` that
    /// holds the same current key merges, a different one is refused. v2 values bind the id's exact bytes,
    /// so those sealed for the old spelling open under neither spelling afterwards.
    /// - Returns: true when `id` already held the keys (they merged), false when they were moved to a new entry.
    @discardableResult
    @_spi(CLI) public func normalize(_ id: KeyID, passphrase: Passphrase?) throws(SealKitError) -> Bool {
        guard let files = storage as? FileKeystore else { return false }
        do throws(KeystoreError) {
            for file in try files.unnormalizedFiles() where file.id == id {
                return try files.normalize(file, passphrase: passphrase) == .unchanged
            }
            throw KeystoreError.notFound(id, namespace: files.namespace.name)
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
    /// The keystore's error, with its message unchanged and its facts; `keyID` names the entry when the error does not.
    package init(_ error: KeystoreError, keyID entryID: KeyID? = nil) {
        let reason: Reason
        var keyID: KeyID?
        var namespace: String?
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
            case .damagedItem(let id, let space, _): reason = .damagedKey; keyID = id; namespace = space
            case .unavailable, .timedOut, .failed: reason = .keyringUnavailable
            }
        case .tpmUnavailable, .tpmFailed, .tpmTimedOut: reason = .tpmUnavailable
        case .libraryUnavailable: reason = .libraryUnavailable
        case .pinTooLong: reason = .invalidArgument
        case .sealedToTPMStaysHere(let id): reason = .invalidArgument; keyID = id
        case .pinRequired(let id): reason = .passphraseRequired; keyID = id
        case .wrongPIN(let id): reason = .wrongPIN; keyID = id
        case .tpmLockout(let id, _), .lastPINTry(let id, _): reason = .tpmLockout; keyID = id
        case .sealedToAnotherTPM(let id): reason = .sealedToAnotherTPM; keyID = id
        }
        self.init(reason, keyID: keyID ?? entryID, String(describing: error), detail: error.detail, namespace: namespace)
    }

    /// A key history that breaks the keystore's rules (from a transfer or backup).
    package init(_ error: KeyHistoryError) {
        self.init(.invalidKeyText, String(describing: error))
    }
}
