#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealCore
import SealJSON
import SealKeystore
import SealProfile

/// One user's field encryption, shaped like Rownd's SDK: `encrypt(plaintext:)`,
/// `decrypt(ciphertext:)`, `isEncryptionPossible()`, and `ensureKey()` after sign-in.
///
/// The user id names the key in the keystore. Keys are read once and kept (in guarded
/// memory) for the vault's lifetime; changes made through the vault refresh them.
///
/// ```swift
/// let vault = Vault(keystore: FileKeystore(root: root), userID: try KeyID("user-123"))
/// try vault.ensureKey()
/// let sealed = try vault.encrypt(plaintext: "A+ blood type")
/// let opened = try vault.decrypt(ciphertext: sealed)
/// ```
///
/// `@unchecked Sendable`: `cachedRing` and `subscribers` are read and written under `lock`; everything
/// else is immutable.
public final class Vault: @unchecked Sendable {
    /// The keystore the user's keys live in.
    public let keystore: any Keystore
    /// The signed-in user, whose id names the key; nil when nobody is signed in.
    public let userID: KeyID?
    private let passphrase: Passphrase?

    private let lock = Lock()
    private var cachedRing: KeyRing?
    private var subscribers: [UUID: AsyncStream<VaultEvent>.Continuation] = [:]

    /// Binds a keystore to a user.
    /// - Parameters:
    ///   - keystore: where the user's keys live.
    ///   - userID: the signed-in user; nil makes every operation fail with `.noUser`.
    ///   - passphrase: unlocks passphrase-protected keys, and protects keys `ensureKey()` creates.
    public init(keystore: any Keystore, userID: KeyID?, passphrase: Passphrase? = nil) {
        self.keystore = keystore
        self.userID = userID
        self.passphrase = passphrase
    }

    deinit {
        for continuation in subscribers.values { continuation.finish() }
    }

    // MARK: Rownd's surface

    /// Encrypts text with the user's current key.
    /// - Parameter plaintext: the text to protect.
    /// - Returns: base64 of nonce ‖ tag ‖ encrypted bytes, readable by Rownd's SDKs.
    /// - Throws: `VaultError` when no user is set or the key is missing or locked.
    public func encrypt(plaintext: String) throws(VaultError) -> String {
        let id = try requireUser()
        do {
            return try ring(for: id).encrypt(plaintext)
        } catch {
            emit(.encryptionFailed(id))
            throw error
        }
    }

    /// Encrypts text with the user's current key in `format`; a v2 ciphertext is bound to the
    /// user's id and to `context`, and opens only with both.
    /// - Parameters:
    ///   - plaintext: the text to protect.
    ///   - context: what the value is for (`"billing-note"`); empty is allowed. Bound by v2 only.
    ///   - format: v2 by default here; v1 is Rownd's format, which binds nothing, so
    ///     `decrypt(ciphertext:context:)` refuses it: open it with `decrypt(ciphertext:)`.
    /// - Returns: the ciphertext's text: `sk2:...` for v2.
    /// - Throws: `VaultError` when no user is set or the key is missing or locked.
    public func encrypt(plaintext: String, context: String, format: CiphertextFormat = .v2) throws(VaultError) -> String {
        let id = try requireUser()
        do throws(VaultError) {
            let keys = try ring(for: id)
            do {
                return try keys.encrypt(plaintext, format: format, place: .context(context))
            } catch {
                throw .secureMemory(error)
            }
        } catch {
            emit(.encryptionFailed(id))
            throw error
        }
    }

    /// Decrypts a v2 ciphertext, which opens only for the user's id and the `context` it was
    /// sealed with. A v1 value names no context, so it is refused here (`CiphertextError.notBound`);
    /// open v1 values with `decrypt(ciphertext:)`.
    /// - Throws: `VaultError.ciphertext` naming the problem, v2's wrong place, unknown key,
    ///   tampering and a v1 value apart.
    public func decrypt(ciphertext: String, context: String) throws(VaultError) -> String {
        let id = try requireUser()
        do throws(VaultError) {
            let ring = try ring(for: id)
            do {
                return try ring.decrypt(ciphertext, place: .context(context), acceptsV1: false).plaintext
            } catch {
                throw VaultError.ciphertext(id, error)
            }
        } catch {
            emit(.decryptionFailed(id))
            throw error
        }
    }

    /// Decrypts a ciphertext with the user's current key, then retired keys.
    /// - Parameter ciphertext: base64 of nonce ‖ tag ‖ encrypted bytes.
    /// - Returns: the plaintext.
    /// - Throws: `VaultError` naming the problem: no user, missing key, not base64,
    ///   too short, or failed authentication.
    public func decrypt(ciphertext: String) throws(VaultError) -> String {
        let id = try requireUser()
        do throws(VaultError) {
            let ring = try ring(for: id)
            do {
                return try ring.decrypt(ciphertext).plaintext
            } catch {
                throw VaultError.ciphertext(id, error)
            }
        } catch {
            emit(.decryptionFailed(id))
            throw error
        }
    }

    /// Whether `encrypt` and `decrypt` can work now: a user is set and its key is
    /// present and usable (unlocked, when passphrase-protected).
    public func isEncryptionPossible() -> Bool {
        if case .possible = encryptionStatus() { return true }
        return false
    }

    /// Whether encryption is possible, and if not, why.
    public func encryptionStatus() -> EncryptionStatus {
        do {
            let id = try requireUser()
            let ring = try ring(for: id)
            return .possible(ring.current.fingerprint)
        } catch {
            return .notPossible(error)
        }
    }

    /// Whether encryption is possible and the user's keys open every ciphertext in their data.
    ///
    /// A device whose key differs from the one the user's data is sealed under (a second device
    /// that made a key of its own) gets `.notPossible(.keyElsewhere(...))`, naming the missing keys.
    /// - Parameters:
    ///   - profile: the user's profile as the server holds it.
    ///   - schema: the app schema; nil counts every string that parses as a ciphertext.
    public func encryptionStatus(for profile: JSONValue, schema: ProfileSchema? = nil) -> EncryptionStatus {
        do {
            let id = try requireUser()
            let ring = try ring(for: id)
            let check = ProfileKeyCheck(profile: profile, schema: schema, keys: ring)
            if !check.missingKeys.isEmpty { return .notPossible(.keyElsewhere(id, check.missingKeys)) }
            if !check.unreadable.isEmpty { return .notPossible(.unreadableData(id, check.unreadable)) }
            return .possible(ring.current.fingerprint)
        } catch {
            return .notPossible(error)
        }
    }

    /// Makes sure the user has a key, creating one on first use, but never when the user's data
    /// shows they already have one elsewhere: a second device that made its own key would fork the
    /// user's key, and each device would then seal fields the other cannot open. Safe to call every
    /// time; an existing key is left alone.
    /// - Parameters:
    ///   - profile: the user's profile as the server holds it (or any JSON holding their
    ///     ciphertexts); pass `.object([])` for a user with no data yet.
    ///   - schema: the app schema; nil counts every string that parses as a ciphertext.
    /// - Returns: the user's key entry.
    /// - Throws: `VaultError.keyElsewhere` when no key is stored and the data holds ciphertexts:
    ///   receive the user's key (key transfer, a backup) instead.
    @discardableResult
    public func ensureKey(existing profile: JSONValue, schema: ProfileSchema? = nil) throws(VaultError) -> KeyEntry {
        let id = try requireUser()
        do {
            if let entry = try keystore.entry(for: id) { return entry }
        } catch {
            throw .keystore(error)
        }
        let check = ProfileKeyCheck(profile: profile, schema: schema, keys: nil)
        guard check.missingKeys.isEmpty else { throw .keyElsewhere(id, check.missingKeys) }
        return try ensureKey()
    }

    /// Makes sure the user has a key, creating and storing one on first use. Only for a user known
    /// to have no data yet: for one who may have signed in elsewhere, `ensureKey(existing:schema:)`
    /// checks their data first, so that a second device does not fork the user's key.
    /// - Returns: the user's key entry.
    @discardableResult
    public func ensureKey() throws(VaultError) -> KeyEntry {
        let id = try requireUser()
        do throws(KeystoreError) {
            if let entry = try keystore.entry(for: id) { return entry }
            do throws(KeystoreError) {
                try keystore.store(SymmetricKey.generate(), as: id, mode: .create, passphrase: passphrase)
                emit(.keyGenerated(id))
            } catch {
                // Another process may have created it between our look and our write: theirs stands.
                guard case .alreadyExists = error else { throw error }
            }
            guard let entry = try keystore.entry(for: id) else { throw KeystoreError.notFound(id, namespace: keystore.namespace.name) }
            return entry
        } catch {
            throw .keystore(error)
        }
    }

    /// Stores a key received from elsewhere (a transfer, a backup) as the user's key.
    /// The identical key again changes nothing; a different one is refused.
    /// - Returns: whether anything was written.
    @discardableResult
    public func importKey(_ key: SymmetricKey) throws(VaultError) -> StoreOutcome {
        let id = try requireUser()
        do {
            let outcome = try keystore.store(key, as: id, mode: .import, passphrase: passphrase)
            if outcome == .stored { emit(.keyImported(id)) }
            forgetRing()
            return outcome
        } catch {
            throw .keystore(error)
        }
    }

    /// Makes a new current key and keeps the old ones for decryption.
    /// - Returns: the entry after rotation.
    @discardableResult
    public func rotateKey() throws(VaultError) -> KeyEntry {
        let id = try requireUser()
        do {
            let entry = try keystore.rotate(id, to: SymmetricKey.generate(), passphrase: passphrase)
            forgetRing()
            emit(.keyRotated(id))
            return entry
        } catch {
            throw .keystore(error)
        }
    }

    /// Deletes every key of the user. Ciphertexts made with them can no longer be opened.
    public func deleteKey() throws(VaultError) {
        let id = try requireUser()
        do {
            try keystore.delete(id)
            forgetRing()
            emit(.keyDeleted(id))
        } catch {
            throw .keystore(error)
        }
    }

    // MARK: Profiles

    /// Encrypts the fields `schema` flags, with the user's current key, as Rownd's SDK does
    /// before upload, but for every JSON type. v2 values are bound to the user's id and their
    /// field's name. Values already encrypted are left alone; a value sealed under a key this
    /// keystore lacks fails the whole profile rather than being sealed twice.
    /// - Parameter format: the format of every new ciphertext; nil follows each field's schema.
    /// - Parameters:
    ///   - profile: a JSON object of fields, or Rownd's user-state shape (`{"data": {...}}`).
    ///   - schema: the app schema saying which fields are encrypted.
    /// - Returns: the profile with flagged fields encrypted, in the same order.
    public func encryptProfile(
        _ profile: JSONValue, schema: ProfileSchema, format: CiphertextFormat? = nil
    ) throws(VaultError) -> JSONValue {
        let id = try requireUser()
        let keys = try ringOrReport(for: id, failure: .encryptionFailed(id))
        do {
            return try ProfileEncryptor(schema: schema, format: format).encrypt(profile, with: keys)
        } catch {
            emit(.encryptionFailed(id))
            throw .profile(error)
        }
    }

    /// Encrypts the fields `schema` flags in a profile given as JSON text, as `encryptProfile(_:schema:)`
    /// does, and returns compact JSON text. For the common profile this never builds a value tree,
    /// so it is several times faster than parsing, encrypting and serializing.
    /// - Parameters:
    ///   - json: the profile's JSON text: an object of fields, or Rownd's user-state shape.
    ///   - schema: the app schema saying which fields are encrypted.
    /// - Returns: the encrypted profile as compact JSON, members in their order.
    /// - Throws: `VaultError.profile` with `.invalidJSON` for text that is not strict JSON, or as `encryptProfile(_:schema:)`.
    public func encryptProfile(json: String, schema: ProfileSchema) throws(VaultError) -> String {
        let id = try requireUser()
        let keys = try ringOrReport(for: id, failure: .encryptionFailed(id))
        var json = json
        let result = json.withUTF8 { text in
            Result { () throws(ProfileError) -> String in
                var output: [UInt8] = []
                try ProfileEncryptor(schema: schema).encrypt(jsonText: text, with: keys, appendingTo: &output)
                return String(decoding: output, as: UTF8.self)
            }
        }
        do {
            return try result.get()
        } catch {
            emit(.encryptionFailed(id))
            throw .profile(error)
        }
    }

    /// Decrypts every flagged field, restoring each value's type from the schema.
    /// - Returns: the profile, and the fields that only a retired key opened (to re-encrypt with `rotateProfile`).
    /// - Throws: `VaultError.profile` listing every field that failed, never a value.
    public func decryptProfile(_ profile: JSONValue, schema: ProfileSchema) throws(VaultError) -> DecryptedProfile {
        let id = try requireUser()
        let keys = try ringOrReport(for: id, failure: .decryptionFailed(id))
        do {
            return try ProfileEncryptor(schema: schema).decrypt(profile, with: keys)
        } catch {
            emit(.decryptionFailed(id))
            throw .profile(error)
        }
    }

    /// Re-encrypts fields that only a retired key opens under the current key.
    ///
    /// A field written as v2 opens only v2 values; `migratingFromV1` reads its v1 values on
    /// purpose and rewrites them as v2 (`ProfileEncryptor.rotate(_:with:migratingFromV1:)`).
    /// - Parameters:
    ///   - profile: an encrypted profile, as fields or in Rownd's user-state shape.
    ///   - schema: the app schema saying which fields are encrypted, and in which format.
    ///   - format: the format of every new ciphertext; nil follows each field's schema.
    ///   - migratingFromV1: read v1 values in fields written as v2, and rewrite them as v2.
    /// - Returns: the profile, and the fields that were re-encrypted.
    public func rotateProfile(
        _ profile: JSONValue, schema: ProfileSchema, format: CiphertextFormat? = nil, migratingFromV1: Bool = false
    ) throws(VaultError) -> RotatedProfile {
        let id = try requireUser()
        let keys = try ring(for: id)
        do {
            return try ProfileEncryptor(schema: schema, format: format).rotate(profile, with: keys, migratingFromV1: migratingFromV1)
        } catch {
            throw .profile(error)
        }
    }

    private func ringOrReport(for id: KeyID, failure: VaultEvent) throws(VaultError) -> KeyRing {
        do {
            return try ring(for: id)
        } catch {
            emit(failure)
            throw error
        }
    }

    /// The user's unlocked keys, for the package's bulk paths (profiles, `--lines`).
    package func keyRing() throws(VaultError) -> KeyRing {
        try ring(for: try requireUser())
    }

    // MARK: Events

    /// A stream of key lifecycle events, like Rownd's: every subscriber gets every
    /// event from the moment it subscribes. Events carry the key id, never a key.
    public func events() -> AsyncStream<VaultEvent> {
        let (stream, continuation) = AsyncStream<VaultEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let token = UUID()
        lock.withLock { subscribers[token] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { _ = self?.subscribers.removeValue(forKey: token) }
        }
        return stream
    }

    private func emit(_ event: VaultEvent) {
        let continuations = lock.withLock { Array(subscribers.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    // MARK: Internals

    private func requireUser() throws(VaultError) -> KeyID {
        guard let userID else { throw .noUser }
        return userID
    }

    private func ring(for id: KeyID) throws(VaultError) -> KeyRing {
        if let cached = lock.withLock({ cachedRing }) { return cached }
        do {
            let ring = try keystore.keyRing(for: id, passphrase: passphrase)
            lock.withLock { cachedRing = ring }
            return ring
        } catch {
            throw .keystore(error)
        }
    }

    private func forgetRing() {
        lock.withLock { cachedRing = nil }
    }
}

/// Whether a vault can encrypt now.
public enum EncryptionStatus: Sendable {
    /// It can, with the current key of this fingerprint.
    case possible(KeyFingerprint)
    /// It cannot, for this reason.
    case notPossible(VaultError)
}

/// A key lifecycle event. Carries the key id, never key material.
public enum VaultEvent: Sendable, Equatable {
    /// A key was made for the user.
    case keyGenerated(KeyID)
    /// A key received from elsewhere was stored.
    case keyImported(KeyID)
    /// The user's key was rotated; the old one is kept to decrypt.
    case keyRotated(KeyID)
    /// Every key of the user was deleted.
    case keyDeleted(KeyID)
    /// Encryption for the user failed.
    case encryptionFailed(KeyID)
    /// Decryption for the user failed.
    case decryptionFailed(KeyID)
}

/// Why a vault operation failed.
public enum VaultError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No user is set, so there is no key to use.
    case noUser
    /// The keystore refused or failed.
    case keystore(KeystoreError)
    /// The ciphertext could not be decrypted with the user's keys.
    case ciphertext(KeyID, CiphertextError)
    /// The user's data is sealed under keys this keystore does not have: receive them instead of
    /// making a new key.
    case keyElsewhere(KeyID, [MissingKey])
    /// The user's keys are here, but these values of their data still do not open.
    case unreadableData(KeyID, [UnreadableValue])
    /// Guarded memory for a key could not be had.
    case secureMemory(SecureMemoryError)
    /// A profile could not be encrypted or decrypted; lists every failing field.
    case profile(ProfileError)

    /// One line naming the problem and the fix; never key material or values.
    public var description: String {
        switch self {
        case .noUser: return "no user is set: sign a user in (give a key id) before encrypting"
        case .keystore(let error): return error.description
        case .ciphertext(let id, let error): return "cannot decrypt with key '\(id)': \(error)"
        case .keyElsewhere(let id, let keys):
            return "the data of '\(id)' is sealed under "
                + keys.map(\.description).joined(separator: "; ")
                + ": receive the user's key from a device that has it "
                + "('sealkit transfer receive') instead of making a new one"
        case .unreadableData(let id, let values):
            return "the keys of '\(id)' are here, but " + values.prefix(5).map(\.description).joined(separator: "; ")
        case .secureMemory(let error): return error.description
        case .profile(let error): return error.description
        }
    }
}
