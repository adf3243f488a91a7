#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealCore

/// Where a keystore kept as one item per id puts its items: a keyring, for instance.
/// Each item holds the id's whole history in the key-file text form, so every change
/// (a rotation, an added retired key) is one write of one item.
package protocol KeyItemStorage: Sendable {
    /// The namespace the items belong to.
    var namespace: Namespace { get }
    /// The text form stored for `id`, or nil when there is no item.
    func readItem(_ id: KeyID) throws(KeystoreError) -> SecureBytes?
    /// The ids that have an item in this namespace.
    func itemIDs() throws(KeystoreError) -> [KeyID]
    /// Creates or replaces the item for `entry.id` in one write; `entry` (public facts
    /// only) is there to label it.
    func writeItem(_ text: SecureBytes, describing entry: KeyEntry) throws(KeystoreError)
    /// Removes the item for `id`.
    /// - Returns: false when there was none.
    func deleteItem(_ id: KeyID) throws(KeystoreError) -> Bool
    /// Runs `body` while no other SealKit process changes this namespace, so a
    /// read, check and write happen as one.
    func withExclusiveAccess<T>(_ body: () throws(KeystoreError) -> T) throws(KeystoreError) -> T
    /// The error for an item that no longer parses or opens, from a one-line reason.
    func damagedItem(_ id: KeyID, reason: String) -> KeystoreError
}

/// The keystore rules (`Keystore`'s contract, exactly as `FileKeystore` keeps them) over
/// any `KeyItemStorage`: a backend supplies the storage and forwards to these.
package struct KeyItems<Storage: KeyItemStorage>: Sendable {
    package let storage: Storage

    package init(_ storage: Storage) { self.storage = storage }

    private var namespace: String { storage.namespace.name }

    private func read(_ id: KeyID) throws(KeystoreError) -> KeyFile? {
        guard let text = try storage.readItem(id) else { return nil }
        var bytes = text.withUnsafeBytes { Array($0) }
        defer { ConstantTime.wipe(&bytes) }
        let file: KeyFile
        do {
            file = try KeyFile.parse(bytes)
        } catch {
            throw storage.damagedItem(id, reason: error.reason)
        }
        guard file.id == id else { throw storage.damagedItem(id, reason: "it holds the keys of another id") }
        return file
    }

    /// The key-file code names the place of a damaged file; for an item, the storage says it its own way.
    private func reportingItems<T>(_ id: KeyID, _ body: () throws(KeystoreError) -> T) throws(KeystoreError) -> T {
        do {
            return try body()
        } catch .damagedKeyFile(_, let reason) {
            throw storage.damagedItem(id, reason: reason)
        }
    }

    private func unlock(_ file: KeyFile, _ passphrase: Passphrase?) throws(KeystoreError) -> (record: KeyRecord, sealing: KeyFile.Sealing?) {
        try reportingItems(file.id) { () throws(KeystoreError) in try file.unlock(passphrase: passphrase, source: "") }
    }

    private func newSealing(_ passphrase: Passphrase?, for id: KeyID) throws(KeystoreError) -> KeyFile.Sealing? {
        guard let passphrase else { return nil }
        return try reportingItems(id) { () throws(KeystoreError) in
            try KeyFile.Sealing(protection: .fresh(), passphrase: passphrase, source: "")
        }
    }

    private func write(_ record: KeyRecord, sealing: KeyFile.Sealing?) throws(KeystoreError) {
        try storage.writeItem(KeyFile.encode(record, sealing: sealing), describing: record.entry(isProtected: sealing != nil))
    }

    /// See `Keystore.entry(for:)`.
    package func entry(for id: KeyID) throws(KeystoreError) -> KeyEntry? { try read(id)?.entry }

    /// See `Keystore.entries()`.
    package func entries() throws(KeystoreError) -> [KeyEntry] {
        var found: [KeyEntry] = []
        for id in try storage.itemIDs() {
            if let file = try read(id) { found.append(file.entry) }
        }
        return found.sorted { $0.id < $1.id }
    }

    /// See `Keystore.keyRing(for:passphrase:)`.
    package func keyRing(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyRing {
        guard let file = try read(id) else { throw .notFound(id, namespace: namespace) }
        return try unlock(file, passphrase).record.ring
    }

    /// See `Keystore.history(for:passphrase:)`.
    package func history(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyHistory {
        guard let file = try read(id) else { throw .notFound(id, namespace: namespace) }
        return try unlock(file, passphrase).record.history
    }

    /// See `Keystore.store(_:as:mode:passphrase:)`.
    package func store(
        _ key: SymmetricKey, as id: KeyID, mode: StoreMode, passphrase: Passphrase?
    ) throws(KeystoreError) -> StoreOutcome {
        try storage.withExclusiveAccess { () throws(KeystoreError) -> StoreOutcome in
            if let file = try read(id) {
                if mode == .create { throw .alreadyExists(id) }
                return try unlock(file, passphrase).record.outcomeOfStoring(key, mode: mode)
            }
            try write(KeyRecord(id: id, key: key, now: currentUnixTime()), sealing: try newSealing(passphrase, for: id))
            return .stored
        }
    }

    /// See `Keystore.store(_:passphrase:)`.
    package func store(_ history: KeyHistory, passphrase: Passphrase?) throws(KeystoreError) -> StoreOutcome {
        try storage.withExclusiveAccess { () throws(KeystoreError) -> StoreOutcome in
            if let file = try read(history.id) {
                let unlocked = try unlock(file, passphrase)
                guard let merged = try unlocked.record.merging(history) else { return .unchanged }
                try write(merged, sealing: unlocked.sealing)
                return .stored
            }
            try write(KeyRecord(history), sealing: try newSealing(passphrase, for: history.id))
            return .stored
        }
    }

    /// See `Keystore.rotate(_:to:passphrase:)`.
    package func rotate(_ id: KeyID, to newKey: SymmetricKey, passphrase: Passphrase?) throws(KeystoreError) -> KeyEntry {
        try storage.withExclusiveAccess { () throws(KeystoreError) -> KeyEntry in
            guard let file = try read(id) else { throw .notFound(id, namespace: namespace) }
            let unlocked = try unlock(file, passphrase)
            let rotated = try unlocked.record.rotated(to: newKey, now: currentUnixTime())
            try write(rotated, sealing: unlocked.sealing)
            return rotated.entry(isProtected: unlocked.sealing != nil)
        }
    }

    /// See `Keystore.changePassphrase(of:from:to:)`: one write of the item, with a new salt
    /// for a new passphrase.
    package func changePassphrase(of id: KeyID, from current: Passphrase?, to new: Passphrase?) throws(KeystoreError) -> KeyEntry {
        try storage.withExclusiveAccess { () throws(KeystoreError) -> KeyEntry in
            guard let file = try read(id) else { throw .notFound(id, namespace: namespace) }
            let record = try unlock(file, current).record
            let sealing = try newSealing(new, for: id)
            try write(record, sealing: sealing)
            return record.entry(isProtected: sealing != nil)
        }
    }

    /// See `Keystore.survey()`: healthy items, and one problem per item that does not parse.
    package func survey() throws(KeystoreError) -> KeystoreSurvey {
        var found: [KeyEntry] = []
        var problems: [KeystoreSurvey.Problem] = []
        for id in try storage.itemIDs() {
            do {
                if let file = try read(id) { found.append(file.entry) }
            } catch .keyring(.damagedItem(let id, let namespace, let reason)) {
                // Only a damaged item is this item's problem; a locked or absent keyring is everyone's.
                problems.append(.init(id: id, path: "\(namespace)/\(id)", error: .keyring(.damagedItem(id, namespace: namespace, reason: reason))))
            }
        }
        return KeystoreSurvey(entries: found.sorted { $0.id < $1.id }, problems: problems.sorted { $0.path < $1.path })
    }

    /// See `Keystore.delete(_:)`. Needs only the item to be there: a damaged item is
    /// exactly what someone may want to delete.
    package func delete(_ id: KeyID) throws(KeystoreError) {
        try storage.withExclusiveAccess { () throws(KeystoreError) in
            guard try storage.deleteItem(id) else { throw .notFound(id, namespace: namespace) }
        }
    }
}
