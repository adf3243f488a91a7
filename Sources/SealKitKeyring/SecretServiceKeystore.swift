// libsecret and the Secret Service are Linux's: elsewhere SealKitKeyring is SealKit alone.
#if os(Linux)
import CSecret
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Keys in the desktop keyring: the freedesktop Secret Service (GNOME Keyring, KWallet),
/// reached through libsecret. It is the Linux desktop's counterpart of the iOS Keychain
/// that Rownd kept keys in: locked at rest under the login password, unlocked with the session.
///
/// - Each id is one item holding the id's whole history in the key-file text form
///   (docs/format.md), so a rotation is one write. Passphrase-protected keys are kept
///   sealed in the item, exactly as in a protected key file.
/// - Items carry the attributes `application=sealkit`, `namespace`, `id` and `version=1`
///   and the label `SealKit key '<id>' (<namespace>) <fingerprint>`: no key material.
/// - It never asks the keyring to unlock (that would pop up a prompt no script can answer):
///   a locked keyring is reported as `KeyringProblem.locked`, and every call to the
///   keyring is cancelled after `timeout`.
/// - Changes hold an exclusive lock on a file in `$XDG_RUNTIME_DIR`, so several SealKit
///   processes sharing the keyring lose nothing.
/// - libsecret and GLib are opened on the first call to the keyring (a process that
///   does not use the keyring does not load them); a machine without them gets
///   `KeystoreError.libraryUnavailable`, naming the library and its Debian package.
package struct SecretServiceKeystore: KeyStorage {
    package let namespace: Namespace
    /// How long any one call to the keyring may take before it is abandoned.
    package let timeout: Duration
    /// The lock file serialising changes between processes; nil for none.
    let lockPath: String?

    /// The keyring's value of the `version` attribute: the item's form (docs/format.md).
    package static let formatVersion = "1"

    /// Opens (without contacting it yet) the user's Secret Service.
    /// - Parameters:
    ///   - namespace: keeps apps and environments apart, as with files.
    ///   - timeout: how long any one call to the keyring may take.
    ///   - environment: where to find `$XDG_RUNTIME_DIR` for the lock file.
    package init(
        namespace: Namespace = .default, timeout: Duration = .seconds(10),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.namespace = namespace
        self.timeout = timeout
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            lockPath = runtime + "/sealkit-secret-service.lock"
        } else {
            lockPath = nil
        }
    }

    private var items: KeyItems<Storage> { KeyItems(Storage(namespace: namespace, timeout: timeout, lockPath: lockPath)) }

    package func entry(for id: KeyID) throws(KeystoreError) -> KeyEntry? { try items.entry(for: id) }

    package func entries() throws(KeystoreError) -> [KeyEntry] { try items.entries() }

    package func keyRing(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyRing {
        try items.keyRing(for: id, passphrase: passphrase)
    }

    package func history(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyHistory {
        try items.history(for: id, passphrase: passphrase)
    }

    @discardableResult
    package func store(
        _ key: SymmetricKey, as id: KeyID, mode: StoreMode, passphrase: Passphrase?
    ) throws(KeystoreError) -> StoreOutcome {
        try items.store(key, as: id, mode: mode, passphrase: passphrase)
    }

    @discardableResult
    package func store(_ history: KeyHistory, passphrase: Passphrase?) throws(KeystoreError) -> StoreOutcome {
        try items.store(history, passphrase: passphrase)
    }

    @discardableResult
    package func rotate(_ id: KeyID, to newKey: SymmetricKey, passphrase: Passphrase?) throws(KeystoreError) -> KeyEntry {
        try items.rotate(id, to: newKey, passphrase: passphrase)
    }

    @discardableResult
    package func changePassphrase(of id: KeyID, from current: Passphrase?, to new: Passphrase?) throws(KeystoreError) -> KeyEntry {
        try items.changePassphrase(of: id, from: current, to: new)
    }

    package func survey() throws(KeystoreError) -> KeystoreSurvey { try items.survey() }

    package func delete(_ id: KeyID) throws(KeystoreError) { try items.delete(id) }
}

/// The items themselves, through libsecret's non-variadic calls.
struct Storage: KeyItemStorage {
    let namespace: Namespace
    let timeout: Duration
    let lockPath: String?

    /// Items larger than this are not SealKit's (a key-file text of the largest history is far smaller).
    static let maximumItemSize = 1 << 20

    func itemName(for id: KeyID) -> KeyID { id }

    // MARK: Reading

    func readItem(_ id: KeyID) throws(KeystoreError) -> SecureBytes? {
        // Searching first, without unlocking, tells a locked item from a missing one; the
        // lookup after it would otherwise ask the keyring to prompt for the password.
        guard let found = try search(id: id).first else { return nil }
        if found.isLocked { throw .keyring(.locked) }
        return try withCall("read the key for '\(id)'") { (secret, cancellable, error) throws(KeystoreError) -> SecureBytes? in
            try withAttributes(secret, id: id) { (attributes) throws(KeystoreError) -> SecureBytes? in
                guard let password = secret.secret_password_lookupv_nonpageable_sync(
                    sealkit_secret_schema(), attributes, cancellable, &error)
                else { return nil }
                // The text goes straight into guarded memory; libsecret wipes its own copy.
                defer { secret.secret_password_free(password) }
                let count = strnlen(password, Self.maximumItemSize + 1)
                guard count > 0, count <= Self.maximumItemSize else {
                    throw damagedItem(id, reason: "it is empty or larger than 1 MiB")
                }
                return SecureBytes(copying: UnsafeRawBufferPointer(start: password, count: count))
            }
        }
    }

    func itemNames() throws(KeystoreError) -> [KeyID] {
        let found = try search(id: nil)
        if found.contains(where: \.isLocked) { throw .keyring(.locked) }
        // An id attribute that is not a valid id is not SealKit's doing; reading it by that
        // attribute would fail anyway, so it is left for the user to inspect.
        return found.compactMap { $0.id.flatMap { try? KeyID($0) } }
    }

    // MARK: Writing

    func writeItem(_ text: SecureBytes, describing entry: KeyEntry) throws(KeystoreError) {
        try requireUnlockedDefaultCollection(forWriting: true)
        let label = "SealKit key '\(entry.id)' (\(namespace)) \(entry.current.fingerprint)"
        // libsecret takes the text as a C string: a NUL-terminated copy, in guarded memory.
        let terminated = SecureBytes(count: text.count + 1) { buffer in
            text.withUnsafeBytes { buffer.copyMemory(from: $0) }
            buffer[text.count] = 0
        }
        let stored: Bool = try withCall("store the key for '\(entry.id)'") { secret, cancellable, error in
            withAttributes(secret, id: entry.id) { attributes in
                terminated.withUnsafeBytes { bytes in
                    secret.secret_password_storev_sync(
                        sealkit_secret_schema(), attributes, SEALKIT_SECRET_COLLECTION_DEFAULT, label,
                        bytes.baseAddress!.assumingMemoryBound(to: CChar.self), cancellable, &error) != 0
                }
            }
        }
        guard stored else { throw .keyring(.failed(operation: "store the key for '\(entry.id)'", reason: "the Secret Service refused it")) }
    }

    func deleteItem(_ id: KeyID) throws(KeystoreError) -> Bool {
        guard let found = try search(id: id).first else { return false }
        if found.isLocked { throw .keyring(.locked) }
        return try withCall("delete the key for '\(id)'") { secret, cancellable, error in
            withAttributes(secret, id: id) { attributes in
                secret.secret_password_clearv_sync(sealkit_secret_schema(), attributes, cancellable, &error) != 0
            }
        }
    }

    func damagedItem(_ id: KeyID, reason: String) -> KeystoreError {
        .keyring(.damagedItem(id, namespace: namespace.name, reason: reason))
    }

    var misplacedItemReason: String { "it holds the keys of another id" }

    /// Only a damaged item is that item's problem; a locked or absent keyring is everyone's.
    func problem(_ error: KeystoreError, reading id: KeyID) -> KeystoreSurvey.Problem? {
        guard case .keyring(.damagedItem(let id, let namespace, _)) = error else { return nil }
        return .init(id: id, path: "\(namespace)/\(id)", error: error)
    }

    // MARK: Locking

    func withExclusiveAccess<T>(_ body: () throws(KeystoreError) -> T) throws(KeystoreError) -> T {
        // Without libsecret nothing can change: say so before taking the lock.
        _ = try Self.library()
        guard let lockPath else { return try body() }
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .fileSystem(operation: "lock", path: lockPath, errno: Errno(rawValue: errno)) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .fileSystem(operation: "lock", path: lockPath, errno: Errno(rawValue: errno)) }
        }
        return try body()
    }

    // MARK: libsecret

    struct FoundItem {
        let id: String?
        let isLocked: Bool
    }

    /// The items of this namespace (one id's, or all), found without unlocking anything.
    ///
    /// A locked keyring may hide its items from a search altogether, so finding none is
    /// only an answer when the default keyring is unlocked.
    private func search(id: KeyID?) throws(KeystoreError) -> [FoundItem] {
        let found = try searchWithoutUnlocking(id: id)
        if found.isEmpty { try requireUnlockedDefaultCollection(forWriting: false) }
        return found
    }

    private func searchWithoutUnlocking(id: KeyID?) throws(KeystoreError) -> [FoundItem] {
        try withCall("search for keys") { (secret, cancellable, error) throws(KeystoreError) -> [FoundItem] in
            guard let service = try service(secret, cancellable, &error) else { return [] }
            defer { secret.g_object_unref(UnsafeMutableRawPointer(service)) }
            return withAttributes(secret, id: id) { attributes in
                // SECRET_SEARCH_ALL without SECRET_SEARCH_UNLOCK: locked items are listed, not unlocked.
                let list = secret.secret_service_search_sync(
                    service, sealkit_secret_schema(), attributes, SEALKIT_SECRET_SEARCH_ALL, cancellable, &error)
                defer { sealkit_objects_free(list) }
                var found: [FoundItem] = []
                var next = list
                while let node = next {
                    let item = node.pointee.data.map(OpaquePointer.init)
                    let itemAttributes = secret.secret_item_get_attributes(item)
                    let itemID = itemAttributes.flatMap { sealkit_attributes_get($0, SEALKIT_ATTRIBUTE_ID) }.map { String(cString: $0) }
                    if let itemAttributes { secret.g_hash_table_unref(itemAttributes) }
                    found.append(FoundItem(id: itemID, isLocked: secret.secret_item_get_locked(item) != 0))
                    next = node.pointee.next
                }
                return found
            }
        }
    }

    /// Writing goes to the default collection ("login" in GNOME Keyring); storing into a
    /// locked one would make the keyring prompt, so it is checked first.
    /// - Parameter forWriting: whether a missing default keyring is an error (nothing can be
    ///   stored) or simply means there are no keys.
    private func requireUnlockedDefaultCollection(forWriting: Bool) throws(KeystoreError) {
        let locked: Bool = try withCall("open the default keyring") { (secret, cancellable, error) throws(KeystoreError) -> Bool in
            guard let service = try service(secret, cancellable, &error) else { return false }
            defer { secret.g_object_unref(UnsafeMutableRawPointer(service)) }
            guard let collection = secret.secret_collection_for_alias_sync(
                service, SEALKIT_SECRET_COLLECTION_DEFAULT, SEALKIT_SECRET_COLLECTION_NONE, cancellable, &error)
            else {
                if error != nil || !forWriting { return false }
                throw .keyring(.failed(
                    operation: "store keys", reason: "there is no default keyring: create one (Passwords and Keys), then try again"))
            }
            defer { secret.g_object_unref(UnsafeMutableRawPointer(collection)) }
            return secret.secret_collection_get_locked(collection) != 0
        }
        if locked { throw .keyring(.locked) }
    }

    /// The user's Secret Service, with a session open for moving secrets.
    private func service(
        _ secret: sealkit_secret_functions, _ cancellable: OpaquePointer?, _ error: inout UnsafeMutablePointer<sealkit_GError>?
    ) throws(KeystoreError) -> OpaquePointer? {
        guard let service = secret.secret_service_get_sync(SEALKIT_SECRET_SERVICE_OPEN_SESSION, cancellable, &error) else {
            guard let failure = error else { throw .keyring(.unavailable(reason: "no answer")) }
            defer { secret.g_error_free(failure); error = nil }
            if sealkit_error_is_cancelled(failure) != 0 { throw timedOut("connect to the keyring") }
            throw .keyring(.unavailable(reason: Self.oneLine(failure)))
        }
        return service
    }

    private func withAttributes<T, E: Error>(
        _ secret: sealkit_secret_functions, id: KeyID?, _ body: (OpaquePointer?) throws(E) -> T
    ) throws(E) -> T {
        let attributes = sealkit_attributes_new()
        defer { secret.g_hash_table_unref(attributes) }
        sealkit_attributes_set(attributes, SEALKIT_ATTRIBUTE_APPLICATION, "sealkit")
        sealkit_attributes_set(attributes, SEALKIT_ATTRIBUTE_NAMESPACE, namespace.name)
        sealkit_attributes_set(attributes, SEALKIT_ATTRIBUTE_VERSION, SecretServiceKeystore.formatVersion)
        if let id { sealkit_attributes_set(attributes, SEALKIT_ATTRIBUTE_ID, id.rawValue) }
        return try body(attributes)
    }

    /// libsecret and GLib, opened on the first call: their functions, or
    /// `libraryUnavailable` naming the library that cannot be loaded and its Debian package.
    static func library() throws(KeystoreError) -> sealkit_secret_functions {
        var line = [CChar](repeating: 0, count: 400)
        let functions = line.withUnsafeMutableBufferPointer { sealkit_secret($0.baseAddress, $0.count) }
        guard let functions else {
            let reason = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw .libraryUnavailable("cannot use the desktop keyring: " + reason)
        }
        return functions.pointee
    }

    /// Runs one call to the keyring with a cancellable that fires after `timeout`, and turns
    /// the GError it leaves into a one-line `KeystoreError`.
    private func withCall<T>(
        _ operation: String,
        _ body: (sealkit_secret_functions, OpaquePointer?, inout UnsafeMutablePointer<sealkit_GError>?) throws(KeystoreError) -> T
    ) throws(KeystoreError) -> T {
        let secret = try Self.library()
        let cancellable = secret.g_cancellable_new()
        defer { secret.g_object_unref(UnsafeMutableRawPointer(cancellable)) }
        // The timer holds its own reference, so it may fire after the call has finished:
        // cancelling a finished call does nothing.
        let timerReference = Cancellable(
            pointer: OpaquePointer(secret.g_object_ref(UnsafeMutableRawPointer(cancellable))),
            cancel: secret.g_cancellable_cancel, unref: secret.g_object_unref)
        let milliseconds = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
            timerReference.cancel(timerReference.pointer)
            timerReference.unref(UnsafeMutableRawPointer(timerReference.pointer))
        }
        var error: UnsafeMutablePointer<sealkit_GError>?
        let result = try body(secret, cancellable, &error)
        if let failure = error {
            defer { secret.g_error_free(failure) }
            if sealkit_error_is_cancelled(failure) != 0 { throw timedOut(operation) }
            if sealkit_error_is_locked(failure) != 0 { throw .keyring(.locked) }
            if sealkit_error_is_no_service(failure) != 0 { throw .keyring(.unavailable(reason: Self.oneLine(failure))) }
            throw .keyring(.failed(operation: operation, reason: Self.oneLine(failure)))
        }
        return result
    }

    private func timedOut(_ operation: String) -> KeystoreError {
        .keyring(.timedOut(operation: operation, seconds: Int(timeout.components.seconds)))
    }

    /// GLib's message, on one line (messages from the bus may hold newlines).
    private static func oneLine(_ error: UnsafeMutablePointer<sealkit_GError>) -> String {
        guard let message = error.pointee.message else { return "unknown error" }
        return String(cString: message).split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

/// A GCancellable handed to the timer thread, with the two functions it calls. `@unchecked Sendable`:
/// GCancellable is thread-safe (GLib documents `g_cancellable_cancel` as callable from any thread).
private struct Cancellable: @unchecked Sendable {
    let pointer: OpaquePointer?
    let cancel: @convention(c) (OpaquePointer?) -> Void
    let unref: @convention(c) (UnsafeMutableRawPointer?) -> Void
}
#endif
