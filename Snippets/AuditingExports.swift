// A CI step that audits a fixture folder before it ships: keyless (shapes, nonces, copies, keys in use) unless
// vaults are given, with progress for a long run and the report in the three forms sealkit writes.
import SealKitAudit

func auditFixtures(schemaPath: String, folder: String, writeReport: @escaping (String) -> Void) throws -> Bool {
    // The app's schema says which fields must hold ciphertexts, and which are bound to their place (v2).
    let schema = try AuditSchema.load(path: schemaPath)
    print("encrypted: \(schema.encryptedFields.sorted()), bound: \(schema.boundFields.sorted()), from \(schema.path)")
    // No vaults: the audit reads no key. Plaintext in a field the schema does not flag is not this step's concern.
    let auditor = try Auditor(schema: schema, vaults: [], ignoring: [.undeclaredField])
    let report = try auditor.audit(paths: [folder]) { progress in
        let total = progress.bytesTotal > 0 ? " of \(progress.bytesTotal)" : ""
        print("\(progress.valuesRead) values, \(progress.bytesRead)\(total) bytes", terminator: "\r")
    }
    for finding in report.findings where finding.severity >= .warning {
        // A copy or a reused nonce names every place it was seen; other findings name one.
        let places = finding.spansPlaces ? finding.places.map(\.location.description) : ["\(finding.location)"]
        print(finding.kind.rawValue, finding.file, places, finding.field ?? "-", finding.message)
        print("  fix: \(finding.kind.remedy)")
    }
    let summary = report.summary
    print("\(report.fileCount) files, \(report.valueCount) values in \(summary.profileCount) profiles,",
          "\(summary.blankLineCount) blank lines skipped; \(summary.findingCount) findings")
    for (kind, count) in summary.countsByKind { print("  \(kind.summary): \(count), \(kind.severity)") }
    print("plaintext fields: \(summary.findingCounts[.plaintextField] ?? 0),",
          "errors: \(summary.findingCountsBySeverity[.error] ?? 0)")
    // The keys still in use, by fingerprint: what must stay readable until a rotation ends.
    for (fingerprint, values) in summary.valuesByKey { print("\(fingerprint): \(values) values") }
    print("values naming no key (v1): \(summary.valuesNamingNoKey)")
    let repeats = summary.groups
    if !repeats.isEmpty {
        print("\(repeats.copiedCiphertexts) copies, \(repeats.sharedNonces) shared nonces;",
              "largest group \(repeats.largestGroup) from \(repeats.largestGroupFirstPlace?.file ?? "-")")
    }
    // One report, three forms: text for people, JSON for scripts, SARIF for code-scanning dashboards.
    writeReport(TextReport.render(report))
    writeReport(JSONReport.render(report))
    writeReport(SARIFReport.render(report, toolVersion: "1.0.0"))
    return report.isClean
}

// A large export: findings are written as they are found, not held, and the summary closes the report.
func streamSARIF(of paths: [String], schemaPath: String, write: @escaping (String) -> Void) throws {
    let auditor = try Auditor(schema: try AuditSchema.load(path: schemaPath), vaults: [])
    print("ignoring \(auditor.ignoring.count) kinds")
    let streams: [any ReportStream] = [
        SARIFReport.Stream(toolVersion: "1.0.0", write: write), JSONReport.Stream(write: write), TextReport.Stream(write: write),
    ]
    let summary = try auditor.audit(paths: paths, progress: nil) { finding in
        for stream in streams { stream.add(finding) }
    }
    for stream in streams { stream.finish(summary) }
}

// An app that holds its schema already audits with it, and may be stricter than its file about undeclared members.
func strictAuditor(for appSchema: ProfileSchema) throws -> Auditor {
    var schema = AuditSchema(appSchema, path: "app-schema.json")
    schema.undeclaredMembers = .refused
    print(appSchema.encryptedFieldNames, appSchema.undeclaredMembers == ProfileSchema.UndeclaredMembers.refusedNearEncrypted)
    return try Auditor(schema: schema, vaults: [])
}
