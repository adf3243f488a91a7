import SealKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The formats audit reads, by file name extension.
enum FileFormat {
    /// One profile, or an array of profiles (`.json`).
    case json
    /// One profile per line (`.ndjson`, `.jsonl`).
    case lines

    init?(path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "json": self = .json
        case "ndjson", "jsonl": self = .lines
        default: return nil
        }
    }
}

/// A file to audit.
struct AuditFile {
    /// The path as reached from the paths given.
    let path: String
    let format: FileFormat
    let byteCount: Int

    /// The path that names stdin, as everywhere in sealkit.
    static let standardInput = "-"
}

/// Expands the paths given into the files to audit: files as named, folders walked
/// recursively for `.json`, `.ndjson` and `.jsonl`, skipping hidden entries and not
/// following symbolic links to folders (so no walk can loop). Sorted by path, each once.
enum FileWalker {
    static func files(in paths: [String], excluding excluded: Set<String> = []) throws(AuditError) -> [AuditFile] {
        guard !paths.isEmpty else { throw .noPaths }
        var found: [String: AuditFile] = [:]
        for path in paths {
            if path == AuditFile.standardInput {
                // Piped exports (`jq -c ... | sealkit audit -`): one profile per line, read once.
                found[path] = AuditFile(path: path, format: .lines, byteCount: 0)
                continue
            }
            var info = stat()
            guard stat(path, &info) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { throw .missingPath(path) }
                throw .unreadable(path: path, reason: lastError())
            }
            if isDirectory(info) {
                try walk(folder: path, into: &found, excluding: excluded)
            } else {
                guard let format = FileFormat(path: path) else { throw .unsupportedFile(path) }
                try checkReadable(path, info)
                if !excluded.contains(canonicalPath(path)) {
                    found[path] = AuditFile(path: path, format: format, byteCount: Int(info.st_size))
                }
            }
        }
        return found.values.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }

    /// The resolved absolute path, for recognising one file reached by two routes.
    static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func walk(
        folder root: String, into found: inout [String: AuditFile], excluding excluded: Set<String>
    ) throws(AuditError) {
        // An explicit stack, so folder depth costs memory, not call stack.
        var pending = [root]
        while let folder = pending.popLast() {
            guard let directory = opendir(folder) else { throw .unreadable(path: folder, reason: lastError()) }
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
                if bytes.first == UInt8(ascii: ".") { continue }
                guard let name = String(validating: bytes, as: UTF8.self) else {
                    // Its path cannot be spelt as text, so it could not be opened, named in a finding or
                    // reported: said, rather than left out of an audit that would then pass without it.
                    try checkUnnamable(folder: folder, name: bytes)
                    continue
                }
                let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                if isDirectory(info) {
                    pending.append(path)
                    continue
                }
                if (info.st_mode & S_IFMT) == S_IFLNK {
                    // Links to files count; links to folders are not followed.
                    guard stat(path, &info) == 0, !isDirectory(info) else { continue }
                }
                guard (info.st_mode & S_IFMT) == S_IFREG, let format = FileFormat(path: path) else { continue }
                if excluded.contains(canonicalPath(path)) { continue }
                try checkReadable(path, info)
                found[path] = AuditFile(path: path, format: format, byteCount: Int(info.st_size))
            }
        }
    }

    /// Refuses an entry whose name is not valid UTF-8 when it is a folder or a file audit would read
    /// (by its extension), naming it with each byte that is not UTF-8 written as `\x{…}`.
    private static func checkUnnamable(folder: String, name: [UInt8]) throws(AuditError) {
        var path = Array(folder.utf8)
        if path.last != UInt8(ascii: "/") { path.append(UInt8(ascii: "/")) }
        path += name
        path.append(0)
        var info = stat()
        guard path.withUnsafeBufferPointer({ buffer in
            buffer.withMemoryRebound(to: CChar.self) { stat($0.baseAddress!, &info) }
        }) == 0 else { return }
        let shown = TextSafety.printable(folder.hasSuffix("/") ? folder : folder + "/", limit: Int.max) + escapedName(name)
        guard isDirectory(info) || ((info.st_mode & S_IFMT) == S_IFREG && FileFormat(path: shown) != nil) else { return }
        throw .unreadable(path: shown, reason: "its name is not valid UTF-8; rename it to audit it")
    }

    /// `name` with each byte that is not part of valid UTF-8 written as `\x{…}`, and characters that could
    /// rewrite the terminal's line as `\u{…}` (`TextSafety.printable`).
    private static func escapedName(_ name: [UInt8]) -> String {
        var shown = ""
        var rest = name[...]
        while !rest.isEmpty {
            // The longest valid prefix, then one byte that is not.
            var valid = rest.endIndex
            while valid > rest.startIndex, String(validating: rest[..<valid], as: UTF8.self) == nil { valid -= 1 }
            // Escape sequences in the valid part are written as every message writes them.
            shown += TextSafety.printable(String(decoding: rest[..<valid], as: UTF8.self), limit: Int.max)
            if valid < rest.endIndex {
                shown += "\\x{" + String(rest[valid], radix: 16) + "}"
                rest = rest[(valid + 1)...]
            } else {
                rest = rest[valid...]
            }
        }
        return shown
    }

    /// The largest file audit reads: far beyond any export it is meant for, and a stop for a file
    /// that is still being written or a sparse file claiming terabytes.
    static let maximumFileSize = 64 << 30

    /// Refuses what is not a regular file of a sane size. A device, FIFO or socket (`/dev/zero`
    /// behind a `.json` link, a pipe that never ends) has no end to read to.
    private static func checkReadable(_ path: String, _ info: stat) throws(AuditError) {
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .unreadable(path: path, reason: "not a regular file (a device, FIFO or socket); audit reads files only")
        }
        guard Int(info.st_size) <= maximumFileSize else {
            throw .unreadable(path: path, reason: "larger than \(maximumFileSize >> 30) GiB, the most audit reads")
        }
    }

    private static func isDirectory(_ info: stat) -> Bool { (info.st_mode & S_IFMT) == S_IFDIR }
}

func lastError() -> String { String(cString: strerror(errno)) }
