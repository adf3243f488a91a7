import FoundationEssentials
import SealCore

/// One id's keys, unlocked: the rules both keystores share.
struct KeyRecord: Sendable {
    struct Version: Sendable {
        let key: SymmetricKey
        let created: Int64
        var retired: Int64?
    }

    let id: KeyID
    /// Current first, then retired, newest first.
    var versions: [Version]

    init(id: KeyID, key: SymmetricKey, now: Int64) {
        self.id = id
        versions = [Version(key: key, created: now, retired: nil)]
    }

    init(id: KeyID, versions: [Version]) {
        self.id = id
        self.versions = versions
    }

    var ring: KeyRing { KeyRing(current: versions[0].key, retired: versions.dropFirst().map(\.key)) }

    /// Applies the store rule to an id that already holds keys.
    func outcomeOfStoring(_ key: SymmetricKey, mode: StoreMode) throws(KeystoreError) -> StoreOutcome {
        if mode == .create { throw .alreadyExists(id) }
        guard versions[0].key == key else { throw .conflictingKey(id) }
        return .unchanged
    }

    /// The record with `newKey` current and every earlier key retired now.
    func rotated(to newKey: SymmetricKey, now: Int64) -> KeyRecord {
        var older = versions
        older[0].retired = now
        return KeyRecord(id: id, versions: [Version(key: newKey, created: now, retired: nil)] + older)
    }

    func entry(isProtected: Bool) -> KeyEntry {
        KeyEntry(
            id: id, isProtected: isProtected,
            versions: versions.map {
                KeyEntry.Version(
                    fingerprint: $0.key.fingerprint, created: Date(timeIntervalSince1970: TimeInterval($0.created)),
                    retired: $0.retired.map { Date(timeIntervalSince1970: TimeInterval($0)) })
            })
    }
}

func currentUnixTime() -> Int64 { Int64(Date().timeIntervalSince1970) }
