import Foundation
import SealKitAudit
import SealKit
import Testing

/// The repository's Fixtures/audit folder.
let auditFixtures = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/audit")

/// A fixture key, read from Fixtures/audit/keys.
func fixtureKey(_ name: String) throws -> SymmetricKey {
    let text = try String(contentsOf: auditFixtures.appendingPathComponent("keys/\(name).key"), encoding: .utf8)
    return try SymmetricKey(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines))
}

/// One expected finding, as expected.json states it.
struct ExpectedFinding: Equatable, CustomStringConvertible {
    struct ExpectedPlace: Equatable {
        let file: String
        let location: Location
        let field: String?
        let line: Int
    }

    let kind: String
    let severity: String
    let places: [ExpectedPlace]

    var description: String { "\(kind) \(places.map { "\($0.file) \($0.location)" })" }

    init(kind: String, severity: String, places: [ExpectedPlace]) {
        self.kind = kind
        self.severity = severity
        self.places = places
    }

    /// From a report finding, with file paths made relative to Fixtures/audit.
    init(_ finding: Finding, base: String) {
        kind = finding.kind.rawValue
        severity = finding.severity.rawValue
        // Not `places[0]`: a finding without a place must fail the comparison, not trap the test process.
        let shown = finding.spansPlaces ? finding.places : Array(finding.places.prefix(1))
        places = shown.map { ExpectedPlace(file: relative($0.file, to: base), location: $0.location, field: $0.field, line: $0.line) }
    }
}

func relative(_ path: String, to base: String) -> String {
    path.hasPrefix(base + "/") ? String(path.dropFirst(base.count + 1)) : path
}

/// One run of expected.json.
struct ExpectedRun {
    let schema: String?
    let key: Bool
    let findings: [ExpectedFinding]
    let secret: String

    static func all() throws -> [ExpectedRun] {
        let data = try Data(contentsOf: auditFixtures.appendingPathComponent("expected.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let secret = try #require(root["secret"] as? String)
        let runs = try #require(root["runs"] as? [[String: Any]])
        return try runs.map { run in
            let findings = try #require(run["findings"] as? [[String: Any]])
            return ExpectedRun(
                schema: run["schema"] as? String, key: try #require(run["key"] as? Bool),
                findings: try findings.map { f in
                    let places = (f["places"] as? [[String: Any]]) ?? [f]
                    return ExpectedFinding(
                        kind: try #require(f["kind"] as? String), severity: try #require(f["severity"] as? String),
                        places: try places.map { p in
                            let location: Location
                            if let line = p["location"] as? Int { location = .line(line) } else {
                                location = .pointer(try #require(p["location"] as? String))
                            }
                            return .init(
                                file: try #require(p["file"] as? String), location: location,
                                field: p["field"] as? String, line: try #require(p["line"] as? Int))
                        })
                },
                secret: secret)
        }
    }
}
