import Foundation
import SealKit
import SealTestSupport
import Testing

// @testable: the mailbox's state machines and messages are the module's internals, tested here one by one.
@testable import SealKitTransfer

@Suite("Mailbox server messages, relay addresses and the small state machines")
struct MailboxProtocolTests {
    func parse(_ text: String) throws(MailboxError) -> ServerMessage { try ServerMessage(parsing: Array(text.utf8)) }

    @Test func readsWhatMagicWormholesServerSends() throws {
        #expect(try parse(#"{"type": "welcome", "welcome": {"motd": "hi"}, "server_tx": 1.5}"#) == .welcome(motd: "hi", error: nil))
        #expect(try parse(#"{"type": "welcome", "welcome": {"error": "go away"}}"#) == .welcome(motd: nil, error: "go away"))
        #expect(try parse(#"{"id": "c34d", "type": "ack", "server_tx": 1}"#) == .ack)
        #expect(try parse(#"{"type": "allocated", "nameplate": "42"}"#) == .allocated(nameplate: "42"))
        #expect(try parse(#"{"type": "claimed", "mailbox": "tq2ntcs7jx3wm"}"#) == .claimed(mailbox: "tq2ntcs7jx3wm"))
        #expect(try parse(#"{"type": "message", "side": "0a1b", "phase": "pake", "body": "7b7d", "id": "1", "server_rx": 2}"#)
            == .message(side: "0a1b", phase: "pake", body: Array("{}".utf8)))
        // The sender asks for the list of nameplates to tell a cancelled receiver's code.
        #expect(try parse(#"{"type": "nameplates", "nameplates": [{"id": "3"}, {"id": "12"}]}"#) == .nameplates(["3", "12"]))
        #expect(try parse(#"{"type": "nameplates", "nameplates": [{"id": 3}, "x"]}"#) == .nameplates([]))
        #expect(try parse(#"{"type": "error", "error": "crowded", "orig": {}}"#) == .error("crowded"))
        #expect(try parse(#"{"type": "released"}"#) == .released)
        #expect(try parse(#"{"type": "closed"}"#) == .closed)
        #expect(try parse(#"{"type": "something-new", "x": 1}"#) == .unknown("something-new"))
    }

    @Test func refusesWhatIsNotAServerMessage() {
        for text in [
            "", "[]", "null", #"{"type": 1}"#, #"{"no": "type"}"#, #"{"type": "allocated"}"#,
            #"{"type": "allocated", "nameplate": "x7"}"#, #"{"type": "allocated", "nameplate": "12345678901"}"#,
            #"{"type": "message", "side": "a", "phase": "0", "body": "abc"}"#,
            #"{"type": "message", "side": "a", "phase": "0", "body": "zz"}"#, #"{"type": "message", "side": "a", "body": ""}"#,
            #"{"type": "claimed", "mailbox": ""}"#, #"{"type": "welcome"}"#, #"{"type": "welcome", "type": "ack"}"#,
        ] {
            #expect(throws: MailboxError.self, "\(text)") { try parse(text) }
        }
        let huge = #"{"type": "message", "side": "a", "phase": "0", "body": ""# + String(repeating: "00", count: 200_000) + #""}"#
        #expect(throws: MailboxError.messageTooLarge(limit: ServerMessage.maximumBytes)) { try parse(huge) }
    }

    @Test func errorsFromTheServerAreOneSafeLine() throws {
        let message = try parse(#"{"type": "error", "error": "bad\nthing\u001b[31m", "orig": {}}"#)
        guard case .error(let text) = message else { Issue.record("not an error: \(message)"); return }
        #expect(!text.contains("\n") && !text.contains("\u{1b}"))
        #expect(!MailboxError.server(text).description.contains("\n"))
    }

    @Test func clientMessagesAreWhatTheServerExpects() throws {
        let add = try JSONValue.parse(ClientMessage.add(phase: "pake", body: [0xAB, 0x01]).text(id: "00ff"))
        #expect(add["type"] == "add" && add["phase"] == "pake" && add["body"] == "ab01" && add["id"] == "00ff")
        let bind = try JSONValue.parse(ClientMessage.bind(appID: "sealkit/key-transfer/v1", side: "0a1b2c3d4e", clientVersion: "1").text(id: "1"))
        #expect(bind["appid"] == "sealkit/key-transfer/v1" && bind["side"] == "0a1b2c3d4e")
        #expect(bind["client_version"] == ["sealkit", "1"])
        let close = try JSONValue.parse(ClientMessage.close(mailbox: "m", mood: "scary").text(id: "1"))
        #expect(close["mood"] == "scary" && close["mailbox"] == "m")
    }

    @Test func relayAddresses() throws {
        #expect(try RelayURL("ws://relay.magic-wormhole.io:4000/v1") == RelayURL.publicRelay)
        let local = try RelayURL("ws://127.0.0.1:4455/v1")
        #expect(local.host == "127.0.0.1" && local.port == 4455 && local.path == "/v1" && local.description == "ws://127.0.0.1:4455/v1")
        let plain = try RelayURL("ws://example.org")
        #expect(plain.port == 80 && plain.path == "/" && plain.hostHeader == "example.org")
        let six = try RelayURL("ws://[::1]:4000/v1")
        #expect(six.host == "::1" && six.port == 4000 && six.hostHeader == "[::1]:4000")
        for bad in ["", "http://x", "wss://x/v1", "ws://", "ws://:80/", "ws://x:0/", "ws://x:70000/", "ws://x:y/", "ws://a b/", "ws://[::1/"] {
            #expect(throws: MailboxError.self, "\(bad)") { try RelayURL(bad) }
        }
    }

    @Test func nameplateIsReleasedOnceAndOnlyWhenHeld() {
        var nameplate = NameplateMachine()
        let result1 = nameplate.release()
        #expect(result1 == nil && nameplate.isSettled, "nothing held, nothing to release")
        nameplate = NameplateMachine()
        let result2 = nameplate.claim("7")
        #expect(result2 == .claim(nameplate: "7"))
        let result3 = nameplate.claim("8")
        #expect(result3 == nil, "one nameplate per wormhole")
        let result4 = nameplate.gotClaimed()
        #expect(result4)
        #expect(!nameplate.isSettled && nameplate.held == "7")
        let result5 = nameplate.release()
        #expect(result5 == .release(nameplate: "7"))
        let result6 = nameplate.release()
        #expect(result6 == nil, "released once")
        let late = nameplate.gotClaimed()
        #expect(!late, "a late confirmation changes nothing")
        nameplate.gotReleased()
        #expect(nameplate.isSettled && nameplate.held == nil)
    }

    @Test func mailboxClosesOnceWithItsMood() {
        var mailbox = MailboxMachine()
        let result7 = mailbox.open("m1")
        #expect(result7 == .open(mailbox: "m1"))
        let result8 = mailbox.open("m2")
        #expect(result8 == nil)
        let result9 = mailbox.close(mood: .scary)
        #expect(result9 == .close(mailbox: "m1", mood: "scary"))
        let result10 = mailbox.close(mood: .happy)
        #expect(result10 == nil)
        #expect(!mailbox.isSettled)
        mailbox.gotClosed()
        #expect(mailbox.isSettled)
    }

    @Test func orderHoldsEverythingUntilThePAKEAndDropsRepeats() {
        var order = OrderMachine()
        let version = PeerMessage(side: "b", phase: "version", body: [1])
        let zero = PeerMessage(side: "b", phase: "0", body: [2])
        let pake = PeerMessage(side: "b", phase: "pake", body: [3])
        let result11 = order.receive(version)
        #expect(result11 == .deliver([]))
        let result12 = order.receive(zero)
        #expect(result12 == .deliver([]))
        let result13 = order.receive(version)
        #expect(result13 == .deliver([]), "a replayed phase is dropped")
        let result14 = order.receive(pake)
        #expect(result14 == .deliver([pake, version, zero]))
        let result15 = order.receive(pake)
        #expect(result15 == .deliver([]))
        let one = PeerMessage(side: "b", phase: "1", body: [4])
        let result16 = order.receive(one)
        #expect(result16 == .deliver([one]))

        var flooded = OrderMachine()
        var outcome = OrderMachine.Outcome.deliver([])
        for index in 0..<100 where outcome != .overflow {
            let next = flooded.receive(PeerMessage(side: "b", phase: "x\(index)", body: [UInt8](repeating: 0, count: 100_000)))
            outcome = next
        }
        #expect(outcome == .overflow, "what waits for the PAKE is bounded")

        // Empty bodies count too, by message and by side and phase bytes.
        var empties = OrderMachine()
        var count = 0
        outcome = .deliver([])
        while outcome != .overflow, count < 100_000 {
            outcome = empties.receive(PeerMessage(side: "b", phase: "p\(count)", body: []))
            count += 1
        }
        #expect(outcome == .overflow && count == OrderMachine.maximumStashedMessages + 1)
        var longNames = OrderMachine()
        outcome = .deliver([])
        count = 0
        while outcome != .overflow, count < 64 {
            outcome = longNames.receive(PeerMessage(side: "b", phase: String(repeating: "p", count: 100_000) + "\(count)", body: []))
            count += 1
        }
        #expect(outcome == .overflow && count < 64, "phase bytes count")
    }

    /// The transport's inbox is bounded too; past the bound it ends with `.flooded`.
    @Test func theTransportInboxIsBounded() async {
        let inbox = TransportInbox()
        for _ in 0..<(TransportInbox.maximumQueuedEvents + 100) { inbox.push(.text([0x7B, 0x7D])) }
        var events: [TransportEvent] = []
        while let event = await inbox.next(before: .now) { events.append(event) }
        #expect(events.count == TransportInbox.maximumQueuedEvents + 1)
        #expect(events.last == .flooded)
        inbox.push(.text([1]))
        #expect(await inbox.next(before: .now) == nil, "nothing is queued after the flood")
    }

    /// A wait holds no thread and ends in one of three ways: an event, its deadline, or
    /// the waiting task's cancellation (even one that came before the wait began).
    /// (A wait that never ended would hang: the time limit turns that into a failure. How soon a
    /// resumed task runs again depends on the cooperative pool, which the synchronous tests running
    /// beside it hold while their subprocesses run, for minutes under a sanitizer; alone it takes 0.6 s
    /// under ThreadSanitizer.)
    @Test(.timeLimit(.minutes(Sanitizers.active ? 15 : 5))) func anInboxWaitEndsWithAnEventItsDeadlineOrCancellation() async {
        let inbox = TransportInbox()
        let waiting = Task { await inbox.next(before: .now + .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(50))
        inbox.push(.text([1, 2]))
        #expect(await waiting.value == .text([1, 2]))

        let started = ContinuousClock.now
        #expect(await inbox.next(before: .now + .milliseconds(200)) == nil)
        #expect(ContinuousClock.now - started >= .milliseconds(200))

        let cancelled = Task { await inbox.next(before: .now + .seconds(600)) }
        try? await Task.sleep(for: .milliseconds(50))
        cancelled.cancel()
        #expect(await cancelled.value == .interrupted)

        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await inbox.next(before: .now + .seconds(600))
        }
        #expect(await cancelledFirst.value == .interrupted)
        // A late timer of an earlier wait does not end this one.
        let later = Task { await inbox.next(before: .now + .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(300))
        inbox.push(.text([3]))
        #expect(await later.value == .text([3]))
    }

    /// How each of several waits ended.
    actor Ended {
        var events: [Int: TransportEvent?] = [:]
        func record(_ wait: Int, _ event: TransportEvent?) { events[wait] = .some(event) }
    }

    /// Two waits at once (the goodbye's wait, from the task that abandons a transfer, beside the protocol loop's):
    /// each ends, the events going to them in the order they began, and a wait nothing comes for ends at its
    /// deadline. Before, the second wait replaced the first, whose task then waited forever ("next(before:) leaked
    /// its continuation": a sender interrupted with Ctrl-C hung under load).
    @Test func overlappingWaitsEachEnd() async {
        let inbox = TransportInbox()
        let ended = Ended()
        for wait in 1...2 {
            Task {
                let event = await inbox.next(before: .now + .seconds(20))
                await ended.record(wait, event)
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        inbox.push(.text([1]))
        inbox.push(.text([2]))
        // Polled rather than awaited, so that a wait left hanging fails the test instead of holding it.
        let deadline = ContinuousClock.now + .seconds(10)
        while await ended.events.count < 2, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        #expect(await ended.events == [1: .text([1]), 2: .text([2])])

        let waiting = Task { await inbox.next(before: .now + .seconds(20)) }
        try? await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        let short = await inbox.next(before: .now + .milliseconds(300))
        #expect(short == nil && ContinuousClock.now - started < .seconds(10))
        inbox.push(.text([3]))
        #expect(await waiting.value == .text([3]))
    }

    @Test func hexRoundTrips() {
        let bytes = SecureRandom.bytes(count: 64)
        #expect(Hex.decode(Hex.encode(bytes)) == bytes)
        #expect(Hex.decode("ABcd") == [0xAB, 0xCD])
        #expect(Hex.decode("abc") == nil && Hex.decode("gg") == nil)
    }
}
