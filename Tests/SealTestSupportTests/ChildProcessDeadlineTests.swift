import Foundation
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// No test waits without a deadline: a `sealkit` that had exited, its pipe held open by a process its
/// shell left behind, kept a test waiting 604 s. The runner's waits end by their deadline, and after the child
/// exited, within `ChildProcess.afterExit` seconds, failing the test with a message that says why.
@Suite("ChildProcess deadlines")
struct ChildProcessDeadlineTests {
    /// Whether `pid` is gone (or a zombie nobody will wait for: its parent here is init, which reaps it).
    static func isGone(_ pid: pid_t, within seconds: Double) -> Bool {
        Waits.until(timeout: seconds, every: 0.05) {
            if kill(pid, 0) != 0 && errno == ESRCH { return true }
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ")
            return state.map { $0.count > 2 && $0[2] == "Z" } ?? false
        }
    }

    @Test func runEndsSoonAfterTheChildExitsThoughAnOrphanHoldsItsPipe() throws {
        let started = Date()
        var result: ProcessResult?
        // A shell whose background job outlives it, holding its stdout: end of file never comes.
        try withKnownIssue("the test fails, saying an orphan held the output open") {
            result = try ChildProcess.run("sh", ["-c", "sleep 100 & echo $!"], timeout: 60)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("still held its stdout or stderr open") }
        }
        let took = Date().timeIntervalSince(started)
        let finished = try #require(result)
        #expect(took < ChildProcess.afterExit + 10, "took \(took) s")
        #expect(finished.outputsHeldOpen && !finished.timedOut)
        #expect(finished.status == 0)
        // What was read is kept, and the orphan is gone with its process group.
        let orphan = try #require(pid_t(finished.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(Self.isGone(orphan, within: 10), "the orphan \(orphan) still runs")
    }

    @Test func readLineEndsSoonAfterTheChildExitsThoughAnOrphanHoldsItsPipe() throws {
        let child = try ChildProcess("sh", ["-c", "echo first; sleep 100 &"], killAfter: nil)
        #expect(child.readLine(timeout: 60) == "first")
        let started = Date()
        #expect(child.readLine(timeout: 60) == nil)
        let took = Date().timeIntervalSince(started)
        #expect(took < ChildProcess.afterExit + 10, "took \(took) s")
        withKnownIssue("finishing it says an orphan held the output open") {
            let result = child.finish(timeout: 60)
            #expect(result.outputsHeldOpen)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("still held its stdout or stderr open") }
        }
    }

    @Test func aChildThatHangsFailsTheTestByItsDeadline() throws {
        let started = Date()
        var result: ProcessResult?
        try withKnownIssue("the test fails, naming the program and its deadline") {
            result = try ChildProcess.run("sleep", ["100"], timeout: 2)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("sleep did not finish within its deadline of 2 s") }
        }
        let took = Date().timeIntervalSince(started)
        let finished = try #require(result)
        #expect(finished.timedOut && finished.status == -SIGKILL)
        #expect(took < 12, "took \(took) s")
    }

    @Test func everyRunHasADeadlineOfMinutesNotTenOfThem() {
        #expect(ChildProcess.defaultTimeout <= 120)
        #expect(ChildProcess.afterExit <= 10)
    }

    @Test func aChildThatExitsCleanlyIsUntouched() throws {
        let result = try ChildProcess.run("sh", ["-c", "printf out; printf err >&2; exit 3"])
        #expect(result.status == 3 && result.stdoutText == "out" && result.stderrText == "err")
        #expect(!result.timedOut && !result.outputsHeldOpen)
    }
}
