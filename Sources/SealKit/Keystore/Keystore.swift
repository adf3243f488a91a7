#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a user's keys live. Two implementations: `FileKeystore` (on disk, safe under
/// crashes and concurrent processes, optionally passphrase-protected) and
/// `InMemoryKeystore` (tests, and apps that keep keys themselves).
///
/// Keys go in and are used through the keystore; there is deliberately no call that
/// hands key bytes back out. Only key transfer and backup export them, through
/// `history(for:passphrase:)`.
package protocol KeyStorage: Sendable {
    /// The namespace this keystore works in.
    var namespace: Namespace { get }

    /// Public facts about the keys stored under `id`, without unlocking them.
    /// - Parameter id: the key id.
    /// - Returns: nil when no key is stored under `id`.
    func entry(for id: KeyID) throws(KeystoreError) -> KeyEntry?

    /// Every id's public facts, sorted by id.
    /// - Throws: the first problem `survey()` finds.
    func entries() throws(KeystoreError) -> [KeyEntry]

    /// Every healthy id's public facts, sorted by id, and every entry that cannot be used
    /// (damaged, too open, not the user's), so one bad entry does not hide the others.
    /// - Throws: only for a problem with the keystore as a whole (its folders).
    func survey() throws(KeystoreError) -> KeystoreSurvey

    /// The keys stored under `id`, unlocked.
    /// - Parameters:
    ///   - id: the key id.
    ///   - passphrase: needed when the keys are passphrase-protected.
    /// - Throws: `.notFound`, `.locked`, `.wrongPassphrase`, or a file problem.
    func keyRing(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyRing

    /// Stores `key` under `id`.
    ///
    /// Storing the key already stored under `id` succeeds and changes nothing; storing
    /// a different one is refused, because it would orphan every ciphertext made with
    /// the stored key.
    /// - Parameters:
    ///   - key: the key to store.
    ///   - id: the id to store it under.
    ///   - mode: `.create` also refuses the identical key (for `generate`).
    ///   - passphrase: protects a new entry at rest; unlocks an existing protected one for comparison.
    /// - Returns: whether anything was written.
    @discardableResult
    func store(_ key: SymmetricKey, as id: KeyID, mode: StoreMode, passphrase: Passphrase?) throws(KeystoreError) -> StoreOutcome

    /// The keys stored under `id` with their history, unlocked: what key transfer and
    /// backups carry to another keystore.
    /// - Parameters:
    ///   - id: the key id.
    ///   - passphrase: needed when the keys are passphrase-protected.
    /// - Throws: `.notFound`, `.locked`, `.wrongPassphrase`, or a file problem.
    func history(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyHistory

    /// Stores keys with their history, as received from another keystore.
    ///
    /// A new id gets every version as given. An id that already holds keys follows the
    /// import rule: the identical current key is fine (retired keys it lacks are added,
    /// since they only decrypt), a different current key is refused.
    /// - Parameters:
    ///   - history: the id and its keys.
    ///   - passphrase: protects a new entry at rest; unlocks an existing protected one.
    /// - Returns: whether anything was written.
    /// - Throws: `.conflictingKey` for a different current key, `.locked`, `.wrongPassphrase`, or a file problem.
    @discardableResult
    func store(_ history: KeyHistory, passphrase: Passphrase?) throws(KeystoreError) -> StoreOutcome

    /// Makes `newKey` the current key under `id` and keeps the old ones, retired, for decryption.
    /// - Parameters:
    ///   - id: the key id.
    ///   - newKey: the new current key.
    ///   - passphrase: unlocks the keys when they are protected, and protects them afterwards.
    /// - Returns: the entry after rotation.
    @discardableResult
    func rotate(_ id: KeyID, to newKey: SymmetricKey, passphrase: Passphrase?) throws(KeystoreError) -> KeyEntry

    /// Adds, changes or removes the passphrase protecting every key of `id`, in one atomic write.
    /// - Parameters:
    ///   - id: the key id.
    ///   - current: unlocks the keys when they are protected now.
    ///   - new: the passphrase to protect them with; nil leaves them unprotected.
    /// - Returns: the entry afterwards.
    /// - Throws: `.notFound`, `.locked`, `.wrongPassphrase`, or a file problem; nothing changes then.
    @discardableResult
    func changePassphrase(of id: KeyID, from current: Passphrase?, to new: Passphrase?) throws(KeystoreError) -> KeyEntry

    /// Deletes every key stored under `id`.
    /// - Parameter id: the key id.
    /// - Throws: `.notFound` when there is none.
    func delete(_ id: KeyID) throws(KeystoreError)

    /// The highest profile seal this device wrote or verified for `id`; nil when none.
    func sealMark(for id: KeyID) throws(KeystoreError) -> SealMark?

    /// Records `mark` for `id`, atomically and durably, when it is newer than the one kept (or, with
    /// `acceptingConflict`, of the same version with another MAC); keeps the kept one when it is the same seal.
    /// A kept mark of another key history (its key none of `keys`: the id's key was replaced) is replaced.
    /// - Returns: nil when `mark` is now the one kept (recorded, or the same); the kept mark when
    ///   `mark` is lower than it or has its version with another MAC, and nothing was written.
    func recordSealMark(_ mark: SealMark, for id: KeyID, keys: [KeyFingerprint], acceptingConflict: Bool) throws(KeystoreError) -> SealMark?
}

extension KeyStorage {
    /// For backends whose entries cannot be individually damaged: every entry, no problems.
    package func survey() throws(KeystoreError) -> KeystoreSurvey {
        KeystoreSurvey(entries: try entries(), problems: [])
    }
}

/// Whether `store` may accept the identical key again.
package enum StoreMode: Sendable {
    /// A new id only (`keys generate`).
    case create
    /// A new id, or the identical key again (`keys import`, transfer, restore).
    case `import`
}

/// What `store` did.
package enum StoreOutcome: Sendable, Equatable {
    /// The key was written.
    case stored
    /// The identical key was already there; nothing changed.
    case unchanged
}

/// Public facts about one id's keys. Holds no key material.
public struct KeyEntry: Sendable, Equatable, CustomStringConvertible {
    /// One stored key, current or retired.
    package struct Version: Sendable, Equatable {
        /// The key's fingerprint.
        package let fingerprint: KeyFingerprint
        /// When the key was made or first stored.
        package let created: Date
        /// When it stopped being current; nil for the current key.
        package let retired: Date?
    }

    /// The id the keys are stored under.
    public let id: KeyID
    /// Whether opening the keys needs a secret: a passphrase (Argon2id), or the PIN of keys sealed to the TPM.
    public let isProtected: Bool
    /// Whether the keys are sealed to this machine's TPM: a copy of them opens on no other machine.
    public let isSealedToTPM: Bool
    /// The current key first, then retired keys, newest first.
    package let versions: [Version]

    /// Makes an entry.
    package init(id: KeyID, isProtected: Bool, isSealedToTPM: Bool = false, versions: [Version]) {
        self.id = id
        self.isProtected = isProtected
        self.isSealedToTPM = isSealedToTPM
        self.versions = versions
    }

    /// The current key's version.
    package var current: Version { versions[0] }
    /// Retired keys, newest first.
    package var retired: ArraySlice<Version> { versions.dropFirst() }

    /// When the current key was made or first stored.
    public var created: Date { current.created }
    /// The fingerprint of the current key, the one new ciphertexts are sealed with.
    public var fingerprint: KeyFingerprint { current.fingerprint }
    /// The fingerprints of retired keys, newest first: they only decrypt.
    public var retiredFingerprints: [KeyFingerprint] { retired.map(\.fingerprint) }

    /// The id, the current fingerprint, `tpm`, `protected` and the number of retired keys: `alice 3f9a:07c2:d41e:8b65 +1 retired`.
    public var description: String {
        "\(id) \(current.fingerprint)\(isSealedToTPM ? " tpm" : "")\(isProtected ? " protected" : "")\(retired.isEmpty ? "" : " +\(retired.count) retired")"
    }
}

/// What `Keystore.survey()` found: the usable entries, and the ones that are not.
package struct KeystoreSurvey: Sendable {
    /// One entry that cannot be used.
    package struct Problem: Sendable {
        /// The id, when it can still be read from the entry.
        package let id: KeyID?
        /// Where the entry is (a file path, or a backend's name for it).
        package let path: String
        /// What is wrong, with the fix.
        package let error: KeystoreError

        /// Makes a problem report.
        package init(id: KeyID?, path: String, error: KeystoreError) {
            self.id = id
            self.path = path
            self.error = error
        }
    }

    /// Healthy entries, sorted by id.
    package let entries: [KeyEntry]
    /// Entries that cannot be used.
    package let problems: [Problem]

    /// Makes a survey.
    package init(entries: [KeyEntry], problems: [Problem]) {
        self.entries = entries
        self.problems = problems
    }
}
