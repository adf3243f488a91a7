import SealKitAudit
import Testing

/// The text report's table: every column starts where its header starts, whatever the
/// widths of the places and field names in the rows.
@Suite("audit text table")
struct TextReportTests {
    @Test func columnsLineUpUnderTheHeader() throws {
        let findings = [
            Finding(kind: .plaintextField, places: [Place(file: "a.json", location: .pointer("/ssn"), field: "ssn", line: 1)], message: "first"),
            Finding(
                kind: .duplicateCiphertext,
                places: [
                    Place(file: "deeply/nested/folder/profiles-2026.ndjson", location: .line(1234), field: "home_address", line: 1234),
                    Place(file: "b.ndjson", location: .line(2), field: "x", line: 2),
                ],
                message: "second"),
            Finding(kind: .retiredKey, places: [Place(file: "c", location: .line(7), field: nil, line: 7)], message: "third"),
        ]
        var summary = AuditSummary()
        summary.fileCount = 3
        summary.valueCount = 4
        for finding in findings { summary.findingCounts[finding.kind, default: 0] += 1 }
        let text = TextReport.render(AuditReport(findings: findings, summary: summary))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = lines[0]
        let starts = try ["KIND", "WHERE", "FIELD", "MESSAGE"].map { try #require(header.range(of: $0), "\(header)").lowerBound.utf16Offset(in: header) }
        let rows = lines.dropFirst().prefix { !$0.isEmpty }.filter { !$0.hasPrefix(" ") }
        #expect(rows.count == 3, "\(text)")
        for (row, finding) in zip(rows, findings) {
            let place = finding.places[0]
            let location: String
            switch place.location {
            case .line(let number): location = place.file + ":" + String(number)
            case .pointer(let pointer): location = place.file + "#" + pointer
            }
            let cells = [finding.kind.rawValue, location, finding.field ?? "-", finding.message]
            // Each cell looked for after the one before it ("-" is also in "retired-key").
            var from = row.startIndex
            for (cell, start) in zip(cells, starts) {
                let range = row.range(of: cell, range: from..<row.endIndex)
                #expect(range.map { $0.lowerBound.utf16Offset(in: row) } == start, "'\(cell)' in \(row.debugDescription) under the header \(header.debugDescription)")
                from = range?.upperBound ?? from
            }
        }
        // A finding's other place sits under the WHERE column.
        let also = try #require(lines.first { $0.contains("also at ") })
        #expect(also.range(of: "also at ")!.lowerBound.utf16Offset(in: also) == starts[1], "\(also.debugDescription)")
    }
}
