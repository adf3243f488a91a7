#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a keystore kept as one item per id puts its items: key files in a folder, or a keyring.
/// Each item holds the id's whole history in the key-file text form, so every change
/// (a rotation, an added retired key) is one write of one item.
package protocol KeyItemStorage: Sendable {
    /// How the storage names an item: the id itself in a keyring, a file name in a folder.
    associatedtype ItemName: Hashable & Sendable
    /// The namespace the items belong to.
    var namespace: Namespace { get }
    /// The name of the item that holds `id`'s keys.
    func itemName(for id: KeyID) -> ItemName
    /// The text stored under `name`, or nil when there is no item.
    func readItem(_ name: ItemName) throws(KeystoreError) -> SecureBytes?
    /// The names of every item in this namespace.
    func itemNames() throws(KeystoreError) -> [ItemName]
    /// Creates or replaces the item for `entry.id` in one write; `entry` (public facts
    /// only) is there to label it.
    func writeItem(_ text: SecureBytes, describing entry: KeyEntry) throws(KeystoreError)
    /// Removes the item `name`.
    /// - Returns: false when there was none.
    func deleteItem(_ name: ItemName) throws(KeystoreError) -> Bool
    /// Runs `body` while no other SealKit process changes this namespace, so a
    /// read, check and write happen as one.
    func withExclusiveAccess<T>(_ body: () throws(KeystoreError) -> T) throws(KeystoreError) -> T
    /// The error for an item that no longer parses or opens, from a one-line reason.
    func damagedItem(_ name: ItemName, reason: String) -> KeystoreError
    /// The reason `damagedItem` is given for an item that holds another id's keys, in the storage's words.
    var misplacedItemReason: String { get }
    /// How `survey()` lists `error`, met reading the item `name`: nil when the error is not that
    /// item's alone (a locked keyring is everyone's), and the survey fails with it instead.
    func problem(_ error: KeystoreError, reading name: ItemName) -> KeystoreSurvey.Problem?
}

/// The keystore rules (`Keystore`'s contract) over any `KeyItemStorage`, kept once for every
/// backend: `FileKeystore` and `SecretServiceKeystore` supply the storage and forward to these.
package struct KeyItems<Storage: KeyItemStorage>: Sendable {
    package let storage: Storage
    /// Unseals items sealed to a TPM; nil: such items cannot be opened here.
    package var tpm: (any TPMKeySealer)?
    /// Whether ids this creates are sealed to `tpm` (the passphrase given with them is their PIN)
    /// instead of being protected by the passphrase.
    package var sealsNewKeysToTPM = false

    package init(_ storage: Storage) { self.storage = storage }

    private var namespace: String { storage.namespace.name }

    private func read(_ id: KeyID) throws(KeystoreError) -> KeyFile? { try file(named: storage.itemName(for: id)) }

    /// The item `name`, parsed (nothing opened), checked to hold the keys of the id it is named for.
    /// - Returns: nil when there is no such item.
    func file(named name: Storage.ItemName) throws(KeystoreError) -> KeyFile? {
        guard let text = try storage.readItem(name) else { return nil }
        var bytes = text.withUnsafeBytes { Array($0) }
        defer { ConstantTime.wipe(&bytes) }
        let file: KeyFile
        do {
            file = try KeyFile.parse(bytes)
        } catch {
            throw storage.damagedItem(name, reason: error.reason)
        }
        guard storage.itemName(for: file.id) == name else { throw storage.damagedItem(name, reason: storage.misplacedItemReason) }
        return file
    }

    /// The key-file code names the place of a damaged file; for an item, the storage says it its own way.
    private func reportingItems<T>(_ id: KeyID, _ body: () throws(KeystoreError) -> T) throws(KeystoreError) -> T {
        do {
            return try body()
        } catch .damagedKeyFile(_, let reason) {
            throw storage.damagedItem(storage.itemName(for: id), reason: reason)
        }
    }

    private func unlock(_ file: KeyFile, _ passphrase: Passphrase?) throws(KeystoreError) -> (record: KeyRecord, sealing: KeyFile.Sealing?) {
        try reportingItems(file.id) { () throws(KeystoreError) in try file.unlock(passphrase: passphrase, source: "", tpm: tpm) }
    }

    private func newSealing(_ passphrase: Passphrase?, for id: KeyID) throws(KeystoreError) -> KeyFile.Sealing? {
        if sealsNewKeysToTPM { return try newSealing(.tpm(pin: passphrase), for: id) }
        guard let passphrase else { return nil }
        return try reportingItems(id) { () throws(KeystoreError) in
            try KeyFile.Sealing(protection: .fresh(), passphrase: passphrase, source: "")
        }
    }

    /// The sealing for `protection`: a fresh salt for a passphrase, a fresh key sealed to the TPM.
    private func newSealing(_ protection: NewProtection, for id: KeyID) throws(KeystoreError) -> KeyFile.Sealing? {
        switch protection {
        case .none:
            return nil
        case .passphrase(let passphrase):
            return try reportingItems(id) { () throws(KeystoreError) in
                try KeyFile.Sealing(protection: .fresh(), passphrase: passphrase, source: "")
            }
        case .tpm(let pin):
            guard let tpm else { throw .tpmUnavailable(tcti: "-", detail: "this keystore was opened without a TPM") }
            return try KeyFile.Sealing(sealingTo: tpm, pin: pin)
        }
    }

    private func write(_ record: KeyRecord, sealing: KeyFile.Sealing?) throws(KeystoreError) {
        try storage.writeItem(KeyFile.encode(record, sealing: sealing), describing: record.entry(sealing: sealing))
    }

    /// See `Keystore.entry(for:)`.
    package func entry(for id: KeyID) throws(KeystoreError) -> KeyEntry? { try read(id)?.entry }

    /// See `Keystore.entries()`: throws the first problem `survey()` finds.
    package func entries() throws(KeystoreError) -> [KeyEntry] {
        let survey = try survey()
        if let problem = survey.problems.first { throw problem.error }
        return survey.entries
    }

    /// See `Keystore.keyRing(for:passphrase:)`.
    package func keyRing(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyRing {
        guard let file = try read(id) else { throw .notFound(id, namespace: namespace) }
        return try unlock(file, passphrase).record.ring
    }

    /// How many PINs a terminal prompt may try for `id`: at most `limit`, and always fewer than the wrong PINs
    /// the TPM takes before it locks out, which would lock every key with a PIN at once. `limit` for an id
    /// without a TPM PIN (nothing is asked of the TPM then).
    /// - Throws: `.tpmLockout` when the TPM is in lockout now, `.lastPINTry` when one more wrong PIN would put it
    ///   there, and what reading the TPM's counters throws.
    package func pinPromptTries(for id: KeyID, atMost limit: Int) throws(KeystoreError) -> Int {
        guard let sealed = try read(id)?.tpm, sealed.hasPIN else { return limit }
        guard let tpm else { throw .tpmUnavailable(tcti: "-", detail: "this keystore was opened without a TPM") }
        let state = try tpm.lockoutState()
        guard state.remaining > 0 else { throw .tpmLockout(id, hasPIN: true) }
        let tries = state.promptTries(atMost: limit)
        guard tries > 0 else { throw .lastPINTry(id, interval: state.interval) }
        return tries
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
                let unlocked: (record: KeyRecord, sealing: KeyFile.Sealing?)
                do throws(KeystoreError) {
                    unlocked = try unlock(file, passphrase)
                } catch .sealedToAnotherTPM(let id) {
                    // A copy of a keystore from another machine: its keys open only there. When the history brings
                    // every key the file lists, nothing is lost by storing the history in its place, sealed here.
                    guard history.bringsEveryKey(of: file.entry) else { throw .sealedToAnotherTPM(id) }
                    let pin = file.tpm?.hasPIN == true ? passphrase : nil
                    try write(KeyRecord(history), sealing: try newSealing(.tpm(pin: pin), for: id))
                    return .stored
                }
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
            return rotated.entry(sealing: unlocked.sealing)
        }
    }

    /// See `Keystore.changePassphrase(of:from:to:)`: one write of the item, with a new salt
    /// for a new passphrase.
    package func changePassphrase(of id: KeyID, from current: Passphrase?, to new: Passphrase?) throws(KeystoreError) -> KeyEntry {
        try changeProtection(of: id, from: current, to: new.map { .passphrase($0) } ?? NewProtection.none)
    }

    /// Changes how every key of `id` is protected at rest (none, a passphrase, the TPM), in one write
    /// of the item: a crash leaves the old protection or the new one, never neither.
    /// - Parameters:
    ///   - current: unlocks the keys when they are protected now (a passphrase, or the TPM PIN).
    ///   - new: the protection afterwards; sealing to the TPM makes a new sealed object.
    package func changeProtection(of id: KeyID, from current: Passphrase?, to new: NewProtection) throws(KeystoreError) -> KeyEntry {
        try storage.withExclusiveAccess { () throws(KeystoreError) -> KeyEntry in
            guard let file = try read(id) else { throw .notFound(id, namespace: namespace) }
            let record = try unlock(file, current).record
            let sealing = try newSealing(new, for: id)
            try write(record, sealing: sealing)
            return record.entry(sealing: sealing)
        }
    }

    /// See `Keystore.survey()`: healthy items, and one problem per item the storage says is that
    /// item's alone; problems sorted by id, then those without one by place.
    package func survey() throws(KeystoreError) -> KeystoreSurvey {
        var found: [KeyEntry] = []
        var problems: [KeystoreSurvey.Problem] = []
        for name in try storage.itemNames() {
            do {
                if let file = try file(named: name) { found.append(file.entry) }
            } catch {
                guard let problem = storage.problem(error, reading: name) else { throw error }
                problems.append(problem)
            }
        }
        return KeystoreSurvey(
            entries: found.sorted { $0.id < $1.id },
            problems: problems.sorted { ($0.id?.rawValue ?? "\u{10FFFF}" + $0.path) < ($1.id?.rawValue ?? "\u{10FFFF}" + $1.path) })
    }

    /// See `Keystore.delete(_:)`. Needs only the item to be there: a damaged item is
    /// exactly what someone may want to delete.
    package func delete(_ id: KeyID) throws(KeystoreError) {
        try storage.withExclusiveAccess { () throws(KeystoreError) in
            guard try storage.deleteItem(storage.itemName(for: id)) else { throw .notFound(id, namespace: namespace) }
        }
    }
}
