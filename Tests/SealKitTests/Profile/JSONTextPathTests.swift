import Foundation
import PropertyBased
import SealKit
import SealTestSupport
import Testing


/// `encrypt(jsonText:)` takes a fast path that never builds a value tree. It must return what the
/// value tree returns (`encrypt(parse(text)).serialized()`) for every input, valid or not: the same
/// bytes except that freshly made ciphertexts differ by their random nonces, and the same errors.
@Suite("Profile encryption from JSON text")
struct JSONTextPathTests {
    /// A generated schema and profile, and a seed for the ways its text is varied.
    struct Case: Sendable, CustomTestStringConvertible {
        let generated: SchemaAndProfile
        let seed: UInt64
        var testDescription: String { "seed \(seed) " + generated.testDescription }
    }

    static let cases = Generator<Case, Shrink.None<Case>>(run: { rng in
        var random = RandomJSON(rng: SeededSource(base: rng))
        let generated = random.schemaAndProfile()
        let seed = random.rng.next()
        rng = random.rng.base
        return Case(generated: generated, seed: seed)
    })

    @Test func agreesWithTheValueTree() async {
        await propertyCheck(count: 400, input: Self.cases) { testCase in
            var random = SplitMix64(seed: testCase.seed)
            let keys = KeyRing(current: .generate(), retired: Bool.random(using: &random) ? [.generate()] : [])
            let encryptor = ProfileEncryptor(schema: testCase.generated.schema)
            for _ in 0..<4 {
                let profile = Self.vary(testCase.generated, keys: keys, encryptor: encryptor, using: &random)
                var text = Array(Self.write(profile, using: &random).utf8)
                if Int.random(in: 0..<10, using: &random) == 0 {
                    text.removeLast(Int.random(in: 0...min(text.count, 8), using: &random))
                }
                Self.expectAgreement(text, encryptor: encryptor, keys: keys)
            }
        }
    }

    @Test func agreesOnHandPickedProfiles() throws {
        let schema = try ProfileSchema(
            parsing: #"""
                {"ssn": {"type": "string", "encryption": {"state": "enabled"}},
                 "notes": {"encryption": {"state": "enabled"}},
                 "score": {"type": "number", "encryption": {"state": "enabled"}},
                 "K": {"type": "string", "encryption": {"state": "enabled"}},
                 "name": {"type": "string"}}
                """#)
        let keys = KeyRing(current: .generate())
        let encryptor = ProfileEncryptor(schema: schema)
        let already = FieldCipher.encrypt("078-05-1120", using: keys.current)
        let foreign = FieldCipher.encrypt("078-05-1120", using: .generate())
        let profiles = [
            #"{"ssn": "078-05-1120", "score": 812, "name": "Ada"}"#,
            #"{"ssn": "\u0030\n78", "notes": "tab\tand \"quotes\"", "score": -0.0e+5}"#,
            #"{"ssn": "\#(already)", "score": 1}"#, #"{"ssn": "\#(foreign)"}"#,
            #"{"id": "u", "data": {"ssn": "1", "score": 2}, "ssn": "top level stays"}"#,
            #"{"id": "u", "data": "not an object", "ssn": "1"}"#,
            #"{"data": {}, "ssn": "1"}"#, #"{"ssn": 5}"#, #"{"notes": 5}"#, #"{"notes": null, "ssn": null}"#,
            "{\"\u{212A}\": \"kelvin\", \"K\\u0000\": 1}", "{\"\u{212A}\": \"kelvin\"}", #"{"\u004b": "escaped K"}"#,
            #"{"data": {"\u212a": "x"}}"#, "[1]", "\"text\"", "{", #"{"ssn": "1", "ssn": "2"}"#, "",
        ]
        for profile in profiles { Self.expectAgreement(Array(profile.utf8), encryptor: encryptor, keys: keys) }
    }

    /// The fast path must really be taken for ordinary profiles (the agreement tests pass either way),
    /// and must hand everything unusual to the tree.
    @Test func takesTheFastPathOnlyForPlainProfiles() throws {
        let schema = try ProfileSchema(
            parsing: #"{"ssn": {"type": "string", "encryption": {"state": "enabled"}}, "score": {"type": "number", "encryption": {"state": "enabled"}}}"#)
        let keys = KeyRing(current: .generate())
        let encryptor = ProfileEncryptor(schema: schema)
        func takesFastPath(_ profile: String) throws -> Bool {
            var output: [UInt8] = []
            let outline = try Array(profile.utf8).withUnsafeBufferPointer { try JSONOutline(compacting: $0) }
            let taken = encryptor.appendEncrypted(outline, with: keys, to: &output)
            #expect(taken || output.isEmpty, "the fast path wrote before giving up")
            return taken
        }
        #expect(try takesFastPath(#"{"ssn": "078-05-1120", "score": 812, "other": {"a": [1]}}"#))
        #expect(try takesFastPath(#"{"id": "u", "data": {"ssn": "078-05-1120", "score": null}}"#))
        // A stranger's ciphertext is never sealed again: the value tree refuses it.
        #expect(try !takesFastPath(#"{"ssn": "\#(FieldCipher.encrypt("x", using: .generate()))"}"#))
        #expect(try !takesFastPath(#"{"ssn": "\#(try KeyRing(current: .generate(), id: "u").encrypt("x", format: .v2, place: .field("ssn")))"}"#))
        #expect(try takesFastPath(#"{"ssn": "aGVsbG8gd29ybGQ="}"#))  // base64, but too short to be a ciphertext
        #expect(try !takesFastPath(#"{"ssn": "\#(FieldCipher.encrypt("x", using: keys.current))"}"#))
        #expect(try !takesFastPath(#"{"ssn": "line\nbreak"}"#))
        #expect(try !takesFastPath(#"{"ssn": 5}"#))
        #expect(try !takesFastPath(#"{"score": "5"}"#))
        #expect(try !takesFastPath("{\"caf\u{E9}\": 1}"))
        #expect(try !takesFastPath("[1]"))
    }

    // MARK: Comparing

    static func expectAgreement(
        _ text: [UInt8], encryptor: ProfileEncryptor, keys: KeyRing, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let fast = Result { () throws(ProfileError) in try encryptor.encrypt(jsonText: text, with: keys) }
        let tree = Result { () throws(ProfileError) in
            let profile: JSONValue
            do throws(JSONError) { profile = try JSONValue.parse(text) } catch { throw .invalidJSON(error) }
            return Array(try encryptor.encrypt(profile, with: keys).serialized().utf8)
        }
        switch (fast, tree) {
        case (.success(let fast), .success(let tree)):
            #expect(fast.count == tree.count, "\(String(decoding: text, as: UTF8.self))", sourceLocation: sourceLocation)
            guard let fastValue = try? JSONValue.parse(fast), let treeValue = try? JSONValue.parse(tree) else {
                Issue.record("output is not JSON", sourceLocation: sourceLocation)
                return
            }
            let input = try? JSONValue.parse(text)
            #expect(
                sameUpToFreshCiphertexts(fastValue, treeValue, input: input, keys: keys),
                "\(String(decoding: text, as: UTF8.self))\nfast \(String(decoding: fast, as: UTF8.self))\ntree \(String(decoding: tree, as: UTF8.self))",
                sourceLocation: sourceLocation)
        case (.failure(let fast), .failure(let tree)):
            #expect(fast == tree, sourceLocation: sourceLocation)
        default:
            Issue.record(
                "fast \(fast) but tree \(tree) for \(String(decoding: text, as: UTF8.self))", sourceLocation: sourceLocation)
        }
    }

    /// Equal, except where both hold a ciphertext made now (not in the input): those must differ
    /// from the input and open to the same plaintext.
    static func sameUpToFreshCiphertexts(_ a: JSONValue, _ b: JSONValue, input: JSONValue?, keys: KeyRing) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)):
            if x == y { return true }
            guard input?.stringValue != x, input?.stringValue != y,
                let openedX = try? FieldCipher.decrypt(x, using: keys.current),
                let openedY = try? FieldCipher.decrypt(y, using: keys.current)
            else { return false }
            return openedX == openedY
        case (.array(let x), .array(let y)):
            let inputs = input?.arrayValue
            return x.count == y.count
                && x.indices.allSatisfy { sameUpToFreshCiphertexts(x[$0], y[$0], input: inputs?[$0], keys: keys) }
        case (.object(let x), .object(let y)):
            let inputs = input?.objectValue
            return x.count == y.count
                && x.indices.allSatisfy { index in
                    x[index].key == y[index].key
                        && sameUpToFreshCiphertexts(
                            x[index].value, y[index].value, input: inputs.map { $0[index].value }, keys: keys)
                }
        default:
            return a == b
        }
    }

    // MARK: Varying

    /// The generated profile, or a variant: some fields already encrypted (under either key), some
    /// holding a value of the wrong type, some ciphertexts from a stranger's key.
    static func vary(
        _ generated: SchemaAndProfile, keys: KeyRing, encryptor: ProfileEncryptor, using random: inout SplitMix64
    ) -> JSONValue {
        var profile = generated.profile
        guard Int.random(in: 0..<3, using: &random) > 0 else { return profile }
        let isUserState = profile["data"] != nil
        guard var fields = (isUserState ? profile["data"] : profile)?.objectValue, !fields.isEmpty else { return profile }
        let anyKey = keys.retired.isEmpty || Bool.random(using: &random) ? keys.current : keys.retired[0]
        let encrypted = (try? encryptor.encrypt(.object(fields), with: KeyRing(current: anyKey)))?.objectValue ?? fields
        for index in fields.indices {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: fields[index].value = encrypted[index].value
            case 1: fields[index].value = .string(FieldCipher.encrypt("stranger", using: .generate()))
            case 2: fields[index].value = [.number("1"), .bool(true), .string("x"), .array([]), .object([])][Int.random(in: 0..<5, using: &random)]
            default: break
            }
        }
        if isUserState {
            profile = ["id": "user_1", "data": .object(fields)]
        } else {
            profile = .object(fields)
        }
        return profile
    }

    /// JSON text for `value`, written one of the many ways: random whitespace, random `\u` escapes.
    static func write(_ value: JSONValue, using random: inout SplitMix64) -> String {
        let space = { (random: inout SplitMix64) -> String in Int.random(in: 0..<4, using: &random) == 0 ? " \n" : "" }
        switch value {
        case .null, .bool, .number: return value.serialized()
        case .string(let text):
            guard Int.random(in: 0..<4, using: &random) == 0 else { return value.serialized() }
            return "\"" + text.unicodeScalars.map { scalar in
                scalar.value < 0x80 && Bool.random(using: &random)
                    ? String(format: "\\u%04x", scalar.value) : String(JSONValue.string(String(scalar)).serialized().dropFirst().dropLast())
            }.joined() + "\""
        case .array(let elements):
            return "[" + space(&random) + elements.map { write($0, using: &random) }.joined(separator: "," + space(&random)) + "]"
        case .object(let members):
            return "{" + space(&random)
                + members.map { write(.string($0.key), using: &random) + space(&random) + ":" + write($0.value, using: &random) }
                .joined(separator: "," + space(&random)) + space(&random) + "}"
        }
    }
}
