import SealKit

/// The audit split in two around a shuffle, for exports larger than one machine (sealkit's Spark job,
/// `Integrations/spark/sealkit_audit.py`; docs/audit.md, "More than one machine").
///
/// 1. **Facts** (`Auditor.writeFacts`), on every worker: each part of the export is audited line by line,
///    every per-value check included, and what the whole-data-set checks need comes out as NDJSON facts:
///    the value's own findings, and for each ciphertext of either format its place, the first 16 bytes of
///    its nonce and a 16-byte BLAKE2b digest of the whole ciphertext. Those are bytes of the value: a flagged
///    field holding plaintext that happens to be base64 is audited as a ciphertext, and its "nonce" is then
///    plaintext. So the engine keys both on the worker, before the shuffle (the Spark job: keyed BLAKE2b under
///    a key drawn for the run), which keeps equal values equal and says nothing else; no plaintext, key or
///    value byte leaves the worker.
/// 2. The shuffle (Spark's, not SealKit's) groups the values by nonce: the first place of each nonce (in
///    file, line and sequence order) is where it was first seen, and every later one is a repeat, a copy
///    when its digest is the first one's. It merges bad lines per file and sums the counts.
/// 3. **Report** (`Auditor.report(fromFacts:onFinding:)`): the merged facts become the findings and the
///    summary `Auditor.audit(paths:progress:onFinding:)` makes on one machine, with the same messages,
///    through the same report writers.
///
/// Input of the facts step: NDJSON lines each starting with its place, `FILE LINE ` (the file's index in
/// the job's file list and the line's 1-based number in that file), then the line as it stands in the
/// export. Output, one compact JSON object per line:
/// - `{"finding": {"file": F, "line": L, "seq": S, "kind": K, "field": N, "message": M, "severity": V}}`
/// - `{"value": {"file": F, "line": L, "seq": S, "field": N, "nonce": HEX, "digest": HEX}}`
/// - `{"bad_line": {"file": F, "line": L, "message": M}}`, `{"not_profile": {"file": F, "line": L}}`
/// - `{"counts": {"values": N, "profiles": N, "blank_lines": N, "keys": {FINGERPRINT: N, ...}, "naming_no_key": N}}`,
///   last: `keys` and `naming_no_key` are this part's key census (`AuditSummary.valuesByKey`), which the shuffle sums.
///
/// `seq` orders a line's findings and values as one machine meets them (a value's repeat finding comes
/// right after its own findings). Input of the report step, in the order the findings are to be reported:
/// - `{"files": [PATH, ...]}` first, naming each file index;
/// - `{"finding": ...}` as above;
/// - `{"repeat": {"file": F, "line": L, "field": N, "copy": BOOL, "first": {"file": F, "line": L, "field": N}}}`;
/// - `{"bad_lines": {"file": F, "line": L, "message": M, "count": N}}` (the file's first bad line, and how
///   many it has) or, for a file without bad lines, `{"not_profiles": {"file": F, "line": L, "count": N}}`;
/// - `{"summary": {"values": N, "profiles": N, "blank_lines": N, "copied_ciphertexts": N, "shared_nonces": N,
///   "largest_group": N, "largest_group_first": {"file": F, "line": L, "field": N} or null,
///   "keys": {FINGERPRINT: N, ...}, "naming_no_key": N}}`, last.
public enum AuditFacts {
    /// Writes facts as NDJSON lines.
    final class Writer {
        private let write: (String) -> Void

        init(write: @escaping (String) -> Void) { self.write = write }

        private func line(_ key: String, _ members: [(key: String, value: JSONValue)]) {
            write(JSONValue.object([(key, .object(members))]).serialized() + "\n")
        }

        private static func number(_ value: Int) -> JSONValue { .number(String(value)) }

        /// The tag's file index, which `place.file` holds in facts mode.
        private static func file(_ place: Place) -> JSONValue { .number(place.file) }

        func finding(_ finding: Finding, sequence: Int) {
            let place = finding.places[0]
            line("finding", [
                ("file", Self.file(place)), ("line", Self.number(place.line)), ("seq", Self.number(sequence)),
                ("kind", .string(finding.kind.rawValue)), ("field", place.field.map(JSONValue.string) ?? .null),
                ("message", .string(finding.message)), ("severity", .string(finding.severity.rawValue)),
            ])
        }

        func value(_ sealed: UnsafeRawBufferPointer, nonceAt offset: Int, place: Place, sequence: Int) {
            let nonce = UnsafeRawBufferPointer(rebasing: sealed[offset..<(offset + 16)])
            line("value", [
                ("file", Self.file(place)), ("line", Self.number(place.line)), ("seq", Self.number(sequence)),
                ("field", place.field.map(JSONValue.string) ?? .null),
                ("nonce", .string(Hex.encode(nonce))),
                ("digest", .string(Hex.encode(GenericHash.hash([UInt8](sealed), byteCount: 16)))),
            ])
        }

        func badLine(file: Int, line number: Int, message: String) {
            line("bad_line", [("file", Self.number(file)), ("line", Self.number(number)), ("message", .string(message))])
        }

        func notProfile(file: Int, line number: Int) {
            line("not_profile", [("file", Self.number(file)), ("line", Self.number(number))])
        }

        func counts(_ summary: AuditSummary) {
            line("counts", [
                ("values", Self.number(summary.valueCount)), ("profiles", Self.number(summary.profileCount)),
                ("blank_lines", Self.number(summary.blankLineCount)),
                ("keys", JSONReport.census(summary)["by_key"]!),
                ("naming_no_key", Self.number(summary.valuesNamingNoKey)),
            ])
        }
    }

    /// Turns merged facts back into findings and a summary.
    struct Reader {
        let auditor: Auditor
        let onFinding: (Finding) -> Void
        private(set) var summary = AuditSummary()
        private var files: [String]?
        private var sawSummary = false
        private var inputLine = 0
        /// Per file, the undeclared field names noted so far: the one machine's rule (a note
        /// once per name and file, `AuditRun.warnedUndeclaredCap` names at most) applied here, to facts in
        /// place order, since each part of a split audit saw only its own lines.
        private var warnedUndeclared: [String: Set<String>] = [:]

        init(auditor: Auditor, onFinding: @escaping (Finding) -> Void) {
            self.auditor = auditor
            self.onFinding = onFinding
        }

        mutating func emit(_ finding: Finding) {
            guard !auditor.ignoring.contains(finding.kind) else { return }
            summary.findingCounts[finding.kind, default: 0] += 1
            summary.findingCountsBySeverity[finding.severity, default: 0] += 1
            onFinding(finding)
        }

        mutating func read(_ value: JSONValue) throws(AuditError) {
            inputLine += 1
            guard case .object(let members) = value, members.count == 1 else {
                throw .badFacts(line: inputLine, reason: "not an object with one member")
            }
            let (key, body) = members[0]
            if files == nil, key != "files" { throw .badFacts(line: inputLine, reason: "the file list must come first") }
            guard !sawSummary else { throw .badFacts(line: inputLine, reason: "the summary must come last") }
            switch key {
            case "files":
                guard files == nil, let names = body.arrayValue else {
                    throw .badFacts(line: inputLine, reason: "one list of file names, first")
                }
                files = try names.map { name throws(AuditError) in
                    guard let text = name.stringValue else { throw .badFacts(line: inputLine, reason: "a file name that is not a string") }
                    return text
                }
                for finding in auditor.schema?.findings ?? [] { emit(finding) }
            case "finding":
                guard let kind = body["kind"]?.stringValue.flatMap(FindingKind.init(rawValue:)),
                    let message = body["message"]?.stringValue
                else { throw .badFacts(line: inputLine, reason: "a finding without a known kind and a message") }
                // A finding's own severity (undeclared-field's depends on the field); facts without one take the kind's.
                let severity = body["severity"]?.stringValue.flatMap(Severity.init(rawValue:)) ?? kind.severity
                let at = try place(body)
                // Below error: a note, or a warning from a sealkit before notes, on an executor not yet upgraded.
                if kind == .undeclaredField, severity < .error, let field = at.field {
                    var warned = warnedUndeclared[at.file, default: []]
                    if warned.count < AuditRun.warnedUndeclaredCap {
                        guard warned.insert(field).inserted else { break }
                        warnedUndeclared[at.file] = warned
                    } else if warned.contains(field) {
                        break
                    }
                }
                emit(Finding(kind: kind, places: [at], message: message, severity: severity))
            case "repeat":
                guard let copy = body["copy"]?.boolValue, let first = body["first"] else {
                    throw .badFacts(line: inputLine, reason: "a repeat without copy and first")
                }
                let firstPlace = try place(first)
                emit(Finding(
                    kind: copy ? .duplicateCiphertext : .nonceReuse, places: [try place(body), firstPlace],
                    message: AuditRun.repeatMessage(copy: copy, firstPlace: firstPlace)))
            case "bad_lines":
                let count = try number(body, "count")
                guard let message = body["message"]?.stringValue, count > 0 else {
                    throw .badFacts(line: inputLine, reason: "bad lines without a message and a count")
                }
                let more = count > 1 ? " (\(count) bad lines in all; the others were audited)" : ""
                let place = try place(body, field: false)
                emit(Finding(kind: .unreadableFile, places: [place], message: message + more))
            case "not_profiles":
                let place = try place(body, field: false)
                emit(Finding(
                    kind: .unreadableFile, places: [place],
                    message: AuditRun.notProfileMessage(at: place.location, count: try number(body, "count"))))
            case "summary":
                sawSummary = true
                summary.fileCount = files?.count ?? 0
                summary.valueCount = try number(body, "values")
                summary.profileCount = try number(body, "profiles")
                summary.blankLineCount = try number(body, "blank_lines")
                summary.groups.copiedCiphertexts = try number(body, "copied_ciphertexts")
                summary.groups.sharedNonces = try number(body, "shared_nonces")
                summary.groups.largestGroup = try number(body, "largest_group")
                if let first = body["largest_group_first"], !first.isNull {
                    summary.groups.largestGroupFirstPlace = try place(first)
                }
                summary.valuesNamingNoKey = try number(body, "naming_no_key")
                guard case .object(let keys) = body["keys"] else {
                    throw .badFacts(line: inputLine, reason: "keys is not an object of counts")
                }
                for (key, count) in keys {
                    guard let fingerprint = KeyFingerprint(text: key), let lexeme = count.numberLexeme,
                        let value = Int(lexeme), value > 0, summary.valuesByKey.updateValue(value, forKey: fingerprint) == nil
                    else { throw .badFacts(line: inputLine, reason: "keys holds something else than key fingerprints and counts") }
                }
            default:
                throw .badFacts(line: inputLine, reason: "unknown fact '\(key)'")
            }
        }

        func finish() throws(AuditError) {
            guard sawSummary else { throw .badFacts(line: inputLine + 1, reason: "the facts end without a summary") }
        }

        private func number(_ body: JSONValue, _ key: String) throws(AuditError) -> Int {
            guard let lexeme = body[key]?.numberLexeme, let value = Int(lexeme), value >= 0 else {
                throw .badFacts(line: inputLine, reason: "\(key) is not a count")
            }
            return value
        }

        /// An NDJSON place: the file by its index, the line, and the field (null for a whole-file finding).
        private func place(_ body: JSONValue, field: Bool = true) throws(AuditError) -> Place {
            let index = try number(body, "file")
            let line = try number(body, "line")
            guard let files, index < files.count, line > 0 else {
                throw .badFacts(line: inputLine, reason: "a place outside the files listed")
            }
            let name = field ? body["field"]?.stringValue : nil
            return Place(file: files[index], location: .line(line), field: name, line: line)
        }
    }
}

extension Auditor {
    /// The first step of an audit split around a shuffle (`AuditFacts`): audits tagged NDJSON lines and writes,
    /// instead of a report, each value's findings and the public facts the whole-data-set checks need.
    /// - Parameters:
    ///   - path: the tagged lines (`-` for stdin).
    ///   - write: receives the facts, whole lines at a time.
    /// - Returns: the counts of this part (its values, profiles and blank lines; the last fact says the same).
    /// - Throws: `SealKitError`: `.invalidArgument` for a line without its tag, `.fileSystem` when the input
    ///   cannot be read.
    public func writeFacts(path: String = "-", write: @escaping (String) -> Void) throws(SealKitError) -> AuditSummary {
        let format: FileFormat = .lines
        let file = AuditFile(path: path, format: format, byteCount: 0)
        let run = AuditRun(auditor: self, files: [file], progress: nil, facts: AuditFacts.Writer(write: write)) { _ in }
        do throws(AuditError) {
            return try run.run()
        } catch {
            throw SealKitError(error)
        }
    }

    /// The last step of an audit split around a shuffle (`AuditFacts`): the merged facts become the findings
    /// and the summary that `audit(paths:progress:onFinding:)` makes of the same files on one machine.
    /// - Parameters:
    ///   - path: the merged facts as NDJSON (`-` for stdin), the findings in the order to report them.
    ///   - onFinding: called with each finding: the schema's first, then the facts' in their order.
    /// - Returns: the summary.
    /// - Throws: `SealKitError`: `.invalidArgument` when a line is not a merged fact, or the facts do not
    ///   start with the file list and end with the summary; `.fileSystem` when the input cannot be read.
    public func report(fromFacts path: String = "-", onFinding: @escaping (Finding) -> Void) throws(SealKitError) -> AuditSummary {
        var reader = AuditFacts.Reader(auditor: self, onFinding: onFinding)
        do throws(AuditError) {
            var failure: AuditError?
            let lines = ProfileReader(file: AuditFile(path: path, format: .lines, byteCount: 0)) { _ in }
            let problem = try lines.forEachProfile { record in
                guard failure == nil else { return }
                do throws(AuditError) { try reader.read(record.value) } catch { failure = error }
            }
            if let failure { throw failure }
            if let problem { throw AuditError.badFacts(line: problem.line, reason: problem.message) }
            try reader.finish()
            return reader.summary
        } catch {
            throw SealKitError(error)
        }
    }
}
