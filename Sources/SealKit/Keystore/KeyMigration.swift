
extension KeyStorage {
    /// Checks, changing nothing, that `move(_:to:passphrase:)` can move `id`: its keys are
    /// here and open, and the destination lacks the id or holds the same current key. Checking
    /// every id first lets a migration of many ids refuse before it moves any.
    /// - Parameters:
    ///   - id: the id to check.
    ///   - destination: the keystore it would move into.
    ///   - passphrase: unlocks protected keys here and the destination's protected entry.
    /// - Throws: what `move` would throw for these reasons.
    package func checkMove(_ id: KeyID, to destination: some KeyStorage, passphrase: Passphrase?) throws(KeystoreError) {
        guard let entry = try entry(for: id) else { throw .notFound(id, namespace: namespace.name) }
        // Sealed to this machine's TPM: another keystore would hold them sealed to nothing (and a PIN is no passphrase).
        if entry.isSealedToTPM { throw .sealedToTPMStaysHere(id) }
        let history = try self.history(for: id, passphrase: entry.isProtected ? passphrase : nil)
        guard let existing = try destination.entry(for: id) else { return }
        let current = try destination.keyRing(for: id, passphrase: existing.isProtected ? passphrase : nil).current
        guard current == history.current else { throw .conflictingKey(id) }
    }

    /// Moves `id`'s keys, current and retired, from this keystore into `destination`.
    ///
    /// The destination follows the import rule: an id it lacks gets every version, the
    /// identical current key is fine (missing retired keys are added), a different current
    /// key is refused and nothing changes. The keys are deleted here only after the
    /// destination has been read back and holds every one of them, so a failure at any
    /// step leaves them at least here; running the move again finishes it.
    /// - Parameters:
    ///   - id: the id to move.
    ///   - destination: the keystore to move it into.
    ///   - passphrase: unlocks protected keys here, keeps them protected there (and
    ///     unlocks the destination's entry when it is protected).
    /// - Returns: the keys moved.
    /// - Throws: `.notFound`, `.conflictingKey` when the destination holds a different key
    ///   (or, read back, does not hold these), `.locked`, `.wrongPassphrase`, or a storage problem.
    @discardableResult
    package func move(_ id: KeyID, to destination: some KeyStorage, passphrase: Passphrase?) throws(KeystoreError) -> KeyHistory {
        guard let entry = try entry(for: id) else { throw .notFound(id, namespace: namespace.name) }
        if entry.isSealedToTPM { throw .sealedToTPMStaysHere(id) }
        let history = try self.history(for: id, passphrase: entry.isProtected ? passphrase : nil)
        let existing = try destination.entry(for: id)
        // Protected keys stay protected: a new destination entry is sealed under the same passphrase,
        // and an unprotected one that protected keys merge into is protected first (one atomic
        // rewrite), so the merge never writes a protected key in plaintext.
        let destinationPassphrase = entry.isProtected || existing?.isProtected == true ? passphrase : nil
        if entry.isProtected, let existing, !existing.isProtected {
            guard let passphrase else { throw .locked(id) }
            try checkMove(id, to: destination, passphrase: passphrase)
            _ = try destination.changePassphrase(of: id, from: nil, to: passphrase)
        }
        try destination.store(history, passphrase: destinationPassphrase)
        let stored = try destination.history(for: id, passphrase: destinationPassphrase)
        let holdsEveryKey = stored.current == history.current
            && history.versions.allSatisfy { version in stored.versions.contains { $0.key == version.key } }
        guard holdsEveryKey else { throw .conflictingKey(id) }
        try delete(id)
        return history
    }
}
