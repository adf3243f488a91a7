import Foundation
import SealKit
import SealTestSupport
import Testing

/// `sealkit transfer send/receive` over the network, through magic-wormhole's own mailbox
/// server, against each other and against magic-wormhole's Python client.
@Suite("Network transfer: sealkit and magic-wormhole's Python client through a local mailbox server", .requires(.mailboxServer))
struct NetworkTransferCLITests {
    static let peer = Repository.root.appendingPathComponent("Scripts/lib/wormhole_peer.py").path

    /// A running `sealkit transfer receive --format text`; its first stdout line is the code.
    static func startReceiver(_ cli: CLI, relay: String, _ extra: [String] = []) throws -> (ChildProcess, String) {
        let receiver = try ChildProcess(
            CLI.executable.path, ["transfer", "receive", "--format", "text", "--relay", relay] + extra,
            environment: cli.environment)
        let code = try #require(receiver.readLine())
        #expect(code.wholeMatch(of: /[1-9][0-9]*-[a-z]+-[a-z]+/) != nil, "code: \(code)")
        return (receiver, code)
    }

    /// Magic-wormhole's Python client as a SealKit peer (Scripts/lib/wormhole_peer.py).
    static func startPython(_ arguments: [String]) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["PEER_TIMEOUT"] = "30"
        return try ChildProcess(MailboxServer.python, [peer] + arguments, environment: environment)
    }

    static func nameplate(_ code: String) -> String { String(code.prefix { $0 != "-" }) }

    static func nameplates(_ relay: String) throws -> [String] {
        try MailboxServer.nameplatesInUse(relay: relay, appID: TransferOffer.appID)
    }

    /// The same nameplate with other words: a wrong code that still meets the receiver.
    static func wrongCode(for code: String) -> String {
        let nameplate = code.prefix { $0 != "-" }
        let wrong = code.hasSuffix("-aardvark") ? "absurd" : "aardvark"
        return "\(nameplate)-adroitness-\(wrong)"
    }

    func keysList(_ cli: CLI) throws -> [String] {
        try cli.run(["keys", "list"]).output.split(separator: "\n").map(String.init)
    }

    @Test func sealkitToSealkitCarriesCurrentAndRetiredKeys() throws {
        try MailboxServer.with { server in
            let sending = try CLI(), receiving = try CLI()
            for id in ["alice@example.com", "bob"] { #expect(try sending.run(["keys", "generate", id]).status == 0) }
            #expect(try sending.run(["keys", "rotate", "alice@example.com"]).status == 0)
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay)
            let sent = try sending.run(["transfer", "send", "alice@example.com", "bob", "--code", code, "--relay", server.relay])
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.stdout.isEmpty)
            let received = receiver.finish()
            #expect(received.status == 0, "\(received.stderrText)")
            // The contract: the code, then ID<TAB>FINGERPRINT<TAB>imported per id; fingerprints as `keys list` shows them.
            let lines = received.stdoutText.split(separator: "\n").map(String.init)
            let listed = try keysList(sending)
            let expected = try listed.map { line throws -> String in
                let fields = line.split(separator: "\t")
                try #require(fields.count > 1, "\(line)")
                return "\(fields[0])\t\(fields[1])\timported"
            }
            #expect(lines == expected.sorted { $0.hasPrefix("alice") && !$1.hasPrefix("alice") })
            #expect(try keysList(receiving) == listed, "retired keys travel too")
            #expect(try TransferCLITests.keyMaterial(receiving).sorted() == TransferCLITests.keyMaterial(sending).sorted())
            #expect(try !Self.nameplates(server.relay).contains(Self.nameplate(code)), "the nameplate is released")

            // Again: what is stored already is `unchanged`.
            let (again, code2) = try Self.startReceiver(receiving, relay: server.relay)
            #expect(try sending.run(["transfer", "send", "bob", "--code", code2, "--relay", server.relay]).status == 0)
            #expect(again.finish().stdoutText.split(separator: "\n").last?.hasSuffix("\tunchanged") == true)
        }
    }

    @Test func relayComesFromTheEnvironmentWhenNotGiven() throws {
        try MailboxServer.shared { server in
            let sending = try CLI(environment: ["SEALKIT_RELAY": server.relay])
            let receiving = try CLI(environment: ["SEALKIT_RELAY": server.relay])
            #expect(try sending.run(["keys", "generate", "u"]).status == 0)
            let receiver = try ChildProcess(
                CLI.executable.path, ["transfer", "receive", "--format", "text"], environment: receiving.environment)
            let code = try #require(receiver.readLine())
            #expect(try sending.run(["transfer", "send", "--all", "--code", code]).status == 0)
            #expect(receiver.finish().status == 0)
            #expect(try keysList(receiving) == (try keysList(sending)))
        }
    }

    @Test func pythonReceiverTakesKeysFromSealkitSend() throws {
        try MailboxServer.shared { server in
            let sending = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            #expect(try sending.run(["keys", "rotate", "alice"]).status == 0)
            let python = try Self.startPython(["receive", server.relay])
            let code = try #require(python.readLine())
            let sent = try sending.run(["transfer", "send", "alice", "--code", code, "--relay", server.relay])
            #expect(sent.status == 0, "\(sent.stderr)")
            let result = python.finish()
            #expect(result.status == 0, "\(result.stderrText)")
            // Python read the keys message itself and checked every key against its fingerprint.
            let listed = try #require(try keysList(sending).first).split(separator: "\t")
            try #require(listed.count > 1, "\(listed)")
            let fingerprint = listed[1]
            #expect(result.stdoutText.contains(#"[["alice", "\#(fingerprint)", 2]]"#), "\(result.stdoutText)")
        }
    }

    @Test func sealkitReceiverTakesKeysFromPythonSender() throws {
        try MailboxServer.shared { server in
            let receiving = try CLI()
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay)
            let python = try Self.startPython(["send", server.relay, "--ids", "3"])
            python.write(code + "\n")
            let sent = python.finish()
            #expect(sent.status == 0, "\(sent.stderrText)")
            #expect(sent.stdoutText.contains(#""answer": {"stored": true}"#))
            let received = receiver.finish()
            #expect(received.status == 0, "\(received.stderrText)")
            let lines = received.stdoutText.split(separator: "\n")
            #expect(lines.count == 3)
            for line in lines {
                let fields = line.split(separator: "\t")
                try #require(fields.count == 3, "\(line)")
                // Python's own fingerprints, made with hashlib, match SealKit's.
                #expect(sent.stdoutText.contains(#"["\#(fields[0])", "\#(fields[1])"]"#), "\(line)")
                #expect(fields[2] == "imported")
            }
            #expect(try keysList(receiving).count == 3)
        }
    }

    /// A receiver that refuses a keys message (here a key time of Int64.max, which used to
    /// trap mid-store) answers with the reason, so the sender ends at once; nothing is stored.
    @Test func aRefusedKeysMessageIsAnsweredAndNothingIsStored() throws {
        try MailboxServer.shared { server in
            let receiving = try CLI()
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay)
            let started = Date()
            let python = try Self.startPython(["send", server.relay, "--ids", "3", "--bad-time"])
            python.write(code + "\n")
            let sent = python.finish()
            #expect(Date().timeIntervalSince(started) < 20, "the sender waited for an answer that never came")
            #expect(sent.status == 0, "\(sent.stderrText)")
            #expect(sent.stdoutText.contains(#""answer": {"stored": false, "reason": "invalid"}"#), "\(sent.stdoutText)")
            let received = receiver.finish()
            #expect(received.status == 76)
            expectCleanFailure(CLI.Result(received), containing: "bad key times for 'peer-2'")
            #expect(try keysList(receiving).isEmpty, "no id of the transfer is stored")
        }
    }

    /// The receiver's screen shows the whole command the sender types, with `--relay` when
    /// the relay is not the public one; `--relay` takes the address as a `sealkit-transfer:` URI writes
    /// it (no `/v1`) and adds the endpoint. The sender says it waits for the receiver to join, then,
    /// once it joined, for it to confirm.
    @Test func theScreensSayWhatToTypeAndWhatIsAwaited() throws {
        try MailboxServer.shared { server in
            let bare = "ws://127.0.0.1:\(server.port)"
            let receiving = try CLI()
            let (status, screen) = try CodeEntryCLITests.onTerminal(
                receiving, ["transfer", "receive", "--format", "text", "--relay", bare, "--timeout", "2"], steps: [])
            #expect(screen.contains("run: sealkit transfer send ID (or --all) --relay \(server.relay) and type the code above"), "\(screen)")
            #expect(status == 75, "\(screen)")

            let sending = try CLI()
            #expect(try sending.run(["keys", "generate", "u"]).status == 0)
            let (receiver, code) = try Self.startReceiver(receiving, relay: bare)
            let (sent, shown) = try CodeEntryCLITests.onTerminal(
                sending, ["transfer", "send", "u", "--code", code, "--relay", bare, "--timeout", "30"], steps: [])
            _ = receiver.finish()
            #expect(sent == 0, "\(shown)")
            let join = try #require(shown.range(of: "Waiting for the receiver to join..."), "\(shown)")
            let confirm = try #require(shown.range(of: "The receiver joined; waiting for it to confirm..."), "\(shown)")
            #expect(join.upperBound <= confirm.lowerBound && !shown.contains("Waiting for the receiver to confirm"), "\(shown)")
        }
    }

    /// The receiver's QR carries the code and the relay as `sealkit-transfer:CODE?version=0&
    /// rendezvous=RELAY&role=leader`; the sender takes it as --code (or from an image) like the bare code.
    @Test func aTransferURIWorksLikeTheCodeAndAnotherRelayNeedsConsent() throws {
        try MailboxServer.shared { server in
            let sending = try CLI(), receiving = try CLI()
            #expect(try sending.run(["keys", "generate", "u"]).status == 0)
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay, ["--yes"])
            var rendezvous = server.relay
            if rendezvous.hasSuffix("/v1") { rendezvous.removeLast(3) }
            let encoded = rendezvous.replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: "/", with: "%2F")
            let uri = "sealkit-transfer:\(code)?version=0&rendezvous=\(encoded)&role=leader"
            // Another relay in use: refused without consent, and nothing is sent.
            let elsewhere = try sending.run(["transfer", "send", "u", "--code", uri, "--relay", "ws://127.0.0.1:9/v1"])
            #expect(elsewhere.status == 64)
            expectCleanFailure(elsewhere, containing: "give --yes")
            let sent = try sending.run(["transfer", "send", "u", "--code", uri, "--relay", server.relay])
            #expect(sent.status == 0, "\(sent.stderr)")
            let received = receiver.finish()
            #expect(received.status == 0, "\(received.stderrText)")
            #expect(try keysList(receiving).count == 1)
        }
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let file = try cli.run(["transfer", "send", "u", "--code", "wormhole-transfer:4-purple-sausages?version=0&rendezvous=ws%3A%2F%2Frelay.magic-wormhole.io%3A4000&role=follower"])
        #expect(file.status == 64)
        expectCleanFailure(file, containing: "file-transfer code, not a SealKit key-transfer code")
    }

    @Test func wrongCodeFailsOnBothSidesAndStoresNothing() throws {
        try MailboxServer.with { server in
            // Python receives; sealkit sends with a wrong code.
            let sending = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            let python = try Self.startPython(["receive", server.relay])
            let code = try #require(python.readLine())
            let sent = try sending.run(["transfer", "send", "alice", "--code", Self.wrongCode(for: code), "--relay", server.relay])
            expectCleanFailure(sent, containing: "wrong code")
            let pythonResult = python.finish()
            #expect(pythonResult.status == 3 && pythonResult.stderrText.contains("WrongPasswordError"), "\(pythonResult.stderrText)")
            #expect(!pythonResult.stdoutText.contains("alice"))

            // sealkit receives; Python sends with a wrong code.
            let receiving = try CLI()
            let (receiver, code2) = try Self.startReceiver(receiving, relay: server.relay)
            let sender = try Self.startPython(["send", server.relay])
            sender.write(Self.wrongCode(for: code2) + "\n")
            let senderResult = sender.finish()
            #expect(senderResult.status == 3 && senderResult.stderrText.contains("WrongPasswordError"), "\(senderResult.stderrText)")
            let received = receiver.finish()
            #expect(received.status != 0 && received.status < 126)
            #expect(received.stdoutText.isEmpty, "only the code on stdout")
            #expect(received.stderrText.hasPrefix("sealkit: wrong code") && received.stderrText.split(separator: "\n").count == 1)
            #expect(try keysList(receiving).isEmpty, "nothing stored")
            let held = try Self.nameplates(server.relay)
            #expect(!held.contains(Self.nameplate(code)) && !held.contains(Self.nameplate(code2)), "both nameplates released")
        }
    }

    @Test func sealkitToSealkitWithAWrongCode() throws {
        try MailboxServer.with { server in
            let sending = try CLI(), receiving = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay)
            let sent = try sending.run(["transfer", "send", "alice", "--code", Self.wrongCode(for: code), "--relay", server.relay])
            expectCleanFailure(sent, containing: "wrong code")
            let received = receiver.finish()
            #expect(received.status == sent.status)
            #expect(received.stderrText.contains("wrong code"))
            #expect(try keysList(receiving).isEmpty)
            #expect(try !Self.nameplates(server.relay).contains(Self.nameplate(code)))
        }
    }

    @Test func peerThatIsNotSealkitIsRefused() throws {
        try MailboxServer.shared { server in
            let receiving = try CLI()
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay)
            let python = try Self.startPython(["send", server.relay, "--versions", "none"])
            python.write(code + "\n")
            let received = receiver.finish()
            #expect(received.stdoutText.isEmpty)
            #expect(received.stderrText.hasPrefix("sealkit: the other side is not a SealKit key transfer"), "\(received.stderrText)")
            #expect(received.status != 0 && received.status < 126)
            // That peer waits for an answer that never comes: stop it.
            python.send(signal: SIGKILL)
            _ = python.finish()
            #expect(try keysList(receiving).isEmpty)

            // A Python receiver without SealKit's app versions: sealkit send sends nothing.
            let sending = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            let other = try Self.startPython(["receive", server.relay, "--versions", "none"])
            let code2 = try #require(other.readLine())
            let sent = try sending.run(["transfer", "send", "alice", "--code", code2, "--relay", server.relay])
            expectCleanFailure(sent, containing: "not a SealKit key transfer")
            other.send(signal: SIGKILL)
            _ = other.finish()

            // Two senders on one code: the second is told the other side is not receiving.
            let python2 = try Self.startPython(["receive", server.relay, "--versions", "sender"])
            let code3 = try #require(python2.readLine())
            expectCleanFailure(
                try sending.run(["transfer", "send", "alice", "--code", code3, "--relay", server.relay]), containing: "not receiving")
            python2.send(signal: SIGKILL)
            _ = python2.finish()
        }
    }

    @Test func receiverWithADifferentKeyStoresNothingAndTheSenderIsTold() throws {
        try MailboxServer.shared { server in
            let sending = try CLI(), receiving = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            #expect(try sending.run(["keys", "generate", "bob"]).status == 0)
            #expect(try receiving.run(["keys", "generate", "bob"]).status == 0)
            let before = try keysList(receiving)
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay)
            let sent = try sending.run(["transfer", "send", "alice", "bob", "--code", code, "--relay", server.relay])
            expectCleanFailure(sent, containing: "already has a different key")
            #expect(sent.status == 73)
            let received = receiver.finish()
            #expect(received.status == 73 && received.stdoutText.isEmpty, "\(received.stderrText)")
            #expect(try keysList(receiving) == before, "alice was not stored either")
        }
    }

    @Test func nobodyJoiningTimesOut() throws {
        try MailboxServer.with { server in
            let receiving = try CLI()
            let started = Date()
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay, ["--timeout", "2"])
            let result = receiver.finish()
            #expect(Date().timeIntervalSince(started) < 15)
            #expect(result.status == 75, "\(result.stderrText)")
            #expect(result.stdoutText.isEmpty)
            #expect(result.stderrText.hasPrefix("sealkit: nobody completed the transfer within 2 seconds"))
            #expect(result.stderrText.split(separator: "\n").count == 1)
            #expect(try !Self.nameplates(server.relay).contains(Self.nameplate(code)), "the nameplate is released")
        }
    }

    @Test func unreachableRelayNamesTheRelayAndTheOption() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let relay = "ws://127.0.0.1:\(try Loopback.freePort())/v1"
        let received = try cli.run(["transfer", "receive", "--format", "text", "--relay", relay])
        expectCleanFailure(received, containing: relay)
        #expect(received.stderr.contains("--relay"))
        #expect(received.status == 69)
        let sent = try cli.run(["transfer", "send", "u", "--code", "7-adroitness-aardvark", "--relay", relay])
        expectCleanFailure(sent, containing: relay)
        #expect(sent.stderr.contains("--relay"))
        expectCleanFailure(try cli.run(["transfer", "send", "u", "--code", "7-adroitness-aardvark", "--relay", "http://x"]), containing: "ws://")
        expectCleanFailure(try cli.run(["transfer", "send", "u", "--code", "seven"]), containing: "code")
    }

    @Test func interruptedSenderReleasesTheNameplateItClaimed() throws {
        try MailboxServer.with { server in
            let sending = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            // A bare client holds nameplate 9876 as a receiver would (a sender refuses a code whose
            // nameplate the relay does not hold), and lets go of it once the sender joined: the sender is
            // then its only claimant, waiting for a receiver.
            let holder = try ChildProcess(
                MailboxServer.python,
                [Repository.root.appendingPathComponent("Scripts/lib/hold_nameplate.py").path, server.relay, TransferOffer.appID, "9876"])
            #expect(holder.readLine() == "held")
            let sender = try ChildProcess(
                CLI.executable.path, ["transfer", "send", "alice", "--code", "9876-adroitness-aardvark", "--relay", server.relay],
                environment: sending.environment)
            #expect(holder.readLine() == "released")
            #expect(holder.finish().status == 0)
            #expect(try Self.nameplates(server.relay).contains("9876"))
            sender.send(signal: SIGINT)
            let result = sender.finish()
            #expect(result.status == 130, "\(result.stderrText)")
            #expect(result.stdout.isEmpty && result.stderrText == "sealkit: interrupted: the transfer was cancelled and its code released\n")
            #expect(try !Self.nameplates(server.relay).contains("9876"))
        }
    }

    /// A sender given the code of a receiver that was cancelled is told so at once, instead of
    /// waiting out --timeout and being told to be quicker.
    @Test func aSenderUsingACancelledReceiversCodeIsToldTheReceiverCancelled() throws {
        try MailboxServer.with { server in
            let receiving = try CLI(), sending = try CLI()
            #expect(try sending.run(["keys", "generate", "alice"]).status == 0)
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay)
            receiver.send(signal: SIGINT)
            #expect(receiver.finish().status == 130)
            let started = ContinuousClock.now
            let sent = try sending.run(["transfer", "send", "alice", "--code", code, "--relay", server.relay, "--timeout", "60"])
            let elapsed = ContinuousClock.now - started
            expectCleanFailure(sent, containing: "the receiver cancelled")
            #expect(sent.status == 1, "the other side's doing, as a decline: \(sent.status)")
            #expect(!sent.stderr.contains("sooner") && !sent.stderr.contains(code), "\(sent.stderr)")
            #expect(elapsed < .seconds(20), "waited \(elapsed) instead of saying so")
            // It leaves nothing behind on the relay.
            #expect(try !Self.nameplates(server.relay).contains(Self.nameplate(code)))
        }
    }

    @Test func interruptReleasesTheNameplateAndStoresNothing() throws {
        try MailboxServer.with { server in
            let receiving = try CLI()
            let (receiver, code) = try Self.startReceiver(receiving, relay: server.relay)
            let nameplate = Self.nameplate(code)
            // While it waits, the relay holds the nameplate (so the check below can fail).
            #expect(try Self.nameplates(server.relay).contains(nameplate))
            receiver.send(signal: SIGINT)
            let result = receiver.finish()
            #expect(result.status == 130, "\(result.stderrText)")
            #expect(result.stdoutText.isEmpty)
            #expect(result.stderrText == "sealkit: interrupted: the transfer was cancelled and its code released\n")
            #expect(try !Self.nameplates(server.relay).contains(nameplate))
            #expect(try keysList(receiving).isEmpty)
        }
    }
}
