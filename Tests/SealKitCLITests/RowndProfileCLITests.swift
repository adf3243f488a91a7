import Foundation
import SealKit
import SealTestSupport
import Testing

/// `sealkit profile ... --rownd` against profiles that Rownd's SDKs wrote (Fixtures/rownd, made by
/// PyNaCl following the SDK code), and against PyNaCl reading the way a Rownd app reads.
@Suite("sealkit profile --rownd")
struct RowndProfileCLITests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/rownd")
    static let schema = fixtures.appendingPathComponent("schema.json").path
    static let keyID = "user_fixture_1"

    struct Vector {
        let name: String
        let file: String
        let rowndProfile: JSONValue
        let notes: [String]
        let strictExit: Int32
        let strictProfile: JSONValue?
        let strictErrors: [String]
    }

    static func vectors() throws -> [Vector] {
        let listing = try JSONValue.parse([UInt8](Data(contentsOf: fixtures.appendingPathComponent("vectors.json"))))
        let entries = try #require(listing["vectors"]?.arrayValue)
        return try entries.map { entry in
            let file = fixtures.appendingPathComponent(try #require(entry["file"]?.stringValue)).path
            let stored = try JSONValue.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: file))))
            let strict = try #require(entry["strict"])
            return Vector(
                name: try #require(entry["name"]?.stringValue),
                file: file,
                rowndProfile: try applying(try #require(entry["rownd"]?["changes"]), to: stored),
                notes: try #require(entry["rownd"]?["notes"]?.arrayValue).map { try #require($0.stringValue) },
                strictExit: Int32(try #require(strict["exit"]?.numberLexeme.flatMap { Int32($0) })),
                strictProfile: try strict["changes"].map { try applying($0, to: stored) },
                strictErrors: (strict["error"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
    }

    /// The stored profile with a vector's changes (`{"data.ssn": plaintext}`) applied; every other
    /// field stays as stored.
    static func applying(_ changes: JSONValue, to stored: JSONValue) throws -> JSONValue {
        guard case .object(var members) = stored else { throw CLIFixtureError("a stored profile is not an object") }
        for (path, value) in try #require(changes.objectValue) {
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let container = members.firstIndex(where: { $0.key == parts[0] }),
                case .object(var fields) = members[container].value,
                let field = fields.firstIndex(where: { $0.key == parts[1] })
            else { throw CLIFixtureError("vectors.json changes \(path), which the stored profile does not have") }
            fields[field].value = value
            members[container].value = .object(fields)
        }
        return .object(members)
    }

    struct CLIFixtureError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A CLI holding the fixture user's key.
    static func cliWithFixtureKey() throws -> CLI {
        let cli = try CLI()
        let key = try String(contentsOf: fixtures.appendingPathComponent("user.key"), encoding: .utf8)
        #expect(try cli.run(["keys", "import", keyID], stdin: key).status == 0)
        return cli
    }

    /// Every string anywhere in a value: what must never reach stderr.
    static func strings(in value: JSONValue) -> [String] {
        switch value {
        case .string(let text): return [text]
        case .array(let elements): return elements.flatMap(strings)
        case .object(let members): return members.flatMap { strings(in: $0.value) }
        default: return []
        }
    }

    @Test(.requires(.pyNaCl)) func theFixturesAreWhatTheIndependentImplementationWrites() throws {
        let result = try python(
            "import runpy, sys; sys.argv = ['make_fixtures.py', '--check']; runpy.run_path(sys.stdin.read(), run_name='__main__')",
            stdin: Self.fixtures.appendingPathComponent("make_fixtures.py").path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.vectors().count >= 8)
    }

    @Test func everyVectorGivesItsOutcomeUnderRowndAndUnderStrict() throws {
        let cli = try Self.cliWithFixtureKey()
        for vector in try Self.vectors() {
            let rownd = try cli.run(["profile", "decrypt", "--rownd", "--schema", Self.schema, "--key", Self.keyID, vector.file])
            #expect(rownd.status == 0, "\(vector.name): \(rownd.stderr)")
            #expect(try JSONValue.parse(rownd.output) == vector.rowndProfile, "\(vector.name)")
            let notes = rownd.stderr.split(separator: "\n").map(String.init)
            #expect(notes.count == vector.notes.count, "\(vector.name): \(rownd.stderr)")
            for (line, path) in zip(notes, vector.notes) {
                #expect(line.hasPrefix("sealkit: note: \(path) "), "\(vector.name): \(line)")
            }
            // Notes name fields and reasons, never values.
            let stored = try JSONValue.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: vector.file))))
            for secret in Self.strings(in: vector.rowndProfile) + Self.strings(in: stored) where secret.count > 3 {
                #expect(!rownd.stderr.contains(secret), "\(vector.name): stderr shows a value")
            }

            let strict = try cli.run(["profile", "decrypt", "--schema", Self.schema, "--key", Self.keyID, vector.file])
            #expect(strict.status == vector.strictExit, "\(vector.name): \(strict.stderr)")
            if let expected = vector.strictProfile {
                #expect(strict.stderr.isEmpty, "\(vector.name): \(strict.stderr)")
                #expect(try JSONValue.parse(strict.output) == expected, "\(vector.name)")
            } else {
                expectCleanFailure(strict)
                for fragment in vector.strictErrors {
                    #expect(strict.stderr.contains(fragment), "\(vector.name): \(strict.stderr) lacks \(fragment)")
                }
            }

            // Nothing here is under a retired key, so rotating changes nothing and says the same.
            let rotated = try cli.run(["profile", "rotate", "--rownd", "--schema", Self.schema, "--key", Self.keyID, vector.file])
            #expect(rotated.status == 0, "\(vector.name): \(rotated.stderr)")
            #expect(try JSONValue.parse(rotated.output) == stored, "\(vector.name)")
        }
    }

    @Test func ndjsonGivesEveryVectorsOutcomeLineByLine() throws {
        let cli = try Self.cliWithFixtureKey()
        let vectors = try Self.vectors()
        let input = try vectors.map { try String(contentsOfFile: $0.file, encoding: .utf8) }.joined()
        let result = try cli.run(["profile", "decrypt", "--rownd", "--ndjson", "--schema", Self.schema, "--key", Self.keyID], stdin: input)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == vectors.count)
        for (line, vector) in zip(lines, vectors) {
            #expect(try JSONValue.parse(String(line)) == vector.rowndProfile, "\(vector.name)")
        }
        let expectedNotes = vectors.enumerated().flatMap { index, vector in vector.notes.map { "line \(index + 1): \($0) " } }
        let notes = result.stderr.split(separator: "\n").map(String.init)
        #expect(notes.count == expectedNotes.count, "\(result.stderr)")
        for (note, expected) in zip(notes, expectedNotes) { #expect(note.hasPrefix("sealkit: note: " + expected), "\(note)") }

        // The strict default stops at the first profile it cannot decrypt, with the hint.
        let strict = try cli.run(["profile", "decrypt", "--ndjson", "--schema", Self.schema, "--key", Self.keyID], stdin: input)
        expectCleanFailure(strict, containing: "written by a Rownd app? try --rownd")
        #expect(strict.stderr.hasPrefix("sealkit: line 2: "))
    }

    @Test func ndjsonListsTheFirstTwentyNotesThenCountsTheRest() throws {
        let cli = try Self.cliWithFixtureKey()
        let input = (1...30).map { #"{"data":{"ssn":"s\#($0)","credit_score":\#($0)}}"# }.joined(separator: "\n") + "\n"
        let result = try cli.run(["profile", "encrypt", "--rownd", "--ndjson", "--schema", Self.schema, "--key", Self.keyID], stdin: input)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.output.split(separator: "\n").count == 30)
        let notes = result.stderr.split(separator: "\n").map(String.init)
        try #require(notes.count == 21, "\(result.stderr)")
        #expect(notes.first == "sealkit: note: line 1: data.credit_score left in plaintext: it holds a number, and Rownd encrypts only strings")
        #expect(notes[19].hasPrefix("sealkit: note: line 20: data.credit_score"))
        #expect(notes.last == "sealkit: note: 10 more fields left as they were, not listed")
    }

    /// Numbers SealKit encrypted came back in a Rownd app as strings.
    /// With --rownd they are never encrypted, so a Rownd app reads them as numbers.
    @Test(.requires(.pyNaCl)) func aRowndAppReadsWhatEncryptRowndWroteWithEveryTypeIntact() throws {
        let cli = try Self.cliWithFixtureKey()
        let original = """
            {"data":{"user_id":"user_fixture_1","email":"ada@example.com","ssn":"078-05-1120","nickname":"Ada ✨",\
            "middle_name":"","credit_score":812,"is_verified":true,"home_address":{"street":"12 St James's Square"},\
            "photo":"https://cdn.example.com/u/1.png","favourite":"blue","lucky_number":7.25,"nothing":null},\
            "redacted":[],"meta":{"ssn":"meta is never encrypted"}}
            """
        let encrypted = try cli.run(["profile", "encrypt", "--rownd", "--schema", Self.schema, "--key", Self.keyID], stdin: original)
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let sealed = try JSONValue.parse(encrypted.output)
        for field in ["ssn", "nickname", "middle_name", "photo", "favourite"] {
            #expect(sealed["data"]?[field] != (try JSONValue.parse(original))["data"]?[field], "\(field) was not encrypted")
        }
        #expect(!encrypted.stdout.contains("078-05-1120"))
        #expect(sealed["meta"]?["ssn"] == "meta is never encrypted")
        #expect(encrypted.stderr.split(separator: "\n").count == 4, "\(encrypted.stderr)")
        for path in ["data.credit_score", "data.is_verified", "data.home_address", "data.lucky_number"] {
            #expect(encrypted.stderr.contains("sealkit: note: \(path) left in plaintext"), "\(encrypted.stderr)")
        }

        // PyNaCl, decrypting the way Rownd's SDKs do (make_fixtures.sdk_data_as_decrypted), with Python's own
        // JSON types: the number must still be an int, the boolean a bool.
        let script = """
            import json, sys, runpy
            lines = sys.stdin.read().split("\\n", 1)
            rownd = runpy.run_path(lines[0])
            profile = json.loads(lines[1])
            shown = rownd["sdk_data_as_decrypted"](profile["data"], rownd["USER_KEY"])
            print(json.dumps({"shown": shown, "types": {k: type(v).__name__ for k, v in shown.items()}}, ensure_ascii=False))
            """
        let result = try python(
            script, stdin: Self.fixtures.appendingPathComponent("make_fixtures.py").path + "\n" + encrypted.stdout)
        #expect(result.status == 0, "\(result.stderr)")
        let read = try JSONValue.parse(result.stdout)
        #expect(read["shown"] == (try JSONValue.parse(original))["data"])
        #expect(read["types"]?["credit_score"] == "int")
        #expect(read["types"]?["lucky_number"] == "float")
        #expect(read["types"]?["is_verified"] == "bool")
        #expect(read["types"]?["home_address"] == "dict")
        #expect(read["types"]?["ssn"] == "str")
        #expect(read["types"]?["nothing"] == "NoneType")

        // And sealkit's own --rownd decrypt gives back the original, byte for byte.
        let decrypted = try cli.run(["profile", "decrypt", "--rownd", "--schema", Self.schema, "--key", Self.keyID], stdin: encrypted.stdout)
        #expect(decrypted.status == 0)
        #expect(decrypted.output == (try JSONValue.parse(original)).serialized())
    }

    @Test func strictFailuresHintAtRowndAndRowndNeverFailsOnFields() throws {
        let cli = try Self.cliWithFixtureKey()
        let profile = #"{"data":{"ssn":"plain","credit_score":812}}"#
        for operation in ["decrypt", "rotate"] {
            let strict = try cli.run(["profile", operation, "--schema", Self.schema, "--key", Self.keyID], stdin: profile)
            expectCleanFailure(strict, containing: "(written by a Rownd app? try --rownd)")
            #expect(strict.status == 65)
            #expect(!strict.stderr.contains("plain"))
            let rownd = try cli.run(["profile", operation, "--rownd", "--schema", Self.schema, "--key", Self.keyID], stdin: profile)
            #expect(rownd.status == 0, "\(rownd.stderr)")
            #expect(rownd.output == profile)
        }
        // Input that is not a profile is still an error, in both modes, for every operation.
        let hostile: [(String, [UInt8])] = [
            ("empty", []), ("cut short", Array(#"{"data":{"ssn":"#.utf8)), ("not UTF-8", [0x7B, 0xFF, 0x7D]),
            ("nested 100,000 levels", Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)),
            ("a string", Array(#""078-05-1120""#.utf8)), ("duplicate keys", Array(#"{"data":{"ssn":"a","ssn":"b"}}"#.utf8)),
        ]
        for operation in ["encrypt", "decrypt", "rotate"] {
            for (name, input) in hostile {
                let result = try cli.run(
                    ["profile", operation, "--rownd", "--schema", Self.schema, "--key", Self.keyID], stdinBytes: input)
                expectCleanFailure(result)
                #expect(result.status == 65, "\(operation) \(name): \(result.status) \(result.stderr)")
                #expect(!result.stderr.contains("078-05-1120"), "\(operation) \(name)")
            }
            // Blank NDJSON lines are skipped and counted, as `audit` does, in both modes.
            let blankLine = try cli.run(
                ["profile", operation, "--rownd", "--ndjson", "--schema", Self.schema, "--key", Self.keyID], stdin: "{}\n\n{}\n")
            #expect(blankLine.status == 0, "\(blankLine.stderr)")
            #expect(blankLine.stdout == "{}\n{}\n")
            #expect(blankLine.stderr.contains("1 blank line skipped"))
        }
        for flags in [[], ["--rownd"]] {
            expectCleanFailure(
                try cli.run(["profile", "decrypt"] + flags + ["--schema", Self.schema, "--key", Self.keyID], stdin: "[1]"),
                containing: "must be a JSON object")
        }
    }
}

extension RowndProfileCLITests {
    // MARK: Rownd's schema types through the command line

    /// A known key, so PyNaCl can open what sealkit wrote.
    static let knownKey = "+RCiJFwwS1QhC87mwjLZVopVCPERtT2rcjVAZm7MYno="

    static let typedFields = """
        "ssn": {"type": "string", "encryption": {"state": "enabled"}},
        "fav": {"type": "any", "encryption": {"state": "enabled"}},
        "nothing": {"type": "null", "encryption": {"state": "enabled"}},
        "photo": {"type": "image", "encryption": {"state": "enabled"}},
        "scan": {"type": "document", "encryption": {"state": "enabled"}},
        "plan": {"type": "string"}
        """

    /// What PyNaCl finds inside each flagged ciphertext of a profile: field -> plaintext.
    static func openWithPyNaCl(_ profile: String) throws -> [String: String] {
        let script = """
            import sys, json, base64, nacl.secret
            box = nacl.secret.SecretBox(base64.b64decode(sys.stdin.readline().strip()))
            profile = json.loads(sys.stdin.read())
            print(json.dumps({k: box.decrypt(base64.b64decode(v)).decode() for k, v in profile.items()
                              if isinstance(v, str) and k != "plan" and len(v) >= 56}))
            """
        let result = try python(script, stdin: knownKey + "\n" + profile)
        #expect(result.status == 0, "\(result.stderr)")
        guard case .object(let members) = try JSONValue.parse(result.stdout) else { return [:] }
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value.stringValue ?? "") })
    }

    /// `any` holds every JSON type, encrypted as its JSON text (PyNaCl finds exactly that text)
    /// and given back as the same value, byte for byte; `null` stays null; `image` and `document`
    /// are strings. The schema bare, under "schema" and under "app" gives the same profile.
    @Test(.requires(.pyNaCl)) func everyRowndTypeThroughTheCommandLine() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "u"], stdin: KeyFixtures.rowndKey).status == 0)
        var schemas: [String] = []
        for (index, wrapped) in [
            "{\(Self.typedFields)}", "{\"schema\": {\(Self.typedFields)}}",
            "{\"app\": {\"id\": \"a\", \"schema\": {\(Self.typedFields)}}}",
        ].enumerated() {
            let url = cli.home.appendingPathComponent("schema\(index).json")
            try Data(wrapped.utf8).write(to: url)
            schemas.append(url.path)
        }
        let anyValues = [
            #""text""#, #""""#, #""é ✨ \"q\"""#, "12.50", "-0", "1E+2", "12345678901234567890.10", "true", "false",
            #"{"a":[1,{"b":null}],"c":1.0}"#, #"[1,"x",null]"#, "[]", "{}",
        ]
        for value in anyValues {
            let profile = #"{"ssn":"078-05-1120","fav":\#(value),"nothing":null,"photo":"data:image/png;base64,iVBO","scan":"d.pdf","plan":"pro"}"#
            var outputs: [String] = []
            for schema in schemas {
                let sealed = try cli.run(["profile", "encrypt", "--schema", schema, "--key", "u"], stdin: profile)
                #expect(sealed.status == 0 && sealed.stderr.isEmpty, "\(value): \(sealed.stderr)")
                let parsed = try JSONValue.parse(sealed.output)
                #expect(parsed["nothing"] == .null && parsed["plan"] == "pro", "\(value)")
                let opened = try Self.openWithPyNaCl(sealed.output)
                #expect(opened["fav"] == value, "\(value): PyNaCl found \(opened["fav"] ?? "nothing")")
                #expect(opened["ssn"] == "078-05-1120" && opened["photo"] == "data:image/png;base64,iVBO" && opened["scan"] == "d.pdf")
                let back = try cli.run(["profile", "decrypt", "--schema", schema, "--key", "u", "-"], stdin: sealed.stdout)
                #expect(back.status == 0 && back.output == profile, "\(value): \(back.stderr) \(back.output)")
                outputs.append(back.output)
            }
            #expect(Set(outputs).count == 1, "\(value): the wrappers disagree")
        }
        // A null-typed field holding something else is refused, not encrypted as if it were null.
        let refused = try cli.run(["profile", "encrypt", "--schema", schemas[0], "--key", "u"], stdin: #"{"nothing":"x"}"#)
        expectCleanFailure(refused, containing: "nothing")
        #expect(refused.status == 65)
    }

    /// Under --rownd an `any` string is sealed as the string itself, as the SDKs seal any string,
    /// and every other JSON type stays in plaintext, noted by path and never by value.
    @Test(.requires(.pyNaCl)) func anyUnderRowndSealsOnlyStrings() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "u"], stdin: KeyFixtures.rowndKey).status == 0)
        let schema = cli.home.appendingPathComponent("schema.json")
        try Data("{\(Self.typedFields)}".utf8).write(to: schema)
        let text = try cli.run(["profile", "encrypt", "--rownd", "--schema", schema.path, "--key", "u"], stdin: #"{"fav":"blue sky"}"#)
        #expect(text.status == 0 && text.stderr.isEmpty, "\(text.stderr)")
        #expect(try Self.openWithPyNaCl(text.output)["fav"] == "blue sky")
        for value in ["812", "true", "null", #"{"secret":"kept"}"#, #"["secret"]"#] {
            let profile = #"{"fav":\#(value)}"#
            let result = try cli.run(["profile", "encrypt", "--rownd", "--schema", schema.path, "--key", "u"], stdin: profile)
            #expect(result.status == 0 && result.output == profile, "\(value): \(result.stderr)")
            #expect(value == "null" ? result.stderr.isEmpty : result.stderr.hasPrefix("sealkit: note: fav left in plaintext"), "\(value): \(result.stderr)")
            #expect(!result.stderr.contains("secret") && !result.stderr.contains("812"), "\(result.stderr)")
        }
    }
}
