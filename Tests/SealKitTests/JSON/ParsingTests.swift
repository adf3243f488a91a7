import Testing

import SealKit

@Suite struct ParsingTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue.parse(#" { "n": null, "t": true, "f": false, "i": -12, "s": "x", "a": [1, [], {}], "o": {"k": "v"} } "#)
        #expect(value["n"] == .null)
        #expect(value["t"] == .bool(true))
        #expect(value["f"] == .bool(false))
        #expect(value["i"] == .number("-12"))
        #expect(value["s"] == .string("x"))
        #expect(value["a"] == .array([.number("1"), .array([]), .object([])]))
        #expect(value["o"]?["k"]?.stringValue == "v")
        #expect(value["missing"] == nil)
    }

    @Test func keepsKeyOrder() throws {
        let value = try JSONValue.parse(#"{"zeta":1,"alpha":2,"mid":{"b":1,"a":2},"beta":3}"#)
        #expect(value.objectValue?.map(\.key) == ["zeta", "alpha", "mid", "beta"])
        #expect(value["mid"]?.objectValue?.map(\.key) == ["b", "a"])
        #expect(value.serialized() == #"{"zeta":1,"alpha":2,"mid":{"b":1,"a":2},"beta":3}"#)
    }

    @Test(arguments: [
        "12345678901234567890", "0.1", "-0", "1e400", "-1E-400", "0", "-0.0", "1.000000000000000000001",
        "123456789012345678901234567890.123456789e+10", "2.5E3", "9007199254740993", "1e-7",
    ])
    func keepsNumbersExactly(lexeme: String) throws {
        let value = try JSONValue.parse("[\(lexeme)]")
        #expect(value == .array([.number(lexeme)]))
        #expect(value.serialized() == "[\(lexeme)]")
        #expect(try JSONValue.parse(lexeme).numberLexeme == lexeme)
    }

    @Test func decodesEscapes() throws {
        let value = try JSONValue.parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u4e2d\ud83d\ude00\u0000""#)
        #expect(value == .string("\"\\/\u{08}\u{0C}\n\r\tAé中😀\u{0}"))
    }

    @Test func keepsRawUTF8() throws {
        let text = "héllo wörld 中文 😀 \u{10FFFF}"
        #expect(try JSONValue.parse("\"\(text)\"") == .string(text))
        #expect(try JSONValue.parse(Array("\"\(text)\"".utf8)) == .string(text))
    }

    @Test func acceptsWhitespaceAroundAndBetween() throws {
        #expect(try JSONValue.parse(" \t\r\n[ 1 ,\n2\t]\r\n ") == [1, 2])
        #expect(try JSONValue.parse("\n\"x\"\n") == "x")
    }

    @Test func parsesEveryKindOfByteCollection() throws {
        let bytes = Array(#"{"a":[true]}"#.utf8)
        let expected: JSONValue = ["a": [true]]
        #expect(try JSONValue.parse(bytes) == expected)
        #expect(try JSONValue.parse(bytes[...]) == expected)
        // A collection without contiguous storage takes the copying path.
        #expect(try JSONValue.parse(bytes.indices.lazy.map { bytes[$0] }) == expected)
    }

    @Test func acceptsExactlyTheMaximumDepth() throws {
        let depth = JSONValue.maximumDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try JSONValue.parse(text)
        var levels = 0
        while case .array(let elements) = value {
            levels += 1
            value = elements.first ?? .null
        }
        #expect(levels == depth)
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(try JSONValue.parse(objects).serialized() == objects)
    }

    @Test func largeObjectsKeepOrderAndCatchDuplicates() throws {
        let keys = (0..<200).map { "k\(199 - $0)" }
        let text = "{" + keys.map { "\"\($0)\":\"\($0)\"" }.joined(separator: ",") + "}"
        let value = try JSONValue.parse(text)
        #expect(value.objectValue?.map(\.key) == keys)
        #expect(value["k7"] == "k7")
        #expect(value.serialized() == text)
        let duplicated = "{" + keys.map { "\"\($0)\":0" }.joined(separator: ",") + ",\"k150\":1}"
        #expect(throws: JSONError.self) { try JSONValue.parse(duplicated) }
        do {
            _ = try JSONValue.parse(duplicated)
        } catch {
            #expect(error.reason == .duplicateKey("k150"))
        }
    }

    @Test func convenienceAccessors() throws {
        let value: JSONValue = ["s": "text", "n": 7, "b": false, "a": [nil], "o": [:], "z": nil]
        #expect(value["s"]?.stringValue == "text")
        #expect(value["n"]?.numberLexeme == "7")
        #expect(value["b"]?.boolValue == false)
        #expect(value["a"]?.arrayValue == [.null])
        #expect(value["o"]?.objectValue?.isEmpty == true)
        #expect(value["z"]?.isNull == true)
        #expect(value["s"]?.numberLexeme == nil)
        #expect(value["n"]?.stringValue == nil)
        #expect(JSONValue.string("x")["s"] == nil)
    }

    @Test func equalityIsStructuralAndOrdered() {
        let ab: JSONValue = ["a": 1, "b": 2]
        let ba: JSONValue = ["b": 2, "a": 1]
        #expect(ab != ba)
        #expect(ab == ["a": 1, "b": 2])
        #expect(JSONValue.number("1.0") != .number("1"))
        #expect(JSONValue.string("1") != .number("1"))
        #expect(JSONValue.array([]) != .object([]))
    }
}
