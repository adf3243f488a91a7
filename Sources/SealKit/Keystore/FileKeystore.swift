#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keys on disk, one file per id under `<root>/<namespace>/`.
///
/// - Strict, like ssh's StrictModes: the root, the namespace folder, every key file and
///   the lock file must be owned by the current user (the effective uid) and writable by
///   no one else, and key files readable by no one else; symbolic links are refused.
///   Everything is checked with `fstat` on descriptors opened with `O_NOFOLLOW`, walking
///   down from the root with `openat`, so nothing can be swapped between check and use.
///   Folders it creates (and missing parents of the root) are 0700, files 0600.
/// - Writes are atomic and durable (`DurableFile`): a temporary file, fsync, rename, fsync of
///   the folder. A crash leaves each id either as it was or as it was to become.
/// - The keystore rules (what a store, rotation or import may do) are `KeyItems`', shared with
///   the desktop keyring; this type supplies the key files as its items (`KeyFolder`).
/// - Every change happens under an exclusive lock on `<namespace>/.lock`, waited for at
///   most `lockTimeout`, so several processes sharing a keystore lose nothing and a lock
///   held forever blocks no one forever. Reads need no lock: renames are atomic.
/// - With a passphrase, each id's keys and metadata are sealed at rest as one AEAD under
///   a key derived with Argon2id.
package struct FileKeystore: KeyStorage {
    /// The folder holding every namespace.
    package let root: String
    package let namespace: Namespace
    /// How long a change waits for another process's lock before giving up.
    package let lockTimeout: Duration

    /// Unseals key files sealed to a TPM; nil: such files cannot be opened (everything else works).
    package var tpm: (any TPMKeySealer)?
    /// Whether ids this keystore creates are sealed to `tpm`, the passphrase given with them being their PIN.
    package var sealsNewKeysToTPM = false

    /// The lock timeout used when none is given.
    package static let defaultLockTimeout: Duration = .seconds(10)

    /// The folder holding this namespace's key files.
    package var folder: String { root + "/" + namespace.name }

    /// Opens (without creating anything yet) a keystore at `root`.
    /// - Parameters:
    ///   - root: the keystore's root folder (the command line's is `$SEALKIT_HOME`, by default `~/.local/share/sealkit`).
    ///   - namespace: keeps apps and environments apart.
    ///   - lockTimeout: how long a change waits for another process holding the lock.
    package init(root: String, namespace: Namespace = .default, lockTimeout: Duration = defaultLockTimeout) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.namespace = namespace
        self.lockTimeout = lockTimeout
    }

    // MARK: Keys, by the shared keystore rules

    /// The keys in an open namespace folder, kept by the rules every item keystore shares.
    private func items(in folder: Folder) -> KeyItems<KeyFolder> {
        var items = KeyItems(KeyFolder(folder: folder, namespace: namespace, lockTimeout: lockTimeout))
        items.tpm = tpm
        items.sealsNewKeysToTPM = sealsNewKeysToTPM
        return items
    }

    /// For reading: nil when the namespace has no folder (yet), which reads as no keys. Creates nothing.
    private func existingItems() throws(KeystoreError) -> KeyItems<KeyFolder>? {
        try openNamespace(creating: false).map(items(in:))
    }

    /// For a change: the folders are made first (0700) where missing.
    private func changingItems() throws(KeystoreError) -> KeyItems<KeyFolder> {
        guard let folder = try openNamespace(creating: true) else {
            throw .fileSystem(operation: "create folder", path: self.folder, errno: .noSuchFileOrDirectory)
        }
        return items(in: folder)
    }

    /// The keys, when `id` has a key file; a change to an id without one creates nothing, not even the lock file.
    private func itemsHolding(_ id: KeyID) throws(KeystoreError) -> KeyItems<KeyFolder> {
        guard let items = try existingItems(), try items.entry(for: id) != nil else { throw .notFound(id, namespace: namespace.name) }
        return items
    }

    package func entry(for id: KeyID) throws(KeystoreError) -> KeyEntry? {
        try existingItems()?.entry(for: id)
    }

    package func entries() throws(KeystoreError) -> [KeyEntry] {
        try existingItems()?.entries() ?? []
    }

    package func survey() throws(KeystoreError) -> KeystoreSurvey {
        try existingItems()?.survey() ?? KeystoreSurvey(entries: [], problems: [])
    }

    package func keyRing(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyRing {
        guard let items = try existingItems() else { throw .notFound(id, namespace: namespace.name) }
        return try items.keyRing(for: id, passphrase: passphrase)
    }

    /// See `KeyItems.pinPromptTries(for:atMost:)`.
    package func pinPromptTries(for id: KeyID, atMost limit: Int) throws(KeystoreError) -> Int {
        try existingItems()?.pinPromptTries(for: id, atMost: limit) ?? limit
    }

    package func history(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyHistory {
        guard let items = try existingItems() else { throw .notFound(id, namespace: namespace.name) }
        return try items.history(for: id, passphrase: passphrase)
    }

    @discardableResult
    package func store(
        _ key: SymmetricKey, as id: KeyID, mode: StoreMode, passphrase: Passphrase?
    ) throws(KeystoreError) -> StoreOutcome {
        try changingItems().store(key, as: id, mode: mode, passphrase: passphrase)
    }

    @discardableResult
    package func store(_ history: KeyHistory, passphrase: Passphrase?) throws(KeystoreError) -> StoreOutcome {
        try changingItems().store(history, passphrase: passphrase)
    }

    @discardableResult
    package func rotate(_ id: KeyID, to newKey: SymmetricKey, passphrase: Passphrase?) throws(KeystoreError) -> KeyEntry {
        try itemsHolding(id).rotate(id, to: newKey, passphrase: passphrase)
    }

    @discardableResult
    package func changePassphrase(
        of id: KeyID, from current: Passphrase?, to new: Passphrase?
    ) throws(KeystoreError) -> KeyEntry {
        try itemsHolding(id).changePassphrase(of: id, from: current, to: new)
    }

    /// See `KeyItems.changeProtection(of:from:to:)`: none, a passphrase, or the TPM, in one atomic write.
    @discardableResult
    package func changeProtection(of id: KeyID, from current: Passphrase?, to new: NewProtection) throws(KeystoreError) -> KeyEntry {
        try itemsHolding(id).changeProtection(of: id, from: current, to: new)
    }

    package func delete(_ id: KeyID) throws(KeystoreError) {
        // Deleting needs only the file to be there: a damaged, too-open or planted key file
        // is exactly what someone may want to delete, and its error message tells them to.
        guard let items = try existingItems(), items.storage.folder.contains(id.fileName) else {
            throw .notFound(id, namespace: namespace.name)
        }
        try items.delete(id)
    }

    // MARK: Folders

    /// Opens the root and then the namespace folder, checking each.
    /// - Parameter creating: make what is missing (0700), for a change; a read creates nothing.
    /// - Returns: nil when something is missing and `creating` is false.
    func openNamespace(creating: Bool) throws(KeystoreError) -> Folder? {
        if creating { try createParents(of: root) }
        guard let rootFolder = try Folder.open(named: root, in: nil, path: root, creating: creating) else { return nil }
        return try Folder.open(named: namespace.name, in: rootFolder, path: folder, creating: creating)
    }

    /// Missing parents of the root are made 0700; existing ones are the user's business
    /// (they may be `/home` or `/tmp`), as with ssh.
    private func createParents(of path: String) throws(KeystoreError) {
        let parent = FilePath(path).removingLastComponent().string
        guard !parent.isEmpty, parent != path else { return }
        var info = stat()
        if stat(parent, &info) == 0 { return }
        try createParents(of: parent)
        if mkdir(parent, 0o700) == 0 {
            guard chmod(parent, 0o700) == 0 else { throw .fileSystem(operation: "create folder", path: parent, errno: .current) }
        } else if errno != EEXIST {
            throw .fileSystem(operation: "create folder", path: parent, errno: .current)
        }
    }

    // MARK: Ids stored in another Unicode form

    /// A key file an earlier SealKit wrote under a non-NFC form of its id (before ids were normalized).
    package struct UnnormalizedFile: Sendable {
        /// The id it belongs to, normalized.
        package let id: KeyID
        /// Its file's name in the namespace folder.
        package let fileName: String
        /// Whether its keys are passphrase-protected.
        package let isProtected: Bool
    }

    /// Every key file whose id is stored in a form other than NFC.
    package func unnormalizedFiles() throws(KeystoreError) -> [UnnormalizedFile] {
        guard let items = try existingItems() else { return [] }
        var found: [UnnormalizedFile] = []
        for name in try items.storage.itemNames() {
            guard (try? items.file(named: name)) == nil,
                let file = try? items.storage.legacyFile(named: name), file.id.fileName != name
            else { continue }
            found.append(UnnormalizedFile(id: file.id, fileName: name, isProtected: file.entry.isProtected))
        }
        return found.sorted { $0.id < $1.id }
    }

    /// Moves an unnormalized file's keys under its NFC id, by the import rule (an NFC twin with the
    /// same current key merges, with a different one refuses), then deletes the old file.
    /// - Parameters:
    ///   - file: the legacy file, as `unnormalizedFiles()` lists it.
    ///   - passphrase: unlocks a protected file, and keeps its keys protected.
    /// - Returns: whether the NFC id was new (`.stored`) or already held the key (`.unchanged`).
    package func normalize(_ file: UnnormalizedFile, passphrase: Passphrase?) throws(KeystoreError) -> StoreOutcome {
        guard let items = try existingItems(), let legacy = try items.storage.legacyFile(named: file.fileName) else {
            throw .notFound(file.id, namespace: namespace.name)
        }
        let history = try legacy.unlock(passphrase: passphrase, source: folder + "/" + file.fileName, tpm: tpm).record.history
        let twin = try entry(for: file.id)
        // Protection never drops: protected keys merging into an unprotected twin protect it first.
        if legacy.entry.isProtected, let twin, !twin.isProtected {
            guard let passphrase else { throw .locked(file.id) }
            _ = try changePassphrase(of: file.id, from: nil, to: passphrase)
        }
        let twinProtected = try entry(for: file.id)?.isProtected == true
        let outcome = try store(history, passphrase: legacy.entry.isProtected || twinProtected ? passphrase : nil)
        // The keys are under the NFC id now (stored or already there): the old file can go.
        let storage = try changingItems().storage
        try storage.withExclusiveAccess { () throws(KeystoreError) in try storage.remove(file.fileName) }
        return outcome
    }
}

/// An open keystore folder that passed the checks; closed when released.
final class Folder: Sendable {
    let fd: FileDescriptor
    let path: String

    private init(fd: FileDescriptor, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { try? fd.close() }

    /// Opens one folder without following a link, creating it 0700 if asked, and checks
    /// that it is a folder owned by the current user that no one else can write.
    /// - Parameter parent: the folder `name` is in; nil for the current folder.
    /// - Returns: nil when it is missing and `creating` is false.
    static func open(named name: String, in parent: Folder?, path: String, creating: Bool) throws(KeystoreError) -> Folder? {
        let parentFD = parent?.fd.rawValue ?? AT_FDCWD
        var made = false
        if creating {
            if mkdirat(parentFD, name, 0o700) == 0 {
                made = true
            } else if errno != EEXIST {
                throw .fileSystem(operation: "create folder", path: path, errno: .current)
            }
        }
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(
                name, in: FileDescriptor(rawValue: parentFD), .readOnly, options: [.directory, .noFollow, .closeOnExec])
        } catch {
            if error == .noSuchFileOrDirectory && !creating { return nil }
            if error == .tooManySymbolicLinkLevels || error == .notDirectory {
                // With O_DIRECTORY, Linux reports a link as "not a directory": tell them apart.
                var info = stat()
                let isLink = fstatat(parentFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_mode & S_IFMT == S_IFLNK
                throw .notOwnFile(path: path, reason: isLink ? "is a symbolic link" : "is not a folder")
            }
            throw .fileSystem(operation: creating ? "create folder" : "open", path: path, errno: error)
        }
        let folder = Folder(fd: fd, path: path)
        // mkdir's mode passes through the umask; make it exactly 0700.
        if made {
            do {
                try fd.setPermissions(.ownerReadWriteExecute)
            } catch {
                throw .fileSystem(operation: "create folder", path: path, errno: error)
            }
        }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else { throw .fileSystem(operation: "open", path: path, errno: .current) }
        try checkOwnership(info, path: path, forbidden: 0o022)
        return folder
    }

    /// Owned by the effective user, and none of the `forbidden` mode bits set.
    static func checkOwnership(_ info: stat, path: String, forbidden: mode_t) throws(KeystoreError) {
        let user = geteuid()
        guard info.st_uid == user else { throw .unsafeOwner(path: path, owner: UInt32(info.st_uid), user: UInt32(user)) }
        guard info.st_mode & forbidden == 0 else { throw .insecurePermissions(path: path, mode: UInt32(info.st_mode)) }
    }

    /// Opens a file of this folder for reading under the key files' rules: not through a link, a regular
    /// file, the user's own, and no one else's to read or write. Key files and profile seal records
    /// (`SealMarks`) both go through it.
    /// - Returns: the open file (the caller closes it) and what `fstat` says of it; nil when it does not exist.
    func openOwnFile(_ name: String) throws(KeystoreError) -> (fd: FileDescriptor, info: stat)? {
        let path = self.path + "/" + name
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(name, in: self.fd, .readOnly, options: [.closeOnExec, .noFollow, .nonBlocking])
        } catch {
            if error == .noSuchFileOrDirectory { return nil }
            if error == .tooManySymbolicLinkLevels { throw .notOwnFile(path: path, reason: "is a symbolic link") }
            throw .fileSystem(operation: "read", path: path, errno: error)
        }
        var info = stat()
        do throws(KeystoreError) {
            guard fstat(fd.rawValue, &info) == 0 else { throw .fileSystem(operation: "read", path: path, errno: .current) }
            guard info.st_mode & S_IFMT == S_IFREG else { throw .damagedKeyFile(path: path, reason: "not a regular file") }
            try Self.checkOwnership(info, path: path, forbidden: 0o077)
        } catch {
            try? fd.close()
            throw error
        }
        return (fd, info)
    }

    /// Whether `name` exists in the folder (as anything, links included).
    func contains(_ name: String) -> Bool {
        var info = stat()
        return fstatat(fd.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) == 0
    }

    func sync() throws(KeystoreError) {
        do {
            try fd.sync()
        } catch {
            throw .fileSystem(operation: "sync", path: path, errno: error)
        }
    }

    /// The names in the folder that pass `include`.
    func names(where include: (String) -> Bool) throws(KeystoreError) -> [String] {
        let copy = dup(fd.rawValue)
        guard copy >= 0, let directory = fdopendir(copy) else {
            throw .fileSystem(operation: "list", path: path, errno: .current)
        }
        defer { closedir(directory) }
        // A duplicate shares the position of the folder's descriptor: start from the top.
        rewinddir(directory)
        var names: [String] = []
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if include(name) { names.append(name) }
        }
        return names
    }
}

/// A namespace folder as a `KeyItemStorage`: each item is a key file named after its id's hash,
/// read only when the user owns it and no one else can read it; changes hold the folder's lock.
struct KeyFolder: KeyItemStorage {
    let folder: Folder
    let namespace: Namespace
    let lockTimeout: Duration

    /// Key files are small; anything larger is not one of ours.
    private static let maximumKeyFileSize = 1 << 20

    func itemName(for id: KeyID) -> String { id.fileName }

    func itemNames() throws(KeystoreError) -> [String] {
        try folder.names { $0.hasSuffix(".key") && !$0.hasPrefix(".") }
    }

    /// Reads a key file, refusing one that is not a regular file, not the user's, or that others can access.
    /// - Returns: nil when it does not exist.
    func readItem(_ name: String) throws(KeystoreError) -> SecureBytes? {
        let path = folder.path + "/" + name
        guard let (fd, info) = try folder.openOwnFile(name) else { return nil }
        defer { try? fd.close() }
        guard info.st_size <= Self.maximumKeyFileSize else { throw .damagedKeyFile(path: path, reason: "too large") }

        var filled = 0
        var failure: Errno?
        let bytes: SecureBytes
        do {
            bytes = try SecureBytes.allocate(count: max(1, Int(info.st_size))) { buffer in
                while filled < Int(info.st_size) {
                    do {
                        let count = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<Int(info.st_size)]))
                        if count == 0 { break }
                        filled += count
                    } catch {
                        failure = Errno(error)
                        return
                    }
                }
            }
        } catch {
            throw .outOfMemory(String(describing: error))
        }
        if let failure { throw .fileSystem(operation: "read", path: path, errno: failure) }
        return bytes.slice(0..<filled)
    }

    func writeItem(_ text: SecureBytes, describing entry: KeyEntry) throws(KeystoreError) {
        try DurableFile.write(text, named: entry.id.fileName, in: folder.fd, folderPath: folder.path, temporaryPrefix: ".tmp-")
    }

    func deleteItem(_ name: String) throws(KeystoreError) -> Bool {
        guard folder.contains(name) else { return false }
        try remove(name)
        return true
    }

    /// Deletes `name`, and syncs the folder so that the deletion lasts.
    func remove(_ name: String) throws(KeystoreError) {
        do {
            try folder.fd.unlink(name)
        } catch {
            throw .fileSystem(operation: "delete", path: folder.path + "/" + name, errno: error)
        }
        try folder.sync()
    }

    func damagedItem(_ name: String, reason: String) -> KeystoreError {
        .damagedKeyFile(path: folder.path + "/" + name, reason: reason)
    }

    var misplacedItemReason: String { "its id does not match its file name" }

    /// Every key file that cannot be used is that file's problem alone, named by its path and,
    /// when it still shows it, its id.
    func problem(_ error: KeystoreError, reading name: String) -> KeystoreSurvey.Problem? {
        .init(id: idInside(name), path: folder.path + "/" + name, error: error)
    }

    /// A key file an earlier SealKit wrote, its id perhaps in a form other than NFC; its name is not checked.
    /// - Returns: nil when it does not exist.
    func legacyFile(named name: String) throws(KeystoreError) -> KeyFile? {
        guard let text = try readItem(name) else { return nil }
        var bytes = text.withUnsafeBytes { Array($0) }
        defer { ConstantTime.wipe(&bytes) }
        do {
            return try KeyFile.parse(bytes, allowingUnnormalizedID: true)
        } catch {
            throw damagedItem(name, reason: error.reason)
        }
    }

    /// The id written in a key file that cannot be used, to name it in a report; nil
    /// when even that cannot be read. Reads at most the first two lines of our own files.
    private func idInside(_ name: String) -> KeyID? {
        guard let fd = try? FileDescriptor.open(name, in: folder.fd, .readOnly, options: [.closeOnExec, .noFollow, .nonBlocking])
        else { return nil }
        defer { try? fd.close() }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: 1024)
        defer { ConstantTime.wipe(&bytes) }
        guard let count = try? bytes.withUnsafeMutableBytes({ try fd.read(into: $0) }), count > 0 else { return nil }
        let lines = bytes[..<count].split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count >= 2 else { return nil }
        let fields = lines[1].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard fields.count == 2, fields[0].elementsEqual("id".utf8),
            let decoded = Base64.decode(String(decoding: fields[1], as: UTF8.self)),
            let text = String(validating: decoded, as: UTF8.self), let id = try? KeyID(text), id.fileName == name
        else { return nil }
        return id
    }

    // MARK: The lock

    /// Runs `body` holding the namespace's exclusive lock on `<namespace>/.lock`.
    func withExclusiveAccess<T>(_ body: () throws(KeystoreError) -> T) throws(KeystoreError) -> T {
        let lockPath = folder.path + "/.lock"
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(
                ".lock", in: folder.fd, .readWrite, options: [.create, .closeOnExec, .noFollow, .nonBlocking],
                permissions: .ownerReadWrite)
        } catch {
            if error == .tooManySymbolicLinkLevels { throw .notOwnFile(path: lockPath, reason: "is a symbolic link") }
            throw .fileSystem(operation: "lock", path: lockPath, errno: error)
        }
        defer { try? fd.close() }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else { throw .fileSystem(operation: "lock", path: lockPath, errno: .current) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notOwnFile(path: lockPath, reason: "is not a regular file") }
        try Folder.checkOwnership(info, path: lockPath, forbidden: 0o022)
        try acquire(fd, path: lockPath)
        removeAbandonedTemporaries()
        return try body()
    }

    /// Takes the exclusive lock, polling so that the wait has an end.
    private func acquire(_ fd: FileDescriptor, path: String) throws(KeystoreError) {
        let clock = ContinuousClock()
        let deadline = clock.now + lockTimeout
        var pause: Duration = .milliseconds(1)
        while flock(fd.rawValue, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            guard error == EWOULDBLOCK else { throw .fileSystem(operation: "lock", path: path, errno: Errno(rawValue: error)) }
            let now = clock.now
            guard now < deadline else {
                let seconds = Double(lockTimeout.components.seconds) + Double(lockTimeout.components.attoseconds) / 1e18
                throw .lockTimeout(path: path, seconds: seconds)
            }
            // Short waits at first (writes take milliseconds), then at most 50 ms apart.
            let wait = min(pause, deadline - now)
            let micros = wait.components.seconds * 1_000_000 + wait.components.attoseconds / 1_000_000_000_000
            usleep(useconds_t(max(1, micros)))
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// Temporary files only exist while their writer holds the lock, so any found by
    /// the lock's new holder were left by a writer that died.
    private func removeAbandonedTemporaries() {
        guard let abandoned = try? folder.names(where: { $0.hasPrefix(".tmp-") }) else { return }
        for name in abandoned { folder.fd.remove(name) }
    }
}
