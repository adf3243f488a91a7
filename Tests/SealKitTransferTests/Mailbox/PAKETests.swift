import SealKit
import SealKitTransfer
import Testing

/// SPAKE2 exchanges (SealKit's group arithmetic) and wormhole codes and keys (SealKitTransfer's) as the
/// transfer uses them: random entropy, failure cases.
@Suite("SPAKE2 and wormhole codes")
struct PAKETests {
    static let appID = "sealkit/key-transfer/v1"

    @Test func sameCodeGivesSameKeyAndOpensTheOtherSidesMessages() throws {
        let code = WormholeCode.generate()
        let sender = SPAKE2Symmetric(code: code, appID: Self.appID)
        let receiver = SPAKE2Symmetric(code: try WormholeCode(parsing: code.revealedText), appID: Self.appID)
        try #require(sender.message.count == SPAKE2Symmetric.messageByteCount)
        #expect(sender.message[0] == UInt8(ascii: "S"))
        #expect(sender.message != receiver.message)
        let senderKey = try sender.finish(peerMessage: receiver.message)
        let receiverKey = try receiver.finish(peerMessage: sender.message)
        #expect(senderKey == receiverKey)
        #expect(senderKey.verifier == receiverKey.verifier)
        let sealed = senderKey.phaseKey(side: "aaaa", phase: "0").seal(Array("keys".utf8))
        #expect(try receiverKey.phaseKey(side: "aaaa", phase: "0").open(sealed) == Array("keys".utf8))
        // A key for another phase or side is another key.
        #expect(throws: WormholeKeyError.cannotOpen) { try receiverKey.phaseKey(side: "aaaa", phase: "1").open(sealed) }
        #expect(throws: WormholeKeyError.cannotOpen) { try receiverKey.phaseKey(side: "bbbb", phase: "0").open(sealed) }
    }

    @Test func wrongCodeGivesKeysThatOpenNothing() throws {
        let sender = SPAKE2Symmetric(code: try WormholeCode(parsing: "7-guitarist-revenge"), appID: Self.appID)
        let receiver = SPAKE2Symmetric(code: try WormholeCode(parsing: "7-guitarist-aardvark"), appID: Self.appID)
        let senderKey = try sender.finish(peerMessage: receiver.message)
        let receiverKey = try receiver.finish(peerMessage: sender.message)
        #expect(senderKey != receiverKey)
        #expect(senderKey.verifier != receiverKey.verifier)
        #expect(throws: WormholeKeyError.cannotOpen) { try receiverKey.open(senderKey.seal([1, 2, 3])) }
    }

    @Test func otherAppIDGivesOtherKey() throws {
        let code = try WormholeCode(parsing: "7-guitarist-revenge")
        let ours = SPAKE2Symmetric(code: code, appID: Self.appID)
        let theirs = SPAKE2Symmetric(code: code, appID: "lothar.com/wormhole/text-or-file-xfer")
        #expect(try ours.finish(peerMessage: theirs.message) != theirs.finish(peerMessage: ours.message))
    }

    @Test func finishesOnlyOnceAndRefusesItsOwnMessage() throws {
        let a = SPAKE2Symmetric(password: Array("pw".utf8), identity: Array("id".utf8))
        let b = SPAKE2Symmetric(password: Array("pw".utf8), identity: Array("id".utf8))
        _ = try a.finish(peerMessage: b.message)
        #expect(throws: SPAKE2Error.alreadyFinished) { try a.finish(peerMessage: b.message) }
        #expect(throws: SPAKE2Error.reflection) { try b.finish(peerMessage: b.message) }
    }

    @Test func randomMessagesNeverCrash() {
        // Random 33-byte messages with the right side byte: about half are not on the curve, the rest
        // outside the prime-order subgroup; every one is refused with a typed error or gives a key.
        for _ in 0..<500 {
            let spake = SPAKE2Symmetric(password: Array("pw".utf8), identity: [])
            var message = SecureRandom.bytes(count: 33)
            message[0] = UInt8(ascii: "S")
            do { _ = try spake.finish(peerMessage: message) } catch { #expect(error == .invalidElement) }
        }
    }

    @Test func descriptionsHideSecrets() throws {
        let code = try WormholeCode(parsing: "7-guitarist-revenge")
        #expect(!"\(code)".contains("guitarist"))
        #expect(!String(reflecting: code).contains("revenge"))
        #expect("\(code)".contains("7"))
        let spake = SPAKE2Symmetric(code: code, appID: Self.appID)
        let key = try spake.finish(peerMessage: SPAKE2Symmetric(code: code, appID: Self.appID).message)
        let keyHex = key.withUnsafeBytes { $0.map { String($0, radix: 16) }.joined() }
        #expect("\(key)" == "WormholeKey(hidden)")
        #expect(!String(reflecting: key).contains(keyHex))
        #expect(!"\(spake)".contains("guitarist"))
    }

    @Test func generatedCodesHaveMagicWormholesForm() throws {
        var firstWords = Set<String>()
        for _ in 0..<200 {
            let code = WormholeCode.generate()
            let parts = code.revealedText.split(separator: "-").map(String.init)
            try #require(parts.count == 3, "a code of \(parts.count) parts")
            #expect((1...99).contains(Int(parts[0]) ?? 0))
            #expect(WormholeCode.wordLists.odd.contains(parts[1]))
            #expect(WormholeCode.wordLists.even.contains(parts[2]))
            #expect(try WormholeCode(parsing: code.revealedText) == code)
            firstWords.insert(parts[1])
        }
        // 200 draws from 256 words: fewer than 100 distinct would mean the randomness is broken.
        #expect(firstWords.count > 100)
        let allocated = try WormholeCode.generate(nameplate: "4321")
        #expect(allocated.nameplate == "4321")
        #expect(allocated.revealedText.hasPrefix("4321-"))
        #expect(throws: WormholeCodeError.badNameplate) { try WormholeCode.generate(nameplate: "x1") }
    }

    @Test(arguments: [
        ("7-guitarist-revenge", "7-guitarist-revenge"),
        ("  7-Guitarist-REVENGE\n", "7-guitarist-revenge"),
        ("7 guitarist revenge", "7-guitarist-revenge"),
        ("007-guitarist-revenge", "7-guitarist-revenge"),
        ("7 - guitarist -- revenge", "7-guitarist-revenge"),
        ("123456-adroitness-aardvark", "123456-adroitness-aardvark"),
    ])
    func typedCodesAreNormalised(_ typed: String, _ canonical: String) throws {
        #expect(try WormholeCode(parsing: typed).revealedText == canonical)
    }

    @Test(arguments: [
        ("", WormholeCodeError.empty),
        ("   ", .empty),
        ("guitarist-revenge", .badNameplate),
        ("0-guitarist-revenge", .badNameplate),
        ("1234567890-guitarist-revenge", .badNameplate),
        ("7", .wrongWordCount(0)),
        ("7-guitarist", .wrongWordCount(1)),
        ("7-guitarist-revenge-again", .wrongWordCount(3)),
        ("7-guitarist-revenj", .unknownWord(position: 2)),
        ("7-gitarist-revenge", .unknownWord(position: 1)),
        ("7-revenge-guitarist", .wordsSwapped),
        ("3-aardvark-absurd", .wordInOtherHalf(position: 1)),
        ("3-adroitness-adroitness", .wordInOtherHalf(position: 2)),
        ("7-guitarist-revenge\u{0}", .notAWord),
        ("7-guitarïst-revenge", .notAWord),
        (String(repeating: "7", count: 101), .tooLong),
        // The first hyphen left out is named as such, not as a code without a number.
        ("8vocalist-optic", .missingHyphen),
        ("8vocalist optic", .missingHyphen),
        ("12Guitarist-revenge", .missingHyphen),
    ])
    func malformedCodesAreRefusedWithoutEchoingThem(_ typed: String, _ expected: WormholeCodeError) {
        #expect(throws: expected) { try WormholeCode(parsing: typed) }
        #expect(!"\(expected)".contains("revenj") && !"\(expected)".contains("gitarist"))
    }
}
