import SealKit
import SealKitTransfer

// The examples in the doc comments of package-only API (which Snippets/ cannot reach), line for line as they appear
// there, so that each one compiles: Scripts/check-doc-examples fails on a doc comment's example that is not here or
// in Snippets/. Compiled, never run: they would need a relay and a person.
private enum DocCommentExamples {
    static func show(_ text: String) { print(text) }
    static func tell(_ text: String) { print(text) }
    static func send(_ message: [UInt8]) { print(message.count) }

    // Wormhole
    static func talk(through relay: RelayURL, message: [UInt8]) async throws -> SecureBytes? {
        let wormhole = try await Wormhole(relay: relay, appID: "example/app", appVersions: ["v": 1], timeout: 600)
        let code = try await wormhole.allocateCode()      // show code.revealedText to the person
        let theirs = try await wormhole.waitForPeer()     // their app_versions, once their key is proven
        try await wormhole.send(message); let answer = try await wormhole.receive()
        await wormhole.close(mood: .happy)
        print(code.revealedText, theirs)
        return answer
    }

    // TransferReceiver
    static func receiveOffline(replyText: String, keystore: some KeyStorage) throws {
        let receiver = TransferReceiver(code: .generate())
        show(receiver.offer.text); tell(receiver.code.revealedText)
        let reply = try receiver.accept(replyText)     // joined parts, if it came in parts
        try keystore.storeAll(reply.keys, passphrase: nil)
    }

    // SPAKE2Symmetric
    static func agree(code: [UInt8], received: [UInt8]) throws -> SecureBytes {
        let mine = SPAKE2Symmetric(password: code, identity: Array("sealkit/key-transfer/v1".utf8))
        send(mine.message)
        let secret = try mine.sharedSecret(peerMessage: received)
        return secret
    }
}
