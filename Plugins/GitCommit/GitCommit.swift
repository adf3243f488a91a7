import Foundation
import PackagePlugin

/// Names the commit a build of `sealkit` comes from: the one source of `sealkit --version`'s commit,
/// for a plain `swift build`, Scripts/install and Scripts/package alike. `name-commit.sh` beside this
/// file says how the commit is named (`SEALKIT_COMMIT`, else git's HEAD, else `unknown`).
///
/// A build command, not a prebuild one: SwiftPM reruns a prebuild command only when it plans the build
/// again, so a binary would name the commit of the last plan. This one's inputs are the files git
/// rewrites whenever HEAD moves (a commit, checkout, reset or pull appends to `logs/HEAD`) or the index
/// changes, and the package's sources (an edit makes the build `-dirty`): llbuild runs it (about 30 ms)
/// when one of them changed, and the script leaves its output alone when the commit did not.
@main
struct GitCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let script = root.appendingPathComponent("Plugins/GitCommit/name-commit.sh")
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("GeneratedCommit.swift")
        // Headers too: a C target's sourceFiles leave out its include folder, whose edit makes the build `-dirty`.
        let sources = context.package.targets.compactMap { $0.sourceModule }.flatMap { module in
            module.sourceFiles.map(\.url) + Self.headers(beside: module.sourceFiles.map(\.url))
        }
        var environment: [String: String] = [:]
        if let told = ProcessInfo.processInfo.environment["SEALKIT_COMMIT"] { environment["SEALKIT_COMMIT"] = told }
        return [
            .buildCommand(
                displayName: "Naming the commit of \(context.package.displayName)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [script.path, root.path, output.path],
                environment: environment,
                inputFiles: [script, root.appendingPathComponent("Package.swift")] + gitFiles(of: root) + sources,
                outputFiles: [output])
        ]
    }

    /// The files git rewrites when HEAD or the index moves, where this checkout keeps them (a worktree's
    /// are apart from its repository's): none without git or outside a checkout.
    func gitFiles(of root: URL) -> [URL] {
        guard FileManager.default.fileExists(atPath: root.appendingPathComponent(".git").path),
            let git = Self.executable("git")
        else { return [] }
        // The refs' folders, not the branch's file or packed-refs: SwiftPM keeps a plan across builds (and
        // branches), and git deletes a loose ref when it packs it (git gc), so a plan naming that file fails
        // every build on an input that is gone. Git writes a ref, or packed-refs, by renaming a lock file
        // into its folder, which changes the folder's time.
        let paths = ["HEAD", "logs/HEAD", "index", "refs/heads", "packed-refs"]
        let found = Self.run(git, ["-C", root.path, "rev-parse", "--path-format=absolute"] + paths.flatMap { ["--git-path", $0] })
        guard found.count == paths.count else { return [] }
        var files = found.map { URL(fileURLWithPath: $0) }
        files[files.count - 1] = files[files.count - 1].deletingLastPathComponent()
        return files.filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The C headers under the shallowest folder of `sources` (a C target's own folder, its include folder below).
    static func headers(beside sources: [URL]) -> [URL] {
        guard let folder = sources.map({ $0.deletingLastPathComponent() }).min(by: { $0.path.count < $1.path.count }),
            let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        else { return [] }
        return walk.compactMap { $0 as? URL }.filter { ["h", "hpp", "modulemap"].contains($0.pathExtension) }
    }

    /// `name` on PATH.
    static func executable(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The lines `executable arguments` prints, or none if it fails.
    static func run(_ executable: URL, _ arguments: [String]) -> [String] {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = pipe
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        guard (try? process.run()) != nil else { return [] }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
