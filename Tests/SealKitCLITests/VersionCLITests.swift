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
