import Foundation
import SealTestSupport
import Testing

import SealKit

private func base64Lines(_ output: [UInt8]) throws -> [[[UInt8]]] {
    try String(decoding: output, as: UTF8.self).split(separator: "\n").map { line in
        try line.split(separator: " ").map { field in
            [UInt8](try #require(Data(base64Encoded: String(field))))
        }
    }
}

/// Compares SealKit's JSON reader and writer against Python's json module, an independent implementation.
@Suite(.requires(.python)) struct PythonComparisonTests {
    /// Python generates random values (every control character, astral-plane text,
    /// deep nesting, canonical numbers) and writes each three ways; SealKit must read
    /// all three to the same value and write Python's exact compact and pretty text.
    @Test func writesWhatPythonWritesForRandomValues() throws {
        let script = #"""
        import base64, json, random
        rng = random.Random(8259)
        def text():
            pools = [(0, 0x20), (0x20, 0x7F), (0x7F, 0x800), (0x800, 0xD800), (0xE000, 0x10000), (0x10000, 0x110000)]
            out = []
            for _ in range(rng.randint(0, 12)):
                lo, hi = rng.choice(pools)
                out.append(chr(rng.randrange(lo, hi)))
            return ''.join(out)
        def number():
            kind = rng.randrange(4)
            if kind == 0: return rng.randint(-10**30, 10**30)
            if kind == 1: return rng.randint(-1000, 1000)
            if kind == 2: return rng.uniform(-1e6, 1e6)
            return rng.choice([0.1, 1e300, -2.5e-300, 1.5, 123.456])
        def value(depth):
            kind = rng.randrange(8 if depth < 6 else 4)
            if kind == 0: return None
            if kind == 1: return rng.choice([True, False])
            if kind == 2: return number()
            if kind == 3: return text()
            if kind in (4, 5): return [value(depth + 1) for _ in range(rng.randint(0, 4))]
            obj = {}
            for _ in range(rng.randint(0, 5)):
                obj[text()] = value(depth + 1)
            return obj
        for _ in range(300):
            v = value(0)
            forms = [json.dumps(v, ensure_ascii=False, separators=(',', ':')),
                     json.dumps(v, ensure_ascii=False, indent=2),
                     json.dumps(v, ensure_ascii=True)]
            print(' '.join(base64.b64encode(f.encode('utf-8')).decode() for f in forms))
        """#
        let rows = try base64Lines(try Python.output(of: script))
        #expect(rows.count == 300)
        for row in rows {
            try #require(row.count == 3, "\(row.count) forms")
            let compact = row[0], pretty = row[1], ascii = row[2]
            let value = try JSONValue.parse(compact)
            #expect(value.serialized() == String(decoding: compact, as: UTF8.self))
            #expect(value.serialized(pretty: true) == String(decoding: pretty, as: UTF8.self))
            #expect(try JSONValue.parse(pretty) == value)
            // ensure_ascii writes non-ASCII as \u escapes, astral characters as surrogate pairs.
            #expect(try JSONValue.parse(ascii) == value)
        }
    }

    /// Python reads what SealKit writes, and gets the same structure back.
    @Test func pythonReadsWhatSealJSONWrites() throws {
        let value: JSONValue = [
            "ctl": .string(String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)),
            "mixed": "a\"b\\c/d é 中 😀",
            "n": [.number("-0.5"), .number("12345678901234567890"), .number("1E+2")],
            "o": ["z": true, "a": nil],
        ]
        let script = #"""
        import sys, json
        data = sys.stdin.buffer.read().decode('utf-8')
        for line in data.split('\n'):
            v = json.loads(line, parse_float=str, parse_int=str)
            print(json.dumps(v, ensure_ascii=True, sort_keys=False, separators=(',', ':')))
        """#
        let input = value.serialized() + "\n" + value.serialized(pretty: true).replacingOccurrences(of: "\n", with: " ")
        let lines = String(decoding: try Python.output(of: script, stdin: Array(input.utf8)), as: UTF8.self)
            .split(separator: "\n")
        #expect(lines.count == 2)
        let expected: JSONValue = [
            "ctl": .string(String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)),
            "mixed": "a\"b\\c/d é 中 😀",
            "n": ["-0.5", "12345678901234567890", "1E+2"],
            "o": ["z": true, "a": nil],
        ]
        for line in lines {
            #expect(try JSONValue.parse(String(line)) == expected)
        }
    }

    /// Over a corpus of valid and invalid documents, SealKit and Python accept the same ones.
    /// Left out on purpose, because Python is laxer than RFC 8259 there: NaN and Infinity,
    /// lone surrogate escapes, duplicate keys, and nesting (Python's limit is its recursion limit).
    @Test func acceptsWhatPythonAccepts() throws {
        var corpus: [[UInt8]] = [
            "{}", "[]", "0", "-0", "1.5e-3", "\"\"", "true", " null ", "[1,[2,[3]]]", #"{"a":{"b":[]}}"#,
            #""\ud83d\ude00""#, #""\u00e9\/""#, "\t[\r\n]\n", "123456789012345678901234567890",
            "", " ", "[", "]", "{", "}", "[1,]", #"{"a":1,}"#, "01", "-01", "1.", ".1", "+1", "1e", "1e+",
            "0x1", "--1", "tru", "nulll", "True", "'x'", #""\x""#, #""\u12""#, "\"a\tb\"", "\"\u{1}\"",
            "[1 2]", #"{"a" 1}"#, "{a:1}", "1 2", "// c\n1", "/**/1", "[1]]", "\u{0C}1", #""abc"#,
            #"{"a":}"#, "[,]", "[1,,2]", "\"\\\"", "-", "1.0e", "[01]",
        ].map { Array($0.utf8) }
        corpus += [
            [0x22, 0xC3, 0x28, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xFF, 0x22], [0xEF, 0xBB, 0xBF, 0x31],
            [0x22, 0xE2, 0x82, 0xAC, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22],
        ]
        let script = #"""
        import sys, json, base64
        for line in sys.stdin.read().split('\n'):
            if not line: continue
            raw = base64.b64decode(line[1:])
            try:
                json.loads(raw.decode('utf-8'))
                print('ok')
            except (ValueError, UnicodeDecodeError):
                print('error')
        """#
        let input = corpus.map { ">" + Data($0).base64EncodedString() }.joined(separator: "\n")
        let verdicts = String(decoding: try Python.output(of: script, stdin: Array(input.utf8)), as: UTF8.self)
            .split(separator: "\n").map(String.init)
        #expect(verdicts.count == corpus.count)
        for (document, verdict) in zip(corpus, verdicts) {
            let accepted = (try? JSONValue.parse(document)) != nil
            #expect(accepted == (verdict == "ok"), "\(document) python: \(verdict)")
        }
    }
}
