import Testing

import SealKit

@Suite struct SerializationTests {
    @Test func settingAMemberReplacesInPlaceAppendsOrRemoves() throws {
        var value = try JSONValue.parse(Array(#"{"a": 1, "b": 2}"#.utf8))
        value["a"] = "x"
        value["c"] = .null
        value["b"] = nil
        value["missing"] = nil
        #expect(value.serialized() == #"{"a":"x","c":null}"#)
        var array = try JSONValue.parse(Array("[1]".utf8))
        array["a"] = 1
        #expect(array.serialized() == "[1]")
    }

    @Test func compactHasNoWhitespace() throws {
        let value: JSONValue = ["a": [1, "two", true, nil], "b": [:], "c": []]
        #expect(value.serialized() == #"{"a":[1,"two",true,null],"b":{},"c":[]}"#)
    }

    @Test func prettyIndentsByTwo() throws {
        let value: JSONValue = ["a": [1, ["x": nil]], "b": [:], "c": [], "d": "e"]
        let expected = """
            {
              "a": [
                1,
                {
                  "x": null
                }
              ],
              "b": {},
              "c": [],
              "d": "e"
            }
            """
        #expect(value.serialized(pretty: true) == expected)
        #expect(try JSONValue.parse(expected) == value)
        #expect(JSONValue.string("s").serialized(pretty: true) == #""s""#)
    }

    @Test func escapesControlCharactersQuoteAndBackslash() {
        let all = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let expected =
            #""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#
            + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#
        #expect(JSONValue.string(all).serialized() == expected)
        #expect(JSONValue.string(#"say "hi" \ bye"#).serialized() == #""say \"hi\" \\ bye""#)
    }

    @Test func writesSlashAndNonASCIIAsIs() {
        let text = "a/b é 中 😀 \u{7F} \u{2028}"
        #expect(JSONValue.string(text).serialized() == "\"\(text)\"")
        #expect(JSONValue.object([(key: "ключ/é", value: .null)]).serialized() == "{\"ключ/é\":null}")
    }

    @Test func roundTripsText() throws {
        let texts = [
            #"{"id":"u1","data":{"z":-0,"a":1e400,"big":12345678901234567890,"d":0.1},"list":[[],{},[null,false]]}"#,
            #"["\"\\\n\t\u0000\u001f","€𝄞","/"]"#,
            "\"\"", "0", "-1.5E+10", "true", "null", "[]", "{}",
        ]
        for text in texts {
            let value = try JSONValue.parse(text)
            #expect(value.serialized() == text)
            #expect(try JSONValue.parse(value.serialized(pretty: true)) == value)
        }
    }

    @Test func roundTripsValues() throws {
        let value: JSONValue = [
            "order": ["z": 1, "y": 2, "x": 3],
            "numbers": [.number("-0"), .number("0.1"), .number("1e400"), .number("12345678901234567890")],
            "strings": ["", "\u{0}", "\u{1F600}", "tab\there", "quote\"", "back\\slash"],
            "nested": [[[[["deep"]]]]],
        ]
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(try JSONValue.parse(value.serialized(pretty: true)) == value)
    }
}
