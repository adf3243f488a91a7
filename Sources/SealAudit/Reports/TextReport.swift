/// The report as a table for people: one row per finding, further places indented below
/// it, and a summary line. Control characters in file and field names are escaped, so a
/// crafted name cannot rewrite the terminal.
public enum TextReport {
    /// Renders a report.
    /// - Parameter report: the audit's result.
    /// - Returns: the table and summary, ending in a newline.
    public static func render(_ report: AuditReport) -> String {
        var rows: [[String]] = [["SEVERITY", "KIND", "WHERE", "FIELD", "MESSAGE"]]
        var continuation: [Int: [String]] = [:]
        for finding in report.findings {
            rows.append([
                finding.severity.rawValue, finding.kind.rawValue, place(finding.places[0]),
                safe(finding.field ?? "-"), safe(finding.message),
            ])
            if finding.places.count > 1 {
                continuation[rows.count - 1] = finding.places.dropFirst().map { p in
                    "also at " + place(p) + (p.field.map { " (\(safe($0)))" } ?? "")
                }
            }
        }
        var output = ""
        if !report.findings.isEmpty {
            let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
            for (index, row) in rows.enumerated() {
                var line = ""
                for column in 0..<4 { line += row[column].padding(to: widths[column]) + "  " }
                output += line + row[4] + "\n"
                for more in continuation[index] ?? [] {
                    output += String(repeating: " ", count: widths[0] + widths[1] + 4) + more + "\n"
                }
            }
            output += "\n"
        }
        output += summary(report) + "\n"
        return output
    }

    /// One line: how many findings of which kinds, in how many files and values.
    public static func summary(_ report: AuditReport) -> String {
        var scope = "\(report.fileCount) \(report.fileCount == 1 ? "file" : "files"), "
            + "\(report.valueCount) \(report.valueCount == 1 ? "value" : "values")"
        // The words `profile --ndjson` uses for the same lines.
        if report.blankLineCount > 0 {
            scope += report.blankLineCount == 1 ? ", 1 blank line skipped" : ", \(report.blankLineCount) blank lines skipped"
        }
        guard !report.findings.isEmpty else { return "No findings (\(scope))." }
        let kinds = report.countsByKind.map { "\($0.count) \($0.kind.rawValue)" }.joined(separator: ", ")
        let total = report.findings.count
        return "\(total) \(total == 1 ? "finding" : "findings") (\(scope)): \(kinds)."
    }

    private static func place(_ place: Place) -> String {
        switch place.location {
        case .line(let number): return safe(place.file) + ":" + String(number)
        case .pointer(let pointer): return safe(place.file) + "#" + safe(pointer)
        }
    }

    /// Escapes C0, DEL and C1 controls as `\u{…}`.
    static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
