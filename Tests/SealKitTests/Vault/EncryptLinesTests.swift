import Foundation
// Only the public API, as an app sees it.
import SealKit
import Testing

@Suite("Vault: values as lines of bytes")
struct EncryptLinesTests {
    private func vault(_ format: CiphertextFormat) throws -> Vault {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID("lines"), format: format)
        try vault.ensureKey(existing: "{}")
        return vault
    }

    /// The ciphertext lines `encrypt(lines:)` appended, as text.
    private func lines(_ output: [UInt8]) -> [String] {
        #expect(output.last == UInt8(ascii: "\n"))
        return String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test(arguments: [CiphertextFormat.v1, .v2])
    func everyLineIsAValueAndComesBackAsItWent(format: CiphertextFormat) throws {
        let vault = try vault(format)
        let context = format == .v2 ? "note" : ""
        // More lines than one draw of nonces, an empty line, a CR that belongs to its value, non-ASCII text, and a
        // last line without its newline.
        let values = (0..<37).map { "value \($0)" } + ["", "crlf\r", "ünïcödé ✓", "last"]
        let text = Array(values.joined(separator: "\n").utf8)
        var output: [UInt8] = Array("kept\n".utf8)
        try vault.encrypt(lines: text, context: context, appendingTo: &output)
        let sealed = lines(output)
        #expect(sealed.first == "kept")
        #expect(sealed.count == values.count + 1)
        #expect(Set(sealed.dropFirst()).count == values.count, "every value has its own nonce")
        let opened = try vault.decrypt(ciphertexts: Array(sealed.dropFirst()), context: context).map { try $0.get() }
        #expect(opened == values)
        #expect(try sealed.dropFirst().allSatisfy { try vault.inspect(ciphertext: $0).format == format })

        // A newline after the last value adds none; any sequence of bytes will do, contiguous or not.
        for input in [AnySequence(text + [10]), AnySequence(Data(text + [10])), AnySequence(text.lazy.map { $0 })] {
            var again: [UInt8] = []
            try vault.encrypt(lines: input, context: context, appendingTo: &again)
            #expect(try vault.decrypt(ciphertexts: lines(again), context: context).map { try $0.get() } == values)
        }
        var none: [UInt8] = []
        try vault.encrypt(lines: [UInt8](), context: context, appendingTo: &none)
        #expect(none.isEmpty)
    }

    @Test func aLineThatIsNotUTF8WritesNothingAndIsNamedByNumber() throws {
        let vault = try vault(.v1)
        var output: [UInt8] = Array("before\n".utf8)
        let text: [UInt8] = Array("good\nalso good\n".utf8) + [0x73, 0x65, 0x63, 0xFF, 0x72, 0x65, 0x74] + Array("\nmore\n".utf8)
        let error = #expect(throws: SealKitError.self) { try vault.encrypt(lines: text, appendingTo: &output) }
        #expect(error?.reason == .invalidArgument)
        #expect(error?.description.contains("line 3") == true && error?.description.contains("sec") == false, "\(String(describing: error))")
        #expect(output == Array("before\n".utf8), "output as it was")
    }

    @Test func linesRefuseWhatSingleCallsRefuse() throws {
        // A v1 vault given a context: v1 binds none, so the context would be a promise the format does not keep.
        var output: [UInt8] = []
        #expect(throws: SealKitError.self) { try vault(.v1).encrypt(lines: Array("a\n".utf8), context: "note", appendingTo: &output) }
        let locked = Vault(keystore: try .inMemory(), user: try KeyID("nobody"), format: .v1)
        #expect(throws: SealKitError.self) { try locked.encrypt(lines: Array("a\n".utf8), appendingTo: &output) }
        #expect(output.isEmpty)
    }
}
