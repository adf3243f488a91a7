import Foundation
import SealKit
import SealTestSupport
import Testing

/// MACs are compared in constant time (libsodium's `sodium_memcmp`), and no test of outcomes can see a comparison
/// that is not, nor one that stops early. So this reads Sources/ as a lint does: no `==` or `!=` has a MAC as an
/// operand, and a type holding a MAC that is `Equatable` or `Hashable` says how it compares (a synthesized `==`
/// compares arrays byte by byte and stops at the first difference).
@Suite("MACs compared in constant time")
struct ConstantTimeMACTests {
    /// Every Swift file under Sources/, with its lines.
    static func sources() throws -> [(path: String, lines: [Substring])] {
        let root = Repository.root.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var files: [(String, [Substring])] = []
        for case let path as String in walker where path.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            files.append(("Sources/" + path, text.split(separator: "\n", omittingEmptySubsequences: false)))
        }
        return files
    }

    /// Whether an identifier (its last component after a dot) names a MAC: `mac`, `macs`, `expectedMAC`.
    static func namesAMAC(_ operand: Substring) -> Bool {
        let last = operand.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return last.hasSuffix("mac") || last.hasSuffix("macs")
    }

    /// The `==` and `!=` in a line of code (comments and string literals aside) whose operand names a MAC.
    static func macComparisons(in line: Substring) -> [String] {
        var code = line
        if let comment = code.range(of: "//") { code = code[..<comment.lowerBound] }
        code = Substring(code.replacing(/"(?:[^"\\]|\\.)*"/, with: "\"\""))
        let comparison = /([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*(?:==|!=)\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)/
        return code.matches(of: comparison).compactMap { match in
            namesAMAC(match.output.1) || namesAMAC(match.output.2) ? String(match.output.0) : nil
        }
    }

    /// Types that hold a stored MAC and are `Equatable` or `Hashable` without a `static func ==` of their own.
    static func synthesizedMACEquality(in lines: [Substring]) -> [String] {
        var found: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            guard let declaration = line.firstMatch(of: /^(\s*)(?:[a-z]+ )*(?:struct|class|enum|actor) ([A-Za-z_][A-Za-z0-9_]*)([^{]*)\{/) else {
                index += 1
                continue
            }
            let indent = declaration.output.1.count
            let name = String(declaration.output.2)
            let conformances = declaration.output.3
            // The type's body: up to the line that closes it at its own indentation.
            var end = index + 1
            while end < lines.count, !(lines[end].hasPrefix(String(repeating: " ", count: indent) + "}")) { end += 1 }
            let member = String(repeating: " ", count: indent + 4)
            let body = lines[(index + 1)..<min(end, lines.count)].filter { $0.hasPrefix(member) && !$0.hasPrefix(member + " ") }
            let holdsMAC = body.contains { $0.contains(/^\s*(?:[a-z]+ )*(?:let|var) [A-Za-z0-9_]*(?:mac|MAC)s?\s*:/) }
            let equatable = conformances.contains("Equatable") || conformances.contains("Hashable")
            let ownEquality = body.contains { $0.contains("static func == (") || $0.contains("static func ==(") }
            if holdsMAC && equatable && !ownEquality { found.append(name) }
            index += 1
        }
        return found
    }

    /// Both rules over Sources/, after checking that the lint flags what it is for.
    @Test func macsAreComparedInConstantTime() throws {
        #expect(Self.macComparisons(in: "        return expected == seal.mac") == ["expected == seal.mac"])
        #expect(Self.macComparisons(in: "guard a.mac != b.mac else { return }").count == 1)
        #expect(Self.macComparisons(in: "if computedMAC == mac {").count == 1)
        #expect(Self.macComparisons(in: "guard mac.count == ProfileSeal.macByteCount").isEmpty)
        #expect(Self.macComparisons(in: #"let text = "mac == other" // mac == other"#).isEmpty)
        let synthesized: [Substring] = ["struct Seal: Equatable {", "    let mac: [UInt8]", "}"]
        #expect(Self.synthesizedMACEquality(in: synthesized) == ["Seal"])
        let own: [Substring] = [
            "struct Seal: Equatable {", "    let mac: [UInt8]", "    static func == (a: Seal, b: Seal) -> Bool {",
            "        ConstantTime.equals(a.mac, b.mac)", "    }", "}",
        ]
        #expect(Self.synthesizedMACEquality(in: own).isEmpty)

        let files = try Self.sources()
        #expect(files.count > 100)
        var comparisons: [String] = []
        var synthesizing: [String] = []
        for (path, lines) in files {
            for (number, line) in lines.enumerated() {
                for comparison in Self.macComparisons(in: line) { comparisons.append("\(path):\(number + 1): \(comparison)") }
            }
            synthesizing += Self.synthesizedMACEquality(in: lines).map { "\(path): \($0)" }
        }
        #expect(comparisons.isEmpty, "MACs compared with == or != (use ConstantTime.equals): \(comparisons)")
        #expect(synthesizing.isEmpty, "types holding a MAC compare it with a synthesized ==, byte by byte: \(synthesizing)")
    }
}
