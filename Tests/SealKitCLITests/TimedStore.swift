import Foundation
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A snapshot of every file and folder under a path: names, types, modes and contents.
/// Equal snapshots mean nothing was created, deleted, changed or re-permissioned.
struct TreeSnapshot: Equatable, CustomStringConvertible {
    struct Item: Equatable {
        let mode: UInt32
        let contents: [UInt8]?
        let link: String?
    }

    let items: [String: Item]

    init(_ root: String) {
        var items: [String: Item] = [:]
        func visit(_ path: String, _ relative: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return }
            let type = info.st_mode & S_IFMT
            if type == S_IFDIR {
                items[relative + "/"] = Item(mode: UInt32(info.st_mode), contents: nil, link: nil)
                for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                    visit(path + "/" + name, relative + "/" + name)
                }
            } else if type == S_IFLNK {
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path)
                items[relative] = Item(mode: UInt32(info.st_mode), contents: nil, link: target)
            } else {
                let contents = FileManager.default.contents(atPath: path).map(Array.init)
                items[relative] = Item(mode: UInt32(info.st_mode), contents: contents, link: nil)
            }
        }
        visit(root, "")
        self.items = items
    }

    /// The paths that differ between two snapshots.
    func differences(from other: TreeSnapshot) -> [String] {
        Set(items.keys).union(other.items.keys).filter { items[$0] != other.items[$0] }.sorted()
    }

    var description: String { items.keys.sorted().joined(separator: ", ") }
}

/// A fresh keystore driven through the binary with a deadline on every run, for the suites
/// that must notice hangs and crashes (crash safety, secret hygiene).
struct TimedStore {
    let home: String
    var environment: [String: String]

    init() throws {
        home = try TemporaryFolder.make().path
        environment = ProcessInfo.processInfo.environment
        environment["SEALKIT_HOME"] = home + "/keys"
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
        environment.removeValue(forKey: "SEALKIT_NAMESPACE")
    }

    func run(_ arguments: [String], stdin: String = "", environment extra: [String: String] = [:]) throws -> ProcessResult {
        try ChildProcess.run(
            CLI.executable.path, arguments, stdin: Array(stdin.utf8), environment: environment.merging(extra) { $1 }, timeout: 10)
    }

    /// id → (fingerprint, line) from `keys list`, or nil when the keystore does not open.
    func listing() throws -> [String: String]? {
        let result = try run(["keys", "list"])
        guard result.status == 0 else { return nil }
        var entries: [String: String] = [:]
        for line in result.stdoutText.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            try #require(fields.count > 1, "a `keys list` line of \(fields.count) fields")
            entries[String(fields[0])] = String(fields[1])
        }
        return entries
    }
}
