import Foundation
import SealKitAudit
import SealKit
import Testing

/// Copies and reused nonces of every format SealKit writes, and the audit split around a shuffle
/// (`--facts`, then `--from-facts`), which must find what one machine finds.
@Suite("Every format counted, and the audit split around a shuffle")
struct SplitAuditTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealaudit-split-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    /// A v2 value's text as `sealkit encrypt --format v2` writes it (docs/format.md): version, key tag,
    /// place tag, nonce, AEAD output. The keyless audit reads its shape only.
    static func v2(keyTag: [UInt8], nonce: [UInt8] = random(24)) -> String {
        "sk2:" + Base64.encode([2] + keyTag + random(8) + nonce + random(30))
    }

    static func v1(nonce: [UInt8] = random(24)) -> String { Base64.encode(nonce + random(30)) }

    static let keyTag = random(8)

    @Test func v2CopiesAndReusedNoncesAreFoundAsV1OnesAre() throws {
        let copy = Self.v2(keyTag: Self.keyTag)
        let nonce = Self.random(24)
        let text = [
            "{\"id\": \"a\", \"dob\": \"\(copy)\", \"card\": \"\(Self.v2(keyTag: Self.keyTag, nonce: nonce))\"}",
            "{\"id\": \"b\", \"dob\": \"\(copy)\", \"card\": \"\(Self.v2(keyTag: Self.keyTag))\"}",
            "{\"id\": \"c\", \"dob\": \"\(Self.v2(keyTag: Self.keyTag))\", \"card\": \"\(Self.v2(keyTag: Self.keyTag, nonce: nonce))\"}",
        ].joined(separator: "\n")
        let path = try write("v2.ndjson", text)
        let schema = try write(
            "schema.json",
            // `id` is declared: an undeclared member would be an `undeclared-field` note.
            "{\"schema\": {\"id\": {\"type\": \"string\"}, \"dob\": {\"encryption\": {\"state\": \"enabled\", \"sealkit\": {\"format\": 2}}}, "
                + "\"card\": {\"encryption\": {\"state\": \"enabled\", \"sealkit\": {\"format\": 2}}}}}")
        for auditor in [Auditor(), Auditor(schema: try AuditSchema.load(path: schema))] {
            let report = try auditor.audit(paths: [path])
            #expect(report.findings.map(\.kind) == [.duplicateCiphertext, .nonceReuse], "\(report.findings.map(\.message))")
            #expect(report.findings.map { $0.places.map(\.location) } == [[.line(2), .line(1)], [.line(3), .line(1)]])
            #expect(report.findings.map(\.field) == ["dob", "card"])
            #expect(report.summary.groups.copiedCiphertexts == 1 && report.summary.groups.sharedNonces == 1)
            #expect(report.valueCount == 6)
        }
    }

    /// The nonce table grows from a thousand slots by doubling: repeats are found exactly among
    /// tens of thousands of distinct nonces, before and after each growth, and nonces that share their first
    /// eight bytes, or all but their last tracked byte, stay apart.
    @Test func repeatsAreFoundExactlyAmongManyDistinctNonces() throws {
        var nonces = (0..<20_000).map { _ in Self.random(24) }
        // Neighbours of nonce 100: the same first 8 bytes, and the same first 15 (16 are tracked).
        nonces[5_000] = Array(nonces[100][0..<8]) + Self.random(16)
        nonces[6_000] = Array(nonces[100][0..<15]) + [nonces[100][15] ^ 1] + Self.random(8)
        var values = nonces.map { Self.v1(nonce: $0) }
        values.append(values[3])  // a copy, after every growth
        values.append(Self.v1(nonce: nonces[700]))  // the nonce of a value from before the first growth
        values.insert(values[10], at: 900)  // a copy, before the first growth ends
        let text = values.map { "{\"card\": \"\($0)\"}" }.joined(separator: "\n")
        let report = try Auditor().audit(paths: [try write("many.ndjson", text)])
        #expect(report.findings.map(\.kind) == [.duplicateCiphertext, .duplicateCiphertext, .nonceReuse])
        #expect(report.findings.map { $0.places.map(\.location) } == [
            [.line(901), .line(11)], [.line(20_002), .line(4)], [.line(20_003), .line(701)],
        ])
        #expect(report.summary.groups.copiedCiphertexts == 2 && report.summary.groups.sharedNonces == 1)
        #expect(report.valueCount == 20_003)
    }

    /// A v1 and a v2 value holding the same 24 random bytes as their nonces: the random source repeated itself.
    @Test func aNonceRepeatedAcrossFormatsIsReuse() throws {
        let nonce = Self.random(24)
        let path = try write(
            "mixed.ndjson", "{\"a\": \"\(Self.v1(nonce: nonce))\"}\n{\"a\": \"\(Self.v2(keyTag: Self.keyTag, nonce: nonce))\"}\n")
        let report = try Auditor().audit(paths: [path])
        #expect(report.findings.map(\.kind) == [.nonceReuse])
    }

    // MARK: Facts, a shuffle, and the report

    /// What the Spark job does between the two halves, done here in memory: repeats by nonce, bad lines per file.
    static func merge(_ facts: [JSONValue], files: [String]) -> String {
        typealias Position = (file: Int, line: Int, seq: Int)
        func position(_ fact: JSONValue) -> Position {
            (Int(fact["file"]!.numberLexeme!)!, Int(fact["line"]!.numberLexeme!)!, Int(fact["seq"]!.numberLexeme!)!)
        }
        func before(_ a: Position, _ b: Position) -> Bool { (a.file, a.line, a.seq) < (b.file, b.line, b.seq) }
        var ordered: [(Position, String)] = []
        var byNonce: [String: [JSONValue]] = [:]
        var bad: [Int: (line: Int, message: String, count: Int)] = [:]
        var counts = (0, 0, 0)
        var census: [String: Int] = [:], namingNoKey = 0
        for fact in facts {
            guard case .object(let members) = fact, let (key, body) = members.first else { continue }
            switch key {
            case "finding": ordered.append((position(body), fact.serialized()))
            case "value": byNonce[body["nonce"]!.stringValue!, default: []].append(body)
            case "bad_line":
                let file = Int(body["file"]!.numberLexeme!)!, line = Int(body["line"]!.numberLexeme!)!
                let old = bad[file]
                if old == nil || line < old!.line {
                    bad[file] = (line, body["message"]!.stringValue!, (old?.count ?? 0) + 1)
                } else {
                    bad[file]!.count += 1
                }
            case "counts":
                counts.0 += Int(body["values"]!.numberLexeme!)!
                counts.1 += Int(body["profiles"]!.numberLexeme!)!
                counts.2 += Int(body["blank_lines"]!.numberLexeme!)!
                namingNoKey += Int(body["naming_no_key"]!.numberLexeme!)!
                guard case .object(let keys) = body["keys"] else { break }
                for (key, count) in keys { census[key, default: 0] += Int(count.numberLexeme!)! }
            default: break
            }
        }
        var copied = 0, shared = 0
        for (_, values) in byNonce where values.count > 1 {
            let sorted = values.sorted { before(position($0), position($1)) }
            let first = sorted[0]
            var copies = false, reuse = false
            for value in sorted.dropFirst() {
                let copy = value["digest"] == first["digest"]
                if copy { copies = true } else { reuse = true }
                let repeatFact: JSONValue = [
                    "repeat": [
                        "file": value["file"]!, "line": value["line"]!, "field": value["field"]!, "copy": .bool(copy),
                        "first": ["file": first["file"]!, "line": first["line"]!, "field": first["field"]!],
                    ]
                ]
                ordered.append((position(value), repeatFact.serialized()))
            }
            copied += copies ? 1 : 0
            shared += reuse ? 1 : 0
        }
        for (file, problem) in bad {
            let fact: JSONValue = [
                "bad_lines": [
                    "file": .number(String(file)), "line": .number(String(problem.line)),
                    "message": .string(problem.message), "count": .number(String(problem.count)),
                ]
            ]
            ordered.append(((file, Int.max, 0), fact.serialized()))
        }
        ordered.sort { before($0.0, $1.0) }
        let head: JSONValue = ["files": .array(files.map(JSONValue.string))]
        let summary: JSONValue = [
            "summary": [
                "values": .number(String(counts.0)), "profiles": .number(String(counts.1)),
                "blank_lines": .number(String(counts.2)), "copied_ciphertexts": .number(String(copied)),
                "shared_nonces": .number(String(shared)), "largest_group": .number("0"), "largest_group_first": .null,
                "keys": .object(census.sorted { $0.key < $1.key }.map { ($0.key, .number(String($0.value))) }),
                "naming_no_key": .number(String(namingNoKey)),
            ]
        ]
        return ([head.serialized()] + ordered.map(\.1) + [summary.serialized()]).joined(separator: "\n") + "\n"
    }

    @Test func factsMergedAndReportedEqualTheOneMachineAudit() throws {
        let copy = Self.v1(), copy2 = Self.v2(keyTag: Self.keyTag), nonce = Self.random(24)
        let other = Self.random(8)
        var lines = (0..<40).map { "{\"id\": \"u\($0)\", \"ssn\": \"\(Self.v1())\", \"dob\": \"\(Self.v2(keyTag: Self.keyTag))\"}" }
        lines[2] = "{\"id\": \"a\", \"ssn\": \"\(copy)\", \"dob\": \"\(copy2)\"}"
        lines[30] = "{\"id\": \"b\", \"ssn\": \"\(copy)\", \"dob\": \"\(copy2)\"}"
        lines[5] = "{\"ssn\": \"\(Self.v1(nonce: nonce))\", \"dob\": \"\(Self.v1())\"}"
        lines[35] = "{\"ssn\": \"\(Self.v1(nonce: nonce))\", \"dob\": \"\(Self.v2(keyTag: other))\", \"card\": \"\(Self.v2(keyTag: Self.keyTag))\"}"
        lines[7] = "{\"ssn\": \"secret plaintext\"}"
        lines[8] = "{\"ssn\": 12}"
        lines[9] = "   "
        lines[10] = "{broken"
        lines[20] = "also broken"
        lines[25] = "{\"ssn\": \"\(Base64.encode(Self.random(12)))\"}"
        let file = try write("export.ndjson", lines.joined(separator: "\n") + "\n")
        let schema = try write(
            "schema.json",
            "{\"schema\": {\"ssn\": {\"encryption\": {\"state\": \"enabled\"}}, \"email\": {\"encryption\": {\"state\": \"enabled\"}}, "
                + "\"dob\": {\"encryption\": {\"state\": \"enabled\", \"sealkit\": {\"format\": 2}}}, "
                + "\"card\": {\"encryption\": {\"state\": \"enabled\", \"sealkit\": {\"format\": 2}}}}}")
        let auditor = Auditor(schema: try AuditSchema.load(path: schema))
        let expected = try auditor.audit(paths: [file])
        #expect(Set(expected.findings.map(\.kind)).isSuperset(of: [
            .identifierEncrypted, .duplicateCiphertext, .nonceReuse, .plaintextField, .malformedCiphertext,
            .v1InBoundField, .mixedKeys, .unreadableFile,
        ]))

        // Two parts, lines shuffled between them as a repartition does, each tagged with its place.
        var parts = ["", ""]
        for (index, line) in lines.enumerated() { parts[(index * 7) % 2] += "0 \(index + 1) \(line)\n" }
        var facts: [JSONValue] = []
        for part in parts {
            let tagged = try write("part-\(UUID().uuidString).tagged", part)
            var text = ""
            _ = try auditor.writeFacts(path: tagged) { text += $0 }
            #expect(!text.contains("secret plaintext"))
            facts += try text.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        }
        let merged = try write("merged.facts", Self.merge(facts, files: [file]))
        var found: [Finding] = []
        let summary = try auditor.report(fromFacts: merged) { found.append($0) }
        #expect(found == expected.findings)
        #expect(found.map(\.message) == expected.findings.map(\.message))
        #expect(summary.valueCount == expected.summary.valueCount && summary.profileCount == expected.summary.profileCount)
        #expect(summary.blankLineCount == expected.summary.blankLineCount)
        #expect(summary.findingCounts == expected.summary.findingCounts)
        #expect(summary.groups.copiedCiphertexts == expected.summary.groups.copiedCiphertexts)
        #expect(summary.groups.sharedNonces == expected.summary.groups.sharedNonces)
        #expect(summary.valuesByKey == expected.summary.valuesByKey && summary.valuesNamingNoKey == expected.summary.valuesNamingNoKey)
        #expect(expected.summary.valuesByKey.count == 2)
    }

    /// The key census, without keys: each v2 value counts for the key its header names, each v1 value as naming none;
    /// every value that is no ciphertext counts for neither.
    @Test func theKeyCensusCountsValuesPerKeyWithoutTheKeys() throws {
        let old = Self.random(8)
        let lines = [
            "{\"ssn\": \"\(Self.v1())\", \"dob\": \"\(Self.v2(keyTag: Self.keyTag))\"}",
            "{\"ssn\": \"\(Self.v1())\", \"dob\": \"\(Self.v2(keyTag: old))\"}",
            "{\"ssn\": \"plain\", \"dob\": \"\(Self.v2(keyTag: Self.keyTag))\"}",
            "{\"ssn\": 12, \"dob\": \"\(Self.v2(keyTag: Self.keyTag))\"}",
        ]
        let file = try write("census.ndjson", lines.joined(separator: "\n") + "\n")
        let schema = try write(
            "census-schema.json",
            "{\"schema\": {\"ssn\": {\"encryption\": {\"state\": \"enabled\"}}, "
                + "\"dob\": {\"encryption\": {\"state\": \"enabled\", \"sealkit\": {\"format\": 2}}}}}")
        for auditor in [Auditor(), Auditor(schema: try AuditSchema.load(path: schema))] {
            let summary = try auditor.audit(paths: [file]).summary
            #expect(summary.valuesByKey == [KeyFingerprint(bytes: Self.keyTag): 3, KeyFingerprint(bytes: old): 1])
            #expect(summary.valuesNamingNoKey == 2)
        }
        let json = JSONReport.census(try Auditor().audit(paths: [file]).summary)
        #expect(json["naming_no_key"]?.numberLexeme == "2")
        #expect(json["by_key"]?[KeyFingerprint(bytes: Self.keyTag).description]?.numberLexeme == "3")
    }

    @Test func aFingerprintIsReadOnlyInTheFormItIsWritten() {
        let fingerprint = KeyFingerprint(bytes: [0x3f, 0x9a, 0x07, 0xc2, 0xd4, 0x1e, 0x8b, 0x65])
        #expect(KeyFingerprint(text: "3f9a:07c2:d41e:8b65") == fingerprint)
        for text in ["3F9A:07C2:D41E:8B65", "3f9a07c2d41e8b65", "3f9a:07c2:d41e:8b6", "3f9a:07c2:d41e:8b65:", "3f9a:07c2:d41e:8b6g",
                     "3f9a::07c2d41e:8b65", ""] {
            #expect(KeyFingerprint(text: text) == nil, "\(text)")
        }
    }

    @Test func factsRefuseUntaggedLinesAndReportRefusesStrayFacts() throws {
        let untagged = try write("untagged", "0 1 {}\n{\"a\": 1}\n")
        #expect(throws: SealKitError.self) { _ = try Auditor().writeFacts(path: untagged) { _ in } }
        let summary = #"{"values": 1, "profiles": 1, "blank_lines": 0, "copied_ciphertexts": 0, "shared_nonces": 0, "largest_group": 0, "naming_no_key": 0, "keys": "#
        for text in ["{\"finding\": {}}\n", "{\"files\": []}\n", "{\"files\": []}\n{\"summary\": {}}\n", "[1]\n",
                     "{\"files\": []}\n{\"summary\": \(summary)[]}}\n", "{\"files\": []}\n{\"summary\": \(summary){\"3F9A:07C2:D41E:8B65\": 1}}}\n",
                     "{\"files\": []}\n{\"summary\": \(summary){\"3f9a:07c2:d41e:8b65\": 0}}}\n"] {
            let path = try write("facts-\(UUID().uuidString)", text)
            #expect(throws: SealKitError.self, "\(text)") { _ = try Auditor().report(fromFacts: path) { _ in } }
        }
        let valid = try write("facts-valid", "{\"files\": []}\n{\"summary\": \(summary){\"3f9a:07c2:d41e:8b65\": 4}}}\n")
        #expect(try Auditor().report(fromFacts: valid) { _ in }.valuesByKey.values.first == 4)
    }
}
