import Foundation
// Only the public API, as an app sees it.
import SealKit
import SealTestSupport
import Testing

@Suite("Vault: ciphertexts as lines of bytes")
struct DecryptLinesTests {
    private func vault(_ format: CiphertextFormat, user: String = "lines") throws -> Vault {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID(user), format: format)
        try vault.ensureKey(existing: "{}")
        return vault
    }

    @Test(arguments: [CiphertextFormat.v1, .v2])
    func linesEncryptedComeBackAsTheyWent(format: CiphertextFormat) throws {
        let vault = try vault(format)
        let context = format == .v2 ? "note" : ""
        let values = (0..<37).map { "value \($0)" } + ["", "crlf\r", "ünïcödé ✓", "last"]
        let text = Array(values.joined(separator: "\n").utf8)
        var sealed: [UInt8] = []
        try vault.encrypt(lines: text, context: context, appendingTo: &sealed)

        var output: [UInt8] = Array("kept\n".utf8)
        try vault.decrypt(lines: sealed, context: context, appendingTo: &output)
        #expect(output == Array(("kept\n" + values.joined(separator: "\n") + "\n").utf8))

        // CRLF line ends (a file from another system), no newline after the last line, and any sequence of bytes.
        let crlf = Array(String(decoding: sealed, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
        for input in [AnySequence(crlf), AnySequence(Data(sealed.dropLast())), AnySequence(sealed.lazy.map { $0 })] {
            var again: [UInt8] = []
            try vault.decrypt(lines: input, context: context, appendingTo: &again)
            #expect(again == Array((values.joined(separator: "\n") + "\n").utf8))
        }
        var none: [UInt8] = []
        try vault.decrypt(lines: [UInt8](), context: context, appendingTo: &none)
        #expect(none.isEmpty)
    }

    @Test func aLineThatDoesNotOpenLeavesTheOutputAsItWasAndIsNamedByNumber() async throws {
        let vault = try vault(.v2)
        var sealed: [UInt8] = []
        try vault.encrypt(lines: Array("first secret\nsecond secret\n".utf8), context: "note", appendingTo: &sealed)
        let other = try self.vault(.v2, user: "someone-else")
        try other.encrypt(lines: Array("not theirs\n".utf8), context: "note", appendingTo: &sealed)
        let events = vault.events()
        var output: [UInt8] = Array("before\n".utf8)
        let error = #expect(throws: SealKitError.self) { try vault.decrypt(lines: sealed, context: "note", appendingTo: &output) }
        #expect(error?.description.hasPrefix("line 3:") == true, "\(String(describing: error))")
        #expect(error?.description.contains("secret") == false && error?.description.contains("theirs") == false)
        #expect(output == Array("before\n".utf8), "output as it was")
        // The same value alone fails for the same reason.
        let third = String(String(decoding: sealed, as: UTF8.self).split(separator: "\n")[2])
        let alone = try vault.decrypt(ciphertexts: [third], context: "note")[0]
        #expect(error?.reason == alone.failure?.reason)
        let first = try #require(await Waits.first(1, of: events), "no event within the deadline")
        #expect(first == [.decryptionFailed(try KeyID("lines"))])

        // Tampering, text that is no ciphertext, and the wrong context fail the same way, naming their line.
        var tampered = sealed
        tampered[10] = tampered[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        for (lines, context) in [(tampered, "note"), (Array("not base64 at all\n".utf8), "note"), (sealed, "other")] {
            var out: [UInt8] = []
            let failed = #expect(throws: SealKitError.self) { try vault.decrypt(lines: lines, context: context, appendingTo: &out) }
            #expect(failed?.description.hasPrefix("line 1:") == true, "\(String(describing: failed))")
            #expect(out.isEmpty)
        }
    }

    @Test func aPlaintextHoldingANewlineIsRefusedAsItCouldNotBeToldFromTwoLines() throws {
        let vault = try vault(.v1, user: "newline")
        let sealed = try vault.encrypt(plaintext: "two\nlines")
        var output: [UInt8] = []
        let error = #expect(throws: SealKitError.self) {
            try vault.decrypt(lines: Array((try vault.encrypt(plaintext: "one") + "\n" + sealed).utf8), appendingTo: &output)
        }
        #expect(error?.reason == .invalidArgument)
        #expect(error?.description.hasPrefix("line 2:") == true && error?.description.contains("lines") == false)
        #expect(output.isEmpty)
    }

    @Test func linesRefuseWhatSingleCallsRefuse() throws {
        var output: [UInt8] = []
        let sealed = Array((try vault(.v1).encrypt(plaintext: "a") + "\n").utf8)
        // A v1 vault given a context: v1 binds none.
        #expect(throws: SealKitError.self) { try vault(.v1).decrypt(lines: sealed, context: "note", appendingTo: &output) }
        let locked = Vault(keystore: try .inMemory(), user: try KeyID("nobody"), format: .v1)
        #expect(throws: SealKitError.self) { try locked.decrypt(lines: sealed, appendingTo: &output) }
        // A v2 vault refuses a v1 value, which binds nothing.
        let v1 = try vault(.v1)
        let v2 = Vault(keystore: v1.keystore, user: v1.user, format: .v2)
        #expect(throws: SealKitError.self) {
            try v2.decrypt(lines: Array((try v1.encrypt(plaintext: "a") + "\n").utf8), appendingTo: &output)
        }
        #expect(output.isEmpty)
    }
}

@Suite("Vault: events as documented")
struct VaultEventBufferTests {
    /// `events()` says a subscriber that falls behind keeps the newest 256: the vault never waits for it.
    @Test(.timeLimit(.minutes(1))) func aSubscriberFarBehindKeepsTheNewest256() async throws {
        let id = try KeyID("behind")
        var vault: Vault? = Vault(keystore: try .inMemory(), user: id, format: .v1)
        let stream = try #require(vault).events()
        try vault?.ensureKey(existing: "{}")
        for _ in 0..<300 { _ = try? vault?.decrypt(ciphertext: "AAAA") }
        try vault?.rotateKey()
        // Released, the vault finishes the stream: what is left in it is all a late reader gets.
        vault = nil
        let received = try #require(await Waits.all(stream), "the stream did not finish within the deadline")
        #expect(received.count == 256)
        #expect(received.last == .keyRotated(id), "the newest are kept")
        #expect(!received.contains(.keyGenerated(id)), "the oldest are dropped")
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
