import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Profile seal marks: per id, the highest seal version this device wrote or verified.

extension KeyStorage {
    /// For backends that keep no marks: profiles that ask for a seal cannot be used with them.
    package func sealMark(for id: KeyID) throws(KeystoreError) -> SealMark? {
        throw .fileSystem(operation: "keep profile seal versions in", path: "namespace \(namespace.name)", errno: .notSupported)
    }

    package func recordSealMark(
        _ mark: SealMark, for id: KeyID, keys: [KeyFingerprint], acceptingConflict: Bool
    ) throws(KeystoreError) -> SealMark? {
        throw .fileSystem(operation: "keep profile seal versions in", path: "namespace \(namespace.name)", errno: .notSupported)
    }
}

extension KeyID {
    /// The name of the file keeping the id's seal mark, beside its key file: the same hash, `.seal`.
    package var sealMarkFileName: String { String(fileName.dropLast(4)) + ".seal" }
}

extension FileKeystore {
    package func sealMark(for id: KeyID) throws(KeystoreError) -> SealMark? {
        guard let folder = try Folder.open(named: root, in: nil, path: root, creating: false),
            let namespaceFolder = try Folder.open(named: namespace.name, in: folder, path: self.folder, creating: false)
        else { return nil }
        return try Self.readMark(id, in: namespaceFolder)
    }

    /// Records `mark` unless the record holds a higher or conflicting one of the same key history (`keys`, the
    /// fingerprints of the id's keys); a record of another history (a key since replaced) is replaced.
    /// - Returns: the mark kept instead of `mark`, or nil when `mark` was recorded or was the record already.
    package func recordSealMark(
        _ mark: SealMark, for id: KeyID, keys: [KeyFingerprint], acceptingConflict: Bool
    ) throws(KeystoreError) -> SealMark? {
        // The key file's folder exists whenever the id has keys, which any seal needs.
        guard let rootFolder = try Folder.open(named: root, in: nil, path: root, creating: false),
            let namespaceFolder = try Folder.open(named: namespace.name, in: rootFolder, path: folder, creating: false)
        else { throw .notFound(id, namespace: namespace.name) }
        let keyFolder = KeyFolder(folder: namespaceFolder, namespace: namespace, lockTimeout: lockTimeout)
        return try keyFolder.withExclusiveAccess { () throws(KeystoreError) -> SealMark? in
            if let kept = try Self.readMark(id, in: namespaceFolder), kept.belongs(to: keys) {
                switch kept.recording(mark, acceptingConflict: acceptingConflict) {
                case .record: break
                case .unchanged: return nil
                case .refuse: return kept
                }
            }
            try DurableFile.write(
                mark.fileText, named: id.sealMarkFileName, in: namespaceFolder.fd, folderPath: namespaceFolder.path,
                temporaryPrefix: ".tmp-")
            return nil
        }
    }

    /// Reads a mark file under the key files' rules: a regular file, the user's, 0600 at most.
    private static func readMark(_ id: KeyID, in folder: Folder) throws(KeystoreError) -> SealMark? {
        let name = id.sealMarkFileName
        let path = folder.path + "/" + name
        guard let (fd, _) = try folder.openOwnFile(name) else { return nil }
        defer { try? fd.close() }
        var buffer = [UInt8](repeating: 0, count: 256)
        var filled = 0
        while filled < buffer.count {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            } catch {
                throw .fileSystem(operation: "read", path: path, errno: Errno(error))
            }
            if count == 0 { break }
            filled += count
        }
        guard let mark = SealMark(fileText: buffer[..<filled]) else {
            throw .damagedKeyFile(
                path: path,
                reason: "not one SealKit reads")
        }
        return mark
    }
}

extension InMemoryKeystore {
    package func sealMark(for id: KeyID) throws(KeystoreError) -> SealMark? {
        marks.withLock { $0[id] }
    }

    package func recordSealMark(
        _ mark: SealMark, for id: KeyID, keys: [KeyFingerprint], acceptingConflict: Bool
    ) throws(KeystoreError) -> SealMark? {
        marks.withLock { marks in
            if let kept = marks[id], kept.belongs(to: keys) {
                switch kept.recording(mark, acceptingConflict: acceptingConflict) {
                case .record: break
                case .unchanged: return nil
                case .refuse: return kept
                }
            }
            marks[id] = mark
            return nil
        }
    }
}
