import SealTestSupport
import Testing

import SealKit

/// `JSONOutline` is the profile fast path's reader: it must accept exactly what `parse` accepts,
/// fail with exactly the same errors, write exactly what `serialized()` writes, and place every
/// recorded member where the tree says it is.
@Suite("Outline agrees with parse")
struct OutlineTests {
    /// Compares the outline of `bytes` with the parsed tree; returns whether the input was valid.
    @discardableResult
    static func expectAgreement(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let parsed = Result { () throws(JSONError) in try JSONValue.parse(bytes) }
        let outlined = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONError) in try JSONOutline(compacting: buffer) }
        }
        switch (parsed, outlined) {
        case (.failure(let expected), .failure(let found)):
            #expect(found == expected, "\(bytes)", sourceLocation: sourceLocation)
            return false
        case (.success(let value), .success(let outline)):
            #expect(outline.text == Array(value.serialized().utf8), "\(bytes)", sourceLocation: sourceLocation)
            #expect(recordedMembers(of: value) == outline.members.map { describe($0, in: outline) },
                "\(bytes)", sourceLocation: sourceLocation)
            return true
        case (.success, .failure(let error)):
            Issue.record("outline refused what parse accepts: \(error) for \(bytes)", sourceLocation: sourceLocation)
        case (.failure(let error), .success):
            Issue.record("outline accepted what parse refuses (\(error)): \(bytes)", sourceLocation: sourceLocation)
        }
        return false
    }

    /// What the outline should record, from the tree: `parent/key = value` in text order.
    static func recordedMembers(of value: JSONValue) -> [String] {
        guard case .object(let members) = value else { return [] }
        var lines: [String] = []
        for member in members {
            lines.append("-/\(escapedKey(member.key)) = \(member.value.serialized())")
            let parent = lines.count - 1
            if case .object(let inner) = member.value {
                lines += inner.map { "\(parent)/\(escapedKey($0.key)) = \($0.value.serialized())" }
            }
        }
        return lines
    }

    static func describe(_ member: JSONOutline.Member, in outline: JSONOutline) -> String {
        let key = String(decoding: outline.text[member.key], as: UTF8.self)
        let value = String(decoding: outline.text[member.value], as: UTF8.self)
        return "\(member.parent.map(String.init) ?? "-")/\(key) = \(value)"
    }

    /// A key as `serialized()` writes it, without the quotes.
    static func escapedKey(_ key: String) -> String {
        String(JSONValue.string(key).serialized().dropFirst().dropLast())
    }

    @Test(arguments: rejectedCases)
    func failsLikeParse(_ rejected: RejectedCase) {
        #expect(!Self.expectAgreement(rejected.bytes))
    }

    @Test func agreesOnHandPickedDocuments() {
        let documents = [
            "{}", "[]", "0", "-0", "1.5e-3", "\"\"", "true", " null ", "[1,[2,[3]]]", #"{"a":{"b":[]}}"#,
            #""\ud83d\ude00""#, #""\u00e9\/""#, "\t[\r\n]\n", "123456789012345678901234567890",
            #"{ "a" : 1 , "b" : { "c" : [ {"d": 2} ], "e": {} } , "f": "x\ny" }"#,
            #"{"data": {"ssn": "078-05-1120", "n": 1e400, "o": {"deep": {"er": 1}}}, "id": "u"}"#,
            #"{"k\u0065y": "v\"q\\", "\u00e9": "\u0001\u001f\u007f"}"#,
            #"[{"a": 1}, {"a": 2}]"#, #"{"a": [{"b": {"c": 1}}], "z": {"y": [{"x": 0}]}}"#,
            // Keys Swift strings call equal (canonically equivalent), which parse refuses as duplicates.
            "{\"K\": 1, \"\u{212A}\": 2}", "{\"\u{E9}\": 1, \"e\u{301}\": 2}", "{\"\\u00e9\": 1, \"e\\u0301\": 2}",
            "{\"a\": {\"K\": 1, \"\u{212A}\": 2}}",
        ]
        for document in documents { Self.expectAgreement(Array(document.utf8)) }
    }

    @Test(arguments: [2, 31, 32, 33, 40, 200])
    func findsDuplicatesInObjectsOfEverySize(memberCount: Int) {
        for duplicateOf in [0, memberCount / 2, memberCount - 1] {
            var keys = (0..<memberCount).map { "key\($0)" }
            keys.append(keys[duplicateOf])
            let object = "{" + keys.map { "\"\($0)\": 1" }.joined(separator: ",") + "}"
            #expect(!Self.expectAgreement(Array(object.utf8)))
            // The same object with non-ASCII keys compares as strings; and without the duplicate, both accept.
            #expect(!Self.expectAgreement(Array(object.replacingOccurrences(of: "key", with: "clé").utf8)))
            let unique = "{" + keys.dropLast().map { "\"\($0)\": 1" }.joined(separator: ",") + "}"
            #expect(Self.expectAgreement(Array(unique.utf8)))
        }
    }

    @Test func refusesTooDeepLikeParse() {
        let depth = JSONValue.maximumDepth
        #expect(Self.expectAgreement(Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)))
        #expect(!Self.expectAgreement(Array((String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)).utf8)))
        #expect(!Self.expectAgreement(Array(String(repeating: "{\"a\":", count: 100_000).utf8)))
    }

    /// Random documents, with random whitespace, escapes and nesting, then the same documents
    /// cut short, with a byte changed, or with a byte inserted: tens of thousands of cases.
    @Test func agreesOnRandomAndDamagedDocuments() {
        var random = SplitMix64(seed: 0x5EA1_0071)
        var valid = 0
        for _ in 0..<3_000 {
            var document = RandomText(rng: random)
            let text = document.value(depth: 0)
            random = document.rng
            let bytes = Array(text.utf8)
            if Self.expectAgreement(bytes) { valid += 1 }
            for _ in 0..<6 {
                var damaged = bytes
                let position = Int.random(in: 0...damaged.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: damaged.removeSubrange(position...)
                case 1 where position < damaged.count: damaged[position] = RandomText.interestingBytes.randomElement(using: &random)!
                default: damaged.insert(RandomText.interestingBytes.randomElement(using: &random)!, at: position)
                }
                Self.expectAgreement(damaged)
            }
        }
        #expect(valid == 3_000)
    }
}

/// Random valid JSON text, written the many ways a value can be written.
struct RandomText {
    var rng: SplitMix64

    static let interestingBytes: [UInt8] = Array(#"{}[],:"\ u0123456789abcdefABCDEF-+.eEtrunlfs/"#.utf8)
        + [0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xE2, 0xED, 0xF0, 0xF4, 0xFF]

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    mutating func space() -> String {
        (0..<(int(0...3) == 0 ? int(1...3) : 0)).map { _ in [" ", "\t", "\n", "\r"][int(0...3)] }.joined()
    }

    mutating func string() -> String {
        var text = "\""
        for _ in 0..<int(0...12) {
            switch int(0...9) {
            case 0: text += ["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"][int(0...7)]
            case 1: text += String(format4: UInt16(int(0...0xD7FF)))
            case 2: text += String(format4: UInt16(int(0xD800...0xDBFF))) + String(format4: UInt16(int(0xDC00...0xDFFF)))
            case 3: text += ["é", "K", "\u{212A}", "€", "😀", "e\u{301}", "\u{7F}"][int(0...6)]
            default: text += String(UnicodeScalar(UInt8(int(0x20...0x7E))))
                .replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            }
        }
        return text + "\""
    }

    mutating func number() -> String {
        var lexeme = int(0...2) == 0 ? "-" : ""
        lexeme += int(0...4) == 0 ? "0" : String(int(1...9)) + (0..<int(0...20)).map { _ in String(int(0...9)) }.joined()
        if int(0...2) == 0 { lexeme += "." + (0..<int(1...6)).map { _ in String(int(0...9)) }.joined() }
        if int(0...3) == 0 { lexeme += ["e", "E"][int(0...1)] + ["", "+", "-"][int(0...2)] + String(int(0...400)) }
        return lexeme
    }

    mutating func value(depth: Int) -> String {
        let kind = depth > 4 ? int(0...5) : int(0...8)
        switch kind {
        case 0: return "null"
        case 1: return ["true", "false"][int(0...1)]
        case 2, 3: return number()
        case 4, 5: return string()
        case 6: return "[" + space() + (0..<int(0...4)).map { _ in space() + value(depth: depth + 1) + space() }.joined(separator: ",") + "]"
        default:
            var keys = Set<String>()
            var members: [String] = []
            for index in 0..<int(0...6) {
                let key = int(0...3) == 0 ? "k\(index)" + String(string().dropFirst().dropLast()) : "k\(index)"
                guard keys.insert(key).inserted else { continue }
                members.append(space() + "\"" + key + "\"" + space() + ":" + space() + value(depth: depth + 1) + space())
            }
            return "{" + space() + members.joined(separator: ",") + "}"
        }
    }
}

extension String {
    /// `\uXXXX` for a UTF-16 code unit.
    init(format4 unit: UInt16) {
        let digits = Array("0123456789abcdef")
        self = "\\u" + String([12, 8, 4, 0].map { digits[Int(unit >> UInt16($0) & 0xF)] })
    }
}

@Suite("Eight bytes at a time")
struct SWARTests {
    /// The string scanner jumps to the lowest byte `plainStringStops` marks, so that byte must be
    /// exactly the first control character, quote, backslash or non-ASCII byte of the word.
    @Test func lowestStopIsTheFirstByteThatEndsPlainContent() {
        var random = SplitMix64(seed: 0x57A7)
        let interesting: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<200_000 {
            let bytes = (0..<8).map { _ in
                Bool.random(using: &random) ? interesting.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
            }
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let first = bytes.firstIndex { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x80 }
            let stops = SWAR.plainStringStops(word)
            #expect((stops == 0 ? nil : stops.trailingZeroBitCount / 8) == first, "\(bytes)")
        }
    }
}
