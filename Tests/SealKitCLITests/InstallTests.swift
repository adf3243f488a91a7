import Foundation
import SealTestSupport
import Testing

/// `Scripts/install` into a temporary prefix: the man page renders and bash completes key ids
/// from the keystore. It installs the binaries this test run uses (SEALKIT_PREBUILT), since
/// SwiftPM cannot build while its tests run; Scripts/test builds `generate-manual` beside them.
@Suite("Scripts/install")
struct InstallTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(.requires(.man), .requires(.manualGenerator)) func installsAManPageAndCompletionsThatWork() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        #expect(try cli.run(["keys", "generate", "bob@example.com"]).status == 0)
        #expect(try cli.run(["keys", "generate", "carol", "--namespace", "other"]).status == 0)
        let prefix = cli.home.appendingPathComponent("prefix").path
        let binaries = CLI.executable.deletingLastPathComponent().path
        try #require(
            FileManager.default.isExecutableFile(atPath: binaries + "/generate-manual"),
            "build argument-parser's manual generator first: swift build --product generate-manual (Scripts/test does)")

        // The installed binary is the one built: it names the commit its build named (Plugins/GitCommit).
        let built = try cli.run(["--version"])
        #expect(built.status == 0 && built.stderr.isEmpty)
        let commit = String(try #require(built.stdout.wholeMatch(of: /sealkit [0-9]+\.[0-9]+\.[0-9]+ \((.*)\)\n/)?.output.1))

        var environment = cli.environment
        environment["SEALKIT_PREBUILT"] = binaries
        // Asked for another commit than the binary's, it installs nothing and says to build with it.
        environment["SEALKIT_COMMIT"] = commit == "0a1b2c3" ? "0a1b2c4" : "0a1b2c3"
        let refused = try ChildProcess.run(
            Self.repository.path + "/Scripts/install", [prefix], stdin: [], environment: environment)
        #expect(refused.status == 65, "\(refused.stderrText)")
        #expect(refused.stderrText.hasPrefix("error: ") && refused.stderrText.contains("build it with SEALKIT_COMMIT set"))
        #expect(refused.stderrText.split(separator: "\n").count == 1, "\(refused.stderrText)")
        #expect(!FileManager.default.fileExists(atPath: prefix), "a refused install left files behind")

        environment["SEALKIT_COMMIT"] = commit
        let install = try ChildProcess.run(
            Self.repository.path + "/Scripts/install", [prefix], stdin: [], environment: environment)
        #expect(install.status == 0, "\(install.stderrText)")
        for file in [
            "bin/sealkit", "share/man/man1/sealkit.1", "share/bash-completion/completions/sealkit",
            "share/zsh/site-functions/_sealkit", "share/fish/vendor_completions.d/sealkit.fish",
        ] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file)")
        }
        environment.removeValue(forKey: "SEALKIT_COMMIT")

        let installed = try ChildProcess.run(prefix + "/bin/sealkit", ["--version"], stdin: [], environment: environment)
        #expect(installed.status == 0)
        #expect(installed.stdoutText == built.stdout, "\(installed.stdoutText)")

        // man renders the generated page.
        environment["MANWIDTH"] = "100"
        let man = try ChildProcess.run("man", ["-l", prefix + "/share/man/man1/sealkit.1"], stdin: [], environment: environment)
        #expect(man.status == 0, "\(man.stderrText)")
        for text in ["NAME", "End-to-end field encryption", "rotate", "audit", "--fail-on"] {
            #expect(man.stdoutText.contains(text), "\(text)")
        }
        #expect(!man.stdoutText.contains(".Sh"), "the page must be rendered, not shown as source")

        // bash completes `sealkit keys rotate <TAB>` to the keystore's ids, honouring --namespace.
        func complete(_ line: String, in folder: String? = nil) throws -> [String] {
            let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            var bash = environment
            bash["PATH"] = prefix + "/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
            let script = """
                \(folder.map { "cd \($0)" } ?? "")
                source \(prefix)/share/bash-completion/completions/sealkit
                COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " ")))
                COMP_CWORD=\(words.count - 1)
                COMP_LINE='\(line)'
                COMP_POINT=${#COMP_LINE}
                _sealkit sealkit "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try ChildProcess.run("/bin/bash", ["-c", script], stdin: [], environment: bash)
            #expect(result.status == 0, "\(result.stderrText)")
            return result.stdoutText.split(separator: "\n").map(String.init).sorted()
        }
        #expect(try complete("sealkit keys rotate ") == ["alice", "bob@example.com"])
        #expect(try complete("sealkit keys rotate al") == ["alice"])
        #expect(try complete("sealkit keys rotate --namespace other ") == ["carol"])
        #expect(try complete("sealkit encrypt --key b") == ["bob@example.com"])
        // And file paths where a command reads files.
        let folder = cli.home.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: folder.appendingPathComponent("app-schema.json"))
        #expect(try complete("sealkit audit --schema app-", in: folder.path) == ["app-schema.json"])

        let uninstall = try ChildProcess.run(
            Self.repository.path + "/Scripts/install", ["--uninstall", prefix], stdin: [], environment: environment)
        #expect(uninstall.status == 0, "\(uninstall.stderrText)")
        #expect(!FileManager.default.fileExists(atPath: prefix + "/bin/sealkit"))
        #expect(!FileManager.default.fileExists(atPath: prefix + "/share/man/man1/sealkit.1"))
    }
}

extension InstallTests {
    // MARK: the man page from a checkout

    @Test(.requires(.man), .requires(.manualGenerator)) func scriptsManWritesAPageManFinds() throws {
        let cli = try CLI()
        let binaries = CLI.executable.deletingLastPathComponent().path
        let folder = cli.home.appendingPathComponent("man").path
        var environment = cli.environment
        environment["SEALKIT_PREBUILT"] = binaries
        let made = try ChildProcess.run(InstallTests.repository.path + "/Scripts/man", [folder], stdin: [], environment: environment)
        #expect(made.status == 0, "\(made.stderrText)")
        #expect(made.stdoutText == folder + "/man1/sealkit.1\n")
        // `man sealkit` finds it through MANPATH, as the README shows.
        environment["MANPATH"] = folder + ":"
        environment["MANWIDTH"] = "100"
        environment["MANPAGER"] = "cat"
        let man = try ChildProcess.run("/usr/bin/man", ["sealkit"], stdin: [], environment: environment)
        #expect(man.status == 0, "\(man.stderrText)")
        for text in ["NAME", "End-to-end field encryption", "transfer", "--fail-on"] {
            #expect(man.stdoutText.contains(text), "\(text)")
        }
    }
}

extension InstallTests {
    // MARK: ENVIRONMENT and EXIT STATUS

    /// The rendered page's sections: each heading (a line in capitals at the margin) and the lines under it.
    static func sections(of page: String) -> [String: [String]] {
        var sections: [String: [String]] = [:]
        var heading = ""
        for line in page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let first = line.first, first.isUppercase, line == line.uppercased(), !line.hasPrefix("SEALKIT(") {
                heading = line
            } else {
                sections[heading, default: []].append(line)
            }
        }
        return sections
    }

    /// The variables and codes are read from the code, so a new one the page leaves out fails here.
    @Test(.requires(.man), .requires(.manualGenerator)) func theManPageListsTheEnvironmentAndEveryExitStatus() throws {
        let cli = try CLI()
        let folder = cli.home.appendingPathComponent("man").path
        var environment = cli.environment
        environment["SEALKIT_PREBUILT"] = CLI.executable.deletingLastPathComponent().path
        let made = try ChildProcess.run(InstallTests.repository.path + "/Scripts/man", [folder], stdin: [], environment: environment)
        #expect(made.status == 0, "\(made.stderrText)")
        environment["MANWIDTH"] = "100"
        let man = try ChildProcess.run("man", ["-l", folder + "/man1/sealkit.1"], stdin: [], environment: environment)
        #expect(man.status == 0, "\(man.stderrText)")
        let sections = Self.sections(of: man.stdoutText)
        let environmentSection = try #require(sections["ENVIRONMENT"], "no ENVIRONMENT: \(sections.keys.sorted())")
        let exitSection = try #require(sections["EXIT STATUS"], "no EXIT STATUS: \(sections.keys.sorted())")
        // Still the generator's page around them.
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION"] { #expect(sections[heading] != nil, "\(heading)") }

        // Every variable the command reads, each an item with words beside or under it.
        let sources = InstallTests.repository.appendingPathComponent("Sources/SealKitCLI")
        var read: Set<String> = ["SEALKIT_TPM_TIMEOUT", "NO_COLOR", "TERM", "COLUMNS", "XDG_RUNTIME_DIR"]
        for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /(?:environment\["|getenv\(")(SEALKIT_[A-Z_]+)"/) { read.insert(String(match.output.1)) }
        }
        #expect(read.count > 10, "\(read.sorted())")
        for name in read.sorted() {
            let item = environmentSection.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name) }
            let index = try #require(item, "ENVIRONMENT leaves out \(name): \(environmentSection.joined(separator: "\n"))")
            let described = environmentSection[index].trimmingCharacters(in: .whitespaces).count > name.count + 2
                || environmentSection[index + 1].trimmingCharacters(in: .whitespaces).count > 10
            #expect(described, "\(name) has no description")
        }

        // Every code ExitStatus has, and 0, each an item saying what it means.
        let command = try String(contentsOf: sources.appendingPathComponent("SealKitCommand.swift"), encoding: .utf8)
        let codes = [0] + command.matches(of: /\n    case [a-zA-Z]+ = ([0-9]+)\n/).map { Int($0.output.1)! }
        #expect(codes.count >= 13 && codes.contains(69) && codes.contains(130), "\(codes)")
        for code in codes {
            #expect(exitSection.contains { $0.wholeMatch(of: /\s+([0-9]+)\s+[A-Z].{5,}/)?.output.1 == "\(code)" },
                "EXIT STATUS has no \(code): \(exitSection.joined(separator: "\n"))")
        }
        // Not the generator's placeholder alone, and the TPM's timeout named where its code is.
        #expect(exitSection.joined(separator: " ").contains("SEALKIT_TPM_TIMEOUT"))
    }
}

extension Peer {
    /// argument-parser's manual generator, built beside `sealkit` (a plain `swift test` builds only what the
    /// tests link; Scripts/test builds it).
    static let manualGenerator = Peer(
        "generate-manual, built beside sealkit", enable: "`swift build --product generate-manual`, or run Scripts/test"
    ) {
        FileManager.default.isExecutableFile(atPath: CLI.executable.deletingLastPathComponent().path + "/generate-manual")
    }
}
