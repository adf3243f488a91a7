// Moving keys with no network between the devices: an offer goes one way and a reply the other, as text or
// QR codes; the code is said aloud or typed, never shown with the offer.
import SealKitTransfer

// The new device: show the offer, tell the code apart, then take the reply as it is pasted or scanned.
func receiveOffline(replyLines: () -> String?, into keystore: Keystore) throws -> [KeyHistory] {
    let receiver = OfflineKeyReceiver()
    print("Show the other device: \(receiver.offer)")
    print("Tell it this code: \(receiver.code.text)")
    var assembler = ReplyAssembler()
    while let line = replyLines() {
        // A reply too long for one QR code comes in numbered parts, in any order.
        if line.hasPrefix(ReplyAssembler.partPrefix) || line.hasPrefix(ReplyAssembler.replyPrefix) {
            guard let reply = try assembler.add(line) else {
                print("still missing parts \(assembler.missingParts)")
                continue
            }
            // A damaged paste is found without using the offer up, so the person can paste again.
            if receiver.mayBeIncomplete(reply) { continue }
            try receiver.check(reply)
            // One try: a wrong code ends the transfer, so an attacker gets one guess.
            let keys = try receiver.accept(reply)
            try keystore.importKeys(keys, passphrase: nil)
            return keys
        }
    }
    throw assembler.incompleteError
}

// The old device: the offer it was shown and the code it was told.
func replyOffline(offerText: String, typedCode: String, user: KeyID, from keystore: Keystore) throws -> [String] {
    guard offerText.hasPrefix(OfflineOffer.prefix) else { return [] }
    let offer = try OfflineOffer(offerText)
    let keys = try keystore.exportKeys([user], passphrase: nil)
    // What the person is about to send, to compare with the new device's screen once it stored the keys.
    for shown in keys { print("\(shown.id) \(shown.fingerprint), \(shown.keyCount) keys") }
    // The reply expires: a photo of it found later opens nothing.
    return try offer.reply(sending: keys, code: try TransferCode(typedCode), expiresIn: KeyTransfer.defaultReplyLifetime)
}

// The network sender, when the person scanned the receiver's QR code: the link holds the code and the relay.
func sendThroughScannedLink(_ scanned: String, keys: [KeyHistory]) async throws {
    guard scanned.hasPrefix(TransferLink.scheme) else { return }
    let link = try TransferLink(parsing: scanned)
    let sender = try await KeySender(code: link.code, relay: link.mailboxRelay ?? .public)
    do {
        try await sender.send(keys)
    } catch {
        // Once the keys went out, the receiver may have stored them even if its answer never came.
        if await sender.hasSentKeys { print("the keys were sent; check the other device") }
        throw error
    }
}
