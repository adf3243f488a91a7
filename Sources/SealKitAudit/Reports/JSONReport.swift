import SealKit

/// The report as JSON: `{"findings": [...], "summary": {"files": N, "values": N, "profiles": N, "blank_lines": N,
/// "findings": {"<kind>": N}, "repeats": {"copied_ciphertexts": N, "shared_nonces": N, "largest_group": N},
/// "keys": {"by_key": {"<fingerprint>": N}, "naming_no_key": N}}}`.
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
        Stream.render(report) { Stream(write: $0) }
    }

    /// The same document, written as the audit goes.
    public final class Stream: ReportStream {
        private let write: (String) -> Void
        private var count = 0

        /// Streams the report through `write`, a piece at a time.
        /// - Parameter write: receives the text in order.
        public init(write: @escaping (String) -> Void) { self.write = write }

        public func add(_ finding: Finding) {
            write((count == 0 ? "{\n  \"findings\": [\n" : ",\n") + JSONReport.json(finding).serialized(pretty: true).indentingLines(by: 4))
            count += 1
        }

        public func finish(_ summary: AuditSummary) {
            write(count == 0 ? "{\n  \"findings\": [],\n" : "\n  ],\n")
            write("  \"summary\": " + JSONReport.json(summary).serialized(pretty: true).indentingLines(by: 2, includingFirst: false) + "\n}\n")
        }
    }

    static func json(_ summary: AuditSummary) -> JSONValue {
        var counts: [(key: String, value: JSONValue)] = []
        for kind in FindingKind.allCases {
            counts.append((kind.rawValue, .number(String(summary.findingCounts[kind] ?? 0))))
        }
        let groups = summary.groups
        return [
            "files": .number(String(summary.fileCount)),
            "values": .number(String(summary.valueCount)),
            "profiles": .number(String(summary.profileCount)),
            "blank_lines": .number(String(summary.blankLineCount)),
            "findings": .object(counts),
            "repeats": [
                "copied_ciphertexts": .number(String(groups.copiedCiphertexts)),
                "shared_nonces": .number(String(groups.sharedNonces)),
                "largest_group": .number(String(groups.largestGroup)),
            ],
            "keys": census(summary),
        ]
    }

    /// The key census, keys in fingerprint order: `{"by_key": {"3f9a:07c2:d41e:8b65": N}, "naming_no_key": N}`.
    package static func census(_ summary: AuditSummary) -> JSONValue {
        let byKey = summary.valuesByKey.map { (key: $0.key.description, value: $0.value) }.sorted { $0.key < $1.key }
        return [
            "by_key": .object(byKey.map { ($0.key, .number(String($0.value))) }),
            "naming_no_key": .number(String(summary.valuesNamingNoKey)),
        ]
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
