import SealJSON

/// The report as JSON: `{"findings": [...], "summary": {"files": N, "values": N, "profiles": N, "blank_lines": N,
/// "findings": {"<kind>": N}}}`.
///
/// Each finding has `kind`, `severity`, `file`, `location` (a line number for NDJSON, a JSON
/// pointer for JSON), `field` (null for whole-file findings) and `message`; `nonce-reuse` and
/// `duplicate-ciphertext` findings add `places`, every place as `{file, location, field}`.
/// `summary.findings` counts every kind, zeros included, in a fixed order.
public enum JSONReport {
    /// Renders a report.
    /// - Parameter report: the audit's result.
    /// - Returns: pretty-printed JSON text ending in a newline.
    public static func render(_ report: AuditReport) -> String {
        var counts: [(key: String, value: JSONValue)] = []
        for kind in FindingKind.allCases {
            counts.append((kind.rawValue, .number(String(report.findings.count { $0.kind == kind }))))
        }
        let document: JSONValue = [
            "findings": .array(report.findings.map(json)),
            "summary": [
                "files": .number(String(report.fileCount)),
                "values": .number(String(report.valueCount)),
                "profiles": .number(String(report.profileCount)),
                "blank_lines": .number(String(report.blankLineCount)),
                "findings": .object(counts),
            ],
        ]
        return document.serialized(pretty: true) + "\n"
    }

    static func json(_ finding: Finding) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("kind", .string(finding.kind.rawValue)),
            ("severity", .string(finding.severity.rawValue)),
            ("file", .string(finding.file)),
            ("location", json(finding.location)),
            ("field", finding.field.map(JSONValue.string) ?? .null),
            ("message", .string(finding.message)),
        ]
        if finding.spansPlaces {
            members.append((
                "places",
                .array(finding.places.map { place in
                    [
                        "file": .string(place.file), "location": json(place.location),
                        "field": place.field.map(JSONValue.string) ?? .null,
                    ]
                })
            ))
        }
        return .object(members)
    }

    static func json(_ location: Location) -> JSONValue {
        switch location {
        case .line(let number): return .number(String(number))
        case .pointer(let pointer): return .string(pointer)
        }
    }
}
