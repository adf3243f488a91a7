import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitAudit

extension FindingKind: ExpressibleByArgument {}

struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Audit exported profiles and fixtures for plaintext, bad ciphertexts, reused nonces and pending rotations.",
        discussion: """
            Reads .json files (one profile, an array of profiles, or Rownd's user-state shape) and .ndjson/.jsonl \
            files (one profile per line); folders are walked recursively; - reads NDJSON from stdin. Without --schema, strings that look like \
            ciphertexts are audited; with it, fields flagged encrypted must hold ciphertexts. Findings never show \
            values or keys. Exit status: 0 clean, 1 findings (as --fail-on says), 64 bad arguments, 65 bad schema, \
            66 nothing audited (no files, no profiles, or no flagged fields), 74 unreadable files. \
            --facts and --from-facts are the two halves of an audit split around a shuffle, for sealkit's Spark job \
            (docs/audit.md, "More than one machine").
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, sarif
    }

    /// The least severity that fails the audit.
    enum FailOn: String, ExpressibleByArgument, CaseIterable {
        case error, warning, note

        var severity: Severity {
            switch self {
            case .error: return .error
            case .warning: return .warning
            case .note: return .note
            }
        }
    }

    @Option(help: ArgumentHelp("A schema in Rownd's app-config shape saying which fields are encrypted.", valueName: "path"), completion: .file(extensions: ["json"]))
    var schema: String?

    @Flag(help: ArgumentHelp(
        "The schema declares every field: a field it does not declare is an error, not a note.",
        discussion: "As the schema's \"sealkit\": {\"undeclared\": \"error\"} does."))
    var completeSchema = false

    @Option(name: .customLong("key"), help: ArgumentHelp("Check ciphertexts against this key id's keys (repeatable).", valueName: "id"), completion: .keyIDs)
    var keys: [String] = []

    @Option(help: "Report format: text, json or sarif.")
    var format: Format = .text

    @Option(
        name: .customLong("ignore"),
        help: ArgumentHelp("Leave out findings of this kind, from the report and the counts (repeatable).", valueName: "kind"))
    var ignored: [FindingKind] = []

    @Option(help: ArgumentHelp(
        "Exit 1 on findings of this severity or worse; with note, any finding fails.",
        discussion: "Notes (an undeclared field whose name is near no encrypted field's) are reported and counted but pass unless asked.",
        valueName: "severity"))
    var failOn: FailOn = .warning

    @Flag(name: .customLong("no-progress"), help: "Never show the progress line (shown by default on a terminal only).")
    var noProgress = false

    @Flag(help: ArgumentHelp(
        "Print each value's findings and public facts (nonce, digest, place) as NDJSON instead of a report; reads tagged lines (FILE LINE PROFILE) from -."))
    var facts = false

    @Flag(help: "Write the report from facts merged by sealkit's Spark job, read from -.")
    var fromFacts = false

    @OptionGroup var keystoreOptions: KeystoreOptions

    @Argument(help: ArgumentHelp("Files and folders to audit ('-': one profile per line on stdin).", valueName: "path"), completion: .file())
    var paths: [String] = []

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one file or folder to audit") }
        if facts || fromFacts {
            let mode = facts ? "--facts" : "--from-facts"
            if facts && fromFacts { throw ValidationError("give --facts or --from-facts, not both") }
            if paths != ["-"] { throw ValidationError("\(mode) reads stdin: give - as the only path") }
            if !keys.isEmpty { throw ValidationError("\(mode) takes no --key: the split audit checks no keys") }
            if facts && format != .text { throw ValidationError("--facts writes facts, not a report: leave out --format") }
        }
        if completeSchema && schema == nil { throw ValidationError("--complete-schema says what the schema declares: give --schema") }
    }

    func run() throws {
        let output = StandardOutput()
        var writeError: (any Error)?
        let write = { (text: String) in
            guard writeError == nil else { return }
            do { try output.write(text) } catch { writeError = error }
        }
        // Findings go out as they are found; each stream writes nothing before its first finding,
        // so an audit that must fail before any (nothing audited) leaves stdout empty.
        let stream: any ReportStream
        switch format {
        case .text: stream = TextReport.Stream(write: write)
        case .json: stream = JSONReport.Stream(write: write)
        case .sarif: stream = SARIFReport.Stream(toolVersion: SealKitCommand.configuration.version, remedy: \.said, write: write)
        }
        let summary: AuditSummary
        do {
            var schema = try self.schema.map { path throws(SealKitError) in try AuditSchema.load(path: path) }
            if completeSchema { schema?.undeclaredMembers = .refused }
            let auditor = try Auditor(schema: schema, vaults: try vaults(), ignoring: Set(ignored))
            if facts {
                _ = try auditor.writeFacts(write: write)
                if let writeError { throw writeError }
                try output.flush()
                return
            }
            if fromFacts {
                summary = try auditor.report(fromFacts: "-", onFinding: stream.add)
            } else {
                let progress = ProgressLine(label: "sealkit audit", enabled: !noProgress)
                defer { progress.finish() }
                summary = try auditor.audit(paths: paths, progress: { progress.update($0) }, onFinding: stream.add)
            }
        }
        if let writeError { throw writeError }
        let failing = summary.findingCountsBySeverity.contains { $0.value > 0 && $0.key >= failOn.severity }
        // Reading no value proves nothing: in CI that would be a false green. Notes alone do not hide it (profiles
        // holding only fields the schema does not declare: the schema or the files are most likely the wrong ones);
        // an error, such as a field near an encrypted one's name, is reported as a finding.
        let errors = summary.findingCountsBySeverity[.error] ?? 0
        if errors == 0, let reason = summary.nothingAuditedReason(flaggedBySchema: schema != nil) {
            throw CLIFailure("nothing was audited: \(reason)", status: .noInput)
        }
        stream.finish(summary)
        if let writeError { throw writeError }
        try output.flush()
        if failing {
            // The text report ends in the summary; where it was shown on the terminal stderr goes to, repeating it
            // there would print it twice, so stderr only says why the exit status is 1.
            if format == .text, StandardOutput.sharesTerminalWithStandardError {
                throw CLIFailure(Self.verdict(summary, failOn: failOn), status: .negative)
            }
            throw CLIFailure(TextReport.summary(summary), status: .negative)
        }
    }

    /// Why the audit fails, for when the summary is already on the screen: how many findings are at or above
    /// `--fail-on`.
    static func verdict(_ summary: AuditSummary, failOn: FailOn) -> String {
        let count = summary.findingCountsBySeverity.filter { $0.key >= failOn.severity }.values.reduce(0, +)
        return "the audit fails: \(count) \(count == 1 ? "finding" : "findings") at or above --fail-on \(failOn.rawValue)"
    }

    /// The vaults of the `--key` ids, each unlocked in turn.
    private func vaults() throws -> [Vault] {
        guard !keys.isEmpty else { return [] }
        let keystore = try keystoreOptions.openKeystore()
        return try keys.map { text in try keystoreOptions.unlockedVault(for: try keyID(text), format: .v1, in: keystore) }
    }
}

/// A progress line on stderr, shown only when stderr is a terminal and the work is large (8 MiB of files,
/// or a second of reading stdin, whose size is unknown): bytes and values read, the rate, and for files
/// the time left. Redrawn at most ten times a second and cleared at the end.
final class ProgressLine {
    private let label: String
    private let minimumBytes = 8 << 20
    private let start = ContinuousClock.now
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var shown = false
    private let enabled: Bool

    /// - Parameters:
    ///   - label: what the line starts with.
    ///   - enabled: false to never show it (`--no-progress`); it is never shown unless stderr is a terminal
    ///     that can erase a line (TERM=dumb cannot).
    init(label: String, enabled: Bool = true) {
        self.label = label
        self.enabled = enabled && StandardError.isTerminal && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    func update(_ progress: AuditProgress) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let elapsed = now - start
        guard progress.bytesTotal >= minimumBytes || (progress.bytesTotal == 0 && elapsed >= .seconds(1)) else { return }
        guard now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = now
        let seconds = max(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, 1e-3)
        let rate = Double(progress.bytesRead) / seconds
        var text = "\(label): \(Self.size(progress.bytesRead))"
        if progress.bytesTotal > 0 {
            let fraction = min(1, Double(progress.bytesRead) / Double(progress.bytesTotal))
            text += " of \(Self.size(progress.bytesTotal)) (\(Int(fraction * 100))%)"
        }
        text += ", \(progress.valuesRead) \(progress.valuesRead == 1 ? "value" : "values"), \(Self.size(Int(rate)))/s"
        if progress.bytesTotal > 0, rate > 0 {
            let left = Int((Double(max(progress.bytesTotal - progress.bytesRead, 0)) / rate).rounded(.up))
            text += ", \(left / 60):" + (left % 60 < 10 ? "0" : "") + "\(left % 60) left"
        }
        StandardError.write("\r\u{1B}[K" + text)
        shown = true
    }

    /// Bytes in KiB below a MiB, else in MiB or GiB with one decimal.
    private static func size(_ bytes: Int) -> String {
        if bytes < 1 << 20 { return "\(bytes >> 10) KiB" }
        let (shift, unit) = bytes < 1 << 30 ? (20, "MiB") : (30, "GiB")
        // Parenthesised: Swift shifts before it multiplies, and `bytes * 10 >> shift` is always 0.
        let tenths = (bytes * 10) >> shift
        return "\(tenths / 10).\(tenths % 10) \(unit)"
    }

    func finish() {
        if shown { StandardError.write("\r\u{1B}[K") }
        shown = false
    }
}
