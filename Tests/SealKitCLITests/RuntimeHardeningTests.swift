import Foundation
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Input that never ends (`/dev/zero`, a FIFO fed forever) ends every command
/// that reads untrusted input with one line on stderr, within seconds and under 100 MB of RSS.
/// Before, each of these died with "Fatal error: failed to allocate" (exit 134).
@Suite("Endless input")
struct EndlessInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        /// The shell words after `sealkit`, run with `$SEALKIT`, `$HOME_DIR` set.
        let command: String
        /// What the error line says.
        let expected: String
        /// The command shows its offer and verification code before it reads.
        var showsOfferFirst = false
        /// The exit status: 65 for input that is not what it should be, 74 for a file audit cannot read.
        var status: Int32 = 65
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "decrypt < /dev/zero", command: #""$SEALKIT" decrypt --key k < /dev/zero"#, expected: "larger than 24 MiB"),
        Case(name: "decrypt --lines < /dev/zero", command: #""$SEALKIT" decrypt --key k --lines < /dev/zero"#, expected: "longer than 24 MiB"),
        Case(name: "encrypt < /dev/zero", command: #""$SEALKIT" encrypt --key k < /dev/zero"#, expected: "larger than 16 MiB"),
        Case(name: "encrypt --lines < /dev/zero", command: #""$SEALKIT" encrypt --key k --lines < /dev/zero"#, expected: "longer than 16 MiB"),
        Case(name: "decrypt, endless FIFO", command: #"yes AAAA 2>/dev/null | "$SEALKIT" decrypt --key k"#, expected: "larger than 24 MiB"),
        Case(name: "keys restore < /dev/zero", command: #""$SEALKIT" keys restore k < /dev/zero"#, expected: "longer than 64 KiB"),
        Case(name: "keys restore, endless blank lines", command: #"yes '' 2>/dev/null | "$SEALKIT" keys restore k"#, expected: "larger than 1 MiB"),
        Case(name: "keys restore, endless parts", command: #"yes 'sealkit-part-v1:AAAAAAAAAAAA:1/2:AAAA' 2>/dev/null | "$SEALKIT" keys restore k"#, expected: "given twice"),
        Case(name: "keys import < /dev/zero", command: #""$SEALKIT" keys import j < /dev/zero"#, expected: "larger than 64 KiB"),
        Case(
            name: "transfer receive < /dev/zero", command: #""$SEALKIT" transfer receive --offline --format text < /dev/zero"#,
            expected: "is longer than", showsOfferFirst: true),
        Case(
            name: "transfer receive, endless blank lines", command: #"yes '' 2>/dev/null | "$SEALKIT" transfer receive --offline --format text"#,
            expected: "larger than 1 MiB", showsOfferFirst: true),
        Case(
            name: "profile encrypt --ndjson < /dev/zero",
            command: #""$SEALKIT" profile encrypt --schema "$HOME_DIR/schema.json" --key k --ndjson < /dev/zero"#,
            expected: "longer than 16 MiB"),
        Case(
            name: "profile encrypt < /dev/zero",
            command: #""$SEALKIT" profile encrypt --schema "$HOME_DIR/schema.json" --key k < /dev/zero"#,
            expected: "larger than 16 MiB"),
        Case(
            name: "profile encrypt, schema /dev/zero",
            command: #""$SEALKIT" profile encrypt --schema /dev/zero --key k < "$HOME_DIR/profile.json""#,
            expected: "larger than 16 MiB"),
        Case(name: "qr < /dev/zero", command: #""$SEALKIT" qr < /dev/zero"#, expected: "larger than 64 KiB"),
        Case(name: "audit, .json link to /dev/zero", command: #""$SEALKIT" audit "$HOME_DIR/zero.json""#, expected: "not a regular file", status: 74),
        Case(name: "audit, a FIFO named .ndjson", command: #""$SEALKIT" audit "$HOME_DIR/fifo.ndjson""#, expected: "not a regular file", status: 74),
    ]

    /// `Scripts/test --sanitize` runs a sanitized `sealkit`: shadow memory and a quarantine of freed
    /// blocks raise its RSS, and it runs several times slower. The bounds scale for it; the one-line
    /// contract does not.
    static let sanitized = Sanitizers.active
    static let memoryLimitKiB = (sanitized ? 400 : 100) * 1024
    static let timeLimit: Double = sanitized ? 40 : 10

    @Test(.requires(.python), arguments: cases)
    func endsWithOneLine(_ entry: Case) throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "k"]).status == 0)
        let home = cli.home.path
        try #"{"schema":{"name":{"type":"string","encryption":{"state":"enabled"}}}}"#.write(
            toFile: home + "/schema.json", atomically: true, encoding: .utf8)
        try #"{"name":"x"}"#.write(toFile: home + "/profile.json", atomically: true, encoding: .utf8)
        #expect(symlink("/dev/zero", home + "/zero.json") == 0)
        #expect(mkfifo(home + "/fifo.ndjson", 0o600) == 0)
        var environment = cli.environment
        environment["SEALKIT"] = CLI.executable.path
        environment["HOME_DIR"] = home
        environment["SWIFT_BACKTRACE"] = "enable=no"

        let started = Date()
        let (outcome, peakKiB) = try ChildProcess.runMeasuringPeakMemory(
            "/bin/sh", ["-c", entry.command], environment: environment, timeout: Self.timeLimit * 2)
        let seconds = Date().timeIntervalSince(started)

        #expect(!outcome.timedOut, "hung: killed after \(Self.timeLimit * 2) s")
        #expect(seconds < Self.timeLimit, "took \(seconds) s")
        #expect(outcome.signal == nil && outcome.status == entry.status, "status \(String(describing: outcome.status)), signal \(String(describing: outcome.signal)): \(outcome.stderrText.prefix(300))")
        #expect(peakKiB < Self.memoryLimitKiB, "peak RSS \(peakKiB) KiB")
        let stderr = outcome.stderrText
        if entry.showsOfferFirst {
            // The offline receiver's offer and code, then nothing more.
            let lines = outcome.stdoutText.split(separator: "\n")
            #expect(lines.count == 2 && lines[0].hasPrefix("sealkit-offer-v2:"), "stdout: \(outcome.stdoutText.prefix(200))")
        } else {
            #expect(outcome.stdout.isEmpty)
        }
        #expect(stderr.hasPrefix("sealkit: ") && stderr.filter { $0 == "\n" }.count == 1, "stderr: \(stderr.prefix(300))")
        #expect(stderr.contains(entry.expected), "stderr: \(stderr)")
        #expect(!stderr.contains("Fatal error"))
    }
}

/// A crash while `decrypt --lines` holds plaintext leaves no core file and
/// prints nothing of memory. The process is crashed from outside with each crash signal (SIGSEGV,
/// SIGABRT, SIGBUS, SIGILL, SIGFPE, SIGTRAP: the six Scripts/stress used to repeat), with core
/// files allowed (`ulimit -c unlimited`) in a folder it may write, and Swift's backtracer left at
/// its default. Before, the core file held the plaintext and the backtracer printed memory.
@Suite("Crash output")
struct CrashOutputTests {
    static let secret = "SSN=078-05-1120"

    @Test(arguments: [SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE, SIGTRAP])
    func crashLeavesNoCoreAndPrintsNoMemory(_ signal: Int32) throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "k"]).status == 0)
        let ciphertext = try cli.run(["encrypt", "--key", "k"], stdin: "patient \(Self.secret)").output
        let folder = cli.home.appendingPathComponent("cwd").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var environment = cli.environment
        environment.removeValue(forKey: "SWIFT_BACKTRACE")
        environment["SEALKIT"] = CLI.executable.path
        environment["CWD"] = folder
        // Core files allowed and written here when the kernel's pattern is a plain file name.
        let process = try ChildProcess(
            "/bin/sh", ["-c", #"ulimit -c unlimited 2>/dev/null; cd "$CWD" && exec "$SEALKIT" decrypt --key k --lines"#],
            environment: environment, killAfter: nil)
        // The plaintext is now in its memory: decrypted, waiting in the output buffer for more lines.
        process.write(Array(String(repeating: ciphertext + "\n", count: 50).utf8))
        Thread.sleep(forTimeInterval: 1.5)
        let limits = (try? String(contentsOfFile: "/proc/\(process.pid)/limits", encoding: .utf8)) ?? ""
        let coreLimit = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
        #expect(coreLimit?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"], "\(coreLimit ?? "")")
        _ = kill(process.pid, signal)
        let outcome = process.finish(stdin: [], timeout: 20)

        #expect(!outcome.timedOut)
        #expect(outcome.signal == nil && outcome.status == 70, "status \(String(describing: outcome.status)), signal \(String(describing: outcome.signal))")
        #expect(
            outcome.stderrText == "sealkit: internal error: the process crashed and was stopped; no memory was printed and no core file written\n",
            "stderr: \(outcome.stderrText.prefix(2000))")
        #expect(!outcome.stderrText.contains("078-05-1120") && !outcome.stdoutText.contains("078-05-1120"))
        let pattern = (try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8)) ?? ""
        let written = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        #expect(written.isEmpty, "left in the working folder (core pattern \(pattern)): \(written)")
    }

    /// Ctrl-\\ (SIGQUIT) ends the process with its default action: not Swift's backtracer, which took it
    /// too, printed registers and memory, and left the process running; and no core file.
    @Test func quitEndsWithoutTheBacktracer() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "k"]).status == 0)
        let ciphertext = try cli.run(["encrypt", "--key", "k"], stdin: "patient \(Self.secret)").output
        let folder = cli.home.appendingPathComponent("cwd").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var environment = cli.environment
        environment.removeValue(forKey: "SWIFT_BACKTRACE")
        environment["SEALKIT"] = CLI.executable.path
        environment["CWD"] = folder
        let process = try ChildProcess(
            "/bin/sh", ["-c", #"ulimit -c unlimited 2>/dev/null; cd "$CWD" && exec "$SEALKIT" decrypt --key k --lines"#],
            environment: environment, killAfter: nil)
        process.write(Array(String(repeating: ciphertext + "\n", count: 50).utf8))
        Thread.sleep(forTimeInterval: 1.5)
        _ = kill(process.pid, SIGQUIT)
        let outcome = process.finish(stdin: [], timeout: 20)

        #expect(!outcome.timedOut)
        #expect(outcome.signal == SIGQUIT, "status \(String(describing: outcome.status)), signal \(String(describing: outcome.signal))")
        #expect(outcome.stderrText.isEmpty, "stderr: \(outcome.stderrText.prefix(2000))")
        #expect(!outcome.stdoutText.contains("078-05-1120"))
        let written = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        #expect(written.isEmpty, "left in the working folder: \(written)")
    }
}
