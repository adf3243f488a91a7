@_spi(CLI) import SealKitTransfer
import Testing

/// The offline transfer, Rownd's key text and codes as an app uses them: through SealKitTransfer's public API
/// alone (the CLI's tests drive the same calls through `sealkit transfer`).
@Suite("SealKitTransfer's public offline API")
struct PublicTransferAPITests {
    /// A keystore holding one key for `user`, rotated `rotations` times.
    static func keystore(with user: KeyID, rotations: Int = 0) throws -> Keystore {
        let keystore = try Keystore.inMemory()
        let vault = Vault(keystore: keystore, user: user, format: .v2)
        try vault.ensureKey(existing: "{}")
        for _ in 0..<rotations { try vault.rotateKey() }
        return keystore
    }

    @Test func anOfflineReplyCarriesEveryKeyOnceAndOnlyWithTheCode() throws {
        let alice = try KeyID("alice"), bob = try KeyID("bob")
        let sending = try Self.keystore(with: alice, rotations: 2)
        let receiving = try Self.keystore(with: bob)
        let receiver = OfflineKeyReceiver()
        let keys = try sending.exportKeys([alice], passphrase: nil)
        try #require(keys.map(\.id) == [alice])
        #expect(keys[0].keyCount == 3)
        let lines = try OfflineOffer(receiver.offer).reply(sending: keys, code: receiver.code)
        var assembler = ReplyAssembler()
        var whole: String?
        for line in lines.reversed() { whole = try assembler.add(line) ?? whole }
        let reply = try #require(whole)
        try receiver.check(reply)
        #expect(!receiver.mayBeIncomplete(reply))
        #expect(receiver.mayBeIncomplete(String(reply.dropLast(20))))
        let received = try receiver.accept(reply)
        #expect(received.map(KeyOffer.init) == keys.map(KeyOffer.init))
        #expect(try receiving.importKeys(received, passphrase: nil) == [true])
        #expect(try receiving.importKeys(received, passphrase: nil) == [false])
        #expect(try receiving.entry(for: alice)?.fingerprint == sending.entry(for: alice)?.fingerprint)
        // The offer is used up: a second reply, even a good one, is refused.
        #expect(throws: SealKitError.self) { try receiver.accept(reply) }
    }

    @Test func aReplyForAnotherCodeIsRefusedAndAReceiverWithADifferentKeyStoresNothing() throws {
        let alice = try KeyID("alice")
        let sending = try Self.keystore(with: alice)
        let receiver = OfflineKeyReceiver()
        let other = OfflineKeyReceiver()
        let lines = try OfflineOffer(receiver.offer).reply(sending: try sending.exportKeys([alice], passphrase: nil), code: other.code)
        do {
            _ = try receiver.accept(lines.joined())
            Issue.record("a reply sealed with another code was accepted")
        } catch {
            // A well-formed code that is not the receiver's (77 at the command line).
            #expect(error.reason == .wrongCode)
        }

        let second = OfflineKeyReceiver()
        let reply = try OfflineOffer(second.offer).reply(sending: try sending.exportKeys([alice], passphrase: nil), code: second.code)
        let conflicting = try Self.keystore(with: alice)
        do {
            _ = try conflicting.importKeys(second.accept(reply.joined()), passphrase: nil)
            Issue.record("a different key under the same id was replaced")
        } catch {
            #expect(error.reason == .conflictingKey)
            #expect(error.keyID == alice)
        }
    }

    @Test func noIDsAndBadLifetimesAreArgumentErrors() throws {
        let alice = try KeyID("alice")
        let sending = try Self.keystore(with: alice)
        let receiver = OfflineKeyReceiver()
        // No keys at all is nothing to send.
        do {
            _ = try OfflineOffer(receiver.offer).reply(sending: [], code: receiver.code)
            Issue.record("a reply with no keys was made")
        } catch {
            #expect(error.reason == .invalidArgument)
        }
        do {
            _ = try OfflineOffer(receiver.offer).reply(sending: try sending.exportKeys([alice], passphrase: nil), code: receiver.code, expiresIn: .zero)
            Issue.record("a reply that expires at once was made")
        } catch {
            #expect(error.reason == .invalidArgument)
        }
        do {
            _ = try sending.exportKeys([try KeyID("nobody")], passphrase: nil)
        } catch {
            #expect(error.reason == .keyNotFound)
        }
    }

    @Test func theAssemblerStartsOverAfterPartsOfTwoTransfers() throws {
        let alice = try KeyID("alice")
        // Enough keys for a reply in several parts.
        let sending = try Self.keystore(with: alice, rotations: 40)
        let keys = try sending.exportKeys([alice], passphrase: nil)
        let first = OfflineKeyReceiver(), second = OfflineKeyReceiver()
        let a = try OfflineOffer(first.offer).reply(sending: keys, code: first.code)
        let b = try OfflineOffer(second.offer).reply(sending: keys, code: second.code)
        try #require(a.count > 1 && b.count > 1)
        var assembler = ReplyAssembler()
        #expect(try assembler.add(a[0]) == nil)
        #expect(assembler.missingParts == Array(2...a.count))
        #expect(throws: SealKitError.self) { try assembler.add(b[1]) }
        // Started over: b's parts alone now make b's reply.
        var whole: String?
        for line in b { whole = try assembler.add(line) ?? whole }
        #expect(try second.accept(try #require(whole)).map(KeyOffer.init) == keys.map(KeyOffer.init))
        #expect(ReplyAssembler().incompleteError.reason == .missingInput)
    }

    @Test func rowndKeyTextReadsBackAsThePastedKey() throws {
        let alice = try KeyID("alice")
        let keystore = try Self.keystore(with: alice, rotations: 1)
        let text = try RowndKeyText(for: alice, in: keystore, passphrase: nil, link: "https://app.rownd.link/abc")
        #expect(text.retiredKeyCount == 1)
        #expect(text.fingerprint == (try keystore.entry(for: alice))?.fingerprint)
        let bytes = text.withUnsafeBytes { Array($0) }
        #expect(bytes.starts(with: Array("https://app.rownd.link/abc#".utf8)))
        #expect(!text.description.contains("#"))
        let pasted = try PastedKey(parsing: bytes)
        #expect(pasted.fingerprint == text.fingerprint)
        let other = try Keystore.inMemory()
        #expect(try pasted.store(as: alice, in: other, passphrase: nil))
        #expect(try !pasted.store(as: alice, in: other, passphrase: nil))
        do {
            _ = try PastedKey(parsing: Array("not a key".utf8))
            Issue.record("text that is no key was read")
        } catch {
            #expect(error.reason == .invalidKeyText)
        }
    }

    @Test func codesHideTheirWordsAndSuggestOneCorrection() throws {
        let code = try TransferCode("7-Guitarist-Revenge")
        #expect(code.text == "7-guitarist-revenge")
        #expect(!code.description.contains("guitarist"))
        #expect(TransferCode.words(at: 1).contains("guitarist"))
        #expect(TransferCode.words(at: 2).contains("revenge"))
        #expect(TransferCode.words(at: 0).isEmpty)
        #expect(TransferCode.suggestion(for: "7-guitarst-revenge") == "7-guitarist-revenge")
        #expect(TransferCode.suggestion(for: "7-revenge-guitarist") == "7-guitarist-revenge")
        #expect(TransferCode.suggestion(for: "7-guitarist-revenge") == nil)
        #expect(TransferCode.suggestion(for: "8vocalist-optic") == "8-vocalist-optic")
        do {
            _ = try TransferCode("12-aardvark")
            Issue.record("a code of one word was read")
        } catch {
            // What the person typed (64 at the command line).
            #expect(error.reason == .invalidArgument)
            #expect(!error.description.contains("aardvark"))
        }
        let link = try TransferLink(parsing: "sealkit-transfer:7-guitarist-revenge?version=0&rendezvous=ws%3A%2F%2Frelay.example%3A4000&role=leader")
        #expect(link.code == (try TransferCode("7-guitarist-revenge")))
        #expect(link.relay == "ws://relay.example:4000/v1")
        // The link's code is read as a typed code is: a link holding no code is refused, and says nothing of it.
        do {
            _ = try TransferLink(parsing: "sealkit-transfer:7-aardvark?version=0&role=leader")
            Issue.record("a link holding a code of one word was read")
        } catch {
            #expect(error.reason == .invalidArgument)
            #expect(!error.description.contains("aardvark"))
        }
        #expect(try Relay("ws://relay.example:4000").description == "ws://relay.example:4000/v1")
        #expect(try Relay("ws://10.0.0.1:9/v1").description == "ws://10.0.0.1:9/v1")
        #expect(throws: SealKitError.self) { try Relay("http://relay.example:4000/v1") }
    }
}
