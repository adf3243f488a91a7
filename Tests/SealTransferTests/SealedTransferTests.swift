import Foundation
import SealCore
import SealKeystore
import Testing

@testable import SealTransfer

/// Keys as a keystore would hand them out, with a retired key when `retired` is set.
func history(_ id: String, retired: Bool = false) throws -> KeyHistory {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    var versions = [KeyHistory.Version(key: .generate(), created: now, retired: nil)]
    if retired {
        versions.append(.init(key: .generate(), created: now - 86_400, retired: now))
    }
    return try KeyHistory(id: KeyID(id), versions: versions)
}

func expectSameKeys(_ a: [KeyHistory], _ b: [KeyHistory], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(a.map(\.id) == b.map(\.id), sourceLocation: sourceLocation)
    for (x, y) in zip(a, b) {
        #expect(x.versions.count == y.versions.count, sourceLocation: sourceLocation)
        for (v, w) in zip(x.versions, y.versions) {
            #expect(v.key == w.key && v.created == w.created && v.retired == w.retired, sourceLocation: sourceLocation)
        }
    }
}

@Suite("Sealed transfer: offer and reply")
struct SealedTransferTests {
    @Test func roundTripCarriesWholeRings() throws {
        let receiver = TransferReceiver()
        #expect(receiver.offer.text.hasPrefix("sealkit-offer-v1:"))
        #expect(receiver.offer.text.count == "sealkit-offer-v1:".count + 86)
        let offer = try TransferOffer(receiver.offer.text)
        #expect(offer.verificationCode == receiver.offer.verificationCode)
        #expect(offer.verificationCode.wholeMatch(of: /[0-9]{3}-[0-9]{3}/) != nil)

        let keys = [try history("alice@example.com", retired: true), try history("bob")]
        let now = Date()
        let lines = try offer.reply(sending: keys, now: now)
        #expect(lines.count == 1 && lines[0].hasPrefix("sealkit-reply-v1:"))
        let reply = try receiver.accept(lines[0], now: now)
        expectSameKeys(reply.keys, keys)
        #expect(reply.expires.timeIntervalSince(reply.created) == 600)
    }

    @Test func replyIsUnreadableWithoutTheReceiver() throws {
        let receiver = TransferReceiver()
        let key = try history("u")
        let line = try TransferOffer(receiver.offer.text).reply(sending: [key])[0]
        let base64 = Base64.encode(key.current.storage.withUnsafeBytes(Array.init))
        #expect(!line.contains(base64))
        #expect(!line.contains(TransferText.encode(key.current.storage.withUnsafeBytes(Array.init))))
    }

    @Test func foreignReplyIsRefused() throws {
        let intended = TransferReceiver(), other = TransferReceiver()
        let line = try TransferOffer(intended.offer.text).reply(sending: [try history("u")])[0]
        #expect(throws: TransferError.sealedForAnotherReceiver) { try other.accept(line) }
        // The intended receiver still accepts it: the failed attempt elsewhere used nothing up.
        #expect(try intended.accept(line).keys.count == 1)
    }

    @Test func alteredReplyIsRefusedAtEveryPosition() throws {
        let receiver = TransferReceiver()
        let line = try TransferOffer(receiver.offer.text).reply(sending: [try history("u")])[0]
        let prefix = "sealkit-reply-v1:"
        let body = try #require(TransferText.decode(line.dropFirst(prefix.count)))
        // Positions in the recipient tag, the ephemeral key, the tag and the sealed body.
        for position in [0, 7, 8, 20, 39, 40, 60, 100, body.count - 1] {
            var changed = body
            changed[position] ^= 0x01
            let text = prefix + TransferText.encode(changed)
            let expected: TransferError = position < 8 ? .sealedForAnotherReceiver : .altered
            #expect(throws: expected, "byte \(position)") { try receiver.accept(text) }
        }
        #expect(try receiver.accept(line).keys.count == 1)
    }

    @Test func truncatedAndDamagedTextIsRefused() throws {
        let receiver = TransferReceiver()
        let line = try TransferOffer(receiver.offer.text).reply(sending: [try history("u")])[0]
        let body = try #require(TransferText.decode(line.dropFirst("sealkit-reply-v1:".count)))
        #expect(throws: TransferError.altered) { try receiver.accept("sealkit-reply-v1:" + TransferText.encode(Array(body.dropLast(3)))) }
        #expect(throws: TransferError.malformed(.reply, reason: "not base64url after the prefix")) {
            try receiver.accept(String(line.dropLast()) + "+")
        }
        #expect(throws: TransferError.malformed(.reply, reason: "truncated")) { try receiver.accept("sealkit-reply-v1:AAAA") }
        #expect(throws: TransferError.malformed(.reply, reason: "not base64url after the prefix")) {
            try receiver.accept(line + "=")
        }
        #expect(throws: TransferError.notTransferText(expected: .reply)) { try receiver.accept("hello") }
        #expect(throws: TransferError.unsupportedVersion(.reply, version: "v2")) {
            try receiver.accept("sealkit-reply-v2:" + line.dropFirst("sealkit-reply-v1:".count))
        }
        #expect(throws: TransferError.wrongKind(found: .offer, expected: .reply)) { try receiver.accept(receiver.offer.text) }
    }

    @Test func replyMadeWithoutSeeingTheOfferIsRefused() throws {
        let receiver = TransferReceiver()
        // Someone who knows only the public key (not the one-time secret) seals keys to it.
        let guessed = TransferOffer(publicKey: receiver.offer.publicKey, secret: SecureBytes(copying: SecureRandom.bytes(count: 32)))
        let line = try guessed.reply(sending: [try history("intruder")])[0]
        #expect(throws: TransferError.offerNotSeen) { try receiver.accept(line) }
    }

    @Test func replayedReplyAndSecondReplyAreRefused() throws {
        let receiver = TransferReceiver()
        let offer = try TransferOffer(receiver.offer.text)
        let first = try offer.reply(sending: [try history("u")])[0]
        let second = try offer.reply(sending: [try history("v")])[0]
        _ = try receiver.accept(first)
        #expect(throws: TransferError.replayed) { try receiver.accept(first) }
        #expect(throws: TransferError.offerUsed) { try receiver.accept(second) }
    }

    @Test func expiryIsEnforcedWithClockSkew() throws {
        let receiver = TransferReceiver()
        let offer = try TransferOffer(receiver.offer.text)
        let made = Date(timeIntervalSince1970: 1_800_000_000)
        let line = try offer.reply(sending: [try history("u")], expiresIn: 60, now: made)
        let expiry = made + 60
        #expect(throws: TransferError.expired(at: expiry, now: expiry + 121)) { try receiver.accept(line[0], now: expiry + 121) }
        #expect(throws: TransferError.madeInTheFuture(made)) { try receiver.accept(line[0], now: made - 121) }
        // Within the allowed skew on either side, it is accepted.
        #expect(try receiver.accept(line[0], now: expiry + 119).keys.count == 1)

        let fresh = TransferReceiver()
        let week = try TransferOffer(fresh.offer.text).sealReply(
            sending: [try history("u")], created: 1_800_000_000, expires: 1_800_000_000 + 7 * 86_400)
        #expect(throws: TransferError.expiresTooLate(made + 7 * 86_400)) { try fresh.accept(week[0], now: made) }
        let backwards = try TransferOffer(fresh.offer.text).sealReply(
            sending: [try history("u")], created: 1_800_000_000, expires: 1_800_000_000)
        #expect(throws: TransferError.malformed(.reply, reason: "it expires before it was made")) {
            try fresh.accept(backwards[0], now: made)
        }
        #expect(throws: TransferError.badLifetime(seconds: 86_401)) {
            try offer.reply(sending: [try history("u")], expiresIn: 86_401)
        }
        #expect(throws: TransferError.badLifetime(seconds: 0)) { try offer.reply(sending: [try history("u")], expiresIn: 0) }
        #expect(throws: TransferError.nothingToSend) { try offer.reply(sending: []) }
    }

    @Test func badOffersAreRefused() throws {
        #expect(throws: TransferError.notTransferText(expected: .offer)) { try TransferOffer("sealkit-offer:abc") }
        #expect(throws: TransferError.malformed(.offer, reason: "it holds 3 bytes, an offer holds 64")) {
            try TransferOffer("sealkit-offer-v1:AAAA")
        }
        #expect(throws: TransferError.unsupportedVersion(.offer, version: "v9")) { try TransferOffer("sealkit-offer-v9:AAAA") }
        let text = TransferReceiver().offer.text
        #expect(try TransferOffer("  " + text + "\r\n").text == text)
        #expect(!String(describing: try TransferOffer(text)).contains(text.dropFirst(17).prefix(20)))
    }

    @Test func manyKeysTravelInPartsAcceptedInAnyOrder() throws {
        let receiver = TransferReceiver()
        let keys = try (0..<40).map { try history("user-\($0)@example.com", retired: $0 % 3 == 0) }
        let lines = try TransferOffer(receiver.offer.text).reply(sending: keys)
        #expect(lines.count > 2)
        #expect(lines.allSatisfy { $0.count <= TransferParts.maximumLineLength && $0.hasPrefix("sealkit-part-v1:") })
        let joined = try TransferParts.join(lines.reversed())
        expectSameKeys(try receiver.accept(joined).keys, keys)
    }
}

@Suite("Keystore import of transferred keys")
struct KeyImportTests {
    @Test func storeAllChecksEveryIDBeforeWriting() throws {
        let keystore = InMemoryKeystore()
        let existing = try history("b")
        try keystore.store(existing.current, as: existing.id, mode: .import, passphrase: nil)
        let incoming = [try history("a"), try history("b"), try history("c")]
        #expect(throws: KeystoreError.conflictingKey(try KeyID("b"))) { try keystore.storeAll(incoming, passphrase: nil) }
        #expect(try keystore.entries().map(\.id.rawValue) == ["b"])

        let fine = [try history("a", retired: true), existing]
        #expect(try keystore.storeAll(fine, passphrase: nil) == [.stored, .unchanged])
        expectSameKeys([try keystore.history(for: KeyID("a"), passphrase: nil)], [fine[0]])
    }

    @Test func identicalCurrentKeyAddsMissingRetiredKeys() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-transfer-\(UUID())").path
        let keystore = FileKeystore(root: folder)
        let full = try history("u", retired: true)
        try keystore.store(full.current, as: full.id, mode: .import, passphrase: nil)
        #expect(try keystore.store(full, passphrase: nil) == .stored)
        #expect(try keystore.store(full, passphrase: nil) == .unchanged)
        let stored = try keystore.history(for: full.id, passphrase: nil)
        #expect(stored.versions.map(\.key) == full.versions.map(\.key))
        #expect(stored.versions[1].retired == full.versions[1].retired)
    }
}
