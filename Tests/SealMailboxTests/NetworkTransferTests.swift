import Foundation
import SealCore
import SealKeystore
import SealTestSupport
import Testing

@testable import SealMailbox
@testable import SealTransfer

/// Keys as a keystore hands them out: `retired` older keys behind the current one.
func history(_ id: String, retired: Int = 0) throws -> KeyHistory {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    var versions = [KeyHistory.Version(key: .generate(), created: now, retired: nil)]
    for index in 0..<retired {
        let at = now - Double(86_400 * (index + 1))
        versions.append(.init(key: .generate(), created: at - 86_400, retired: at))
    }
    return try KeyHistory(id: KeyID(id), versions: versions)
}

@Suite("NetworkTransfer in-process through magic-wormhole's mailbox server")
struct NetworkTransferTests {
    /// Runs a receiver here and a sender on another thread; returns what the receiver got.
    func transfer(_ keys: [KeyHistory], relay: String) throws -> [KeyHistory] {
        let relay = try RelayURL(relay)
        let receiver = try NetworkKeyReceiver(relay: relay, timeout: 30)
        let code = try WormholeCode(parsing: receiver.code.revealedText)
        let outcome = Locked<Result<Void, Error>?>(nil)
        let thread = Thread {
            outcome.set(Result { try NetworkKeySender(relay: relay, code: code, timeout: 30).send(keys) })
        }
        thread.start()
        let received = try receiver.receiveKeys()
        receiver.answer(.stored)
        while outcome.get() == nil { usleep(1000) }
        try outcome.get()!.get()
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
            // Issue 24: and what a 32 KiB reader (wormhole-william's) takes, with the server's envelope
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
        let message = try NetworkTransfer.keysMessages([try history("u", retired: 1)])[0]
        let bytes = message.withUnsafeBytes { Array($0) }
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

    @Test func manyIDsWithRetiredKeysTravelInSeveralMessages() throws {
        try MailboxServer.shared { server in
            var keys = try (0..<1500).map { try history("user-\($0)@example.com") }
            keys.append(try history("rotated", retired: 200))
            #expect(try NetworkTransfer.keysMessages(keys).count >= 2)
            let received = try transfer(keys, relay: server.relay)
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
        #expect(try NetworkTransfer.defaultRelay(environment: [:]) == RelayURL.publicRelay)
        #expect(try NetworkTransfer.defaultRelay(environment: ["SEALKIT_RELAY": "ws://10.0.0.1:9/v1"]).port == 9)
    }

    @Test func receiverAnswersRoundTrip() throws {
        for answer in [ReceiverAnswer.stored, .refused(.declined), .refused(.conflict), .refused(.failed), .refused(.cancelled)] {
            #expect(try NetworkTransfer.readAnswer(SecureBytes(copying: NetworkTransfer.answer(answer))) == answer)
        }
        #expect(throws: MailboxError.self) { try NetworkTransfer.readAnswer(SecureBytes(copying: Array("yes".utf8))) }
        #expect(throws: MailboxError.self) { try NetworkTransfer.readAnswer(nil) }
    }
}

/// A value one thread sets and another reads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ new: Value) { lock.withLock { value = new } }
    func get() -> Value { lock.withLock { value } }
}
