import Foundation
import SealKit
// @testable: the mailbox's state machines and messages are the module's internals, tested here one by one.
@testable import SealKitTransfer
import SealTestSupport
import Testing


@Suite("NetworkTransfer in-process through magic-wormhole's mailbox server")
struct NetworkTransferTests {
    /// Runs a receiver and a sender as two tasks; returns what the receiver got.
    static func transfer(_ keys: [KeyHistory], relay: String) async throws -> [KeyHistory] {
        let relay = try RelayURL(relay)
        let receiver = try await NetworkKeyReceiver(relay: relay, timeout: 30)
        let code = try WormholeCode(parsing: receiver.code.revealedText)
        let sending = Task { try await NetworkKeySender(relay: relay, code: code, timeout: 30).send(keys) }
        let received = try await receiver.receiveKeys()
        await receiver.answer(.stored)
        try await sending.value
        return received
    }

    @Test func keysMessagesSplitBetweenIDsAndStayUnderTheBound() throws {
        let keys = try (0..<2500).map { try history("user-\($0)@example.com") }
        let messages = try NetworkTransfer.keysMessages(keys)
        #expect(messages.count > 1, "2,500 ids need more than one message")
        var all: [KeyHistory] = []
        for (index, message) in messages.enumerated() {
            #expect(message.count <= NetworkTransfer.maximumPartBytes)
            // Sealed and hex-encoded in an `add` message, it still fits what receivers read.
            #expect((message.count + WormholeKey.sealOverhead) * 2 + 200 < ServerMessage.maximumBytes)
            // And what a 32 KiB reader (wormhole-william's) takes, with the server's envelope
            // (side, phase, ids, timestamps) counted generously.
            #expect((message.count + WormholeKey.sealOverhead) * 2 + 1024 <= NetworkTransfer.interoperableMessageBytes)
            let part = try NetworkTransfer.readKeysMessage(message)
            #expect(part.part == index + 1 && part.parts == messages.count)
            all += part.keys
        }
        #expect(all.map(\.id) == keys.map(\.id))
        #expect(zip(all, keys).allSatisfy { $0.current == $1.current })
    }

    @Test func damagedKeysMessagesAreRefused() throws {
        let message = try #require(try NetworkTransfer.keysMessages([try history("u", retired: 1)]).first)
        let bytes = message.withUnsafeBytes { Array($0) }
        try #require(bytes.count > 12, "a keys message of \(bytes.count) bytes")
        #expect(throws: TransferError.self) { try NetworkTransfer.readKeysMessage(nil) }
        for cut in [1, 4, 7, bytes.count - 1] {
            #expect(throws: TransferError.self, "cut at \(cut)") {
                try NetworkTransfer.readKeysMessage(SecureBytes(copying: Array(bytes[..<cut])))
            }
        }
        var wrongKind = bytes
        wrongKind[0] = 2
        #expect(throws: TransferError.self) { try NetworkTransfer.readKeysMessage(SecureBytes(copying: wrongKind)) }
        var partBeyond = bytes
        partBeyond[2] = 2  // part 2 of 1
        #expect(throws: TransferError.self) { try NetworkTransfer.readKeysMessage(SecureBytes(copying: partBeyond)) }
        var badKey = bytes
        badKey[12] ^= 1  // inside the first key: no longer matches its fingerprint
        #expect(throws: TransferError.self) { try NetworkTransfer.readKeysMessage(SecureBytes(copying: badKey)) }
    }

    @Test(.requires(.mailboxServer)) func manyIDsWithRetiredKeysTravelInSeveralMessages() async throws {
        try await MailboxServer.sharedAsync { relay in
            var keys = try (0..<1500).map { try history("user-\($0)@example.com") }
            keys.append(try history("rotated", retired: 200))
            #expect(try NetworkTransfer.keysMessages(keys).count >= 2)
            let received = try await Self.transfer(keys, relay: relay)
            #expect(received.map(\.id) == keys.map(\.id))
            for (got, sent) in zip(received, keys) {
                #expect(got.versions.count == sent.versions.count)
                #expect(zip(got.versions, sent.versions).allSatisfy { $0.key == $1.key && $0.retired == $1.retired })
            }
        }
    }

    @Test func appVersionsSayWhoIsWho() throws {
        try NetworkTransfer.checkPeer(NetworkTransfer.appVersions(.sender), expecting: .sender)
        #expect(throws: MailboxError.self) { try NetworkTransfer.checkPeer(NetworkTransfer.appVersions(.sender), expecting: .receiver) }
        #expect(throws: MailboxError.self) { try NetworkTransfer.checkPeer([:], expecting: .receiver) }
        #expect(throws: MailboxError.self) {
            try NetworkTransfer.checkPeer(["sealkit": ["protocol": "key-transfer/v2", "role": "receiver"]], expecting: .receiver)
        }
    }

    @Test func receiverAnswersRoundTrip() throws {
        for answer in [ReceiverAnswer.stored, .refused(.declined), .refused(.conflict), .refused(.failed), .refused(.cancelled)] {
            #expect(try NetworkTransfer.readAnswer(SecureBytes(copying: NetworkTransfer.answer(answer))) == answer)
        }
        #expect(throws: MailboxError.self) { try NetworkTransfer.readAnswer(SecureBytes(copying: Array("yes".utf8))) }
        #expect(throws: MailboxError.self) { try NetworkTransfer.readAnswer(nil) }
    }
}

/// The async surface (`KeyReceiver` and `KeySender`, the one engine apps and the command use).
/// Events in order, the store decision answered to the sender, and Task cancellation ending a transfer as Ctrl-C
/// does: at once, with the nameplate released.
@Suite("KeyReceiver and KeySender (async) through magic-wormhole's mailbox server", .requires(.mailboxServer))
struct AsyncTransferTests {
    /// A sender who types the code's number with the wrong words: both sides end with `.wrongCode` and nothing
    /// travels. (A wrong reason planted in `Wormhole` to try the tests was caught by the CLI tests alone, none here.)
    @Test(.requires(.mailboxServer)) func aWrongCodeEndsBothSidesAsAWrongCode() async throws {
        try await MailboxServer.sharedAsync { relayText in
            let relay = try RelayURL(relayText)
            let receiver = try await NetworkKeyReceiver(relay: relay, timeout: 30)
            let right = receiver.code.revealedText
            let words = right.hasSuffix("-guitarist-revenge") ? "vocalist-optic" : "guitarist-revenge"
            let wrong = try WormholeCode(parsing: "\(right.prefix { $0 != "-" })-\(words)")
            let sending = Task { try await NetworkKeySender(relay: relay, code: wrong, timeout: 30).send([try history("alice")]) }
            await #expect(throws: MailboxError.wrongCode) { _ = try await receiver.receiveKeys() }
            await #expect(throws: MailboxError.wrongCode) { try await sending.value }
        }
    }

    /// How `task` failed: nil when it did not, or not with a `SealKitError`.
    static func failure<T: Sendable>(of task: Task<T, any Error>) async -> SealKitError? {
        do {
            _ = try await task.value
            return nil
        } catch {
            return error as? SealKitError
        }
    }

    /// A receiver let go of before its transfer ended finishes its events' streams: a loop over them ends.
    @Test func aReceiverLetGoOfFinishesItsEvents() async throws {
        try await MailboxServer.withAsync { relay in
            var receiver: KeyReceiver? = try await KeyReceiver(relay: try Relay(relay), timeout: .seconds(30))
            let events = try #require(receiver).events()
            let code = try #require(receiver).code
            receiver = nil
            #expect(await Waits.all(events, within: .seconds(10)) == [.codeAllocated(code)])
        }
    }

    /// Every event of both sides, in order, for one transfer; and the store decision answered to the sender.
    @Test func receiveAndSendAreAsyncWithEventsInOrderAndTheStoreDecides() async throws {
        try await MailboxServer.sharedAsync { relay in
            let keys = [try history("alice", retired: 1), try history("bob")]
            let offers = keys.map(KeyOffer.init)
            for decline in [false, true] {
                let keystore = try Keystore.inMemory()
                let receiver = try await KeyReceiver(relay: try Relay(relay), timeout: .seconds(30))
                let receiverEvents = receiver.events()
                let received = Task {
                    try await receiver.receive(into: keystore) { offered in
                        #expect(offered.map(\.id.rawValue) == ["alice", "bob"])
                        return !decline
                    }
                }
                let sender = try await KeySender(code: receiver.code, relay: try Relay(relay), timeout: .seconds(30))
                let senderEvents = sender.events()
                let sent = Task { try await sender.send(keys) }
                if decline {
                    #expect(await Self.failure(of: received)?.reason == .declined)
                    let told = await Self.failure(of: sent)
                    #expect(told?.reason == .declined)
                    #expect(told?.description == ReceiverRefusedError(reason: .declined).description)
                    #expect(try keystore.entry(for: KeyID("alice")) == nil)
                } else {
                    #expect(try await received.value.map(\.id.rawValue) == ["alice", "bob"])
                    try await sent.value
                    #expect(try keystore.exportKeys(keys.map(\.id), passphrase: nil).map(\.current) == keys.map(\.current))
                }
                let outcome: TransferEvent = decline ? .refused(.declined) : .stored
                let seen = await Waits.all(receiverEvents)
                #expect(seen == [.codeAllocated(receiver.code), .peerJoined, .keysOffered(offers), outcome])
                #expect(await Waits.all(senderEvents) == [.peerJoined, .keysOffered(offers), outcome])
                // A subscriber that comes after the end gets every event all the same, and a finished stream.
                #expect(await Waits.all(receiver.events()) == seen)
            }
        }
    }

    /// Step by step, the receiver's refusal is final: once it declined, `store` stores nothing, and the sender
    /// was told once, `.declined`.
    @Test func aReceiverThatDeclinedStoresNothingAfterwards() async throws {
        try await MailboxServer.sharedAsync { relay in
            let keystore = try Keystore.inMemory()
            let receiver = try await KeyReceiver(relay: try Relay(relay), timeout: .seconds(30))
            let sender = try await KeySender(code: receiver.code, relay: try Relay(relay), timeout: .seconds(30))
            let sent = Task { try await sender.send([try history("erin")]) }
            #expect(try await receiver.receiveKeys().map(\.id.rawValue) == ["erin"])
            await receiver.decline()
            await receiver.decline(.failed)
            do {
                _ = try await receiver.store(into: keystore, passphrase: nil)
                Issue.record("keys were stored after the sender was told they were declined")
            } catch {
                #expect((error as? SealKitError)?.reason == .invalidArgument)
            }
            #expect(try keystore.entry(for: KeyID("erin")) == nil)
            #expect(await Self.failure(of: sent)?.description == ReceiverRefusedError(reason: .declined).description)
            #expect(await Waits.all(receiver.events())?.last == .refused(.declined))
        }
    }

    /// Two transfers at once in one process, each its own code, keys and answer: no shared state, no
    /// thread held while they wait.
    @Test func twoTransfersRunConcurrentlyInOneProcess() async throws {
        try await MailboxServer.sharedAsync { relay in
            let first = [try history("first-a"), try history("first-b", retired: 2)]
            let second = [try history("second")]
            try await withThrowingTaskGroup(of: [KeyHistory].self) { group in
                for keys in [first, second] {
                    group.addTask {
                        let keystore = try Keystore.inMemory()
                        let receiver = try await KeyReceiver(relay: try Relay(relay), timeout: .seconds(30))
                        async let received = receiver.receive(into: keystore) { _ in true }
                        try await KeySender(code: receiver.code, relay: try Relay(relay), timeout: .seconds(30)).send(keys)
                        #expect(try await received.map(\.id) == keys.map(\.id))
                        let got = try keystore.exportKeys(keys.map(\.id), passphrase: nil)
                        for (arrived, sent) in zip(got, keys) {
                            #expect(arrived.current == sent.current)
                            #expect(arrived.versions.count == sent.versions.count)
                        }
                        return got
                    }
                }
                var ids: [String] = []
                for try await got in group { ids += got.map(\.id.rawValue) }
                #expect(ids.sorted() == ["first-a", "first-b", "second"])
            }
        }
    }

    /// The sending side as well: cancelling its Task while it waits for the receiver ends it with
    /// `.cancelled` and frees the nameplate it claimed.
    @Test func cancellingASendReleasesTheNameplateItClaimed() async throws {
        try await MailboxServer.withAsync { relayText in
            let code = try TransferCode("9877-adroitness-aardvark")
            // A bare client holds the nameplate as a receiver would (a sender refuses a code whose nameplate
            // the relay does not hold), and lets go of it once the sender joined: the sender is then its only
            // claimant, waiting for a receiver.
            let holder = try ChildProcess(
                MailboxServer.python,
                [Repository.root.appendingPathComponent("Scripts/lib/hold_nameplate.py").path, relayText, TransferOffer.appID, "9877"])
            #expect(await Waits.offThePool { holder.readLine() } == "held")
            let sending = Task {
                try await KeySender(code: code, relay: try Relay(relayText), timeout: .seconds(600)).send([try history("dave")])
            }
            func listed() throws -> Bool { try MailboxServer.nameplatesInUse(relay: relayText, appID: TransferOffer.appID).contains("9877") }
            // The holder says "released" only once the send above has run, which needs a thread of Swift's cooperative
            // pool: in a full run the concurrent tests (as many as cores) keep it busy for minutes, so this waits off
            // the pool and long (it failed at 60 s in every full run, never alone).
            #expect(await Waits.offThePool { holder.readLine(timeout: 300) } == "released")
            #expect(await Waits.offThePool { holder.finish().status } == 0)
            #expect(try listed(), "the sender never claimed its nameplate")
            sending.cancel()
            #expect(await Self.failure(of: sending)?.reason == .cancelled)
            #expect(try !listed())
        }
    }

    /// Cancelling the receiving Task while the app decides (the keys have arrived, the sender waits for
    /// the answer) still answers: the sender hears "cancelled" at once instead of waiting out its timeout,
    /// though swift-nio refuses writes from a cancelled task; and nothing is stored, whatever the app answers.
    @Test func cancellingWhileTheAppDecidesTellsTheSenderItWasCancelled() async throws {
        try await MailboxServer.sharedAsync { relay in
            let keystore = try Keystore.inMemory()
            let receiver = try await KeyReceiver(relay: try Relay(relay), timeout: .seconds(60))
            let (deciding, decidingContinuation) = AsyncStream<Void>.makeStream()
            let receiving = Task {
                try await receiver.receive(into: keystore) { _ in
                    decidingContinuation.yield()
                    try? await Task.sleep(for: .seconds(600))  // the person has not answered yet
                    return true
                }
            }
            let started = ContinuousClock.now
            let sender = try await KeySender(code: receiver.code, relay: try Relay(relay), timeout: .seconds(60))
            let sent = Task { try await sender.send([try history("carol")]) }
            var decidingIterator = deciding.makeAsyncIterator()
            _ = await decidingIterator.next()
            receiving.cancel()
            #expect(await Self.failure(of: receiving)?.reason == .cancelled)
            #expect(await Self.failure(of: sent)?.description == ReceiverRefusedError(reason: .cancelled).description)
            #expect(ContinuousClock.now - started < .seconds(60), "the sender waited out its timeout")
            #expect(try keystore.entry(for: KeyID("carol")) == nil)
        }
    }

    /// Cancelling the receiving Task ends it at once, and the nameplate is free: it is no longer
    /// listed, and two other clients can claim it and meet in a mailbox (a nameplate still held
    /// would turn the second away as crowded).
    @Test func cancellingTheTaskEndsTheReceiveAndReleasesTheNameplate() async throws {
        try await MailboxServer.withAsync { relayText in
            let receiver = try await KeyReceiver(relay: try Relay(relayText), timeout: .seconds(600))
            let receiving = Task { try await receiver.receiveKeys() }
            let code = receiver.code.text
            let nameplate = String(code.prefix { $0 != "-" })
            #expect(try MailboxServer.nameplatesInUse(relay: relayText, appID: TransferOffer.appID).contains(nameplate))
            let started = ContinuousClock.now
            receiving.cancel()
            #expect(await Self.failure(of: receiving)?.reason == .cancelled)
            #expect(ContinuousClock.now - started < .seconds(10), "the receive waited instead of ending")
            #expect(try !MailboxServer.nameplatesInUse(relay: relayText, appID: TransferOffer.appID).contains(nameplate))

            let reused = try WormholeCode(parsing: code)
            let relay = try RelayURL(relayText)
            var claimants: [Wormhole] = []
            for _ in 0..<2 {
                let claimant = try await Wormhole(relay: relay, appID: TransferOffer.appID, appVersions: [:], timeout: 10)
                try await claimant.join(code: reused, requiringReceiver: false)
                claimants.append(claimant)
            }
            for claimant in claimants { await claimant.close(mood: .lonely) }
        }
    }
}

/// The public API an app uses: keystores and key ids in, `SealKitError` reasons out.
@Suite("KeyReceiver and KeySender (public) through magic-wormhole's mailbox server", .requires(.mailboxServer))
struct PublicKeyTransferTests {
    @Test func keysMoveBetweenKeystoresAndARefusalIsTypedOnBothSides() async throws {
        try await MailboxServer.sharedAsync { relay in
            let laptop = try Keystore.inMemory(), phone = try Keystore.inMemory()
            let alice = try KeyID("alice")
            let made = try Vault(keystore: laptop, user: alice, format: .v2).ensureKey(existing: "{}")
            for accept in [false, true] {
                let receiver = try await KeyReceiver(relay: try Relay(relay), timeout: .seconds(30))
                let received = Task {
                    try await receiver.receive(into: phone) { offered in
                        #expect(offered.map(\.fingerprint) == [made.fingerprint])
                        return accept
                    }
                }
                var iterator = receiver.events().makeAsyncIterator()
                guard case .codeAllocated(let code)? = await iterator.next() else {
                    Issue.record("no code")
                    return
                }
                // As a person types it on the other device.
                let sender = try await KeySender(code: try TransferCode(code.text.uppercased()), relay: try Relay(relay), timeout: .seconds(30))
                let sent = Task { try await sender.send(try laptop.exportKeys([alice], passphrase: nil)) }
                if accept {
                    #expect(try await received.value.map(\.id) == [alice])
                    try await sent.value
                    #expect(try phone.entry(for: alice)?.fingerprint == made.fingerprint)
                } else {
                    do {
                        _ = try await received.value
                        Issue.record("declined keys were stored")
                    } catch {
                        #expect((error as? SealKitError)?.reason == .declined)
                    }
                    do {
                        try await sent.value
                        Issue.record("the sender was not told")
                    } catch {
                        #expect((error as? SealKitError)?.reason == .declined)
                    }
                    #expect(try phone.entry(for: alice) == nil)
                }
            }
            // A receiver holding a different key under the id refuses them all, and the sender hears it is a conflict.
            let other = try Keystore.inMemory()
            try Vault(keystore: other, user: alice, format: .v2).ensureKey(existing: "{}")
            let receiver = try await KeyReceiver(relay: try Relay(relay), timeout: .seconds(30))
            let received = Task { try await receiver.receive(into: other) { _ in true } }
            let sender = try await KeySender(code: receiver.code, relay: try Relay(relay), timeout: .seconds(30))
            let sent = Task { try await sender.send(try laptop.exportKeys([alice], passphrase: nil)) }
            #expect(await AsyncTransferTests.failure(of: received)?.reason == .conflictingKey)
            #expect(await AsyncTransferTests.failure(of: sent)?.reason == .conflictingKey)
            #expect(await Waits.all(sender.events())?.last == .refused(.conflict))
            #expect(try other.entry(for: alice)?.fingerprint != made.fingerprint)
            // A code that is not the receiver's kind of code is refused before anything travels.
            do {
                _ = try TransferCode("not a code")
                Issue.record("a malformed code was read")
            } catch {
                #expect((error as? SealKitError)?.reason == .invalidArgument)
            }
        }
    }
}
