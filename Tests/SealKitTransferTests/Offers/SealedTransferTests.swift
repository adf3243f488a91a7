import Foundation
import SealKitBackup
import SealKit
// @testable: the mailbox's state machines and messages are the module's internals, tested here one by one.
@testable import SealKitTransfer
import SealTestSupport
import Testing


@Suite("Offline transfer v2: offer, code and reply")
struct SealedTransferTests {
    /// A reply for `receiver` made as a sender that typed `code`.
    static func reply(to receiver: TransferReceiver, code: WormholeCode? = nil, _ keys: [KeyHistory]) throws -> String {
        try #require(try TransferOffer(receiver.offer.text).reply(sending: keys, code: code ?? receiver.code).first)
    }

    /// A code with the same nameplate and first word as `code` but another second word.
    static func neighbour(of code: WormholeCode) throws -> WormholeCode {
        let parts = code.revealedText.split(separator: "-")
        try #require(parts.count == 3, "a code of \(parts.count) parts")
        return try WormholeCode(parsing: "\(parts[0])-\(parts[1])-\(parts[2] == "aardvark" ? "absurd" : "aardvark")")
    }

    @Test func roundTripCarriesWholeRings() throws {
        let receiver = TransferReceiver()
        #expect(receiver.offer.text.hasPrefix("sealkit-offer-v2:"))
        // 33 bytes of SPAKE2 message and 4 of check: 50 base64url characters.
        #expect(receiver.offer.text.count == "sealkit-offer-v2:".count + 50)
        let offer = try TransferOffer(receiver.offer.text)
        #expect(offer.message == receiver.offer.message)

        let keys = [try history("alice@example.com", retired: 1), try history("bob")]
        let now = Date()
        let lines = try offer.reply(sending: keys, code: try WormholeCode(parsing: receiver.code.revealedText), now: now)
        try #require(lines.count == 1)
        #expect(lines[0].hasPrefix("sealkit-reply-v2:"))
        let reply = try receiver.accept(lines[0], now: now)
        expectSameKeys(reply.keys, keys)
        #expect(reply.expires.timeIntervalSince(reply.created) == 600)
    }

    @Test func theCodeNeverTravelsAndTheKeyIsNotInTheReply() throws {
        let receiver = TransferReceiver()
        let key = try history("u")
        let line = try Self.reply(to: receiver, [key])
        let material = key.current.storage.withUnsafeBytes(Array.init)
        for text in [line, receiver.offer.text] {
            #expect(!text.contains(Base64.encode(material)))
            #expect(!text.contains(CodeText.encode(material)))
            // The words (the secret part; the nameplate is a number that base64 holds anyway).
            for word in receiver.code.revealedText.split(separator: "-").dropFirst() { #expect(!text.contains(word)) }
        }
        #expect(!"\(receiver.offer)".contains(receiver.code.revealedText))
    }

    @Test func wrongCodeIsRefusedAndEndsTheTransfer() throws {
        let receiver = TransferReceiver()
        let wrong = try Self.reply(to: receiver, code: try Self.neighbour(of: receiver.code), [try history("u")])
        #expect(throws: TransferError.wrongCode) { try receiver.accept(wrong) }
        // One guess per offer: even the right reply is refused now.
        let right = try Self.reply(to: receiver, [try history("u")])
        #expect(throws: TransferError.offerUsed) { try receiver.accept(right) }
    }

    @Test func replyForAnotherOfferIsRefused() throws {
        let intended = TransferReceiver(), other = TransferReceiver()
        // Even with this receiver's code: the SPAKE2 transcript holds the offer it answered.
        let line = try #require(try TransferOffer(other.offer.text).reply(sending: [try history("u")], code: intended.code).first)
        #expect(throws: TransferError.wrongCode) { try intended.accept(line) }
        #expect(throws: TransferError.wrongCode) { try other.accept(line) }
    }

    /// Whoever swaps or reads the offer can neither make a reply the receiver
    /// accepts nor open the sender's reply.
    @Test func swappingOrReadingTheOfferGivesNothing() throws {
        let real = TransferReceiver()
        let key = try history("victim")
        // The attacker hands its own offer to the sender, who types the real receiver's code.
        let attacker = TransferReceiver()
        let reply = try #require(try TransferOffer(attacker.offer.text).reply(sending: [key], code: real.code).first)
        #expect(throws: TransferError.wrongCode) { try attacker.accept(reply) }
        #expect(throws: TransferError.wrongCode) { try real.accept(reply) }

        // An attacker that read the real offer (not the code) and replies itself: one guess, refused.
        let fresh = TransferReceiver()
        let forged = try #require(try TransferOffer(fresh.offer.text).reply(sending: [try history("intruder")], code: WormholeCode.generate()).first)
        #expect(throws: TransferError.wrongCode) { try fresh.accept(forged) }
    }

    @Test func damagedTextIsFoundBeforeTheExchangeIsSpent() throws {
        let receiver = TransferReceiver()
        let line = try Self.reply(to: receiver, [try history("u")])
        let prefix = "sealkit-reply-v2:"
        let body = try #require(CodeText.decode(line.dropFirst(prefix.count)))
        // Every position, message, nonce, box or check: the check finds the change.
        for position in [0, 1, 20, 33, 40, 57, 60, 100, body.count - 5, body.count - 1] {
            var changed = body
            changed[position] ^= 0x01
            #expect(throws: TransferError.code(.malformed(.reply, reason: "cut short or mistyped: its check does not match")), "byte \(position)") {
                try receiver.accept(prefix + CodeText.encode(changed))
            }
        }
        #expect(throws: TransferError.code(.malformed(.reply, reason: "cut short or mistyped: its check does not match"))) {
            try receiver.check(String(line.dropLast(8)))
        }
        #expect(throws: TransferError.code(.malformed(.reply, reason: "not base64url after the prefix"))) {
            try receiver.accept(String(line.dropLast()) + "+")
        }
        #expect(throws: TransferError.code(.malformed(.reply, reason: "truncated"))) { try receiver.accept("sealkit-reply-v2:AAAA") }
        #expect(throws: TransferError.code(.notCodeText(expected: .reply))) { try receiver.accept("hello") }
        #expect(throws: TransferError.code(.unsupportedVersion(.reply, version: "v3"))) {
            try receiver.accept("sealkit-reply-v3:" + line.dropFirst(prefix.count))
        }
        #expect(throws: TransferError.code(.wrongKind(found: .offer, expected: .reply))) { try receiver.accept(receiver.offer.text) }
        // None of that spent the exchange: the reply itself still works.
        #expect(try receiver.accept(line).keys.count == 1)
    }

    @Test func alteredReplyWithAValidCheckIsAWrongCode() throws {
        // Someone who alters the box and recomputes the public check: the box does not open.
        let receiver = TransferReceiver()
        let line = try Self.reply(to: receiver, [try history("u")])
        var body = try CodeText.checkedBody(of: Substring(line), as: .reply)
        try #require(body.count > 50, "a body of \(body.count) bytes")
        body[50] ^= 0x01
        #expect(throws: TransferError.wrongCode) { try receiver.accept(CodeText.checkedText(body, as: .reply)) }
    }

    @Test func retiredVersion1IsRefusedWithItsReason() throws {
        #expect(throws: TransferError.code(.retiredVersion(.offer))) { try TransferOffer("sealkit-offer-v1:" + String(repeating: "A", count: 86)) }
        #expect(throws: TransferError.code(.retiredVersion(.reply))) { try TransferReceiver().accept("sealkit-reply-v1:AAAA") }
        #expect(TransferError.code(.retiredVersion(.reply)).description.contains("man in the middle"))
    }

    @Test func secondReplyIsRefused() throws {
        let receiver = TransferReceiver()
        let offer = try TransferOffer(receiver.offer.text)
        let first = try #require(try offer.reply(sending: [try history("u")], code: receiver.code).first)
        let second = try #require(try offer.reply(sending: [try history("v")], code: receiver.code).first)
        _ = try receiver.accept(first)
        #expect(throws: TransferError.offerUsed) { try receiver.accept(first) }
        #expect(throws: TransferError.offerUsed) { try receiver.accept(second) }
    }

    @Test func expiryIsEnforcedWithClockSkew() throws {
        let made = Date(timeIntervalSince1970: 1_800_000_000)
        let expiry = made + 60
        for (now, expected) in [
            (expiry + 121, TransferError.expired(at: expiry, now: expiry + 121)), (made - 121, .madeInTheFuture(made)),
        ] {
            let receiver = TransferReceiver()
            let line = try TransferOffer(receiver.offer.text).reply(
                sending: [try history("u")], code: receiver.code, expiresIn: 60, now: made)
            try #require(line.count == 1)
            #expect(throws: expected) { try receiver.accept(line[0], now: now) }
        }
        // Within the allowed skew on either side, it is accepted.
        let receiver = TransferReceiver()
        let offer = try TransferOffer(receiver.offer.text)
        let line = try offer.reply(sending: [try history("u")], code: receiver.code, expiresIn: 60, now: made)
        try #require(line.count == 1)
        #expect(try receiver.accept(line[0], now: expiry + 119).keys.count == 1)

        let fresh = TransferReceiver()
        let week = try TransferOffer(fresh.offer.text).sealReply(
            sending: [try history("u")], code: fresh.code, created: 1_800_000_000, expires: 1_800_000_000 + 7 * 86_400)
        try #require(week.count == 1)
        #expect(throws: TransferError.expiresTooLate(made + 7 * 86_400)) { try fresh.accept(week[0], now: made) }
        let other = TransferReceiver()
        let backwards = try TransferOffer(other.offer.text).sealReply(
            sending: [try history("u")], code: other.code, created: 1_800_000_000, expires: 1_800_000_000)
        try #require(backwards.count == 1)
        #expect(throws: TransferError.code(.malformed(.reply, reason: "it expires before it was made"))) {
            try other.accept(backwards[0], now: made)
        }
        #expect(throws: TransferError.badLifetime(seconds: 86_401)) {
            try offer.reply(sending: [try history("u")], code: receiver.code, expiresIn: 86_401)
        }
        #expect(throws: TransferError.badLifetime(seconds: 0)) {
            try offer.reply(sending: [try history("u")], code: receiver.code, expiresIn: 0)
        }
        #expect(throws: TransferError.code(.nothingToSend)) { try offer.reply(sending: [], code: receiver.code) }
    }

    @Test func badOffersAreRefused() throws {
        #expect(throws: TransferError.code(.notCodeText(expected: .offer))) { try TransferOffer("sealkit-offer:abc") }
        #expect(throws: TransferError.code(.malformed(.offer, reason: "truncated"))) { try TransferOffer("sealkit-offer-v2:AAAA") }
        #expect(throws: TransferError.code(.unsupportedVersion(.offer, version: "v9"))) { try TransferOffer("sealkit-offer-v9:AAAA") }
        // A check that matches around a message that is no SPAKE2 element: the sender refuses to answer.
        let notOnCurve = CodeText.checkedText([UInt8(ascii: "S"), 2] + [UInt8](repeating: 0, count: 31), as: .offer)
        let offer = try TransferOffer(notOnCurve)
        #expect(throws: TransferError.code(.malformed(.offer, reason: SPAKE2Error.invalidElement.description))) {
            try offer.reply(sending: [try history("u")], code: WormholeCode.generate())
        }
        let text = TransferReceiver().offer.text
        #expect(try TransferOffer("  " + text + "\r\n").text == text)
    }

    @Test func manyKeysTravelInPartsAcceptedInAnyOrder() throws {
        let receiver = TransferReceiver()
        let keys = try (0..<40).map { try history("user-\($0)@example.com", retired: $0 % 3 == 0 ? 1 : 0) }
        let lines = try TransferOffer(receiver.offer.text).reply(sending: keys, code: receiver.code)
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

        let fine = [try history("a", retired: 1), existing]
        #expect(try keystore.storeAll(fine, passphrase: nil) == [.stored, .unchanged])
        expectSameKeys([try keystore.history(for: KeyID("a"), passphrase: nil)], [fine[0]])
    }

    @Test func identicalCurrentKeyAddsMissingRetiredKeys() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-transfer-\(UUID())").path
        let keystore = FileKeystore(root: folder)
        let full = try history("u", retired: 1)
        try keystore.store(full.current, as: full.id, mode: .import, passphrase: nil)
        #expect(try keystore.store(full, passphrase: nil) == .stored)
        #expect(try keystore.store(full, passphrase: nil) == .unchanged)
        let stored = try keystore.history(for: full.id, passphrase: nil)
        try #require(stored.versions.map(\.key) == full.versions.map(\.key))
        #expect(stored.versions[1].retired == full.versions[1].retired)
    }
}
