import Foundation
import SealTestSupport
import Testing

/// Issue 21 (and 22's share prompts): codes and shares typed at a terminal, through a pty: Tab
/// completion from the word lists (libedit), a one-word typo corrected after asking, a malformed code
/// refused before anything reaches the relay.
@Suite("code and share entry on a terminal")
struct CodeEntryCLITests {
    /// Runs sealkit on a pty with `arguments`, types `keys` (a list of byte strings, each sent after
    /// the previous marker showed), and returns the exit status and what the terminal showed.
    static func onTerminal(
        _ cli: CLI, _ arguments: [String], steps: [(waitFor: String, type: String)], environment: [String: String] = [:]
    ) throws -> (status: Int, output: String) {
        let script = """
            import json, os, pty, re, select, sys, time
            sealkit, home, arguments, steps = \(try TransferCLITests.json([CLI.executable.path, cli.environment["SEALKIT_HOME"] ?? ""]))[0], \(try TransferCLITests.json([cli.environment["SEALKIT_HOME"] ?? ""]))[0], json.loads(sys.stdin.readline()), json.loads(sys.stdin.readline())
            env = dict(os.environ, SEALKIT_HOME=home, TERM="xterm", **json.loads(sys.stdin.readline()))
            env.pop("SEALKIT_PASSPHRASE", None)
            pid, fd = pty.fork()
            if pid == 0:
                os.execve(sealkit, [sealkit] + arguments, env)
            seen = b""
            \(TransferCLITests.readUntil(defaultTimeout: 15))
            # Each marker is waited for after the previous one, so a prompt shown twice is answered twice.
            start = 0
            for marker, typed in steps:
                if not read_until(marker.encode(), start=start):
                    break
                start = seen.find(marker.encode(), start) + len(marker.encode())
                if typed == "<word>\\n":
                    # The word the check asks for, read off the share last shown on the screen.
                    shown = re.findall(rb"\\):\\r?\\n\\r?\\n    ([a-z ]+)\\r?\\n", seen)[-1].split()
                    asked = int(re.findall(rb"word (\\d+): ", seen)[-1])
                    typed = shown[asked - 1].decode() + "\\n"
                for ch in typed:
                    os.write(fd, ch.encode())
                    time.sleep(0.02)
            read_until(b"\\x00", timeout=5)
            # A sealkit still waiting for input after every step is killed, never waited on forever.
            status = None
            deadline = time.time() + 90
            while time.time() < deadline:
                done, code = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = code
                    break
                read_until(b"\\x00", timeout=1)
            if status is None:
                os.kill(pid, 9)
                _, status = os.waitpid(pid, 0)
            print(json.dumps({"status": os.waitstatus_to_exitcode(status), "output": seen.decode(errors="replace")}))
            """
        let input = String(decoding: try JSONSerialization.data(withJSONObject: arguments), as: UTF8.self) + "\n"
            + String(decoding: try JSONSerialization.data(withJSONObject: steps.map { [$0.waitFor, $0.type] }), as: UTF8.self) + "\n"
            + String(decoding: try JSONSerialization.data(withJSONObject: environment), as: UTF8.self) + "\n"
        let result = try Python.run(script, stdin: Array(input.utf8))
        #expect(result.status == 0, "\(result.stderrText.suffix(800))")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        return (object["status"] as? Int ?? -1, object["output"] as? String ?? "")
    }

    @Test func tabCompletesTheCodesWordsFromTheirLists() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        // The relay is unreachable: reaching it shows the code was taken, completed.
        let (status, output) = try Self.onTerminal(
            cli, ["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--timeout", "2"],
            steps: [("such as 7-guitarist-revenge): ", "7-guitar\t-reven\t\n")])
        #expect(output.contains("7-guitarist-revenge"), "\(output)")
        #expect(output.contains("cannot reach the mailbox relay"), "\(output)")
        #expect(status == 69)
    }

    @Test func oneMistypedWordIsOfferedForCorrectionAndAnUnknownOneRefused() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let corrected = try Self.onTerminal(
            cli, ["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--timeout", "2"],
            steps: [("such as 7-guitarist-revenge): ", "7-guitarsit-revenge\n"), ("[Y/n] ", "\n")])
        #expect(corrected.output.contains("did you mean 7-guitarist-revenge?"), "\(corrected.output)")
        #expect(corrected.output.contains("cannot reach the mailbox relay"), "\(corrected.output)")
        // Nothing close: refused and asked again, three times in all; the relay is never contacted.
        let refused = try Self.onTerminal(
            cli, ["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--timeout", "2"],
            steps: Array(repeating: ("such as 7-guitarist-revenge): ", "7-qqqqqqqq-revenge\n"), count: 3))
        #expect(refused.status == 65, "\(refused.output)")
        #expect(refused.output.components(separatedBy: "type the code again").count == 3, "\(refused.output)")
        #expect(!refused.output.contains("cannot reach"), "\(refused.output)")
        // --code without a terminal: refused with the suggestion, never corrected silently.
        let given = try cli.run(["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--code", "7-guitarsit-revenge"])
        expectCleanFailure(given, containing: "did you mean 7-guitarist-revenge?")
        #expect(!given.stderr.contains("cannot reach"))
    }

    @Test func shareWordsCompleteWithTab() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let made = try ShareBackupCLITests.backup(sender, ["alice", "--shares", "2", "--threshold", "2"])
        // The second share typed with each word's first four letters and Tab (SLIP-39 words are
        // told apart by their first four letters).
        let abbreviated = made.shares[1].split(separator: " ").map { String($0.prefix(4)) + "\t" }.joined()
        let receiving = try CLI()
        let (status, output) = try Self.onTerminal(
            receiving, ["keys", "restore", "--shares", "--all"],
            steps: [("bundle> ", made.bundle + "\n"), ("share> ", made.shares[0] + "\n"), ("share> ", abbreviated + "\n"),
                    ("(Enter for none): ", "\n")])
        #expect(status == 0, "\(output)")
        #expect(output.contains("alice\t") || output.contains("alice "), "\(output)")
        #expect(try TransferCLITests.ids(receiving) == ["alice"])
    }
}
