#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// A keystore that lives only in this process: for tests, and for apps that keep
/// keys in their own secure storage. Passphrases are accepted and ignored, since
/// nothing is ever at rest. Safe to share across threads: the records live in a `Mutex`.
package final class InMemoryKeystore: KeyStorage {
    package let namespace: Namespace
    private let records = Mutex<[KeyID: KeyRecord]>([:])
    /// Profile seal marks, per id.
    let marks = Mutex<[KeyID: SealMark]>([:])

    /// Makes an empty keystore.
    package init(namespace: Namespace = .default) {
        self.namespace = namespace
    }

    package func entry(for id: KeyID) throws(KeystoreError) -> KeyEntry? {
        records.withLock { $0[id]?.entry(isProtected: false) }
    }

    package func entries() throws(KeystoreError) -> [KeyEntry] {
        records.withLock { $0.values.map { $0.entry(isProtected: false) }.sorted { $0.id < $1.id } }
    }

    package func keyRing(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyRing {
        guard let record = records.withLock({ $0[id] }) else { throw .notFound(id, namespace: namespace.name) }
        return record.ring
    }

    @discardableResult
    package func store(
        _ key: SymmetricKey, as id: KeyID, mode: StoreMode, passphrase: Passphrase?
    ) throws(KeystoreError) -> StoreOutcome {
        try records.withLock { (records) throws(KeystoreError) -> StoreOutcome in
            if let existing = records[id] { return try existing.outcomeOfStoring(key, mode: mode) }
            records[id] = KeyRecord(id: id, key: key, now: currentUnixTime())
            return .stored
        }
    }

    package func history(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyHistory {
        guard let record = records.withLock({ $0[id] }) else { throw .notFound(id, namespace: namespace.name) }
        return record.history
    }

    @discardableResult
    package func store(_ history: KeyHistory, passphrase: Passphrase?) throws(KeystoreError) -> StoreOutcome {
        try records.withLock { (records) throws(KeystoreError) -> StoreOutcome in
            guard let existing = records[history.id] else {
                records[history.id] = KeyRecord(history)
                return .stored
            }
            guard let merged = try existing.merging(history) else { return .unchanged }
            records[history.id] = merged
            return .stored
        }
    }

    @discardableResult
    package func rotate(_ id: KeyID, to newKey: SymmetricKey, passphrase: Passphrase?) throws(KeystoreError) -> KeyEntry {
        try records.withLock { (records) throws(KeystoreError) -> KeyEntry in
            guard let existing = records[id] else { throw .notFound(id, namespace: namespace.name) }
            let rotated = try existing.rotated(to: newKey, now: currentUnixTime())
            records[id] = rotated
            return rotated.entry(isProtected: false)
        }
    }

    /// Nothing is at rest here, so there is nothing to protect: checks that `id` exists.
    @discardableResult
    package func changePassphrase(of id: KeyID, from current: Passphrase?, to new: Passphrase?) throws(KeystoreError) -> KeyEntry {
        guard let record = records.withLock({ $0[id] }) else { throw .notFound(id, namespace: namespace.name) }
        return record.entry(isProtected: false)
    }

    package func delete(_ id: KeyID) throws(KeystoreError) {
        try records.withLock { (records) throws(KeystoreError) in
            guard records.removeValue(forKey: id) != nil else { throw .notFound(id, namespace: namespace.name) }
        }
    }
}
