#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

import SealKit

/// Strings full of escapes cost time linear in their length, in every reader: a profile whose one field
/// held 200,000 `\\`/`\n` pairs took 8.5 s to encrypt, as each escape copied everything decoded before it.
@Suite struct EscapeCostTests {
    /// `{"notes": "…"}` whose string is `pairs` repetitions of an escape-only pattern: `\\`, `\n`, `\u00e9`
    /// and a surrogate pair, so every kind of escape is decoded.
    static func document(pairs: Int) -> [UInt8] {
        let pattern = Array(#"\\\n\u00e9\ud83d\ude00"#.utf8)
        var bytes = Array(#"{"notes":""#.utf8)
        bytes.reserveCapacity(bytes.count + pattern.count * pairs + 2)
        for _ in 0..<pairs { bytes += pattern }
        bytes += Array(#""}"#.utf8)
        return bytes
    }

    /// The CPU time this thread spends in `body`: unlike the time on the wall, it does not grow when other
    /// processes take the machine's cores, so the comparison below holds on a busy machine.
    static func cpuTime(_ body: () throws -> Void) rethrows -> Double {
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        try body()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
        return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    }

    /// Reads a text 4 times as long as another: linear work takes about 4 times as long, quadratic work 16.
    /// The longer text passes once one reading of it takes under 8 times the shorter's fastest of five.
    static func expectLinear(_ name: String, _ read: ([UInt8]) throws -> Void) throws {
        let short = document(pairs: 16_000), long = document(pairs: 64_000)
        var shortest = Double.infinity
        for _ in 0..<5 { shortest = min(shortest, try cpuTime { try read(short) }) }
        var longest = Double.infinity
        for _ in 0..<5 {
            longest = min(longest, try cpuTime { try read(long) })
            if longest < 8 * shortest { break }
        }
        #expect(longest < 8 * shortest, "\(name): 4x the escapes took \(longest / shortest)x the time (linear: 4, quadratic: 16)")
    }

    @Test(.timeLimit(.minutes(2))) func parsingIsLinearInTheEscapes() throws {
        try Self.expectLinear("JSONValue.parse") { bytes in
            let value = try JSONValue.parse(bytes)
            #expect(value["notes"]?.stringValue?.isEmpty == false)
        }
    }

    @Test(.timeLimit(.minutes(2))) func theProfileOutlineIsLinearInTheEscapes() throws {
        try Self.expectLinear("JSONOutline") { bytes in
            let outline = try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in try JSONOutline(compacting: buffer) }
            #expect(outline.members.count == 1)
        }
    }

    @Test(.timeLimit(.minutes(2))) func theNDJSONReaderIsLinearInTheEscapes() throws {
        var reader = JSONValueReader()
        try Self.expectLinear("JSONValueReader") { bytes in
            let value = try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in try reader.parse(buffer) }
            #expect(value["notes"]?.stringValue?.isEmpty == false)
        }
    }

    /// The escape decoder skips plain bytes eight at a time: escapes, multi-byte characters and the closing
    /// quote at every offset from a word's start decode as one byte at a time would, and so do keys.
    @Test func escapesDecodeAtEveryOffset() throws {
        let pieces: [(json: String, text: String)] = [
            ("a", "a"), ("0123456789", "0123456789"), (#"\""#, "\""), (#"\\"#, "\\"), (#"\/"#, "/"), (#"\b"#, "\u{08}"),
            (#"\f"#, "\u{0C}"), (#"\n"#, "\n"), (#"\r"#, "\r"), (#"\t"#, "\t"), (#"\u0041"#, "A"), (#"\u00e9"#, "é"),
            (#"\u4E2D"#, "中"), (#"\ud83d\ude00"#, "😀"), (#"\u0000"#, "\u{0}"), ("é", "é"), ("中", "中"), ("😀", "😀"),
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for lead in 0..<17 {
            for _ in 0..<60 {
                var json = String(repeating: "x", count: lead) + #"\n"#
                var text = String(repeating: "x", count: lead) + "\n"
                for _ in 0..<next(24) {
                    let piece = pieces[next(pieces.count)]
                    json += piece.json
                    text += piece.text
                }
                let value = try JSONValue.parse(#"{""# + json + #"": [""# + json + #""]}"#)
                #expect(value.objectValue?.first?.key == text, "\(json)")
                #expect(value.objectValue?.first?.value == .array([.string(text)]), "\(json)")
                let bytes = Array(#"{""#.utf8) + Array(json.utf8) + Array(#"":1}"#.utf8)
                let outline = try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in try JSONOutline(compacting: buffer) }
                #expect(outline.text == Array(JSONValue.object([(key: text, value: .number("1"))]).serialized().utf8))
            }
        }
    }

    /// What is wrong after an escape is reported where it stands, past any eight-byte stride.
    @Test func errorsAfterAnEscapeNameTheirPlace() {
        func failure(_ bytes: [UInt8]) -> JSONError? {
            do throws(JSONError) {
                _ = try JSONValue.parse(bytes)
                return nil
            } catch {
                return error
            }
        }
        for gap in 0..<20 {
            let head = Array(#"["\n"#.utf8) + Array(repeating: UInt8(ascii: "y"), count: gap)
            let control = failure(head + [0x01] + Array(#""]"#.utf8))
            #expect(control?.reason == .controlCharacter(0x01) && control?.byteOffset == head.count, "gap \(gap)")
            let invalid = failure(head + [0xC3, 0x28] + Array(#""]"#.utf8))
            #expect(invalid?.reason == .invalidUTF8 && invalid?.byteOffset == head.count, "gap \(gap)")
            let badEscape = failure(head + Array(#"\x"]"#.utf8))
            #expect(badEscape?.reason == .invalidEscape && badEscape?.byteOffset == head.count, "gap \(gap)")
            let lone = failure(head + Array(#"\ud83d"]"#.utf8))
            #expect(lone?.reason == .loneSurrogate && lone?.byteOffset == head.count, "gap \(gap)")
            let open = failure(head)
            #expect(open?.reason == .unexpectedEnd(expected: "'\"' to close the string") && open?.byteOffset == head.count)
        }
    }
}
