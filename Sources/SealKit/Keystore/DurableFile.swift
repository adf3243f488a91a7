import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files written whole or not at all, and kept once written: the one way SealKit writes a file,
/// for its keystore and for an app's or the command line's own files (QR images, share backups).
///
/// The bytes go to a new temporary file beside the target, made exclusively (`O_EXCL`, not through a
/// symbolic link) with mode 0600 under a random name; it is synced to disk and renamed over the
/// target, and then the folder is synced, so that the rename itself survives a crash. A reader sees
/// the old file or the complete new one, never a partial write, and a failed write leaves no
/// temporary file behind.
///
/// ```swift
/// try DurableFile.write(Array(backup.utf8), to: "/media/usb/backup.txt", exclusive: true)
/// ```
@_spi(CLI) public enum DurableFile {
    /// Writes `bytes` to the file at `path`, whole or not at all, with mode 0600.
    ///
    /// The folder `path` names must exist; a symbolic link as the folder is followed, one as
    /// the file itself is replaced (or, with `exclusive`, refused), never written through.
    /// - Parameters:
    ///   - bytes: the file's contents.
    ///   - path: where to write, relative to the current folder unless it starts with `/`.
    ///   - exclusive: refuse a `path` that already exists (as anything, a link included), as
    ///     `O_EXCL` does, instead of replacing it.
    /// - Throws: `SealKitError.Reason.fileSystem`, described as `cannot write PATH: reason`
    ///   (`file exists` when `exclusive` meets an existing file); nothing was written then.
    public static func write(_ bytes: [UInt8], to path: String, exclusive: Bool = false) throws(SealKitError) {
        let (folderPath, name) = split(path)
        guard !name.isEmpty else { throw failure(path, path.isEmpty ? .noSuchFileOrDirectory : .isDirectory) }
        let folder: FileDescriptor
        do {
            folder = try FileDescriptor.open(folderPath, .readOnly, options: [.directory, .closeOnExec])
        } catch {
            throw failure(path, Errno(error))
        }
        defer { try? folder.close() }
        do {
            try write(bytes, named: name, in: folder, folderPath: folderPath, exclusive: exclusive, temporaryPrefix: ".sealkit-")
        } catch .fileSystem(_, _, let errno) {
            throw failure(path, errno)
        } catch {
            throw SealKitError(.fileSystem, "cannot write \(path): \(error)")
        }
    }

    /// The folder and the name in it: everything before the last `/` (`.` when there is none), and after it.
    private static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        return (folder, String(path[path.index(after: slash)...]))
    }

    private static func failure(_ path: String, _ errno: Errno) -> SealKitError {
        SealKitError(.fileSystem, "cannot write \(path): \(errno.lowercasedDescription)")
    }

    /// Writes `contents` to `name` in the open `folder`: a temporary file named `temporaryPrefix`
    /// and 16 random hex digits, synced, renamed over `name`, then the folder synced.
    ///
    /// With `exclusive`, `name` is first created empty with `O_EXCL` (refusing anything already
    /// there) and the complete file then renamed over it, so the name is never taken from
    /// someone else and never shows a partial file; a failure removes both files.
    /// - Parameter folderPath: names the folder in errors.
    /// - Throws: `KeystoreError.fileSystem`: `write` naming the temporary file while it is made
    ///   and written, `write` naming the target for the rename, `sync` naming the folder.
    package static func write(
        _ contents: some ContiguousByteSource, named name: String, in folder: FileDescriptor, folderPath: String,
        exclusive: Bool = false, temporaryPrefix: String
    ) throws(KeystoreError) {
        let target = folderPath + "/" + name
        if exclusive {
            do {
                let placeholder = try FileDescriptor.open(
                    name, in: folder, .writeOnly, options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                    permissions: .ownerReadWrite)
                try? placeholder.close()
            } catch {
                throw .fileSystem(operation: "write", path: target, errno: error)
            }
        }
        let temporaryName = temporaryPrefix + Hex.encode(SecureRandom.bytes(count: 8))
        let temporary = folderPath + "/" + temporaryName
        do throws(KeystoreError) {
            do throws(Errno) {
                let file = try FileDescriptor.open(
                    temporaryName, in: folder, .writeOnly, options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                    permissions: .ownerReadWrite)
                var failure: Errno?
                do throws(Errno) {
                    // The mode passes through the umask; make it exactly 0600.
                    try file.setPermissions(.ownerReadWrite)
                    let written = contents.withUnsafeBytes { buffer in Result { () throws(Errno) in try file.writeAll(everyByteOf: buffer) } }
                    try written.get()
                    try file.sync()
                } catch {
                    failure = error
                }
                do {
                    try file.close()
                } catch {
                    failure = failure ?? Errno(error)
                }
                if let failure { throw failure }
            } catch {
                throw KeystoreError.fileSystem(operation: "write", path: temporary, errno: error)
            }
            do {
                try folder.rename(temporaryName, to: name)
            } catch {
                throw KeystoreError.fileSystem(operation: "write", path: target, errno: error)
            }
        } catch {
            folder.remove(temporaryName)
            if exclusive { folder.remove(name) }
            throw error
        }
        do {
            try folder.sync()
        } catch {
            throw .fileSystem(operation: "sync", path: folderPath, errno: error)
        }
    }
}

// MARK: The calls swift-system lacks, on its descriptors

extension FileDescriptor {
    /// Opens `name` in the folder `folder` (`openat`), retrying when interrupted.
    package static func open(
        _ name: String, in folder: FileDescriptor, _ mode: AccessMode, options: OpenOptions = [],
        permissions: FilePermissions? = nil
    ) throws(Errno) -> FileDescriptor {
        while true {
            let fd = openat(folder.rawValue, name, mode.rawValue | options.rawValue, permissions?.rawValue ?? 0)
            if fd >= 0 { return FileDescriptor(rawValue: fd) }
            let error = Errno.current
            if error != .interrupted { throw error }
        }
    }

    /// Writes every byte, retrying short writes and interruptions.
    package func writeAll(everyByteOf bytes: UnsafeRawBufferPointer) throws(Errno) {
        do {
            _ = try writeAll(bytes)
        } catch {
            throw Errno(error)
        }
    }

    /// Sets the file's permission bits exactly (`fchmod`).
    package func setPermissions(_ permissions: FilePermissions) throws(Errno) {
        guard fchmod(rawValue, permissions.rawValue) == 0 else { throw Errno.current }
    }

    /// Flushes the file, or a folder's entries, to the disk (`fsync`).
    package func sync() throws(Errno) {
        while fsync(rawValue) != 0 {
            let error = Errno.current
            if error != .interrupted { throw error }
        }
    }

    /// Renames `name` to `newName`, both in this folder, replacing what `newName` was (`renameat`).
    package func rename(_ name: String, to newName: String) throws(Errno) {
        guard renameat(rawValue, name, rawValue, newName) == 0 else { throw Errno.current }
    }

    /// Removes `name` from this folder (`unlinkat`).
    package func unlink(_ name: String) throws(Errno) {
        guard unlinkat(rawValue, name, 0) == 0 else { throw Errno.current }
    }

    /// Removes `name` from this folder if it can, for cleaning up after a failure.
    package func remove(_ name: String) {
        _ = unlinkat(rawValue, name, 0)
    }
}

extension Errno {
    /// What swift-system threw: its untyped `throws` only ever throws `Errno`.
    package init(_ error: any Error) {
        self = error as? Errno ?? .ioError
    }

    /// The calling thread's errno.
    package static var current: Errno { Errno(rawValue: errno) }

    /// The system's description with a lower-case first letter, as messages put it after a colon.
    package var lowercasedDescription: String {
        let text = description
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }
}
