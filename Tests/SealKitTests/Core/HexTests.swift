import SealKit
import Testing

@Suite("Hex, the one hex codec")
struct HexTests {
    /// Each byte as two lower-case digits, written independently of the codec under test.
    private func reference(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test func encodesEveryByteAsTwoLowerCaseDigits() {
        let all = (0...255).map { UInt8($0) }
        #expect(Hex.encode(all) == reference(all))
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
    }

    @Test func roundTripsRandomBytesOfManyLengths() {
        for length in 0..<70 {
            let bytes = SecureRandom.bytes(count: length)
            #expect(Hex.decode(Hex.encode(bytes)) == bytes)
            #expect(Hex.decode(reference(bytes).uppercased()) == bytes)
        }
    }

    @Test func decodesEitherCase() {
        #expect(Hex.decode("ABcd") == [0xAB, 0xCD])
        #expect(Hex.decode("") == [])
        #expect(Hex.decode(Array("0aF9".utf8)[...]) == [0x0A, 0xF9])
    }

    @Test(arguments: ["a", "abc", "gg", "0x00", "ab cd", " abcd", "abcd\n", "ab\u{0}d", "ab:cd", "éé", "-1"])
    func refusesAnythingButWholeHex(_ text: String) {
        #expect(Hex.decode(text) == nil)
    }
}
