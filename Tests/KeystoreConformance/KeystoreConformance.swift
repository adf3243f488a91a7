import Foundation
import SealKit
import Testing

/// The `Keystore` contract as checks any backend must pass: `FileKeystore`,
/// `InMemoryKeystore` and `SecretServiceKeystore` each run every one of them, unchanged.
package enum KeystoreConformance {
    /// One check of the contract.
    package enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case emptyKeystoreReadsAsEmpty
        case identicalIsUnchangedDifferentIsRefused
        case rotationKeepsRetiredKeysNewestFirst
        case protectedKeysNeedTheRightPassphrase
        case historiesFollowTheImportRule
        case deleteRemovesOnlyThatID
        case namespacesAreKeptApart
        case concurrentWritersLoseNothing

        package var testDescription: String { rawValue }
    }

    /// Makes a keystore for one check.
    package struct Backend: Sendable {
        /// Whether keys are sealed under the passphrase at rest (not so in memory).
        package let protectsAtRest: Bool
        /// A keystore in `namespace`; the same namespace gives the same keys.
        package let open: @Sendable (Namespace) throws -> any KeyStorage

        package init(protectsAtRest: Bool, open: @escaping @Sendable (Namespace) throws -> any KeyStorage) {
            self.protectsAtRest = protectsAtRest
            self.open = open
        }
    }

    /// Runs `check` against `backend` in a namespace no other check uses.
    package static func run(_ check: Check, on backend: Backend) throws {
        let namespace = try Namespace("conformance-\(UUID().uuidString.prefix(8).lowercased())")
        let store = try backend.open(namespace)
        switch check {
        case .emptyKeystoreReadsAsEmpty: try emptyKeystoreReadsAsEmpty(store)
        case .identicalIsUnchangedDifferentIsRefused: try identicalIsUnchangedDifferentIsRefused(store)
        case .rotationKeepsRetiredKeysNewestFirst: try rotationKeepsRetiredKeysNewestFirst(store)
        case .protectedKeysNeedTheRightPassphrase:
            try protectedKeysNeedTheRightPassphrase(store, protectsAtRest: backend.protectsAtRest)
        case .historiesFollowTheImportRule: try historiesFollowTheImportRule(store)
        case .deleteRemovesOnlyThatID: try deleteRemovesOnlyThatID(store)
        case .namespacesAreKeptApart:
            try namespacesAreKeptApart(store, other: backend.open(Namespace(namespace.name + "-other")))
        case .concurrentWritersLoseNothing: try concurrentWritersLoseNothing(store)
        }
    }

    static func emptyKeystoreReadsAsEmpty(_ store: some KeyStorage) throws {
        let id = try KeyID("nobody")
        let notFound = KeystoreError.notFound(id, namespace: store.namespace.name)
        #expect(try store.entries().isEmpty)
        #expect(try store.entry(for: id) == nil)
        #expect(throws: notFound) { try store.keyRing(for: id, passphrase: nil) }
        #expect(throws: notFound) { try store.history(for: id, passphrase: nil) }
        #expect(throws: notFound) { try store.rotate(id, to: SymmetricKey.generate(), passphrase: nil) }
        #expect(throws: notFound) { try store.delete(id) }
        #expect(try store.entries().isEmpty)
    }

    static func identicalIsUnchangedDifferentIsRefused(_ store: some KeyStorage) throws {
        let id = try KeyID("user-1 ✓")
        let key = SymmetricKey.generate()
        #expect(try store.store(key, as: id, mode: .import, passphrase: nil) == .stored)
        let before = try #require(try store.entry(for: id))
        #expect(try store.store(key, as: id, mode: .import, passphrase: nil) == .unchanged)
        #expect(throws: KeystoreError.conflictingKey(id)) {
            try store.store(SymmetricKey.generate(), as: id, mode: .import, passphrase: nil)
        }
        #expect(throws: KeystoreError.alreadyExists(id)) { try store.store(key, as: id, mode: .create, passphrase: nil) }
        #expect(try store.entry(for: id) == before)
        #expect(try store.keyRing(for: id, passphrase: nil).current == key)
        #expect(before.current.fingerprint == key.fingerprint && !before.isProtected && before.retired.isEmpty)
    }

    static func rotationKeepsRetiredKeysNewestFirst(_ store: some KeyStorage) throws {
        let id = try KeyID("r")
        let first = SymmetricKey.generate(), second = SymmetricKey.generate(), third = SymmetricKey.generate()
        try store.store(first, as: id, mode: .create, passphrase: nil)
        try store.rotate(id, to: second, passphrase: nil)
        let entry = try store.rotate(id, to: third, passphrase: nil)
        #expect(entry.versions.map(\.fingerprint) == [third, second, first].map(\.fingerprint))
        #expect(entry.current.retired == nil && entry.retired.allSatisfy { $0.retired != nil })
        #expect(try store.entry(for: id) == entry)
        let ring = try store.keyRing(for: id, passphrase: nil)
        #expect(ring.current == third && ring.retired == [second, first])
        // After rotation an import compares against the current key only.
        #expect(try store.store(third, as: id, mode: .import, passphrase: nil) == .unchanged)
        #expect(throws: KeystoreError.conflictingKey(id)) { try store.store(first, as: id, mode: .import, passphrase: nil) }
    }

    static func protectedKeysNeedTheRightPassphrase(_ store: some KeyStorage, protectsAtRest: Bool) throws {
        let id = try KeyID("p")
        let key = SymmetricKey.generate()
        let passphrase = try Passphrase("open sesame")
        try store.store(key, as: id, mode: .create, passphrase: passphrase)
        #expect(try store.keyRing(for: id, passphrase: passphrase).current == key)
        guard protectsAtRest else { return }
        let before = try #require(try store.entry(for: id))
        #expect(before.isProtected && before.current.fingerprint == key.fingerprint)
        #expect(throws: KeystoreError.locked(id)) { try store.keyRing(for: id, passphrase: nil) }
        #expect(throws: KeystoreError.wrongPassphrase(id)) { try store.keyRing(for: id, passphrase: Passphrase("nope")) }
        #expect(throws: KeystoreError.wrongPassphrase(id)) {
            try store.rotate(id, to: SymmetricKey.generate(), passphrase: Passphrase("nope"))
        }
        #expect(try store.entry(for: id) == before)
        let rotated = try store.rotate(id, to: SymmetricKey.generate(), passphrase: passphrase)
        #expect(rotated.isProtected)
        #expect(try store.keyRing(for: id, passphrase: passphrase).retired == [key])
    }

    static func historiesFollowTheImportRule(_ store: some KeyStorage) throws {
        let id = try KeyID("h")
        let old = SymmetricKey.generate(), current = SymmetricKey.generate()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let history = try KeyHistory(id: id, versions: [
            .init(key: current, created: now, retired: nil),
            .init(key: old, created: now.addingTimeInterval(-100), retired: now),
        ])
        #expect(try store.store(history, passphrase: nil) == .stored)
        #expect(try store.store(history, passphrase: nil) == .unchanged)
        let back = try store.history(for: id, passphrase: nil)
        #expect(back.versions.map(\.key) == [current, old])
        #expect(back.versions.map(\.created) == [now, now.addingTimeInterval(-100)])
        let before = try store.entry(for: id)
        let different = try KeyHistory(id: id, versions: [.init(key: SymmetricKey.generate(), created: now, retired: nil)])
        #expect(throws: KeystoreError.conflictingKey(id)) { try store.store(different, passphrase: nil) }
        #expect(try store.entry(for: id) == before)
        // The same current key with a retired key the store lacks: the retired key is added.
        let extra = SymmetricKey.generate()
        let more = try KeyHistory(id: id, versions: [
            .init(key: current, created: now, retired: nil),
            .init(key: extra, created: now.addingTimeInterval(-50), retired: now.addingTimeInterval(-10)),
        ])
        #expect(try store.store(more, passphrase: nil) == .stored)
        #expect(try store.keyRing(for: id, passphrase: nil).retired == [old, extra])
    }

    static func deleteRemovesOnlyThatID(_ store: some KeyStorage) throws {
        let a = try KeyID("a"), b = try KeyID("b")
        try store.store(SymmetricKey.generate(), as: a, mode: .create, passphrase: nil)
        let kept = SymmetricKey.generate()
        try store.store(kept, as: b, mode: .create, passphrase: nil)
        try store.delete(a)
        #expect(try store.entries().map(\.id) == [b])
        #expect(try store.entry(for: a) == nil)
        #expect(throws: KeystoreError.notFound(a, namespace: store.namespace.name)) { try store.delete(a) }
        #expect(try store.keyRing(for: b, passphrase: nil).current == kept)
        // A deleted id is free again.
        #expect(try store.store(SymmetricKey.generate(), as: a, mode: .create, passphrase: nil) == .stored)
    }

    static func namespacesAreKeptApart(_ store: some KeyStorage, other: some KeyStorage) throws {
        let id = try KeyID("shared")
        let mine = SymmetricKey.generate(), theirs = SymmetricKey.generate()
        try store.store(mine, as: id, mode: .create, passphrase: nil)
        #expect(try other.entry(for: id) == nil)
        #expect(try other.entries().isEmpty)
        try other.store(theirs, as: id, mode: .create, passphrase: nil)
        #expect(try store.keyRing(for: id, passphrase: nil).current == mine)
        #expect(try other.keyRing(for: id, passphrase: nil).current == theirs)
        try other.delete(id)
        #expect(try store.keyRing(for: id, passphrase: nil).current == mine)
    }

    static func concurrentWritersLoseNothing(_ store: some KeyStorage) throws {
        let box = UncheckedStore(store: store)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for i in 0..<5 {
                _ = try? box.store.store(SymmetricKey.generate(), as: KeyID("t\(worker)-\(i)"), mode: .create, passphrase: nil)
            }
        }
        #expect(try store.entries().count == 40)
        // Eight writers racing for one id: exactly one wins, the others are refused.
        let winners = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if (try? box.store.store(SymmetricKey.generate(), as: KeyID("race"), mode: .create, passphrase: nil)) == .stored {
                winners.increment()
            }
        }
        #expect(winners.value == 1)
    }

    private struct UncheckedStore<Store: KeyStorage>: @unchecked Sendable { let store: Store }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }
}
