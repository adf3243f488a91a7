import Foundation
import SealKit
import SealTestSupport
import Testing

/// The network transfer's contract points that the other suites leave out, driven
/// as a user or a script would: a receiver on a terminal, `--yes`, protected keys, many ids, and
/// peers that misbehave after the version exchange. Tests that check an allocated nameplate was
/// released run their own server: on the shared one a parallel test may be given the same number.
@Suite("sealkit transfer receive and send on a terminal and against odd peers, through a local mailbox server", .requires(.mailboxServer))
struct TransferTerminalCLITests {
    typealias Network = NetworkTransferCLITests

    /// Runs `sealkit transfer receive --format text` on a terminal (all three streams), has
    /// `sealkit transfer send` answer its code, and at the y/N question does `action`:
    /// `interrupt` (SIGINT) or types `answer`. Returns both sides' outcomes.
    static func receiveOnATerminal(
        sending: CLI, receiving: CLI, relay: String, ids: [String], receiverArguments: [String] = [], action: String
    ) throws -> TerminalOutcome {
        var environment = receiving.environment
        environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
        let terminal = try ChildProcess(
            CLI.executable.path, ["transfer", "receive", "--format", "text", "--relay", relay] + receiverArguments,
            environment: environment, terminal: 0, killAfter: nil)
        // A #require that fails below must not leave it waiting for input forever: killed on every path (after `finish`, a no-op).
        defer { terminal.kill() }
        terminal.wait(for: "\n", timeout: 30)
        let firstLine = terminal.outputSoFar.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)[0]
        let code = String(decoding: firstLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let sender = try ChildProcess(
            CLI.executable.path, ["transfer", "send"] + ids + ["--code", code, "--relay", relay], environment: sending.environment,
            killAfter: nil)
        sender.closeInput()
        let asked: Bool
        if action == "none" {
            terminal.wait(for: "imported", timeout: 30)
            asked = terminal.outputSoFar.firstRange(of: Array("[y/N]".utf8)) != nil
        } else {
            asked = terminal.wait(for: "[y/N]", timeout: 30)
        }
        if action == "interrupt" {
            terminal.send(signal: SIGINT)
        } else if action == "interrupt-sender" {
            sender.send(signal: SIGINT)
            #expect(sender.waitForExit(timeout: 20), "the interrupted sender did not end")
            terminal.write("y\n")
        } else if action.hasPrefix("answer:") {
            terminal.write(String(action.dropFirst("answer:".count)) + "\n")
        }
        let received = terminal.finish(timeout: 60)
        let sent = sender.finish(timeout: 30)
        return TerminalOutcome(
            status: Int(received.status), output: received.stdoutText, code: code, asked: asked,
            senderStatus: sent.timedOut ? -1 : Int(sent.status), senderOut: sent.stdoutText, senderErr: sent.stderrText)
    }

    struct TerminalOutcome {
        let status: Int, output: String, code: String, asked: Bool
        let senderStatus: Int, senderOut: String, senderErr: String
    }

    /// Ctrl-C at the receiver's y/N question: nothing stored, the code released, and the sender,
    /// which waits for the receiver's answer, is told at once (it used to wait out its timeout).
    @Test func interruptAtTheQuestionStoresNothingAndTellsTheSender() throws {
        try MailboxServer.with { server in
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

    /// Ctrl-C on the sender once its keys went out (the receiver is at its question): the sender
    /// does not claim the transfer was cancelled, since the receiver may still store the keys.
    @Test func interruptedSenderAfterTheKeysWentOutSaysSo() throws {
        try MailboxServer.with { server in
            let sending = try CLI(), receiving = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            let outcome = try Self.receiveOnATerminal(
                sending: sending, receiving: receiving, relay: server.relay, ids: ["alice"], action: "interrupt-sender")
            #expect(outcome.asked, "\(outcome.output)")
            #expect(outcome.senderStatus == 130, "\(outcome.senderErr)")
            #expect(outcome.senderOut.isEmpty)
            #expect(outcome.senderErr.hasPrefix("sealkit: interrupted: the keys were already sent"), "\(outcome.senderErr)")
            #expect(outcome.senderErr.split(separator: "\n").count == 1)
            #expect(outcome.status == 0, "\(outcome.output)")
            #expect(try TransferCLITests.ids(receiving) == ["alice"])
            #expect(try !Network.nameplates(server.relay).contains(Network.nameplate(outcome.code)))
        }
    }

    /// `--yes` on a terminal stores without the question; `y` stores, `n` stores nothing and
    /// the sender says the receiver declined.
    @Test func theQuestionOnATerminalAndYes() throws {
        try MailboxServer.with { server in
            let sending = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            let fingerprint = try field(1, of: try sending.run(["keys", "list"]).output)

            let yes = try CLI()
            let skipped = try Self.receiveOnATerminal(
                sending: sending, receiving: yes, relay: server.relay, ids: ["alice"], receiverArguments: ["--yes"], action: "none")
            #expect(!skipped.asked && skipped.status == 0, "\(skipped.output)")
            #expect(skipped.output.contains("alice\t\(fingerprint)\timported"), "\(skipped.output)")
            #expect(skipped.senderStatus == 0 && skipped.senderOut.isEmpty, "\(skipped.senderStatus) \(skipped.senderErr)")
            #expect(try TransferCLITests.ids(yes) == ["alice"])

            let accepting = try CLI()
            let accepted = try Self.receiveOnATerminal(
                sending: sending, receiving: accepting, relay: server.relay, ids: ["alice"], action: "answer:y")
            #expect(accepted.asked && accepted.status == 0, "\(accepted.output)")
            #expect(accepted.senderStatus == 0, "\(accepted.senderStatus) \(accepted.senderErr)")
            #expect(try TransferCLITests.ids(accepting) == ["alice"])

            let declining = try CLI()
            let declined = try Self.receiveOnATerminal(
                sending: sending, receiving: declining, relay: server.relay, ids: ["alice"], action: "answer:n")
            #expect(declined.asked && declined.status == 1, "\(declined.output)")
            #expect(declined.senderStatus == 1 && declined.senderErr.hasPrefix("sealkit: the receiver declined"), "\(declined.senderErr)")
            #expect(declined.senderErr.split(separator: "\n").count == 1)
            #expect(try TransferCLITests.ids(declining).isEmpty)
            #expect(try !Network.nameplates(server.relay).contains(Network.nameplate(declined.code)))
        }
    }

    /// A passphrase-protected key travels once the passphrase is given; without one (and no
    /// terminal) the sender fails with one line before it joins, and the receiver gets nothing.
    @Test func protectedKeysNeedTheirPassphrase() throws {
        try MailboxServer.shared { server in
            let passphrase = ["SEALKIT_PASSPHRASE": "correct horse battery staple"]
            let sending = try CLI(), receiving = try CLI()
            #expect(try sending.run(["keys", "generate", "alice", "--protect"], environment: passphrase).status == 0)
            #expect(try sending.run(["keys", "rotate", "alice"], environment: passphrase).status == 0)
            let (receiver, code) = try Network.startReceiver(receiving, relay: server.relay, ["--timeout", "20"])
            let locked = try sending.run(["transfer", "send", "alice", "--code", code, "--relay", server.relay])
            expectCleanFailure(locked, containing: "passphrase")
            #expect(locked.status == 77)
            let sent = try sending.run(["transfer", "send", "alice", "--code", code, "--relay", server.relay], environment: passphrase)
            #expect(sent.status == 0 && sent.stdout.isEmpty, "\(sent.stderr)")
            let received = receiver.finish()
            #expect(received.status == 0, "\(received.stderrText)")
            let listed = try sending.run(["keys", "list"], environment: passphrase).output
            let fingerprint = try #require(listed.split(separator: "\t").dropFirst().first)
            #expect(received.stdoutText == "alice\t\(fingerprint)\timported\n")
            #expect(try receiving.run(["keys", "list"]).output.contains("1 retired"), "retired keys of a protected id travel too")
        }
    }

    /// A magic-wormhole peer that claims SealKit's app versions and then misbehaves:
    /// `send RELAY BODY` reads the code from stdin and sends BODY's bytes instead of keys;
    /// `receive RELAY BODY` shows a code, takes the keys and answers with BODY's bytes instead of a receipt.
    static let oddPeer = """
        import os, sys
        from twisted.internet import defer
        from twisted.internet.task import react
        import wormhole
        BODIES = {"garbage": b"\\x01\\x00\\x01\\x00", "json": b'{"hello": 1}', "notjson": b"\\xff not json",
                  "declined": b'{"stored": false, "reason": "declined"}'}
        @defer.inlineCallbacks
        def main(reactor, mode, relay, body):
            reactor.callLater(30, os._exit, 5)
            role = "sender" if mode == "send" else "receiver"
            w = wormhole.create("sealkit/key-transfer/v1", relay, reactor,
                                versions={"sealkit": {"protocol": "key-transfer/v1", "role": role}})
            if mode == "send":
                w.set_code(sys.stdin.readline().strip())
            else:
                w.allocate_code()
                print((yield w.get_code()), flush=True)
            yield w.get_versions()
            if mode == "receive":
                yield w.get_message()
            w.send_message(BODIES[body])
            yield defer.Deferred()
        react(lambda reactor: main(reactor, *sys.argv[1:4]))
        """

    static func startOddPeer(_ mode: String, relay: String, body: String) throws -> ChildProcess {
        try ChildProcess(MailboxServer.python, ["-c", oddPeer, mode, relay, body], killAfter: 40)
    }

    @Test func aPeerSendingSomethingElseThanKeysIsNotSealKit() throws {
        try MailboxServer.with { server in
            for body in ["garbage", "json"] {
                let receiving = try CLI()
                let (receiver, code) = try Network.startReceiver(receiving, relay: server.relay, ["--timeout", "30"])
                let peer = try Self.startOddPeer("send", relay: server.relay, body: body)
                peer.write(code + "\n")
                let received = receiver.finish()
                peer.send(signal: SIGKILL)
                _ = peer.finish()
                #expect(received.status == 76, "\(body): \(received.stderrText)")
                #expect(received.stdoutText.isEmpty, "only the code on stdout")
                #expect(received.stderrText.hasPrefix("sealkit: the other side is not a SealKit key transfer"), "\(received.stderrText)")
                #expect(received.stderrText.split(separator: "\n").count == 1)
                // Advice for a pasted offline reply does not fit a network peer.
                #expect(!received.stderrText.contains("copy it again"), "\(received.stderrText)")
                #expect(try TransferCLITests.ids(receiving).isEmpty)
                #expect(try !Network.nameplates(server.relay).contains(Network.nameplate(code)))
            }
        }
    }

    @Test func aReceiverAnsweringSomethingElseThanAReceiptIsNotSuccess() throws {
        try MailboxServer.shared { server in
            let sending = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            for (body, status, text) in [("notjson", 76, "not a SealKit key transfer"), ("json", 76, "not a SealKit key transfer"),
                                         ("declined", 1, "the receiver declined")] {
                let peer = try Self.startOddPeer("receive", relay: server.relay, body: body)
                let code = try #require(peer.readLine())
                let sent = try sending.run(["transfer", "send", "alice", "--code", code, "--relay", server.relay, "--timeout", "30"])
                peer.send(signal: SIGKILL)
                _ = peer.finish()
                expectCleanFailure(sent, containing: text)
                #expect(Int(sent.status) == status, "\(body): \(sent.stderr)")
            }
        }
    }

    /// `receive --protect` with no passphrase given and no terminal to ask on fails at once, before
    /// it shows a code (it used to let the sender's keys arrive, then fail). `setsid` takes away the
    /// controlling terminal, so the test holds when run from one too.
    @Test func protectWithoutAPassphraseFailsBeforeTheCode() throws {
        try MailboxServer.shared { server in
            let receiving = try CLI()
            for extra in [["--relay", server.relay, "--timeout", "5"], ["--offline"]] {
                let started = Date()
                let receiver = try ChildProcess(
                    "/usr/bin/setsid", ["--wait", CLI.executable.path, "transfer", "receive", "--format", "text", "--protect"] + extra,
                    environment: receiving.environment.filter { $0.key != "SEALKIT_PASSPHRASE" })
                let result = receiver.finish()
                #expect(result.status == 64, "\(extra): \(result.stderrText)")
                #expect(result.stdoutText.isEmpty, "no code shown: \(result.stdoutText)")
                #expect(result.stderrText.hasPrefix("sealkit: --protect needs a passphrase"), "\(result.stderrText)")
                #expect(result.stderrText.split(separator: "\n").count == 1)
                #expect(Date().timeIntervalSince(started) < 4, "it did not wait for a sender")
            }
        }
    }

    /// A bad SEALKIT_RELAY is named as the source of the address (the person may have forgotten
    /// it is set); --relay wins over it.
    @Test func aBadRelayFromTheEnvironmentSaysWhereItCameFrom() throws {
        try MailboxServer.shared { server in
            let sending = try CLI(environment: ["SEALKIT_RELAY": "http://relay.example:4000/v1"])
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            let refused = try sending.run(["transfer", "send", "alice", "--code", "7-adroitness-aardvark"])
            expectCleanFailure(refused, containing: "SEALKIT_RELAY")
            #expect(refused.status == 64 && refused.stderr.contains("--relay"))
            let receiving = try CLI(environment: ["SEALKIT_RELAY": "http://relay.example:4000/v1"])
            let (receiver, code) = try Network.startReceiver(receiving, relay: server.relay)
            #expect(try sending.run(["transfer", "send", "alice", "--code", code, "--relay", server.relay]).status == 0)
            #expect(receiver.finish().status == 0)
        }
    }

    /// `--timeout 1` on both sides: one line in the singular, exit 75, the nameplate released.
    @Test func aOneSecondTimeoutOnEitherSide() throws {
        try MailboxServer.with { server in
            let cli = try CLI()
            #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
            let (receiver, code) = try Network.startReceiver(cli, relay: server.relay, ["--timeout", "1"])
            let received = receiver.finish()
            #expect(received.status == 75 && received.stdoutText.isEmpty)
            #expect(received.stderrText.hasPrefix("sealkit: nobody completed the transfer within 1 second: "), "\(received.stderrText)")
            #expect(try !Network.nameplates(server.relay).contains(Network.nameplate(code)))
            // A bare client holds nameplate 9871 as a receiver would, and lets go of it once the sender
            // joined (a sender refuses a code whose nameplate the relay does not hold): nobody answers then.
            let holder = try ChildProcess(
                MailboxServer.python,
                [Repository.root.appendingPathComponent("Scripts/lib/hold_nameplate.py").path, server.relay, TransferOffer.appID, "9871"])
            #expect(holder.readLine() == "held")
            let sent = try cli.run(["transfer", "send", "alice", "--code", "9871-adroitness-aardvark", "--relay", server.relay, "--timeout", "1"])
            #expect(holder.finish().status == 0)
            expectCleanFailure(sent, containing: "within 1 second: ")
            #expect(sent.status == 75)
            #expect(try !Network.nameplates(server.relay).contains("9871"))
        }
    }

    /// `receive --protect` with its passphrase from a pipe (`--passphrase-file <(...)`), which
    /// gives it once: the early check for a passphrase must not use it up.
    @Test func protectWithAPipedPassphraseStoresProtectedKeys() throws {
        try MailboxServer.shared { server in
            let sending = try CLI(), receiving = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            var environment = receiving.environment
            environment["SEALKIT_PASSPHRASE"] = nil
            environment["SEALKIT_RECEIVER"] = CLI.executable.path
            environment["SEALKIT_TEST_RELAY"] = server.relay
            let receiver = try ChildProcess(
                "/usr/bin/setsid", ["--wait", "/bin/bash", "-c",
                    #""$SEALKIT_RECEIVER" transfer receive --format text --relay "$SEALKIT_TEST_RELAY" --timeout 20 --protect --passphrase-file <(printf 'piped passphrase 1')"#],
                environment: environment)
            let code = try #require(receiver.readLine())
            let sent = try sending.run(["transfer", "send", "alice", "--code", code, "--relay", server.relay])
            #expect(sent.status == 0, "\(sent.stderr)")
            let received = receiver.finish()
            #expect(received.status == 0, "\(received.stderrText)")
            #expect(received.stdoutText.hasSuffix("\timported\n"))
            #expect(try receiving.run(["keys", "list"]).output.contains("protected"), "stored under the piped passphrase")
        }
    }
}

