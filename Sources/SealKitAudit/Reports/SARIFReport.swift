import SealKit

/// The report as SARIF 2.1.0, for code-scanning tools: one rule per finding kind (all
/// kinds, so rule indexes are stable) and one result per finding.
///
/// Each result's location is the file with the line it starts on: the line itself for
/// NDJSON, the line its profile starts on for JSON, whose exact place is the JSON pointer
/// in the location's `logicalLocations`. Findings that span places list the others as
/// `relatedLocations`. Levels: the finding's severity, `error`, `warning` or `note`; a rule's default level is
/// its kind's usual severity.
public enum SARIFReport {
    /// Renders a report.
    /// - Parameters:
    ///   - report: the audit's result.
    ///   - toolVersion: the version of SealKit that made it.
    /// - Returns: the SARIF log as pretty-printed JSON ending in a newline.
    public static func render(_ report: AuditReport, toolVersion: String) -> String {
        Stream.render(report) { Stream(toolVersion: toolVersion, write: $0) }
    }

    /// The same log, written as the audit goes: the results array is the run's last member,
    /// so everything before it is written with the first result, and the rest at the end.
    public final class Stream: ReportStream {
        private let write: (String) -> Void
        private let head: String
        private let tail: String
        private let indent: Int
        private var count = 0

        /// Streams the report through `write`, naming SealKit at `toolVersion` as the tool.
        /// - Parameters:
        ///   - toolVersion: the version of SealKit that made it.
        ///   - write: receives the text in order.
        public init(toolVersion: String, write: @escaping (String) -> Void) {
            self.write = write
            (head, tail, indent) = Self.frame(toolVersion: toolVersion, remedy: \.remedy)
        }

        /// Streams the report with each rule's help in `remedy`'s words: a tool's own, naming its commands.
        @_spi(CLI) public init(toolVersion: String, remedy: (FindingKind) -> String, write: @escaping (String) -> Void) {
            self.write = write
            (head, tail, indent) = Self.frame(toolVersion: toolVersion, remedy: remedy)
        }

        /// The log without results, split where results go, and the results array's indent.
        private static func frame(toolVersion: String, remedy: (FindingKind) -> String) -> (head: String, tail: String, indent: Int) {
            let skeleton = SARIFReport.log(results: [], toolVersion: toolVersion, remedy: remedy).serialized(pretty: true)
            let marker = "\"results\": []"
            let split = skeleton.firstRange(of: marker)!
            let head = String(skeleton[..<split.lowerBound]) + "\"results\": ["
            let tail = String(skeleton[split.upperBound...]) + "\n"
            let indent = head.split(separator: "\n").last.map { $0.prefix(while: { $0 == " " }).count } ?? 0
            return (head, tail, indent)
        }

        public func add(_ finding: Finding) {
            write((count == 0 ? head + "\n" : ",\n") + SARIFReport.result(finding).serialized(pretty: true).indentingLines(by: indent + 2))
            count += 1
        }

        public func finish(_ summary: AuditSummary) {
            write(count == 0 ? head + "]" + tail : "\n" + String(repeating: " ", count: indent) + "]" + tail)
        }
    }

    static func result(_ finding: Finding) -> JSONValue {
        let kinds = FindingKind.allCases
        var members: [(key: String, value: JSONValue)] = [
            ("ruleId", .string(finding.kind.rawValue)),
            ("ruleIndex", .number(String(kinds.firstIndex(of: finding.kind) ?? 0))),
            ("level", .string(level(finding.severity))),
            ("message", ["text": .string(finding.message)]),
            ("locations", [location(finding.places[0], id: nil)]),
        ]
        if finding.places.count > 1 {
            members.append((
                "relatedLocations",
                .array(finding.places.enumerated().map { index, place in location(place, id: index) })
            ))
        }
        return .object(members)
    }

    static func log(results: [JSONValue], toolVersion: String, remedy: (FindingKind) -> String = \.remedy) -> JSONValue {
        let rules: [JSONValue] = FindingKind.allCases.map { kind in
            [
                "id": .string(kind.rawValue),
                "name": .string(ruleName(kind)),
                "shortDescription": ["text": .string(kind.summary)],
                "help": ["text": .string(remedy(kind))],
                "defaultConfiguration": ["level": .string(level(kind.severity))],
            ]
        }
        return [
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [
                [
                    "tool": [
                        "driver": [
                            "name": "sealkit audit",
                            "version": .string(toolVersion),
                            "rules": .array(rules),
                        ]
                    ],
                    "results": .array(results),
                ]
            ],
        ]
    }

    static func level(_ severity: Severity) -> String {
        switch severity {
        case .error: return "error"
        case .warning: return "warning"
        case .note: return "note"
        }
    }

    /// `nonce-reuse` as `NonceReuse`.
    static func ruleName(_ kind: FindingKind) -> String {
        kind.rawValue.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    private static func location(_ place: Place, id: Int?) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if let id { members.append(("id", .number(String(id)))) }
        members.append((
            "physicalLocation",
            [
                "artifactLocation": ["uri": .string(uri(for: place.file))],
                "region": ["startLine": .number(String(max(place.line, 1)))],
            ]
        ))
        if case .pointer(let pointer) = place.location {
            var logical: [(key: String, value: JSONValue)] = []
            if let field = place.field { logical.append(("name", .string(field))) }
            logical.append(("fullyQualifiedName", .string(pointer)))
            logical.append(("kind", "member"))
            members.append(("logicalLocations", [.object(logical)]))
        }
        if id != nil {
            let text = place.field.map { "\($0) at \(place.location)" } ?? "\(place.location)"
            members.append(("message", ["text": .string(text)]))
        }
        return .object(members)
    }

    /// A file path as a URI reference: relative paths stay relative (code scanning resolves
    /// them against the checkout), absolute ones become `file://` URIs.
    static func uri(for path: String) -> String {
        var encoded = ""
        for byte in path.utf8 {
            let unreserved =
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/")].contains(byte)
            if unreserved {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let digits = Array("0123456789ABCDEF")
                encoded += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
            }
        }
        if encoded.hasPrefix("./") { encoded.removeFirst(2) }
        return path.hasPrefix("/") ? "file://" + encoded : encoded
    }
}
