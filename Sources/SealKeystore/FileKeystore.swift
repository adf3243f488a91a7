import FoundationEssentials
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
/// - Every folder it creates is 0700 and every file 0600; a key file that group or
///   others can access is refused, as ssh does.
/// - Writes are atomic and durable: a temporary file, fsync, rename, fsync of the folder.
///   A crash leaves each id either as it was or as it was to become.
/// - Every change happens under an exclusive lock on `<namespace>/.lock`, so several
///   processes sharing a keystore lose nothing. Reads need no lock: renames are atomic.
/// - With a passphrase, keys are sealed at rest under a key derived with Argon2id.
public struct FileKeystore: Keystore {
    /// The folder holding every namespace.
    public let root: String
    public let namespace: Namespace

    /// The folder holding this namespace's key files.
    public var folder: String { root + "/" + namespace.name }

    /// Opens (without creating anything yet) a keystore at `root`.
    /// - Parameters:
    ///   - root: the keystore's root folder; see `defaultRoot(environment:)`.
    ///   - namespace: keeps apps and environments apart.
    public init(root: String, namespace: Namespace = .default) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.namespace = namespace
    }

    /// `$SEALKIT_HOME`, else `$XDG_DATA_HOME/sealkit`, else `$HOME/.local/share/sealkit`.
    /// - Returns: nil when none of those variables is set.
    public static func defaultRoot(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let home = environment["SEALKIT_HOME"], !home.isEmpty { return home }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/sealkit" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.local/share/sealkit" }
        return nil
    }

    // MARK: Reading

    public func entry(for id: KeyID) throws(KeystoreError) -> KeyEntry? {
        guard let file = try readKeyFile(named: id.fileName) else { return nil }
        return file.entry
    }

    public func entries() throws(KeystoreError) -> [KeyEntry] {
        var found: [KeyEntry] = []
        for name in try keyFileNames() {
            if let file = try readKeyFile(named: name) { found.append(file.entry) }
        }
        return found.sorted { $0.id < $1.id }
    }

    public func keyRing(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyRing {
        guard let file = try readKeyFile(named: id.fileName) else { throw .notFound(id, namespace: namespace.name) }
        return try unlock(file, passphrase: passphrase).record.ring
    }

    public func history(for id: KeyID, passphrase: Passphrase?) throws(KeystoreError) -> KeyHistory {
        guard let file = try readKeyFile(named: id.fileName) else { throw .notFound(id, namespace: namespace.name) }
        return try unlock(file, passphrase: passphrase).record.history
    }

    // MARK: Changing

    @discardableResult
    public func store(
        _ key: SymmetricKey, as id: KeyID, mode: StoreMode, passphrase: Passphrase?
    ) throws(KeystoreError) -> StoreOutcome {
        try withLock { () throws(KeystoreError) -> StoreOutcome in
            if let file = try readKeyFile(named: id.fileName) {
                if mode == .create { throw .alreadyExists(id) }
                return try unlock(file, passphrase: passphrase).record.outcomeOfStoring(key, mode: mode)
            }
            let record = KeyRecord(id: id, key: key, now: currentUnixTime())
            try write(record, sealing: try newSealing(passphrase, for: id))
            return .stored
        }
    }

    @discardableResult
    public func store(_ history: KeyHistory, passphrase: Passphrase?) throws(KeystoreError) -> StoreOutcome {
        try withLock { () throws(KeystoreError) -> StoreOutcome in
            if let file = try readKeyFile(named: history.id.fileName) {
                let unlocked = try unlock(file, passphrase: passphrase)
                guard let merged = try unlocked.record.merging(history) else { return .unchanged }
                try write(merged, sealing: unlocked.sealing)
                return .stored
            }
            try write(KeyRecord(history), sealing: try newSealing(passphrase, for: history.id))
            return .stored
        }
    }

    @discardableResult
    public func rotate(_ id: KeyID, to newKey: SymmetricKey, passphrase: Passphrase?) throws(KeystoreError) -> KeyEntry {
        try requireExisting(id)
        return try withLock { () throws(KeystoreError) -> KeyEntry in
            guard let file = try readKeyFile(named: id.fileName) else { throw .notFound(id, namespace: namespace.name) }
            let unlocked = try unlock(file, passphrase: passphrase)
            let rotated = unlocked.record.rotated(to: newKey, now: currentUnixTime())
            try write(rotated, sealing: unlocked.sealing)
            return rotated.entry(isProtected: unlocked.sealing != nil)
        }
    }

    public func delete(_ id: KeyID) throws(KeystoreError) {
        // Deleting needs only the file to be there: a damaged or too-open key file is exactly
        // what someone may want to delete, and its error message tells them to.
        guard keyFileExists(id) else { throw .notFound(id, namespace: namespace.name) }
        try withLock { () throws(KeystoreError) in
            let path = folder + "/" + id.fileName
            guard keyFileExists(id) else { throw .notFound(id, namespace: namespace.name) }
            guard unlink(path) == 0 else { throw .fileSystem(operation: "delete", path: path, errno: .current) }
            try syncFolder()
        }
    }

    /// Fails before the lock is taken, so asking to change a missing id creates no folders
    /// or lock file; the caller checks again under the lock.
    private func keyFileExists(_ id: KeyID) -> Bool {
        var info = stat()
        return lstat(folder + "/" + id.fileName, &info) == 0
    }

    private func requireExisting(_ id: KeyID) throws(KeystoreError) {
        guard try readKeyFile(named: id.fileName) != nil else { throw .notFound(id, namespace: namespace.name) }
    }

    // MARK: Unlocking

    /// The key-file form's meaning lives in KeyFileCodec.swift, shared with other backends;
    /// these only say which file an error is about.
    private func newSealing(_ passphrase: Passphrase?, for id: KeyID) throws(KeystoreError) -> KeySealing? {
        guard let passphrase else { return nil }
        let path = folder + "/" + id.fileName
        return try KeySealing.new(passphrase: passphrase) { reason in .damagedKeyFile(path: path, reason: reason) }
    }

    private func unlock(
        _ file: KeyFile, passphrase: Passphrase?
    ) throws(KeystoreError) -> (record: KeyRecord, sealing: KeySealing?) {
        let path = folder + "/" + file.id.fileName
        return try file.unlock(passphrase: passphrase) { reason in .damagedKeyFile(path: path, reason: reason) }
    }

    // MARK: Files

    /// Key files are small; anything larger is not one of ours.
    private static let maximumKeyFileSize = 1 << 20

    /// Reads and parses a key file, refusing one that others can access.
    /// - Returns: nil when it does not exist.
    private func readKeyFile(named name: String) throws(KeystoreError) -> KeyFile? {
        let path = folder + "/" + name
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            let error = Errno.current
            if error == .noSuchFileOrDirectory || error == .notDirectory { return nil }
            throw .fileSystem(operation: "read", path: path, errno: error)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .fileSystem(operation: "read", path: path, errno: .current) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .damagedKeyFile(path: path, reason: "not a regular file") }
        guard info.st_mode & 0o077 == 0 else { throw .insecurePermissions(path: path, mode: UInt32(info.st_mode)) }
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
        let file = try KeyFile.decode(bytes) { reason in .damagedKeyFile(path: path, reason: reason) }
        guard file.id.fileName == name else { throw .damagedKeyFile(path: path, reason: "its id does not match its file name") }
        return file
    }

    private func keyFileNames() throws(KeystoreError) -> [String] {
        guard let directory = opendir(folder) else {
            let error = Errno.current
            if error == .noSuchFileOrDirectory { return [] }
            throw .fileSystem(operation: "list", path: folder, errno: error)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".key"), !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    private func write(_ record: KeyRecord, sealing: KeySealing?) throws(KeystoreError) {
        try writeAtomically(KeyFile.encode(record, sealing: sealing), to: record.id.fileName)
    }

    /// Temporary file, fsync, rename over the target, fsync of the folder.
    private func writeAtomically(_ contents: SecureBytes, to name: String) throws(KeystoreError) {
        let temporary = folder + "/.tmp-" + hex(SecureRandom.bytes(count: 8))
        let target = folder + "/" + name
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
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
        if failure == nil && rename(temporary, target) != 0 {
            failure = .fileSystem(operation: "write", path: target, errno: .current)
        }
        if let failure {
            unlink(temporary)
            throw failure
        }
        try syncFolder()
    }

    private func syncFolder() throws(KeystoreError) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .fileSystem(operation: "sync", path: folder, errno: .current) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .fileSystem(operation: "sync", path: folder, errno: .current) }
    }

    /// Runs `body` holding the namespace's exclusive lock, creating the folders first.
    private func withLock<T>(_ body: () throws(KeystoreError) -> T) throws(KeystoreError) -> T {
        try createFolder(root, parents: true)
        try createFolder(folder, parents: false)
        let lockPath = folder + "/.lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .fileSystem(operation: "lock", path: lockPath, errno: .current) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .fileSystem(operation: "lock", path: lockPath, errno: .current) }
        }
        removeAbandonedTemporaries()
        return try body()
    }

    /// Temporary files only exist while their writer holds the lock, so any found by
    /// the lock's new holder were left by a writer that died.
    private func removeAbandonedTemporaries() {
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        var abandoned: [String] = []
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix(".tmp-") { abandoned.append(name) }
        }
        for name in abandoned { unlink(folder + "/" + name) }
    }

    /// Creates `path` with mode 0700 (and, with `parents`, any missing parents, also 0700).
    private func createFolder(_ path: String, parents: Bool) throws(KeystoreError) {
        if parents {
            let parent = FilePath(path).removingLastComponent().string
            if !parent.isEmpty, parent != path, !isDirectory(parent) { try createFolder(parent, parents: true) }
        }
        if mkdir(path, 0o700) == 0 {
            // mkdir's mode passes through the umask; make it exactly 0700.
            guard chmod(path, 0o700) == 0 else { throw .fileSystem(operation: "create folder", path: path, errno: .current) }
            return
        }
        let error = Errno.current
        guard error == .fileExists, isDirectory(path) else {
            throw .fileSystem(operation: "create folder", path: path, errno: error)
        }
    }

    private func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}

extension Errno {
    /// The calling thread's errno.
    static var current: Errno { Errno(rawValue: errno) }
}
