// The fixture auditor: findings over ciphertext fixtures and exported profiles, as text, JSON or SARIF.
@_exported import SealKit

/// An auditor that checks ciphertexts against users' keys.
extension Auditor {
    /// Makes an auditor that checks ciphertexts against users' keys.
    /// - Parameters:
    ///   - schema: which fields must hold ciphertexts. Without one, every string that is canonical
    ///     base64 of at least 40 bytes counts as a ciphertext.
    ///   - vaults: the users whose keys to try: a ciphertext that opens under none of their current keys is
    ///     reported as `retired-key` (a retired key opens it) or `undecryptable` (none does). Empty for no key checks.
    ///   - ignoring: kinds of finding to leave out.
    /// - Throws: `SealKitError` when a user's keys cannot be read or unlocked.
    public init(schema: AuditSchema? = nil, vaults: [Vault], ignoring: Set<FindingKind> = []) throws(SealKitError) {
        var keys: [KeyRing] = []
        for vault in vaults { keys.append(try vault.keyRing()) }
        self.init(schema: schema, keys: keys, ignoring: ignoring)
    }
}
