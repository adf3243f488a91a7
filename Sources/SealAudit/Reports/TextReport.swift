import SealCore

/// The report as a table for people: one row per finding (written as found, so columns after
/// the kind are not aligned), its other place indented below it, and a summary line. Control
/// characters in file and field names are escaped, so a crafted name cannot rewrite the terminal.
public enum TextReport {
    /// Renders a report.
    /// - Parameter report: the audit's result.
    /// - Returns: the table and summary, ending in a newline.
    public static func render(_ report: AuditReport) -> String {
        Stream.render(report) { Stream(write: $0) }
    }

    /// The same table, written as the audit goes.
    public final class Stream: ReportStream {
        private let write: (String) -> Void
        private var count = 0
        static let severityWidth = 8
        static let kindWidth = FindingKind.allCases.map(\.rawValue.count).max() ?? 20

        /// Streams the report through `write`, a line at a time.
        /// - Parameter write: receives the text in order.
        public init(write: @escaping (String) -> Void) { self.write = write }

        public func add(_ finding: Finding) {
            if count == 0 {
                write(row("SEVERITY", "KIND", "WHERE", "FIELD", "MESSAGE"))
            }
            count += 1
            var text = row(
                finding.severity.rawValue, finding.kind.rawValue, TextReport.place(finding.places[0]),
                safe(finding.field ?? "-"), safe(finding.message))
            for other in finding.places.dropFirst() {
                text += String(repeating: " ", count: Self.severityWidth + Self.kindWidth + 4) + "also at "
                    + TextReport.place(other) + (other.field.map { " (\(safe($0)))" } ?? "") + "\n"
            }
            write(text)
        }

        public func finish(_ summary: AuditSummary) {
            write((count > 0 ? "\n" : "") + TextReport.summary(summary) + "\n")
        }

        private func row(_ severity: String, _ kind: String, _ place: String, _ field: String, _ message: String) -> String {
            severity.padding(to: Self.severityWidth) + "  " + kind.padding(to: Self.kindWidth) + "  " + place + "  " + field + "  "
                + message + "\n"
        }
    }

    /// One line: how many findings of which kinds, in how many files and values, and how the
    /// repeated nonces group.
    public static func summary(_ report: AuditReport) -> String { summary(report.summary) }

    /// One line: how many findings of which kinds, in how many files and values, and how the
    /// repeated nonces group.
    public static func summary(_ summary: AuditSummary) -> String {
        var scope = "\(summary.fileCount) \(summary.fileCount == 1 ? "file" : "files"), "
            + "\(summary.valueCount) \(summary.valueCount == 1 ? "value" : "values")"
        // The words `profile --ndjson` uses for the same lines.
        if summary.blankLineCount > 0 {
            scope += summary.blankLineCount == 1 ? ", 1 blank line skipped" : ", \(summary.blankLineCount) blank lines skipped"
        }
        let total = summary.findingCount
        guard total > 0 else { return "No findings (\(scope))." }
        let kinds = summary.countsByKind.map { "\($0.count) \($0.kind.rawValue)" }.joined(separator: ", ")
        var line = "\(total) \(total == 1 ? "finding" : "findings") (\(scope)): \(kinds)"
        let groups = summary.groups
        if !groups.isEmpty {
            var parts: [String] = []
            if groups.copiedCiphertexts > 0 {
                parts.append(groups.copiedCiphertexts == 1 ? "1 ciphertext copied" : "\(groups.copiedCiphertexts) ciphertexts copied")
            }
            if groups.sharedNonces > 0 {
                parts.append(groups.sharedNonces == 1 ? "1 nonce shared by different ciphertexts" : "\(groups.sharedNonces) nonces shared by different ciphertexts")
            }
            if let first = groups.largestGroupFirstPlace {
                parts.append("the largest group has \(groups.largestGroup) places, first at \(place(first))")
            }
            line += "; repeats: " + parts.joined(separator: ", ")
        }
        return line + "."
    }

    static func place(_ place: Place) -> String {
        switch place.location {
        case .line(let number): return safe(place.file) + ":" + String(number)
        case .pointer(let pointer): return safe(place.file) + "#" + safe(pointer)
        }
    }

    /// Escapes what could rewrite a terminal line (controls, bidi and other format characters) as `\u{…}`.
    static func safe(_ text: String) -> String { TextSafety.printable(text, limit: .max) }
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
