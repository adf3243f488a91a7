import SealKit

/// A report written as the audit goes: findings one at a time, then the summary. Memory
/// holds one finding, whatever the number of findings.
public protocol ReportStream: AnyObject {
    /// Writes one finding.
    func add(_ finding: Finding)
    /// Writes what comes after the findings: the summary, the closing brackets.
    func finish(_ summary: AuditSummary)
}

extension ReportStream {
    /// Renders a whole report through the stream.
    static func render(_ report: AuditReport, _ make: (@escaping (String) -> Void) -> Self) -> String {
        var text = ""
        let stream = make { text += $0 }
        for finding in report.findings { stream.add(finding) }
        stream.finish(report.summary)
        return text
    }
}

extension String {
    /// Every line after the first indented by `spaces`: pretty JSON placed inside a document
    /// being streamed (JSON strings hold no raw newline, so lines are safe to split on).
    func indentingLines(by spaces: Int, includingFirst: Bool = true) -> String {
        let pad = String(repeating: " ", count: spaces)
        var result = includingFirst ? pad : ""
        for character in self {
            result.append(character)
            if character == "\n" { result += pad }
        }
        return result
    }
}
