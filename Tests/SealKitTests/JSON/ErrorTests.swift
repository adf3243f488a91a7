import Testing

import SealKit

/// One rejected input and exactly how it must be reported.
struct RejectedCase: CustomTestStringConvertible, Sendable {
    let bytes: [UInt8]
    let reason: JSONError.Reason
    let line: Int
    let column: Int
    var testDescription: String { String(decoding: bytes.prefix(40), as: UTF8.self).debugDescription }

    init(_ text: String, _ reason: JSONError.Reason, line: Int = 1, column: Int) {
        self.init(bytes: Array(text.utf8), reason, line: line, column: column)
    }

    init(bytes: [UInt8], _ reason: JSONError.Reason, line: Int = 1, column: Int) {
        self.bytes = bytes
        self.reason = reason
        self.line = line
        self.column = column
    }
}

private let closeString = "'\"' to close the string"

let rejectedCases: [RejectedCase] = [
    // Unterminated input.
    RejectedCase("", .unexpectedEnd(expected: "a value"), column: 1),
    RejectedCase("   ", .unexpectedEnd(expected: "a value"), column: 4),
    RejectedCase(#""abc"#, .unexpectedEnd(expected: closeString), column: 5),
    RejectedCase(#"["a\"#, .unexpectedEnd(expected: "an escape after '\\'"), column: 5),
    RejectedCase("[1, 2", .unexpectedEnd(expected: "',' or ']'"), column: 6),
    RejectedCase("[1,", .unexpectedEnd(expected: "a value"), column: 4),
    RejectedCase(#"{"a":1"#, .unexpectedEnd(expected: "',' or '}'"), column: 7),
    RejectedCase(#"{"a""#, .unexpectedEnd(expected: "':' after the key"), column: 5),
    RejectedCase(#"{"a":"#, .unexpectedEnd(expected: "a value"), column: 6),
    RejectedCase("{", .unexpectedEnd(expected: "a string key"), column: 2),
    RejectedCase("tru", .unexpectedEnd(expected: "'true'"), column: 4),
    // Literals and stray characters.
    RejectedCase("nul1", .unexpectedCharacter(found: "'1'", expected: "'null'"), column: 4),
    RejectedCase("True", .unexpectedCharacter(found: "'T'", expected: "a value"), column: 1),
    RejectedCase("NaN", .unexpectedCharacter(found: "'N'", expected: "a value"), column: 1),
    RejectedCase("Infinity", .unexpectedCharacter(found: "'I'", expected: "a value"), column: 1),
    RejectedCase("'a'", .unexpectedCharacter(found: "'''", expected: "a value"), column: 1),
    RejectedCase("[1 2]", .unexpectedCharacter(found: "'2'", expected: "',' or ']' after an array element"), column: 4),
    RejectedCase(#"{"a" 1}"#, .unexpectedCharacter(found: "'1'", expected: "':' after the key"), column: 6),
    RejectedCase(#"{a:1}"#, .unexpectedCharacter(found: "'a'", expected: "a string key"), column: 2),
    RejectedCase(#"{"a":1 "b":2}"#, .unexpectedCharacter(found: "'\"'", expected: "',' or '}' after an object member"), column: 8),
    RejectedCase("[1}", .unexpectedCharacter(found: "'}'", expected: "',' or ']' after an array element"), column: 3),
    RejectedCase(bytes: [0xEF, 0xBB, 0xBF, 0x31], .unexpectedCharacter(found: "byte 0xEF", expected: "a value"), column: 1),
    // Trailing commas, comments, trailing content.
    RejectedCase("[1,]", .unexpectedCharacter(found: "']'", expected: "a value after ',' (no trailing commas)"), column: 4),
    RejectedCase(#"{"a":1,}"#, .unexpectedCharacter(found: "'}'", expected: "a string key (no trailing commas)"), column: 8),
    RejectedCase("[,1]", .unexpectedCharacter(found: "','", expected: "a value"), column: 2),
    RejectedCase("// c\n1", .unexpectedCharacter(found: "'/'", expected: "a value"), column: 1),
    RejectedCase("[1 /* c */]", .unexpectedCharacter(found: "'/'", expected: "',' or ']' after an array element"), column: 4),
    RejectedCase("1 2", .unexpectedCharacter(found: "'2'", expected: "the end of the input after the value"), column: 3),
    RejectedCase("{}}", .unexpectedCharacter(found: "'}'", expected: "the end of the input after the value"), column: 3),
    RejectedCase("\"a\"\u{0}", .unexpectedCharacter(found: "U+0000", expected: "the end of the input after the value"), column: 4),
    RejectedCase("1\u{0C}", .unexpectedCharacter(found: "U+000C", expected: "the end of the input after the value"), column: 2),
    // Numbers.
    RejectedCase("01", .leadingZero, column: 1),
    RejectedCase("[-012]", .leadingZero, column: 2),
    RejectedCase("00", .leadingZero, column: 1),
    RejectedCase("-", .unexpectedEnd(expected: "a digit after '-'"), column: 2),
    RejectedCase("--1", .unexpectedCharacter(found: "'-'", expected: "a digit after '-'"), column: 2),
    RejectedCase("+1", .unexpectedCharacter(found: "'+'", expected: "a value"), column: 1),
    RejectedCase(".5", .unexpectedCharacter(found: "'.'", expected: "a value"), column: 1),
    RejectedCase("1.", .unexpectedEnd(expected: "a digit after '.'"), column: 3),
    RejectedCase("[1.e5]", .unexpectedCharacter(found: "'e'", expected: "a digit after '.'"), column: 4),
    RejectedCase("1e", .unexpectedEnd(expected: "a digit after the exponent"), column: 3),
    RejectedCase("1e+", .unexpectedEnd(expected: "a digit after the exponent"), column: 4),
    RejectedCase("[1E-x]", .unexpectedCharacter(found: "'x'", expected: "a digit after the exponent"), column: 5),
    RejectedCase("0x10", .unexpectedCharacter(found: "'x'", expected: "the end of the input after the value"), column: 2),
    // Escapes and surrogates.
    RejectedCase(#""\q""#, .invalidEscape, column: 2),
    RejectedCase(#""ab\x41""#, .invalidEscape, column: 4),
    RejectedCase(#""\u12g4""#, .invalidEscape, column: 2),
    RejectedCase(#""\u12"#, .unexpectedEnd(expected: "four hex digits after '\\u'"), column: 6),
    RejectedCase(#""\ud800""#, .loneSurrogate, column: 2),
    RejectedCase(#""\udc00""#, .loneSurrogate, column: 2),
    RejectedCase(#""x\uD83Dy""#, .loneSurrogate, column: 3),
    RejectedCase(#""\ud83d\u0041""#, .loneSurrogate, column: 2),
    RejectedCase(#""\ud83d\ud83d""#, .loneSurrogate, column: 2),
    RejectedCase(#""\ude00\ud83d""#, .loneSurrogate, column: 2),
    // Raw control characters in strings.
    RejectedCase("\"a\tb\"", .controlCharacter(0x09), column: 3),
    RejectedCase("\"a\nb\"", .controlCharacter(0x0A), column: 3),
    RejectedCase("\"\\n\u{1F}\"", .controlCharacter(0x1F), column: 4),
    RejectedCase("\"\u{0}\"", .controlCharacter(0x00), column: 2),
    // Invalid UTF-8, in and out of strings.
    RejectedCase(bytes: [0x22, 0xC3, 0x28, 0x22], .invalidUTF8, column: 2),
    RejectedCase(bytes: [0x22, 0xC0, 0xAF, 0x22], .invalidUTF8, column: 2),
    RejectedCase(bytes: [0x22, 0xE0, 0x80, 0xAF, 0x22], .invalidUTF8, column: 2),
    RejectedCase(bytes: [0x22, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8, column: 2),
    RejectedCase(bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .invalidUTF8, column: 2),
    RejectedCase(bytes: [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], .invalidUTF8, column: 2),
    RejectedCase(bytes: [0x22, 0x61, 0xFF, 0x22], .invalidUTF8, column: 3),
    RejectedCase(bytes: [0x22, 0x80, 0x22], .invalidUTF8, column: 2),
    RejectedCase(bytes: [0x22, 0xE2, 0x82], .invalidUTF8, column: 2),
    RejectedCase(bytes: [0x22, 0x5C, 0x6E, 0xF0, 0x9F, 0x98, 0x22], .invalidUTF8, column: 4),
    RejectedCase(bytes: [0x5B, 0xC3, 0xA9, 0x5D], .unexpectedCharacter(found: "byte 0xC3", expected: "a value"), column: 2),
    // Duplicate keys, at any depth.
    RejectedCase(#"{"a":1,"a":2}"#, .duplicateKey("a"), column: 8),
    RejectedCase(#"{"a":1,"b":{"c":1,"c":1}}"#, .duplicateKey("c"), column: 19),
    RejectedCase(#"[{"x":null,"y":[],"x":0}]"#, .duplicateKey("x"), column: 19),
    RejectedCase(#"{"\u0061":1,"a":2}"#, .duplicateKey("a"), column: 13),
    // Depth.
    RejectedCase(String(repeating: "[", count: 513) + String(repeating: "]", count: 513), .tooDeep(limit: 512), column: 513),
    RejectedCase(String(repeating: #"{"a":"#, count: 513) + "1", .tooDeep(limit: 512), column: 2561),
    // Lines and columns count lines from 1 and characters, not bytes.
    RejectedCase("{\n  \"a\": 1,\n  \"b\": x\n}", .unexpectedCharacter(found: "'x'", expected: "a value"), line: 3, column: 8),
    RejectedCase("[\"é😀\", x]", .unexpectedCharacter(found: "'x'", expected: "a value"), column: 8),
    RejectedCase("[\r\n1,\r\n]", .unexpectedCharacter(found: "']'", expected: "a value after ',' (no trailing commas)"), line: 3, column: 1),
]

@Suite struct ErrorTests {
    @Test(arguments: rejectedCases)
    func rejects(_ rejected: RejectedCase) {
        do {
            let value = try JSONValue.parse(rejected.bytes)
            Issue.record("accepted as \(value.serialized())")
        } catch {
            #expect(error.reason == rejected.reason)
            #expect(error.line == rejected.line)
            #expect(error.column == rejected.column)
            #expect(!error.description.contains("\n"))
            #expect(error.description.hasPrefix("invalid JSON at line \(rejected.line), column \(rejected.column): "))
        }
    }

    @Test func hundredThousandLevelsFailCleanly() {
        for opener in ["[", #"{"k":"#, #"[{"k":"#] {
            let text = String(repeating: opener, count: 100_000)
            #expect(throws: JSONError.self) { try JSONValue.parse(text) }
            do {
                _ = try JSONValue.parse(text + String(repeating: "]", count: 100_000))
            } catch {
                #expect(error.reason == .tooDeep(limit: JSONValue.maximumDepth))
                #expect(error.description.contains("deeper than 512"))
            }
        }
    }

    @Test func descriptionsNeverQuoteStringContents() {
        let secret = "hunter2-secret"
        let inputs = [
            "\"\(secret)\\q\"", "\"\(secret)\\ud800\"", "\"\(secret)\t\"", "\"\(secret)",
            "{\"k\":\"\(secret)\",\"k\":1}", "[\"\(secret)\" x]",
        ]
        for input in inputs {
            do {
                _ = try JSONValue.parse(input)
                Issue.record("accepted \(input)")
            } catch {
                #expect(!error.description.contains(secret), "\(error.description)")
            }
        }
    }

    @Test func descriptionsSayWhatWasExpected() {
        #expect(throws: JSONError.self) { try JSONValue.parse("[1,]") }
        let cases: [(String, String)] = [
            ("[1,]", "invalid JSON at line 1, column 4: found ']', expected a value after ',' (no trailing commas)"),
            ("01", "invalid JSON at line 1, column 1: a number cannot have leading zeros"),
            (#"{"id":1,"id":2}"#, #"invalid JSON at line 1, column 9: the key "id" appears twice in one object; keys must be unique"#),
            (#""abc"#, #"invalid JSON at line 1, column 5: unexpected end of input, expected '"' to close the string"#),
        ]
        for (input, message) in cases {
            do {
                _ = try JSONValue.parse(input)
            } catch {
                #expect(error.description == message)
            }
        }
    }
}
