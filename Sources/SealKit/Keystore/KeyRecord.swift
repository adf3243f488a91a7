#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One id's keys, unlocked: the rules every keystore shares, and what `KeyFile` encodes.
package struct KeyRecord: Sendable {
    package struct Version: Sendable {
        package let key: SymmetricKey
        package let created: Int64
        package var retired: Int64?

        package init(key: SymmetricKey, created: Int64, retired: Int64?) {
            self.key = key
            self.created = created
            self.retired = retired
        }
    }

    package let id: KeyID
    /// Current first, then retired, newest first.
    package var versions: [Version]

    package init(id: KeyID, key: SymmetricKey, now: Int64) {
        self.id = id
        versions = [Version(key: key, created: now, retired: nil)]
    }

    package init(id: KeyID, versions: [Version]) {
        self.id = id
        self.versions = versions
    }

    var ring: KeyRing { KeyRing(current: versions[0].key, retired: versions.dropFirst().map(\.key), id: id.rawValue) }

    /// Applies the store rule to an id that already holds keys.
    func outcomeOfStoring(_ key: SymmetricKey, mode: StoreMode) throws(KeystoreError) -> StoreOutcome {
        if mode == .create { throw .alreadyExists(id) }
        guard versions[0].key == key else { throw .conflictingKey(id) }
        return .unchanged
    }

    /// The record with `newKey` current and every earlier key retired now.
    /// - Throws: `.tooManyKeys` when the id already holds as many keys as one may.
    func rotated(to newKey: SymmetricKey, now: Int64) throws(KeystoreError) -> KeyRecord {
        guard versions.count < KeyFile.maximumKeyCount else { throw .tooManyKeys(id, limit: KeyFile.maximumKeyCount) }
        var older = versions
        older[0].retired = now
        return KeyRecord(id: id, versions: [Version(key: newKey, created: now, retired: nil)] + older)
    }

    /// The entry of the record as `sealing` protects it.
    func entry(sealing: KeyFile.Sealing?) -> KeyEntry {
        entry(isProtected: sealing.map { $0.tpm?.hasPIN ?? true } ?? false, isSealedToTPM: sealing?.tpm != nil)
    }

    func entry(isProtected: Bool, isSealedToTPM: Bool = false) -> KeyEntry {
        KeyEntry(
            id: id, isProtected: isProtected, isSealedToTPM: isSealedToTPM,
            versions: versions.map {
                KeyEntry.Version(
                    fingerprint: $0.key.fingerprint, created: Date(timeIntervalSince1970: TimeInterval($0.created)),
                    retired: $0.retired.map { Date(timeIntervalSince1970: TimeInterval($0)) })
            })
    }
}

func currentUnixTime() -> Int64 { Int64(Date().timeIntervalSince1970) }
