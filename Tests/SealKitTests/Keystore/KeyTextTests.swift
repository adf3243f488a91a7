import SealKit
import Testing


/// The escapes `keys import` resolves in pasted key text: percent escapes in a link's fragment
/// and `\u` escapes in the older `{"data": ...}` form. Both go through SealKit's `Hex`.
@Suite("Escapes in pasted key text")
struct KeyTextTests {
    /// A key whose base64 has `+`, `/` and `=`, the characters links may escape.
    static let keyText: String = {
        let text = Base64.encode([0xFB, 0xEF, 0xFF] + Array(repeating: 0x5A, count: 29))
        precondition(text.contains("+") && text.contains("/") && text.hasSuffix("="))
        return text
    }()

    private func parse(_ text: String) throws(KeyTextError) -> SymmetricKey {
        try KeyText.parseKey(Array(text.utf8))
    }

    private func percentEscaped(_ text: String, upper: Bool) -> String {
        let escapes = upper ? ["+": "%2B", "/": "%2F", "=": "%3D"] : ["+": "%2b", "/": "%2f", "=": "%3d"]
        return text.map { escapes[String($0)] ?? String($0) }.joined()
    }

    @Test func percentEscapesInEitherCaseGiveTheSameKey() throws {
        let key = try SymmetricKey(base64Encoded: Self.keyText)
        #expect(try parse("https://example.rownd.link/s/abc#" + Self.keyText) == key)
        #expect(try parse("https://example.rownd.link/s/abc#" + percentEscaped(Self.keyText, upper: true)) == key)
        #expect(try parse("https://example.rownd.link/s/abc#" + percentEscaped(Self.keyText, upper: false)) == key)
        #expect(try parse("https://x/#%5A" + Self.keyText.dropFirst()) != key)
    }

    @Test(arguments: ["%", "%2", "%G0", "%2G", "%+2", "% 2"])
    func aBrokenPercentEscapeIsNotAKey(_ escape: String) {
        #expect(throws: KeyTextError.notAKey) { try parse("https://x/#" + escape + Self.keyText) }
        #expect(throws: KeyTextError.notAKey) { try parse("https://x/#" + Self.keyText + escape) }
    }

    @Test func unicodeEscapesForASCIIInTheDataForm() throws {
        let key = try SymmetricKey(base64Encoded: Self.keyText)
        let link = "https://x/s/a#" + Self.keyText
        let escaped = link.unicodeScalars.map { "\\u" + String(repeating: "0", count: 2) + String($0.value, radix: 16, uppercase: $0.value % 2 == 0) }.joined()
        #expect(try parse("{\"data\":\"" + link + "\"}") == key)
        #expect(try parse("{\"data\":\"" + escaped + "\"}") == key)
        #expect(try parse("{\"data\":\"https:\\/\\/x\\/s\\/a\\u0023" + Self.keyText + "\"}") == key)
    }

    @Test(arguments: ["\\u0080", "\\u00e9", "\\u0100", "\\u1023", "\\u002", "\\u00G3", "\\u 023", "\\u+023", "\\u-023"])
    func aUnicodeEscapeBeyondASCIIOrBrokenIsNotRowndText(_ escape: String) {
        #expect(throws: KeyTextError.notRowndText) { try parse("{\"data\":\"https://x/s/a" + escape + "#" + Self.keyText + "\"}") }
    }
}
