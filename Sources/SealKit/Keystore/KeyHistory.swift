#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One id's keys with their history, as key transfer and backups carry them from one keystore to
/// another: the current key first, then retired keys, newest first. Retired keys travel too, so
/// ciphertexts made before a rotation still open on the receiving side.
///
/// Opaque: it shows the id, the current key's fingerprint and how many keys it holds, never a key.
/// ``Keystore/exportKeys(_:passphrase:)`` makes histories, ``Keystore/importKeys(_:passphrase:)`` stores them.
public struct KeyHistory: Sendable, CustomStringConvertible {
    /// One key and when it was made and retired.
    package struct Version: Sendable {
        /// The key.
        package let key: SymmetricKey
        /// When the key was made or first stored.
        package let created: Date
        /// When it stopped being current; nil for the current key.
        package let retired: Date?

        /// Makes a version.
        /// - Parameters:
        ///   - key: the key.
        ///   - created: when it was made.
        ///   - retired: when it stopped being current; nil for the current key.
        package init(key: SymmetricKey, created: Date, retired: Date?) {
            self.key = key
            self.created = created
            self.retired = retired
        }
    }

    /// The id the keys belong to.
    public let id: KeyID
    /// The current key first, then retired keys, newest first.
    package let versions: [Version]

    /// The current key's fingerprint, for people to compare on two screens.
    public var fingerprint: KeyFingerprint { current.fingerprint }
    /// How many keys travel: the current one and the retired ones.
    public var keyCount: Int { versions.count }

    /// Makes a history, checking its shape.
    /// - Parameters:
    ///   - id: the id the keys belong to.
    ///   - versions: the current key first, then retired keys.
    /// - Throws: `KeyHistoryError` when there is no key, more than one id may hold
    ///   (`KeyFile.maximumKeyCount`), the first is retired, a later one is not, or a key
    ///   appears twice.
    package init(id: KeyID, versions: [Version]) throws(KeyHistoryError) {
        guard let first = versions.first else { throw .noKey(id) }
        for version in versions {
            guard KeyTime.admits(version.created), version.retired.map(KeyTime.admits) ?? true else { throw .timeOutOfRange(id) }
        }
        guard versions.count <= KeyFile.maximumKeyCount else { throw .tooManyKeys(id, limit: KeyFile.maximumKeyCount) }
        guard first.retired == nil, versions.dropFirst().allSatisfy({ $0.retired != nil }) else {
            throw .notOneCurrentKey(id)
        }
        // Keys with equal fingerprints are the only candidates for a repeat; comparing those
        // alone (in constant time) keeps this linear for thousands of keys.
        var seen: [KeyFingerprint: [SymmetricKey]] = [:]
        for version in versions {
            let fingerprint = version.key.fingerprint
            if seen[fingerprint]?.contains(where: { $0 == version.key }) == true { throw .repeatedKey(id) }
            seen[fingerprint, default: []].append(version.key)
        }
        self.init(unchecked: id, versions: versions)
    }

    /// For records the keystores read, which their own parsers have already checked.
    init(unchecked id: KeyID, versions: [Version]) {
        self.id = id
        self.versions = versions
    }

    /// The key new ciphertexts are made with.
    package var current: SymmetricKey { versions[0].key }

    /// Whether this history holds a key of every fingerprint `entry` lists: storing it in the entry's place loses
    /// none of them.
    package func bringsEveryKey(of entry: KeyEntry) -> Bool {
        Set(entry.versions.map(\.fingerprint)).isSubset(of: Set(versions.map(\.key.fingerprint)))
    }

    /// The keys as a ring, for encrypting and decrypting.
    package var ring: KeyRing { KeyRing(current: current, retired: versions.dropFirst().map(\.key), id: id.rawValue) }

    /// `KeyHistory(alice, current: 3f9a:07c2:d41e:8b65, retired: 1)`: never a key.
    public var description: String {
        "KeyHistory(\(id), current: \(current.fingerprint), retired: \(versions.count - 1))"
    }
}

/// Why a key history was refused.
package enum KeyHistoryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The history has no key at all.
    case noKey(KeyID)
    /// Not exactly one key is current (not retired).
    case notOneCurrentKey(KeyID)
    /// The same key appears twice.
    case repeatedKey(KeyID)
    /// More keys than one id may hold.
    case tooManyKeys(KeyID, limit: Int)
    /// A creation or retirement time is outside 1970 ... 9999.
    case timeOutOfRange(KeyID)

    package var description: String {
        switch self {
        case .noKey(let id): return "the keys for '\(id)' are empty: there must be a current key"
        case .notOneCurrentKey(let id):
            return "the keys for '\(id)' must hold exactly one current key, listed first, then retired keys"
        case .repeatedKey(let id): return "the keys for '\(id)' hold the same key twice"
        case .tooManyKeys(let id, let limit): return "the keys for '\(id)' are more than the \(limit) one id may hold"
        case .timeOutOfRange(let id):
            return "a key for '\(id)' has a created or retired time outside \(KeyTime.rangeDescription)"
        }
    }
}

extension KeyRecord {
    init(_ history: KeyHistory) {
        self.init(
            id: history.id,
            versions: history.versions.map {
                Version(key: $0.key, created: unixTime($0.created), retired: $0.retired.map(unixTime))
            })
    }

    var history: KeyHistory {
        KeyHistory(
            unchecked: id,
            versions: versions.map {
                KeyHistory.Version(
                    key: $0.key, created: Date(timeIntervalSince1970: TimeInterval($0.created)),
                    retired: $0.retired.map { Date(timeIntervalSince1970: TimeInterval($0)) })
            })
    }

    /// Applies the import rule to an id that already holds keys: the identical current
    /// key is fine, a different one is refused. Retired keys the record lacks are added,
    /// since a key that only decrypts orphans nothing.
    /// - Returns: the record to write, or nil when nothing changes.
    func merging(_ history: KeyHistory) throws(KeystoreError) -> KeyRecord? {
        guard versions[0].key == history.current else { throw .conflictingKey(id) }
        let missing = KeyRecord(history).versions.dropFirst().filter { incoming in
            !versions.contains { $0.key == incoming.key }
        }
        if missing.isEmpty { return nil }
        let retired = (versions.dropFirst() + missing).sorted { ($0.retired ?? 0) > ($1.retired ?? 0) }
        return KeyRecord(id: id, versions: [versions[0]] + retired)
    }
}


/// The times a key may have been made or retired at: from the Unix epoch to the end of year 9999,
/// the last second an ISO 8601 date with four year digits (as `keys list --json` writes) can show.
/// Every time that enters a keystore is checked against this range first, so that no later
/// conversion (to whole seconds, to text) can overflow.
package enum KeyTime {
    /// 9999-12-31T23:59:59Z.
    package static let latest: Int64 = 253_402_300_799
    package static let rangeDescription = "1970-01-01 to 9999-12-31 (Unix seconds 0 to 253402300799)"

    /// Whether `seconds` since the epoch is a time a key may have.
    package static func admits(_ seconds: Int64) -> Bool { (0...latest).contains(seconds) }

    /// Whether `date` is a time a key may have.
    package static func admits(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        return seconds.isFinite && seconds >= 0 && seconds < Double(latest + 1)
    }

    /// Whole seconds since the epoch, clamped to the admitted range (callers check `admits` first;
    /// the clamp only keeps a conversion from trapping).
    package static func seconds(of date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite else { return 0 }
        return Int64(Swift.min(Swift.max(seconds, 0), Double(latest)))
    }
}

extension KeyStorage {
    /// Stores several ids' keys, or none of them: every id is checked against the import
    /// rule before anything is written, so one conflict leaves the keystore untouched.
    ///
    /// Another process changing the same ids between the check and the writes can still
    /// make a later write fail; the error then names that id.
    /// - Parameters:
    ///   - histories: the ids and their keys; each id at most once.
    ///   - passphrase: protects new entries at rest and unlocks existing protected ones.
    /// - Returns: what happened to each id, in the order given.
    /// - Throws: `.conflictingKey` naming the first id whose stored key differs (nothing
    ///   written), `.locked`, `.wrongPassphrase`, or a file problem.
    @discardableResult
    package func storeAll(_ histories: [KeyHistory], passphrase: Passphrase?) throws(KeystoreError) -> [StoreOutcome] {
        for history in histories {
            guard let entry = try entry(for: history.id) else { continue }
            let current: SymmetricKey
            do throws(KeystoreError) {
                current = try keyRing(for: history.id, passphrase: passphrase).current
            } catch .sealedToAnotherTPM(let id) {
                // Keys that open only on another machine's TPM: `store` puts the history in their place when it
                // brings every one of them, and nothing else may.
                guard history.bringsEveryKey(of: entry) else { throw .sealedToAnotherTPM(id) }
                continue
            }
            guard current == history.current else { throw .conflictingKey(history.id) }
        }
        var outcomes: [StoreOutcome] = []
        for history in histories { outcomes.append(try store(history, passphrase: passphrase)) }
        return outcomes
    }
}
