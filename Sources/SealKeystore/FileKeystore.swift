#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealCore
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
/// - Writes are atomic and durable: a temporary file, fsync, rename, fsync of the folder.
///   A crash leaves each id either as it was or as it was to become.
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

    // MARK: Reading

    package func entry(for id: KeyID) throws(KeystoreError) -> KeyEntry? {
        guard let folder = try openNamespace(creating: false) else { return nil }
        return try readKeyFile(named: id.fileName, in: folder)?.entry
    }

    package func entries() throws(KeystoreError) -> [KeyEntry] {
        let survey = try survey()
        if let problem = survey.problems.first { throw problem.error }
        return survey.entries
    }

    package func survey() throws(KeystoreError) -> KeystoreSurvey {
        guard let folder = try openNamespace(creating: false) else { return KeystoreSurvey(entries: [], problems: []) }
        var found: [KeyEntry] = []
        var problems: [KeystoreSurvey.Problem] = []
        for name in try keyFileNames(in: folder) {
            do {
                if let file = try readKeyFile(named: name, in: folder) { found.append(file.entry) }
            } catch {
                problems.append(.init(id: Self.idInside(name, in: folder), path: folder.path + "/" + name, error: error))
            }
        }
        return KeystoreSurvey(
            entries: found.sorted { $0.id < $1.id },
            problems: problems.sorted { ($0.id?.rawValue ?? "\u{10FFFF}" + $0.path) < ($1.id?.rawValue ?? "\u{10FFFF}" + $1.path) })
    }

    package func keyRing(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyRing {
        try unlock(id, passphrase: passphrase).record.ring
    }

    package func history(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyHistory {
        try unlock(id, passphrase: passphrase).record.history
    }

    private func unlock(_ id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> (record: KeyRecord, sealing: KeyFile.Sealing?) {
        guard let folder = try openNamespace(creating: false), let file = try readKeyFile(named: id.fileName, in: folder) else {
            throw .notFound(id, namespace: namespace.name)
        }
        return try file.unlock(passphrase: passphrase, source: folder.path + "/" + id.fileName)
    }

    // MARK: Changing

    @discardableResult
    package func store(
        _ key: SymmetricKey, as id: KeyID, mode: StoreMode, passphrase: Passphrase?
    ) throws(KeystoreError) -> StoreOutcome {
        try withLock { folder throws(KeystoreError) -> StoreOutcome in
            let path = folder.path + "/" + id.fileName
            if let file = try readKeyFile(named: id.fileName, in: folder) {
                if mode == .create { throw .alreadyExists(id) }
                return try file.unlock(passphrase: passphrase, source: path).record.outcomeOfStoring(key, mode: mode)
            }
            let sealing = try passphrase.map { passphrase throws(KeystoreError) in
                try KeyFile.Sealing(protection: .fresh(), passphrase: passphrase, source: path)
            }
            try write(KeyRecord(id: id, key: key, now: currentUnixTime()), sealing: sealing, in: folder)
            return .stored
        }
    }

    @discardableResult
    package func store(_ history: KeyHistory, passphrase: Passphrase?) throws(KeystoreError) -> StoreOutcome {
        try withLock { folder throws(KeystoreError) -> StoreOutcome in
            let path = folder.path + "/" + history.id.fileName
            if let file = try readKeyFile(named: history.id.fileName, in: folder) {
                let unlocked = try file.unlock(passphrase: passphrase, source: path)
                guard let merged = try unlocked.record.merging(history) else { return .unchanged }
                try write(merged, sealing: unlocked.sealing, in: folder)
                return .stored
            }
            let sealing = try passphrase.map { passphrase throws(KeystoreError) in
                try KeyFile.Sealing(protection: .fresh(), passphrase: passphrase, source: path)
            }
            try write(KeyRecord(history), sealing: sealing, in: folder)
            return .stored
        }
    }

    @discardableResult
    package func rotate(_ id: KeyID, to newKey: SymmetricKey, passphrase: Passphrase?) throws(KeystoreError) -> KeyEntry {
        try requireExisting(id)
        return try withLock { folder throws(KeystoreError) -> KeyEntry in
            guard let file = try readKeyFile(named: id.fileName, in: folder) else { throw .notFound(id, namespace: namespace.name) }
            let unlocked = try file.unlock(passphrase: passphrase, source: folder.path + "/" + id.fileName)
            let rotated = try unlocked.record.rotated(to: newKey, now: currentUnixTime())
            try write(rotated, sealing: unlocked.sealing, in: folder)
            return rotated.entry(isProtected: unlocked.sealing != nil)
        }
    }

    @discardableResult
    package func changePassphrase(
        of id: KeyID, from current: Passphrase?, to new: Passphrase?
    ) throws(KeystoreError) -> KeyEntry {
        try requireExisting(id)
        return try withLock { folder throws(KeystoreError) -> KeyEntry in
            guard let file = try readKeyFile(named: id.fileName, in: folder) else { throw .notFound(id, namespace: namespace.name) }
            let path = folder.path + "/" + id.fileName
            let record = try file.unlock(passphrase: current, source: path).record
            // A new salt with every new passphrase: nothing derived from the old one survives.
            let sealing = try new.map { passphrase throws(KeystoreError) in
                try KeyFile.Sealing(protection: .fresh(), passphrase: passphrase, source: path)
            }
            try write(record, sealing: sealing, in: folder)
            return record.entry(isProtected: sealing != nil)
        }
    }

    package func delete(_ id: KeyID) throws(KeystoreError) {
        // Deleting needs only the file to be there: a damaged, too-open or planted key file
        // is exactly what someone may want to delete, and its error message tells them to.
        guard let folder = try openNamespace(creating: false), folder.contains(id.fileName) else {
            throw .notFound(id, namespace: namespace.name)
        }
        try withLock { folder throws(KeystoreError) in
            guard folder.contains(id.fileName) else { throw .notFound(id, namespace: namespace.name) }
            guard unlinkat(folder.fd, id.fileName, 0) == 0 else {
                throw .fileSystem(operation: "delete", path: folder.path + "/" + id.fileName, errno: .current)
            }
            try folder.sync()
        }
    }

    private func requireExisting(_ id: KeyID) throws(KeystoreError) {
        guard try entry(for: id) != nil else { throw .notFound(id, namespace: namespace.name) }
    }

    // MARK: Folders

    /// An open keystore folder that passed the checks; closed when released.
    final class Folder {
        let fd: Int32
        let path: String

        init(fd: Int32, path: String) {
            self.fd = fd
            self.path = path
        }

        deinit { close(fd) }

        /// Whether `name` exists in the folder (as anything, links included).
        func contains(_ name: String) -> Bool {
            var info = stat()
            return fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0
        }

        func sync() throws(KeystoreError) {
            guard fsync(fd) == 0 else { throw .fileSystem(operation: "sync", path: path, errno: .current) }
        }
    }

    /// Opens the root and then the namespace folder, checking each.
    /// - Parameter creating: make what is missing (0700), for a change; a read creates nothing.
    /// - Returns: nil when something is missing and `creating` is false.
    private func openNamespace(creating: Bool) throws(KeystoreError) -> Folder? {
        if creating { try createParents(of: root) }
        guard let rootFolder = try openFolder(named: root, in: AT_FDCWD, path: root, creating: creating) else { return nil }
        return try openFolder(named: namespace.name, in: rootFolder.fd, path: folder, creating: creating)
    }

    /// Opens one folder without following a link, creating it 0700 if asked, and checks
    /// that it is a folder owned by the current user that no one else can write.
    private func openFolder(named name: String, in parent: Int32, path: String, creating: Bool) throws(KeystoreError) -> Folder? {
        var made = false
        if creating {
            if mkdirat(parent, name, 0o700) == 0 {
                made = true
            } else if errno != EEXIST {
                throw .fileSystem(operation: "create folder", path: path, errno: .current)
            }
        }
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            let error = Errno.current
            if error == .noSuchFileOrDirectory && !creating { return nil }
            if error == .tooManySymbolicLinkLevels || error == .notDirectory {
                // With O_DIRECTORY, Linux reports a link as "not a directory": tell them apart.
                var info = stat()
                let isLink = fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_mode & S_IFMT == S_IFLNK
                throw .notOwnFile(path: path, reason: isLink ? "is a symbolic link" : "is not a folder")
            }
            throw .fileSystem(operation: creating ? "create folder" : "open", path: path, errno: error)
        }
        let folder = Folder(fd: fd, path: path)
        // mkdir's mode passes through the umask; make it exactly 0700.
        if made && fchmod(fd, 0o700) != 0 { throw .fileSystem(operation: "create folder", path: path, errno: .current) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .fileSystem(operation: "open", path: path, errno: .current) }
        try Self.checkOwnership(info, path: path, forbidden: 0o022)
        return folder
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

    /// Owned by the effective user, and none of the `forbidden` mode bits set.
    private static func checkOwnership(_ info: stat, path: String, forbidden: mode_t) throws(KeystoreError) {
        let user = geteuid()
        guard info.st_uid == user else { throw .unsafeOwner(path: path, owner: UInt32(info.st_uid), user: UInt32(user)) }
        guard info.st_mode & forbidden == 0 else { throw .insecurePermissions(path: path, mode: UInt32(info.st_mode)) }
    }

    // MARK: Files

    /// Key files are small; anything larger is not one of ours.
    private static let maximumKeyFileSize = 1 << 20

    /// Reads and parses a key file, refusing one that is not ours or that others can access.
    /// - Returns: nil when it does not exist.
    private func readKeyFile(named name: String, in folder: Folder, legacy: Bool = false) throws(KeystoreError) -> KeyFile? {
        let path = folder.path + "/" + name
        let fd = openat(folder.fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            let error = Errno.current
            if error == .noSuchFileOrDirectory { return nil }
            if error == .tooManySymbolicLinkLevels { throw .notOwnFile(path: path, reason: "is a symbolic link") }
            throw .fileSystem(operation: "read", path: path, errno: error)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .fileSystem(operation: "read", path: path, errno: .current) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .damagedKeyFile(path: path, reason: "not a regular file") }
        try Self.checkOwnership(info, path: path, forbidden: 0o077)
        guard info.st_size <= Self.maximumKeyFileSize else { throw .damagedKeyFile(path: path, reason: "too large") }

        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        defer { ConstantTime.wipe(&bytes) }
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .fileSystem(operation: "read", path: path, errno: .current) }
            if count == 0 { break }
            filled += count
        }
        if filled < bytes.count { bytes.removeLast(bytes.count - filled) }
        let file: KeyFile
        do {
            file = try KeyFile.parse(bytes, allowingUnnormalizedID: legacy)
        } catch {
            throw .damagedKeyFile(path: path, reason: error.reason)
        }
        if legacy { return file }
        guard file.id.fileName == name else { throw .damagedKeyFile(path: path, reason: "its id does not match its file name") }
        return file
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
        guard let folder = try openNamespace(creating: false) else { return [] }
        var found: [UnnormalizedFile] = []
        for name in try keyFileNames(in: folder) {
            guard (try? readKeyFile(named: name, in: folder)) == nil,
                let file = try? readKeyFile(named: name, in: folder, legacy: true), file.id.fileName != name
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
        guard let folder = try openNamespace(creating: false),
            let legacy = try readKeyFile(named: file.fileName, in: folder, legacy: true)
        else { throw .notFound(file.id, namespace: namespace.name) }
        let history = try legacy.unlock(passphrase: passphrase, source: folder.path + "/" + file.fileName).record.history
        let twin = try entry(for: file.id)
        // Protection never drops: protected keys merging into an unprotected twin protect it first.
        if legacy.entry.isProtected, let twin, !twin.isProtected {
            guard let passphrase else { throw .locked(file.id) }
            _ = try changePassphrase(of: file.id, from: nil, to: passphrase)
        }
        let twinProtected = try entry(for: file.id)?.isProtected == true
        let outcome = try store(history, passphrase: legacy.entry.isProtected || twinProtected ? passphrase : nil)
        // The keys are under the NFC id now (stored or already there): the old file can go.
        try withLock { folder throws(KeystoreError) in
            guard unlinkat(folder.fd, file.fileName, 0) == 0 else {
                throw .fileSystem(operation: "delete", path: folder.path + "/" + file.fileName, errno: .current)
            }
            try folder.sync()
        }
        return outcome
    }

    /// The id written in a key file that cannot be used, to name it in a report; nil
    /// when even that cannot be read. Reads at most the first two lines of our own files.
    private static func idInside(_ name: String, in folder: Folder) -> KeyID? {
        let fd = openat(folder.fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: 1024)
        defer { ConstantTime.wipe(&bytes) }
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        guard count > 0 else { return nil }
        let lines = bytes[..<count].split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count >= 2 else { return nil }
        let fields = lines[1].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard fields.count == 2, fields[0].elementsEqual("id".utf8),
            let decoded = Base64.decode(String(decoding: fields[1], as: UTF8.self)),
            let text = String(validating: decoded, as: UTF8.self), let id = try? KeyID(text), id.fileName == name
        else { return nil }
        return id
    }

    private func keyFileNames(in folder: Folder) throws(KeystoreError) -> [String] {
        let copy = dup(folder.fd)
        guard copy >= 0, let directory = fdopendir(copy) else {
            throw .fileSystem(operation: "list", path: folder.path, errno: .current)
        }
        defer { closedir(directory) }
        // A duplicate shares the position of the folder's descriptor: start from the top.
        rewinddir(directory)
        var names: [String] = []
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".key"), !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    private func write(_ record: KeyRecord, sealing: KeyFile.Sealing?, in folder: Folder) throws(KeystoreError) {
        try writeAtomically(KeyFile.encode(record, sealing: sealing), to: record.id.fileName, in: folder)
    }

    /// Temporary file, fsync, rename over the target, fsync of the folder.
    private func writeAtomically(_ contents: SecureBytes, to name: String, in folder: Folder) throws(KeystoreError) {
        let temporaryName = ".tmp-" + Hex.encode(SecureRandom.bytes(count: 8))
        let temporary = folder.path + "/" + temporaryName
        let fd = openat(folder.fd, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .fileSystem(operation: "write", path: temporary, errno: .current) }
        var failure: KeystoreError?
        if fchmod(fd, 0o600) != 0 { failure = .fileSystem(operation: "write", path: temporary, errno: .current) }
        contents.withUnsafeBytes { bytes in
            var written = 0
            while failure == nil && written < bytes.count {
                let count = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { failure = .fileSystem(operation: "write", path: temporary, errno: .current) }
                else { written += count }
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = .fileSystem(operation: "write", path: temporary, errno: .current) }
        if close(fd) != 0 && failure == nil { failure = .fileSystem(operation: "write", path: temporary, errno: .current) }
        if failure == nil && renameat(folder.fd, temporaryName, folder.fd, name) != 0 {
            failure = .fileSystem(operation: "write", path: folder.path + "/" + name, errno: .current)
        }
        if let failure {
            unlinkat(folder.fd, temporaryName, 0)
            throw failure
        }
        try folder.sync()
    }

    /// Runs `body` holding the namespace's exclusive lock, creating the folders first.
    private func withLock<T>(_ body: (Folder) throws(KeystoreError) -> T) throws(KeystoreError) -> T {
        guard let folder = try openNamespace(creating: true) else {
            throw .fileSystem(operation: "create folder", path: self.folder, errno: .noSuchFileOrDirectory)
        }
        let lockPath = folder.path + "/.lock"
        let fd = openat(folder.fd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        if fd < 0 {
            if errno == ELOOP { throw .notOwnFile(path: lockPath, reason: "is a symbolic link") }
            throw .fileSystem(operation: "lock", path: lockPath, errno: .current)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .fileSystem(operation: "lock", path: lockPath, errno: .current) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notOwnFile(path: lockPath, reason: "is not a regular file") }
        try Self.checkOwnership(info, path: lockPath, forbidden: 0o022)
        try acquire(fd, path: lockPath)
        removeAbandonedTemporaries(in: folder)
        return try body(folder)
    }

    /// Takes the exclusive lock, polling so that the wait has an end.
    private func acquire(_ fd: Int32, path: String) throws(KeystoreError) {
        let clock = ContinuousClock()
        let deadline = clock.now + lockTimeout
        var pause: Duration = .milliseconds(1)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
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
    private func removeAbandonedTemporaries(in folder: Folder) {
        let copy = dup(folder.fd)
        guard copy >= 0, let directory = fdopendir(copy) else { return }
        defer { closedir(directory) }
        rewinddir(directory)
        var abandoned: [String] = []
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix(".tmp-") { abandoned.append(name) }
        }
        for name in abandoned { unlinkat(folder.fd, name, 0) }
    }
}

extension Errno {
    /// The calling thread's errno.
    static var current: Errno { Errno(rawValue: errno) }
}
