import Foundation
import SealTestSupport
import Testing

/// `sealkit --version`: the commit a build names.
@Suite("sealkit --version")
struct VersionCLITests {
    /// The commit as Scripts/lib/release.sh names it: short HEAD, `-dirty` when tracked files differ;
    /// `unknown` outside a git checkout (a source archive) or without git, as the build says then.
    static func checkoutCommit() throws -> String {
        let root = InstallTests.repository.path
        guard FileManager.default.fileExists(atPath: root + "/.git"), FileManager.default.isExecutableFile(atPath: "/usr/bin/git")
        else { return "unknown" }
        let head = try ChildProcess.run("/usr/bin/git", ["-C", root, "rev-parse", "--short=7", "HEAD"], stdin: [])
        guard head.status == 0 else { return "unknown" }
        let status = try ChildProcess.run(
            "/usr/bin/git", ["-C", root, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"], stdin: [])
        return head.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) + (status.stdoutText.isEmpty ? "" : "-dirty")
    }

    /// From a git checkout, a commit of the checkout's history (HEAD as it was when SwiftPM last planned
    /// the build and ran the plugin), `-dirty` when tracked files differed; from a source archive,
    /// `unknown` (the plugin finds no git).
    @Test func aBuildFromACheckoutNamesItsCommit() throws {
        let cli = try CLI()
        let version = try cli.run(["--version"])
        #expect(version.status == 0)
        let named = try #require(version.output.wholeMatch(of: /sealkit [0-9]+\.[0-9]+\.[0-9]+ \((.*)\)/)?.output.1, "\(version.stdout)")
        let commit = String(named)
        if try Self.checkoutCommit() == "unknown" {
            #expect(commit == "unknown")
        } else {
            let hash = try #require(commit.wholeMatch(of: /([0-9a-f]{7,})(-dirty)?/)?.output.1, "\(commit)")
            let ancestor = try ChildProcess.run(
                "/usr/bin/git", ["-C", InstallTests.repository.path, "merge-base", "--is-ancestor", String(hash), "HEAD"], stdin: [])
            #expect(ancestor.status == 0, "\(commit) is not in the checkout's history: \(ancestor.stderrText)")
        }
        // SARIF names the same version as the tool's.
        let folder = cli.home.appendingPathComponent("audit")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(try cli.run(["keys", "generate", "audited"]).status == 0)
        let sealed = try cli.run(["encrypt", "--key", "audited"], stdin: "a value")
        try Data(#"{"ssn": "\#(sealed.output)"}"#.utf8).write(to: folder.appendingPathComponent("p.json"))
        let sarif = try cli.run(["audit", "--format", "sarif", folder.path])
        #expect(sarif.status == 0, "\(sarif.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(sarif.stdout.utf8)) as? [String: Any]
        let driver = ((json?["runs"] as? [[String: Any]])?.first?["tool"] as? [String: Any])?["driver"] as? [String: Any]
        #expect((driver?["version"] as? String)?.contains("(\(commit))") == true, "\(sarif.stdout.prefix(600))")
    }
}

extension VersionCLITests {
    // MARK: the one mechanism: Plugins/GitCommit and its script

    /// A git repository in a temporary folder, with one file committed, and git told who commits and to
    /// read no configuration of the machine's.
    struct Checkout {
        let root: URL
        let environment: [String: String]

        init(files: [String: String] = ["notes.txt": "one\n"]) throws {
            root = try TemporaryFolder.make().appendingPathComponent("checkout")
            var environment = ProcessInfo.processInfo.environment
            for name in ["SEALKIT_COMMIT", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"] { environment.removeValue(forKey: name) }
            environment.merge([
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
                "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
                "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
            ]) { $1 }
            self.environment = environment
            for (name, text) in files { try write(text, to: name) }
            try git("init", "--quiet", "--initial-branch=main")
            try git("add", "--all")
            try git("commit", "--quiet", "--message", "one")
        }

        /// Another worktree of `checkout`'s repository.
        init(worktree: URL, of checkout: Checkout) {
            root = worktree
            environment = checkout.environment
        }

        func write(_ text: String, to name: String) throws {
            let url = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }

        @discardableResult
        func git(_ arguments: String...) throws -> String {
            let result = try ChildProcess.run("git", ["-C", root.path] + arguments, environment: environment)
            try #require(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.stderrText)")
            return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        var head: String { get throws { try git("rev-parse", "--short=7", "HEAD") } }
    }

    static let script = InstallTests.repository.appendingPathComponent("Plugins/GitCommit/name-commit.sh").path

    /// Runs name-commit.sh for `root`, and returns the commit it wrote (none if it failed) and its result.
    static func nameCommit(of root: URL, environment: [String: String], into output: URL) throws -> (named: String?, result: ProcessResult) {
        let result = try ChildProcess.run("/bin/sh", [script, root.path, output.path], environment: environment)
        guard result.status == 0 else { return (nil, result) }
        let text = try String(contentsOf: output, encoding: .utf8)
        let named = try #require(text.firstMatch(of: /\nlet generatedCommit = "(.*)"\n/)?.output.1, "\(text)")
        return (String(named), result)
    }

    @Test(.requires(.git)) func theScriptNamesHEADDirtyOrWhatItIsTold() throws {
        let checkout = try Checkout()
        let output = try TemporaryFolder.make().appendingPathComponent("GeneratedCommit.swift")
        var environment = checkout.environment

        #expect(try Self.nameCommit(of: checkout.root, environment: environment, into: output).named == checkout.head)
        // Asking again with nothing changed leaves the file alone: nothing downstream recompiles.
        let before = try FileManager.default.attributesOfItem(atPath: output.path)[.modificationDate] as? Date
        Thread.sleep(forTimeInterval: 0.02)
        #expect(try Self.nameCommit(of: checkout.root, environment: environment, into: output).named == checkout.head)
        #expect(try FileManager.default.attributesOfItem(atPath: output.path)[.modificationDate] as? Date == before)

        // A tracked file changed: dirty; an untracked one does not count, but where it is compiled in (Sources).
        try checkout.write("new\n", to: "untracked.txt")
        #expect(try Self.nameCommit(of: checkout.root, environment: environment, into: output).named == checkout.head)
        try checkout.write("let added = 1\n", to: "Sources/Tool/Added.swift")
        #expect(try Self.nameCommit(of: checkout.root, environment: environment, into: output).named == "\(try checkout.head)-dirty")
        try FileManager.default.removeItem(at: checkout.root.appendingPathComponent("Sources"))
        #expect(try Self.nameCommit(of: checkout.root, environment: environment, into: output).named == checkout.head)
        try checkout.write("two\n", to: "notes.txt")
        #expect(try Self.nameCommit(of: checkout.root, environment: environment, into: output).named == "\(try checkout.head)-dirty")
        // And the asking did not touch git's index (an input of the build command: it would run again for nothing).
        let index = checkout.root.appendingPathComponent(".git/index")
        let indexBefore = try FileManager.default.attributesOfItem(atPath: index.path)[.modificationDate] as? Date
        _ = try Self.nameCommit(of: checkout.root, environment: environment, into: output)
        #expect(try FileManager.default.attributesOfItem(atPath: index.path)[.modificationDate] as? Date == indexBefore)

        // Told a commit: that one, git or not.
        environment["SEALKIT_COMMIT"] = "0a1b2c3"
        #expect(try Self.nameCommit(of: checkout.root, environment: environment, into: output).named == "0a1b2c3")
        // Anything but a short plain word fails the build, with one line saying what it must be.
        for told in [#"0a1"b"#, "0a1\\b", "0a1 b", "0a1$(id)", "0a1\nb", String(repeating: "a", count: 41)] {
            environment["SEALKIT_COMMIT"] = told
            let (named, result) = try Self.nameCommit(of: checkout.root, environment: environment, into: output)
            #expect(named == nil && result.status != 0, "\(told)")
            #expect(result.stderrText.hasPrefix("error: SEALKIT_COMMIT must be") && result.stderrText.split(separator: "\n").count == 1)
        }
        // The failures left the last commit written.
        #expect(try String(contentsOf: output, encoding: .utf8).contains(#""0a1b2c3""#))
        environment["SEALKIT_COMMIT"] = String(repeating: "a", count: 40)
        #expect(try Self.nameCommit(of: checkout.root, environment: environment, into: output).named?.count == 40)
        environment.removeValue(forKey: "SEALKIT_COMMIT")

        // A folder inside a checkout is not a checkout of SealKit (a source archive unpacked in another
        // repository): unknown, as is a folder with no git at all.
        let inner = checkout.root.appendingPathComponent("unpacked")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        #expect(try Self.nameCommit(of: inner, environment: environment, into: output).named == "unknown")
        let plain = try TemporaryFolder.make()
        #expect(try Self.nameCommit(of: plain, environment: environment, into: output).named == "unknown")
    }

    /// The plugin in a package of its own: each build names the commit it builds, with no new plan in between
    /// (a commit, a branch, an edit, a reset), in a worktree too, and SEALKIT_COMMIT when set.
    @Test(.requires(.git), .requires(.swiftBuild)) func eachBuildNamesTheCommitItBuilds() throws {
        let plugin = InstallTests.repository.appendingPathComponent("Plugins/GitCommit")
        let checkout = try Checkout(files: [
            "Package.swift": """
                // swift-tools-version:6.0
                import PackageDescription
                let package = Package(name: "probe", targets: [
                    .target(name: "CProbe"),
                    .executableTarget(name: "Probe", dependencies: ["CProbe"], plugins: ["GitCommit"]),
                    .plugin(name: "GitCommit", capability: .buildTool()),
                ])
                """,
            "Sources/Probe/main.swift": "print(generatedCommit)\n",
            "Sources/CProbe/probe.c": "#include \"probe.h\"\nint probe(void) { return PROBE; }\n",
            "Sources/CProbe/include/probe.h": "#define PROBE 1\nint probe(void);\n",
            "Plugins/GitCommit/GitCommit.swift": try String(contentsOf: plugin.appendingPathComponent("GitCommit.swift"), encoding: .utf8),
            "Plugins/GitCommit/name-commit.sh": try String(contentsOf: plugin.appendingPathComponent("name-commit.sh"), encoding: .utf8),
            ".gitignore": ".build\n",
        ])
        func built(in root: URL? = nil, told: String? = nil) throws -> (named: String, log: String) {
            let root = root ?? checkout.root
            var environment = checkout.environment
            environment["SEALKIT_COMMIT"] = told
            let build = try ChildProcess.run(
                "swift", ["build", "--package-path", root.path], environment: environment, timeout: 600)
            try #require(build.status == 0, "swift build: \(build.stderrText)\(build.stdoutText.suffix(2000))")
            let run = try ChildProcess.run(root.appendingPathComponent(".build/debug/Probe").path, [], environment: environment)
            return (run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines), build.stdoutText)
        }

        /// Builds and runs the probe, and expects it to name `expected`.
        func expectBuilt(_ expected: String, in root: URL? = nil, told: String? = nil, _ step: String) throws {
            let (named, log) = try built(in: root, told: told)
            // What the plugin wrote, to tell a command that did not run from a compiler that skipped its output.
            let outputs = (root ?? checkout.root).appendingPathComponent(".build/plugins/outputs")
            let written = FileManager.default.enumerator(atPath: outputs.path)?.compactMap { $0 as? String }
                .filter { $0.hasSuffix("GeneratedCommit.swift") }
                .map { (try? String(contentsOf: outputs.appendingPathComponent($0), encoding: .utf8)) ?? "" } ?? []
            #expect(named == expected, "after \(step); the plugin wrote \(written); swift build said: \(log)")
        }
        try expectBuilt(try checkout.head, "the first build")
        try checkout.git("commit", "--quiet", "--allow-empty", "--message", "two")
        try expectBuilt(try checkout.head, "a commit")
        try checkout.git("switch", "--quiet", "--create", "other")
        try checkout.git("commit", "--quiet", "--allow-empty", "--message", "three")
        try expectBuilt(try checkout.head, "a commit on a new branch")
        try checkout.write("print(generatedCommit, terminator: \"\\n\")\n", to: "Sources/Probe/main.swift")
        try expectBuilt("\(try checkout.head)-dirty", "an edit")
        try checkout.git("reset", "--quiet", "--hard", "main")
        try expectBuilt(try checkout.head, "a reset to another branch")
        try checkout.write("#define PROBE 2\nint probe(void);\n", to: "Sources/CProbe/include/probe.h")
        try expectBuilt("\(try checkout.head)-dirty", "an edit of a C target's header")
        try checkout.git("checkout", "--quiet", "--", "Sources/CProbe/include/probe.h")
        try expectBuilt(try checkout.head, "the header restored")
        // git gc packs the branch's loose ref away; the plan SwiftPM kept must not miss it.
        try checkout.git("commit", "--quiet", "--allow-empty", "--message", "packed")
        try expectBuilt(try checkout.head, "a commit before packing")
        try checkout.git("pack-refs", "--all")
        try expectBuilt(try checkout.head, "git pack-refs, as git gc runs it")
        try expectBuilt("0a1b2c3", told: "0a1b2c3", "SEALKIT_COMMIT set")
        try expectBuilt(try checkout.head, "SEALKIT_COMMIT unset")

        // A worktree keeps HEAD and its index apart from the repository's.
        let worktree = checkout.root.deletingLastPathComponent().appendingPathComponent("worktree")
        try checkout.git("worktree", "add", "--quiet", "-b", "side", worktree.path)
        let side = Checkout(worktree: worktree, of: checkout)
        try expectBuilt(try side.head, in: worktree, "the first build in a worktree")
        try side.git("commit", "--quiet", "--allow-empty", "--message", "four")
        try expectBuilt(try side.head, in: worktree, "a commit in a worktree")
        #expect(try side.head != checkout.head)
    }
}

extension Peer {
    static let git = Peer("git", enable: "`apt-get install git`") { onPath("git") }
    /// The Swift toolchain's `swift build`, to build a package of the test's own.
    static let swiftBuild = Peer("swift", enable: "put the Swift toolchain on PATH") { onPath("swift") }
}
