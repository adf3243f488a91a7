import Foundation
import SealTestSupport
import Testing

/// The smaller findings of issue 36 that a person meets at the terminal: ids shown so they cannot
/// mislead, a near id suggested before a new key, the commit a checkout's build names, and the
/// man page without a release build.
@Suite("fifth round, from the terminal")
struct FifthRoundCLITests {
    // MARK: ids in prompts, messages and advice

    @Test func promptsAndMessagesShowAnIDsQuotesEscaped() throws {
        let cli = try CLI()
        let id = "alice' key 0000 and 'bob"
        #expect(try cli.run(["keys", "generate", id]).status == 0)
        // The delete question on a terminal.
        let asked = try Terminal.run(cli, ["keys", "delete", id], answers: ["n"])
        #expect(asked.status == 1)
        #expect(asked.output.contains(#"Delete every key of 'alice\' key 0000 and \'bob' ("#), "\(asked.output)")
        // What a backup (and a transfer) says it carries.
        let backup = try cli.run(["keys", "backup", id, "--format", "text"], environment: ["SEALKIT_PASSPHRASE": "twelve chars or more"])
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stderr.contains(#"Backed up 'alice\' key 0000 and \'bob' key "#), "\(backup.stderr)")
        // `status` names it the same way.
        let status = try cli.run(["status", "--key", id])
        #expect(status.output.hasPrefix(#"encryption is possible for 'alice\' key 0000 and \'bob' in namespace"#), "\(status.stdout)")
    }

    @Test func adviceToRunACommandQuotesTheIDAsOneShellWord() throws {
        let cli = try CLI()
        let missing = try cli.run(["encrypt", "--key", "$(touch PWNED)"], stdin: "x")
        expectCleanFailure(missing)
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("'sealkit keys generate '$(touch PWNED)''"), "\(missing.stderr)")
        let quote = try cli.run(["encrypt", "--key", "it's"], stdin: "x")
        #expect(quote.stderr.contains(#"'sealkit keys generate 'it'\''s''"#), "\(quote.stderr)")
        // A plain id stays plain.
        let plain = try cli.run(["encrypt", "--key", "bob@example.com"], stdin: "x")
        #expect(plain.stderr.contains("'sealkit keys generate bob@example.com'"), "\(plain.stderr)")
    }

    // MARK: did you mean

    @Test func aNearIDIsSuggestedBeforeTheAdviceToMakeAKey() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "ada"]).status == 0)
        #expect(try cli.run(["keys", "generate", "grace.hopper"]).status == 0)
        for arguments in [["encrypt", "--key", "Ada"], ["keys", "rotate", "Ada"], ["encrypt", "--key", "grace.hoper"]] {
            let result = try cli.run(arguments, stdin: "x")
            expectCleanFailure(result)
            #expect(result.status == 66)
            let near = arguments.last == "Ada" ? "'ada'" : "'grace.hopper'"
            let suggestion = try #require(result.stderr.range(of: "did you mean \(near)?"), "\(arguments): \(result.stderr)")
            let advice = try #require(result.stderr.range(of: "keys generate"), "\(result.stderr)")
            #expect(suggestion.lowerBound < advice.lowerBound, "\(result.stderr)")
        }
        // `status` says it too.
        let status = try cli.run(["status", "--key", "ADA"])
        #expect(status.status == 1 && status.stderr.contains("did you mean 'ada'?"), "\(status.stderr)")
        // Nothing near: no suggestion.
        let far = try cli.run(["encrypt", "--key", "zelda"], stdin: "x")
        #expect(far.status == 66 && !far.stderr.contains("did you mean"), "\(far.stderr)")
        // No second key was made along the way.
        #expect(try cli.run(["keys", "list"]).stdout.split(separator: "\n").count == 2)
    }

    // MARK: the commit a checkout's build names

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

extension Peer {
    /// argument-parser's manual generator, built beside `sealkit` (a plain `swift test` builds only what the
    /// tests link; Scripts/test builds it).
    static let manualGenerator = Peer(
        "generate-manual, built beside sealkit", enable: "`swift build --product generate-manual`, or run Scripts/test"
    ) {
        FileManager.default.isExecutableFile(atPath: CLI.executable.deletingLastPathComponent().path + "/generate-manual")
    }
}
