import SealKit
import Testing


/// The parser limits a schema and a profile meet, at the parser: deep nesting, duplicate members, invalid UTF-8 and
/// trailing text are refused with a typed error that names the place, never the content. The CLI's hostile corpus
/// checks the wording and exit status once per rule.
@Suite("Schema and profile parser limits")
struct ParserLimitTests {
    /// Nested texts by name, so a test's arguments print as a word, not as 200,000 brackets.
    static func nested(_ name: String) -> String {
        switch name {
        case "arrays 100,000 deep": String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        case "objects 100,000 deep": String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        // One level past the limit: the limit itself, not only an absurd depth, is what refuses.
        default: String(repeating: "[", count: JSONValue.maximumDepth + 1) + String(repeating: "]", count: JSONValue.maximumDepth + 1)
        }
    }

    @Test(arguments: ["arrays 100,000 deep", "objects 100,000 deep", "arrays one past the limit"])
    func aSchemaNestedPastTheLimitIsRefusedAsTooDeep(_ name: String) throws {
        let error = try #require(schemaError(Self.nested(name)))
        guard case .invalidJSON(let json) = error else {
            Issue.record("not a JSON error: \(error)")
            return
        }
        #expect(json.reason == .tooDeep(limit: JSONValue.maximumDepth))
        #expect(error.description.contains("nest deeper than 512 levels"), "\(error.description)")
    }

    @Test(arguments: [
        (#"{"ssn": {"type": "string"}, "ssn": {"type": "string"}}"#, "appears twice"),
        (#"{"ssn": {"type": "string"}} trailing"#, "expected the end of the input"),
        ("{\"ssn\": {\"type\": \"str\u{1}ing\"}}", "control"),
    ])
    func aSchemaThatIsNotStrictJSONIsRefused(_ text: String, _ word: String) throws {
        let error = try #require(schemaError(text))
        guard case .invalidJSON = error else {
            Issue.record("not a JSON error: \(error)")
            return
        }
        #expect(error.description.lowercased().contains(word), "\(error.description)")
    }

    @Test func aSchemaOfInvalidUTF8IsRefused() throws {
        do {
            _ = try ProfileSchema(parsing: [UInt8](#"{"ssn": {"type": ""#.utf8) + [0xFF, 0xFE] + [UInt8](#""}}"#.utf8))
            Issue.record("parsed invalid UTF-8")
        } catch {
            guard case .invalidJSON = error else {
                Issue.record("not a JSON error: \(error)")
                return
            }
        }
    }
}
