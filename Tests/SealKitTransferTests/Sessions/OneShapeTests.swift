import Foundation
import SealKitTransfer
import SealTestSupport
import Testing

/// A relay is a value checked when it is made, and both receivers give the keys as `KeyHistory`: through the
/// public API alone, as an app uses it.
@Suite("SealKitTransfer: one shape per operation")
struct OneShapeTests {
    @Test func aRelayIsCheckedWhenMadeAndWrittenAsTheURLTheTransferUses() throws {
        #expect(Relay.public.description == "ws://relay.magic-wormhole.io:4000/v1")
        #expect(try Relay("ws://relay.example:4000") == Relay("ws://relay.example:4000/v1"), "no path is the mailbox endpoint")
        #expect(try Relay("ws://[::1]:4000/custom").description == "ws://[::1]:4000/custom")
        for address in ["http://relay.example:4000/v1", "wss://relay.example/v1", "ws://", "ws://relay.example:0/v1",
                        "ws://relay.example:70000", "ws://relay .example", "ws://relay\u{1B}[31m.example", ""] {
            let error = #expect(throws: SealKitError.self, "\(address)") { try Relay(address) }
            #expect(error?.reason == .invalidArgument)
            #expect(error?.description.contains("\u{1B}") == false)
        }
        // A scanned link names its relay as the sender takes it.
        let link = try TransferLink(parsing: "sealkit-transfer:7-guitarist-revenge?rendezvous=ws%3A%2F%2F127.0.0.1%3A4000")
        #expect(link.mailboxRelay == (try Relay("ws://127.0.0.1:4000/v1")))
        #expect(try TransferLink(parsing: "sealkit-transfer:7-guitarist-revenge").mailboxRelay == nil)
    }

    /// The network receiver gives what the offline one gives: whole histories (retired keys included) that a
    /// keystore imports as they are, and that show no key.
    @Test(.requires(.mailboxServer), .timeLimit(.minutes(2))) func theNetworkReceiverGivesKeyHistoriesAsTheOfflineOneDoes() async throws {
        try await MailboxServer.sharedAsync { address in
            let relay = try Relay(address)
            let keys = [try history("alice", retired: 2), try history("bob")]
            let receiver = try await KeyReceiver(relay: relay, timeout: .seconds(30))
            #expect(receiver.mailboxRelay == relay)
            let sender = try await KeySender(code: receiver.code, relay: receiver.mailboxRelay, timeout: .seconds(30))
            let sent = Task { try await sender.send(keys) }
            let received: [KeyHistory] = try await receiver.receiveKeys()
            expectSameKeys(received, keys)
            #expect(received.map(\.keyCount) == [3, 1])
            #expect(received.map(\.fingerprint) == keys.map(\.fingerprint))
            // An app may store them itself, as it does an offline reply; here the receiver stores and tells the sender.
            let keystore = try Keystore.inMemory()
            let (imported, told) = try await receiver.store(into: keystore, passphrase: nil)
            #expect(imported == Set(keys.map(\.id)) && told)
            try await sent.value
            #expect(try keystore.exportKeys(keys.map(\.id), passphrase: nil).map(\.keyCount) == [3, 1])
        }
    }

    @Test(.requires(.mailboxServer), .timeLimit(.minutes(2))) func theOneCallReceiveShowsAndReturnsKeyHistories() async throws {
        try await MailboxServer.sharedAsync { address in
            let keys = [try history("carol", retired: 1)]
            let keystore = try Keystore.inMemory()
            let receiver = try await KeyReceiver(relay: try Relay(address), timeout: .seconds(30))
            let received = Task {
                try await receiver.receive(into: keystore) { (shown: [KeyHistory]) in
                    shown.map(\.keyCount) == [2]
                }
            }
            let sender = try await KeySender(code: receiver.code, relay: try Relay(address), timeout: .seconds(30))
            try await sender.send(keys)
            let stored: [KeyHistory] = try await received.value
            expectSameKeys(stored, keys)
            #expect(try keystore.entry(for: KeyID("carol"))?.versions.count == 2)
        }
    }
}
