import Foundation
import Testing

/// The libraries say what happened; only the `sealkit` command words remedies in its own commands, flags and
/// environment variables. An app shows a library's text to people who have no `sealkit` command, so no string
/// literal in a library product's source may name a `sealkit` command, a `--flag` or a `SEALKIT_` variable.
/// Comments may (doc comments say what the command does with a fact).
@Suite("Library wording")
struct LibraryWordingTests {
    /// The literals allowed to name the command, each with why it is no advice.
    static let allowed: Set<String> = [
        // SARIF's tool.driver.name: the tool that made a report, by which code-scanning services tell tools apart.
        "SealKitAudit/Reports/SARIFReport.swift: sealkit audit",
    ]

    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// The library products' source folders: every `Sources/SealKit*` but the command and the fuzzing harness,
    /// which are executables.
    static func libraryFolders() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: sources.path)
            .filter { $0.hasPrefix("SealKit") && $0 != "SealKitCLI" && $0 != "SealKitFuzz" }
            .sorted()
            .map { sources.appendingPathComponent($0) }
    }

    @Test func noLibraryStringNamesACommandAFlagOrAVariable() throws {
        let folders = try Self.libraryFolders()
        #expect(folders.map(\.lastPathComponent).contains("SealKit"))
        #expect(folders.map(\.lastPathComponent).contains("SealKitTransfer"))
        var files = 0
        var literals = 0
        var found: [String] = []
        for folder in folders {
            let enumerator = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            for case let url as URL in enumerator where url.pathExtension == "swift" {
                files += 1
                let relative = String(url.path.dropFirst(Self.sources.path.count + 1))
                let text = try String(contentsOf: url, encoding: .utf8)
                for literal in SwiftLiterals.strings(in: text) {
                    literals += 1
                    guard SwiftLiterals.namesTheCommand(literal.text),
                        !Self.allowed.contains("\(relative): \(literal.text)")
                    else { continue }
                    found.append("\(relative):\(literal.line): \(literal.text.prefix(100))")
                }
            }
        }
        // The scan read the libraries, not an empty folder.
        #expect(files > 100 && literals > 1000, "\(files) files, \(literals) literals")
        #expect(found.isEmpty, "library strings that name the command:\n\(found.joined(separator: "\n"))")
    }

    /// The scanner finds what it must and skips comments, so the test above cannot pass by reading nothing.
    @Test func theScannerFindsLiteralsAndSkipsComments() {
        let sample = #"""
            /// Run 'sealkit keys generate' first (a doc comment may say so).
            // --flag in a comment
            /* SEALKIT_HOME in a block */
            let a = "plain \(value("--nested")) words"
            let b = #"raw "sealkit keys rotate" text"#
            let c = """
                give SEALKIT_PASSPHRASE
                """
            let d = "use --relay URL"
            let e = "one -- two, and a-b--c"
            """#
        let strings = SwiftLiterals.strings(in: sample).map(\.text)
        #expect(strings.contains("--nested"))
        #expect(strings.filter(SwiftLiterals.namesTheCommand).count == 4, "\(strings)")
        #expect(!strings.contains { $0.contains("first") || $0.contains("comment") || $0.contains("block") })
        #expect(!SwiftLiterals.namesTheCommand("one -- two, and a-b--c"))
        #expect(!SwiftLiterals.namesTheCommand(#"the schema's "sealkit" member"#))
    }
}

/// String literals of Swift source, read well enough for a lint: line and block comments skipped (nested blocks
/// too), plain, multi-line and raw strings read with their escapes, interpolations read as code (their own
/// literals count separately, the interpolation itself as a space).
enum SwiftLiterals {
    struct Literal {
        let line: Int
        let text: String
    }

    static func namesTheCommand(_ text: String) -> Bool {
        text.contains(/\bsealkit [a-z]/) || text.contains(/(^|[^\w-])--[a-z]/) || text.contains(/\bSEALKIT_[A-Z]/)
    }

    static func strings(in source: String) -> [Literal] {
        let s = Array(source.utf8)
        var found: [Literal] = []
        func starts(_ text: StaticString, at index: Int) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= s.count else { return false }
            for k in 0..<count where s[index + k] != text.utf8Start[k] { return false }
            return true
        }
        var lines = [Int](repeating: 1, count: s.count + 1)
        for k in s.indices { lines[k + 1] = lines[k] + (s[k] == UInt8(ascii: "\n") ? 1 : 0) }
        func line(at index: Int) -> Int { lines[index] }
        func hashMarks(_ count: Int, at index: Int) -> Bool {
            index + count <= s.count && s[index..<index + count].allSatisfy { $0 == UInt8(ascii: "#") }
        }
        // Reads a literal's body from `start` (after its opening quotes) to its close; returns the index after it.
        func body(from start: Int, hashes: Int, multiline: Bool, startLine: Int) -> Int {
            let close = Array(((multiline ? "\"\"\"" : "\"") + String(repeating: "#", count: hashes)).utf8)
            var text: [UInt8] = []
            var j = start
            while j < s.count {
                if j + close.count <= s.count && Array(s[j..<j + close.count]) == close {
                    found.append(Literal(line: startLine, text: String(decoding: text, as: UTF8.self)))
                    return j + close.count
                }
                if s[j] == UInt8(ascii: "\\") && hashMarks(hashes, at: j + 1) {
                    let k = j + 1 + hashes
                    if k < s.count && s[k] == UInt8(ascii: "(") {
                        j = code(from: k + 1, untilParenthesisCloses: true)
                        text.append(UInt8(ascii: " "))
                        continue
                    }
                    text.append(contentsOf: s[j..<min(k + 1, s.count)])
                    j = k + 1
                    continue
                }
                if !multiline && s[j] == UInt8(ascii: "\n") { break }
                text.append(s[j])
                j += 1
            }
            found.append(Literal(line: startLine, text: String(decoding: text, as: UTF8.self)))
            return j
        }
        // Reads code from `start`: to the end, or past the `)` that closes an interpolation.
        func code(from start: Int, untilParenthesisCloses: Bool) -> Int {
            var j = start
            var depth = 1
            while j < s.count {
                if starts("//", at: j) {
                    while j < s.count && s[j] != UInt8(ascii: "\n") { j += 1 }
                    continue
                }
                if starts("/*", at: j) {
                    var nesting = 0
                    repeat {
                        if starts("/*", at: j) { nesting += 1; j += 2 } else if starts("*/", at: j) { nesting -= 1; j += 2 } else { j += 1 }
                    } while nesting > 0 && j < s.count
                    continue
                }
                var marks = 0
                while j + marks < s.count && s[j + marks] == UInt8(ascii: "#") { marks += 1 }
                if j + marks < s.count && s[j + marks] == UInt8(ascii: "\"") {
                    let multiline = starts("\"\"\"", at: j + marks)
                    let opened = j + marks + (multiline ? 3 : 1)
                    j = body(from: opened, hashes: marks, multiline: multiline, startLine: line(at: j))
                    continue
                }
                if marks > 0 {
                    j += marks
                    continue
                }
                if untilParenthesisCloses {
                    if s[j] == UInt8(ascii: "(") { depth += 1 }
                    if s[j] == UInt8(ascii: ")") {
                        depth -= 1
                        if depth == 0 { return j + 1 }
                    }
                }
                j += 1
            }
            return j
        }
        _ = code(from: 0, untilParenthesisCloses: false)
        return found
    }
}
