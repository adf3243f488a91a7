import Foundation
import SealTestSupport
import Testing

/// A relay that lies: garbage, binary and oversized messages, errors with control characters,
/// silence, dropped connections, bad PAKE messages and floods (Scripts/lib/hostile_relay.py).
/// Whatever it sends, `transfer receive` and `transfer send` end with one line on stderr and
/// an exit status from 1 to 125, in bounded time, storing nothing.
@Suite("Network transfer against a hostile relay")
struct HostileRelayTests {
    static let modes = [
        "notjson", "binary", "huge", "deep", "unwelcome", "close", "silent", "servererror", "badnameplate",
        "badpake", "shortpake", "badhex", "missing", "flood", "phases", "dropafteropen",
    ]

    /// Runs `body` with Scripts/lib/hostile_relay.py ready, and a keystore holding key `u`;
    /// the relay is stopped afterwards.
    static func withRelay(_ body: (_ relay: HostileRelay, _ cli: CLI) throws -> Void) throws {
        try HostileRelay.with { relay in
            let cli = try CLI()
            #expect(try cli.run(["keys", "generate", "u"]).status == 0)
            try body(relay, cli)
        }
    }

    /// 100,000 distinct-phase, empty-body messages before any `pake` grew a client to
    /// 746 MB. Now it ends at the stash's bound, names the relay, exits 69, and stays small.
    @Test(.requires(.mailboxServer)) func aFloodOfPhasesBeforeThePAKEEndsTheTransferInBoundedMemory() throws {
        try Self.withRelay { relay, cli in
            for command in [["transfer", "receive", "--format", "text"], ["transfer", "send", "u", "--code", "5-adroitness-aardvark"]] {
                let argv = command + ["--relay", relay.url("phases"), "--timeout", "60"]
                let (result, peakKiB) = try ChildProcess.runMeasuringPeakMemory(CLI.executable.path, argv, environment: cli.environment)
                let stderr = result.stderrText
                #expect(result.status == 69, "\(command[1]): \(stderr)")
                #expect(stderr.contains("relay") && stderr.contains("flooded") && stderr.contains("nothing was stored"), "\(stderr)")
                // No advice SealKit would refuse (RelayURL speaks ws:// only).
                #expect(!stderr.contains("wss://"), "\(stderr)")
                // Under a sanitizer, shadow memory and ASan's quarantine of freed blocks (up to 256 MB) count too;
                // the unbounded client grew past 746 MB without them, so 400 MB still tells the two apart.
                let bound = (Sanitizers.active ? 400 : 64) * 1024
                #expect(peakKiB < bound, "\(command[1]) peaked at \(peakKiB) KiB")
            }
            #expect(try cli.run(["keys", "list"]).stdout.split(separator: "\n").count == 1)
        }
    }

    @Test(.requires(.mailboxServer)) func everyLieEndsInOneLineAndNothingStored() throws {
        try Self.withRelay { relay, cli in
            let before = try cli.run(["keys", "list"]).stdout
            for mode in Self.modes {
                let url = relay.url(mode)
                for command in [["transfer", "receive", "--format", "text"], ["transfer", "send", "u", "--code", "5-adroitness-aardvark"]] {
                    let started = Date()
                    let result = try cli.run(command + ["--relay", url, "--timeout", "3"])
                    let label = "\(mode): \(command[1])"
                    #expect(Date().timeIntervalSince(started) < 20, "\(label) took too long")
                    #expect((1...125).contains(result.status), "\(label): exit \(result.status)")
                    #expect(result.stderr.hasPrefix("sealkit: ") && result.stderr.split(separator: "\n").count == 1, "\(label): \(result.stderr)")
                    #expect(!result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(label): control characters")
                    // stdout holds at most the code, shown before the relay misbehaved.
                    let lines = result.stdout.split(separator: "\n")
                    #expect(lines.count <= 1 && lines.allSatisfy { $0.wholeMatch(of: /5-[a-z]+-[a-z]+/) != nil }, "\(label): \(result.stdout)")
                    #expect(try cli.run(["keys", "list"]).stdout == before, "\(label) changed the keystore")
                }
            }
        }
    }

    /// A relay that sends its welcome and then pings for ever, never reading
    /// (`deaf`), held `transfer receive --timeout 5` past 75 s and `transfer send` past 40 s. Every write
    /// now has the transfer's deadline and a pong is dropped when the socket is full: both end within
    /// the timeout and a few seconds (the test's own clock), with one line and exit 69 or 75.
    @Test(.requires(.mailboxServer)) func aRelayThatStopsReadingEndsBothSidesWithinTheirTimeout() throws {
        try Self.withRelay { relay, cli in
            let timeout = 5
            for command in [["transfer", "receive", "--format", "text"], ["transfer", "send", "u", "--code", "5-adroitness-aardvark"]] {
                let started = ContinuousClock.now
                let outcome = try ChildProcess.run(
                    CLI.executable.path, command + ["--relay", relay.url("deaf"), "--timeout", String(timeout)],
                    environment: cli.environment, timeout: Double(timeout + 30))
                let took = ContinuousClock.now - started
                print("stalled relay, transfer \(command[1]) --timeout \(timeout): exited after \(took)")
                #expect(!outcome.timedOut, "\(command[1]) was still running \(timeout + 30) s later")
                #expect(took < .seconds(timeout + 3), "\(command[1]) took \(took)")
                #expect([69, 75].contains(outcome.status), "\(command[1]): exit \(String(describing: outcome.status)): \(outcome.stderrText)")
                #expect(outcome.stderrText.hasPrefix("sealkit: ") && outcome.stderrText.split(separator: "\n").count == 1, "\(outcome.stderrText)")
            }
        }
    }

    /// The same for the async API (`KeyReceiver` and `KeySender`, run by Tests/SealTransferProbe in a process of
    /// its own, so that nothing else in the test process delays it): it ends by its timeout, and on
    /// Task cancellation within a few seconds, whatever write the relay left stuck. A relay that stalled or
    /// could not be reached is `relayUnavailable` with the advice to choose another relay (the probe prints both).
    @Test(.requires(.mailboxServer)) func theAsyncAPIEndsByItsTimeoutOrCancellationWhenTheRelayStopsReading() throws {
        let probe = CLI.executable.deletingLastPathComponent().appendingPathComponent("SealTransferProbe").path
        try Self.withRelay { relay, cli in
            let timeout = 5
            // (arguments, what bounds it, the outcomes it may end with)
            let runs: [(String, [String], Duration, Set<String>)] = [
                ("receive, timeout", ["receive", relay.url("deaf"), String(timeout)], .seconds(timeout), ["timedOut", "relayUnavailable(chooseAnotherRelay)"]),
                ("send, timeout", ["send", relay.url("deaf"), String(timeout)], .seconds(timeout), ["timedOut", "relayUnavailable(chooseAnotherRelay)"]),
                ("receive, cancelled after 3 s", ["receive", relay.url("deaf"), "600", "3000"], .seconds(3), ["cancelled"]),
                ("send, cancelled after 3 s", ["send", relay.url("deaf"), "600", "3000"], .seconds(3), ["cancelled"]),
                ("send, cancelled after 3 s with the mailbox open", ["send", relay.url("deafafteropen"), "600", "3000"], .seconds(3), ["cancelled"]),
            ]
            for (label, arguments, bound, outcomes) in runs {
                let started = ContinuousClock.now
                let outcome = try ChildProcess.run(probe, arguments, environment: cli.environment, timeout: 60)
                let took = ContinuousClock.now - started
                print("stalled relay, async API \(label): \(outcome.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) after \(took)")
                #expect(!outcome.timedOut, "\(label): still running after 60 s")
                #expect(took < bound + .seconds(3), "\(label) took \(took)")
                let ended = outcome.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(outcome.status == 0 && outcomes.contains(ended), "\(label): \(ended) \(outcome.stderrText)")
            }
        }
    }

    /// The relay drops both connections right after the sender's keys reached the receiver,
    /// so the receiver's answer never reaches the sender. Both tell the truth: the sender that the
    /// receiver may have stored the keys (not "nothing was transferred"), the receiver, which stores
    /// them, that the sender was not told. Exit codes stay (69 and 0).
    @Test(.requires(.mailboxServer)) func aRelayThatDropsAfterTheKeysLeavesBothSidesTellingTheTruth() throws {
        try Self.withRelay { relay, sending in
            let receiving = try CLI()
            let url = relay.url("dropafterkeys")
            let receiver = try ChildProcess(
                CLI.executable.path, ["transfer", "receive", "--format", "text", "--relay", url, "--timeout", "30"],
                environment: receiving.environment, killAfter: nil)
            defer { receiver.kill() }
            let code = try #require(receiver.readLine(timeout: 30), "the receiver showed no code")
            let sent = try ChildProcess.run(
                CLI.executable.path, ["transfer", "send", "u", "--code", code, "--relay", url, "--timeout", "30"],
                environment: sending.environment, timeout: 60)
            let received = receiver.finish(stdin: [], timeout: 60)
            #expect(sent.status == 69, "\(sent.stderrText)")
            #expect(sent.stderrText.contains("the receiver may have stored the keys: check on the receiving device"), "\(sent.stderrText)")
            #expect(!sent.stderrText.contains("nothing was transferred"), "\(sent.stderrText)")
            #expect(received.status == 0, "\(received.stderrText)")
            #expect(received.stderrText.contains("the sender was not told"), "\(received.stderrText)")
            // After the code (taken by readLine above), a line for the key 'u'.
            #expect(("\n" + received.stdoutText).contains("\nu\t"), "\(received.stdoutText)")
            #expect(try receiving.run(["keys", "list"]).stdout.hasPrefix("u"))
        }
    }

    /// Ctrl-C against a relay that stopped reading once the mailbox was open ends within a few
    /// seconds, and says the code was released only when the relay confirmed it: here it could not, so
    /// it says so (exit 130 still).
    @Test(.requires(.mailboxServer)) func ctrlCAgainstARelayThatStopsReadingClaimsNoRelease() throws {
        try Self.withRelay { relay, cli in
            let running = try ChildProcess(
                CLI.executable.path,
                ["transfer", "send", "u", "--code", "5-adroitness-aardvark", "--relay", relay.url("deafafteropen"), "--timeout", "600"],
                environment: cli.environment, killAfter: nil)
            // Long enough for the pongs to fill the socket: the relay reads nothing, ever.
            Thread.sleep(forTimeInterval: 3)
            let interrupted = ContinuousClock.now
            kill(running.pid, SIGINT)
            let outcome = running.finish(stdin: [], timeout: 30)
            let took = ContinuousClock.now - interrupted
            print("stalled relay, transfer send interrupted: exited \(took) after SIGINT")
            #expect(!outcome.timedOut && took < .seconds(4), "took \(took)")
            #expect(outcome.status == 130, "exit \(String(describing: outcome.status)): \(outcome.stderrText)")
            #expect(outcome.stderrText.hasPrefix("sealkit: interrupted: "), "\(outcome.stderrText)")
            #expect(!outcome.stderrText.contains("code released") && !outcome.stderrText.contains("code was released"), "\(outcome.stderrText)")
            #expect(outcome.stderrText.contains("did not confirm the release"), "\(outcome.stderrText)")
        }
    }

    /// Control bytes (ESC ...) in a relay address, from `--relay`, `SEALKIT_RELAY` or a
    /// `sealkit-transfer:` URI's rendezvous (raw or percent-encoded), are refused before anything is sent
    /// (64), and a URI field quoted in a refusal has its control characters escaped: no ESC reaches stderr.
    @Test func controlBytesInARelayNeverReachTheTerminal() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let hostile = "ws://evil\u{1b}]0;pwned\u{7}\u{1b}[2J.example:4000/v1"
        let encoded = "ws%3A%2F%2Fevil%1B%5B2J.example%3A4000"
        let uri = { (fields: String) in "sealkit-transfer:5-adroitness-aardvark?" + fields + "&role=leader" }
        let cases: [(String, [String], [String: String], String)] = [
            ("send --relay", ["transfer", "send", "u", "--code", "5-adroitness-aardvark", "--relay", hostile], [:], "printable ASCII"),
            ("receive --relay", ["transfer", "receive", "--relay", hostile], [:], "printable ASCII"),
            ("SEALKIT_RELAY", ["transfer", "receive"], ["SEALKIT_RELAY": hostile], "SEALKIT_RELAY"),
            ("URI, raw", ["transfer", "send", "u", "--code", uri("version=0&rendezvous=" + hostile)], [:], "its relay"),
            ("URI, percent-encoded", ["transfer", "send", "u", "--code", uri("version=0&rendezvous=" + encoded)], [:], "its relay"),
            ("URI version", ["transfer", "send", "u", "--code", uri("version=%1B%5B2J")], [:], "version '\\u{1b}[2J'"),
        ]
        for (label, arguments, environment, fragment) in cases {
            let result = try cli.run(arguments + ["--timeout", "5"], environment: environment)
            #expect(result.status == 64, "\(label): exit \(result.status): \(result.stderr)")
            expectCleanFailure(result, containing: fragment)
            #expect(!result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }, "\(label): \(result.stderr)")
        }
    }
}
