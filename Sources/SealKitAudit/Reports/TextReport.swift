import SealKit

/// The report as a table for people: one row per finding, its other places indented below it, and
/// a summary line. The columns line up under the header: rows are held until the audit ends (or
/// until `Stream.blockSize` rows wait, for an audit with very many findings, whose later rows keep
/// the widths found so far and may run past them). Control characters in file and field names are
/// escaped, so a crafted name cannot rewrite the terminal.
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
        /// Rows not yet written: their cells, and the finding's other places.
        private var waiting: [(cells: [String], others: [String])] = []
        /// The widths of the columns before the message, once the header is written.
        private var widths: [Int]?
        static let header = ["SEVERITY", "KIND", "WHERE", "FIELD", "MESSAGE"]
        /// How many rows wait for their widths at most.
        static let blockSize = 10_000

        /// Streams the report through `write`, a line at a time.
        /// - Parameter write: receives the text in order.
        public init(write: @escaping (String) -> Void) { self.write = write }

        public func add(_ finding: Finding) {
            count += 1
            let cells = [
                finding.severity.rawValue, finding.kind.rawValue, TextReport.place(finding.places[0]),
                safe(finding.field ?? "-"), safe(finding.message),
            ]
            let others = finding.places.dropFirst().map { other in
                "also at " + TextReport.place(other) + (other.field.map { " (\(safe($0)))" } ?? "")
            }
            waiting.append((cells, others))
            if waiting.count >= Self.blockSize { flush() }
        }

        public func finish(_ summary: AuditSummary) {
            flush()
            write((count > 0 ? "\n" : "") + TextReport.summary(summary) + "\n")
        }

        /// Writes the waiting rows, and the header before the first: each column as wide as its widest cell.
        private func flush() {
            guard !waiting.isEmpty else { return }
            var text = ""
            if widths == nil {
                let columns = Self.header.count - 1
                widths = (0..<columns).map { column in
                    waiting.reduce(Self.header[column].count) { max($0, $1.cells[column].count) }
                }
                text += row(Self.header)
            }
            for (cells, others) in waiting {
                text += row(cells)
                let indent = String(repeating: " ", count: widths![0] + widths![1] + 4)
                for other in others { text += indent + other + "\n" }
            }
            waiting.removeAll(keepingCapacity: true)
            write(text)
        }

        private func row(_ cells: [String]) -> String {
            var line = ""
            for (column, width) in widths!.enumerated() { line += cells[column].padding(to: width) + "  " }
            return line + cells[cells.count - 1] + "\n"
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
