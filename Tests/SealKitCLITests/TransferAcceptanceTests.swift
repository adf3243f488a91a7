import Foundation
import SealKit
import SealTestSupport
import Testing

/// The contract points for the network transfer that the other suites leave out, driven
/// as a user or a script would: a receiver on a terminal, `--yes`, protected keys, many ids, and
/// peers that misbehave after the version exchange.
@Suite("Transfer acceptance: the contract's remaining points, through a local mailbox server")
struct TransferAcceptanceTests {
    typealias Network = NetworkTransferCLITests

    /// Runs `sealkit transfer receive --format text` on a terminal (all three streams), has
    /// `sealkit transfer send` answer its code, and at the y/N question does `action`:
    /// `interrupt` (SIGINT) or types `answer`. Returns both sides' outcomes.
    static func receiveOnATerminal(
        sending: CLI, receiving: CLI, relay: String, ids: [String], receiverArguments: [String] = [], action: String
    ) throws -> TerminalOutcome {
        let script = """
            import json, os, pty, select, signal, subprocess, sys, time
            sealkit, sender_home, receiver_home, relay, action = \(try TransferCLITests.json([
                CLI.executable.path, sending.environment["SEALKIT_HOME"] ?? "", receiving.environment["SEALKIT_HOME"] ?? "", relay, action,
            ]))
            ids = \(try TransferCLITests.json(ids))
            extra = \(try TransferCLITests.json(receiverArguments))
            env = dict(os.environ, SEALKIT_HOME=receiver_home)
            env.pop("SEALKIT_PASSPHRASE", None)
            pid, fd = pty.fork()
            if pid == 0:
                os.execve(sealkit, [sealkit, "transfer", "receive", "--format", "text", "--relay", relay] + extra, env)
            seen = b""
            def read_until(marker, timeout=30):
                global seen
                deadline = time.time() + timeout
                while marker not in seen and time.time() < deadline:
                    ready, _, _ = select.select([fd], [], [], 0.1)
                    if ready:
                        try:
                            chunk = os.read(fd, 4096)
                        except OSError:
                            break
                        if not chunk:
                            break
                        seen += chunk
                return marker in seen
            read_until(b"\\n")
            code = seen.decode().split("\\r\\n")[0].strip()
            sender = subprocess.Popen([sealkit, "transfer", "send"] + ids + ["--code", code, "--relay", relay],
                                      env=dict(os.environ, SEALKIT_HOME=sender_home), stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            asked = read_until(b"[y/N]")
            if action == "interrupt":
                os.kill(pid, signal.SIGINT)
            elif action.startswith("answer:"):
                os.write(fd, (action[len("answer:"):] + "\\n").encode())
            read_until(b"\\x00", timeout=20)
            _, status = os.waitpid(pid, 0)
            try:
                out, err = sender.communicate(timeout=30)
                sender_status = sender.returncode
            except subprocess.TimeoutExpired:
                sender.kill()
                out, err = sender.communicate()
                sender_status = -1
            print(json.dumps({"status": os.waitstatus_to_exitcode(status), "output": seen.decode(errors="replace"),
                              "code": code, "asked": asked, "senderStatus": sender_status, "senderOut": out, "senderErr": err}))
            """
        let result = try Python.run(script)
        #expect(result.status == 0, "\(result.stderrText.suffix(1500))")
        return try JSONDecoder().decode(TerminalOutcome.self, from: Data(result.stdout))
    }

    struct TerminalOutcome: Decodable {
        let status: Int, output: String, code: String, asked: Bool
        let senderStatus: Int, senderOut: String, senderErr: String
    }

    /// Ctrl-C at the receiver's y/N question: nothing stored, the code released, and the sender,
    /// which waits for the receiver's answer, is told at once (it used to wait out its timeout).
    @Test func interruptAtTheQuestionStoresNothingAndTellsTheSender() throws {
        try MailboxServer.shared { server in
            let sending = try CLI(), receiving = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            let outcome = try Self.receiveOnATerminal(
                sending: sending, receiving: receiving, relay: server.relay, ids: ["alice"], action: "interrupt")
            #expect(outcome.asked, "\(outcome.output)")
            #expect(outcome.status == 130, "\(outcome.output)")
            #expect(outcome.output.contains("sealkit: \(MailboxError.interrupted)"), "\(outcome.output)")
            #expect(outcome.senderStatus != 0 && outcome.senderStatus != -1 && outcome.senderStatus < 126, "sender: \(outcome.senderStatus) \(outcome.senderErr)")
            #expect(outcome.senderOut.isEmpty)
            #expect(outcome.senderErr.hasPrefix("sealkit: the receiver cancelled"), "\(outcome.senderErr)")
            #expect(outcome.senderErr.split(separator: "\n").count == 1)
            #expect(try TransferCLITests.ids(receiving).isEmpty, "nothing stored")
            #expect(try !Network.nameplates(server.relay).contains(Network.nameplate(outcome.code)))
        }
    }
}
