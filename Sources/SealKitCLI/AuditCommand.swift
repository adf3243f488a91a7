import ArgumentParser
import FoundationEssentials
import SealKit

extension FindingKind: ExpressibleByArgument {}

struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Audit exported profiles and fixtures for plaintext, bad ciphertexts, reused nonces and pending rotations.",
        discussion: """
            Reads .json files (one profile, an array of profiles, or Rownd's user-state shape) and .ndjson/.jsonl \
            files (one profile per line); folders are walked recursively. Without --schema, strings that look like \
            ciphertexts are audited; with it, fields flagged encrypted must hold ciphertexts. Findings never show \
            values or keys. Exit status: 0 clean, 1 findings (as --fail-on says), 64 bad arguments, 65 bad schema, \
            66 nothing audited (no files, no profiles, or no flagged fields), 74 unreadable files.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, sarif
    }

    /// The least severity that fails the audit.
    enum FailOn: String, ExpressibleByArgument, CaseIterable {
        case error, warning

        var severity: Severity { self == .error ? .error : .warning }
    }

    @Option(help: ArgumentHelp("A schema in Rownd's app-config shape saying which fields are encrypted.", valueName: "path"))
    var schema: String?

    @Option(name: .customLong("key"), help: ArgumentHelp("Check ciphertexts against this key id's keys (repeatable).", valueName: "id"))
    var keys: [String] = []

    @Option(help: "Report format: text, json or sarif.")
    var format: Format = .text

    @Option(
        name: .customLong("ignore"),
        help: ArgumentHelp("Leave out findings of this kind (repeatable): \(FindingKind.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "kind"))
    var ignored: [FindingKind] = []

    @Option(help: ArgumentHelp("Exit 1 on findings of this severity or worse: error, or warning (the default: any finding fails).", valueName: "severity"))
    var failOn: FailOn = .warning

    @OptionGroup var keystoreOptions: KeystoreOptions

    @Argument(help: ArgumentHelp("Files and folders to audit.", valueName: "path"))
    var paths: [String] = []

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one file or folder to audit") }
    }

    func run() throws {
        let report: AuditReport
        do {
            let schema = try self.schema.map { path throws(AuditError) in try AuditSchema.load(path: path) }
            let auditor = Auditor(schema: schema, keys: try keyRings())
            let progress = ProgressLine(label: "sealkit audit")
            let full = try auditor.audit(paths: paths) { progress.update($0) }
            progress.finish()
            let ignored = Set(self.ignored)
            report = AuditReport(
                findings: full.findings.filter { !ignored.contains($0.kind) }, fileCount: full.fileCount,
                valueCount: full.valueCount, profileCount: full.profileCount, blankLineCount: full.blankLineCount)
        } catch let error as AuditError {
            throw CLIFailure(error.description, status: Self.status(for: error))
        }
        let failing = report.findings.contains { $0.severity >= failOn.severity }
        // Reading no value proves nothing: in CI that would be a false green.
        if !failing, let reason = report.nothingAuditedReason(flaggedBySchema: schema != nil) {
            throw CLIFailure("nothing was audited: \(reason)", status: .noInput)
        }

        let output = StandardOutput()
        switch format {
        case .text: try output.write(TextReport.render(report))
        case .json: try output.write(JSONReport.render(report))
        case .sarif: try output.write(SARIFReport.render(report, toolVersion: SealKitCommand.configuration.version))
        }
        try output.flush()
        if failing {
            throw CLIFailure(TextReport.summary(report), status: .negative)
        }
    }

    private func keyRings() throws -> [KeyRing] {
        guard !keys.isEmpty else { return [] }
        let keystore = try keystoreOptions.keystore()
        return try keys.map { text in
            let id = try keyID(text)
            return try keystore.keyRing(for: id, passphrase: try keystoreOptions.passphrase(toUnlock: id, in: keystore))
        }
    }

    static func status(for error: AuditError) -> ExitStatus {
        switch error {
        case .missingPath, .unsupportedFile, .noPaths: return .usage
        case .invalidSchema: return .dataError
        case .unreadable: return .ioError
        }
    }
}

/// A progress bar on stderr, shown only when stderr is a terminal and the work is large,
/// redrawn at most ten times a second and cleared at the end.
final class ProgressLine {
    private let label: String
    private let minimumBytes = 8 << 20
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var shown = false
    private let enabled = StandardError.isTerminal

    init(label: String) { self.label = label }

    func update(_ progress: AuditProgress) {
        guard enabled, progress.bytesTotal >= minimumBytes else { return }
        let now = ContinuousClock.now
        guard now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = now
        let fraction = min(1, Double(progress.bytesRead) / Double(max(progress.bytesTotal, 1)))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let megabytes = { (bytes: Int) in String(bytes >> 20) }
        StandardError.write(
            "\r\u{1B}[K\(label) [\(bar)] \(Int(fraction * 100))% "
                + "\(megabytes(progress.bytesRead)) of \(megabytes(progress.bytesTotal)) MiB")
        shown = true
    }

    func finish() {
        if shown { StandardError.write("\r\u{1B}[K") }
        shown = false
    }
}
