import Foundation
import SealTestSupport
import Testing

/// Plugins/GitCommit/name-commit.sh on its own: no package built, so it runs in milliseconds.
@Suite("The build's commit: name-commit.sh")
struct NameCommitScriptTests {
    /// An output whose time is ahead of the clock (a build folder restored from another machine, a clock set
    /// back) is still rewritten, at once, with a later time the compiler sees: the build never waits on the clock.
    @Test func anOutputDatedInTheFutureIsRewrittenWithoutWaiting() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("name-commit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("GeneratedCommit.swift")
        try "let generatedCommit = \"0000000\"\n".write(to: output, atomically: true, encoding: .utf8)
        let ahead = Date().addingTimeInterval(3_600)
        try FileManager.default.setAttributes([.modificationDate: ahead], ofItemAtPath: output.path)

        var environment = ProcessInfo.processInfo.environment
        environment["SEALKIT_COMMIT"] = "0a1b2c3"
        let ran = try ChildProcess.run("/bin/sh", [VersionCLITests.script, folder.path, output.path], environment: environment, timeout: 20)
        #expect(ran.status == 0 && !ran.timedOut, "\(ran.stderrText)")
        #expect(try String(contentsOf: output, encoding: .utf8).contains("let generatedCommit = \"0a1b2c3\""))
        let written = try #require(try FileManager.default.attributesOfItem(atPath: output.path)[.modificationDate] as? Date)
        #expect(written.timeIntervalSince1970.rounded(.down) > ahead.timeIntervalSince1970.rounded(.down), "the compiler would skip it")
    }
}
