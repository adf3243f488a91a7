import SealKit

/// The kinds of problem an audit reports. The raw values are a contract: reports,
/// CI rules and SARIF rule ids use them as they are.
public enum FindingKind: String, CaseIterable, Sendable, Comparable {
    /// A field the schema flags as encrypted holds a non-string, or a string that is not base64.
    case plaintextField = "plaintext-field"
    /// Valid base64, but too short to hold a nonce and a tag (under 40 bytes).
    case malformedCiphertext = "malformed-ciphertext"
    /// Different ciphertexts share a nonce, which reuses the key stream.
    case nonceReuse = "nonce-reuse"
    /// The same ciphertext stands in more than one place.
    case duplicateCiphertext = "duplicate-ciphertext"
    /// Authenticates under none of the given keys: tampered, or made with another key.
    case undecryptable = "undecryptable"
    /// Opens only under a retired key: rotation is pending.
    case retiredKey = "retired-key"
    /// The schema flags `email` or `phone_number`, which Rownd looks users up by, as encrypted.
    case identifierEncrypted = "identifier-encrypted"
    /// A file that is not valid JSON or NDJSON, or holds no profiles.
    case unreadableFile = "unreadable-file"
    /// One profile's ciphertexts come from more than one id's key history: a forked key.
    case mixedKeys = "mixed-keys"
    /// A v2 value whose key (named in its header) none of the given keys is.
    case unknownKey = "unknown-key"
    /// A v1 value in a field the schema makes v2: v1 names no field, so it may have been moved
    /// from another one, and SealKit refuses to open it there.
    case v1InBoundField = "v1-in-bound-field"
    /// A top-level member named like a flagged field beside the `data` object that holds the
    /// profile's fields: nothing reads or encrypts it there.
    case fieldBesideData = "field-beside-data"
    /// A profile field the schema does not declare: an error when its name is near an encrypted
    /// field's (one of the two is misspelt, and the value is in plaintext) or when the schema
    /// refuses every undeclared member; a note otherwise (exports carry members such as `user_id`
    /// that an app schema does not list).
    case undeclaredField = "undeclared-field"
    /// The schema asks for profile seals and a profile has none (`sealkit_seal`): it may have been removed.
    case sealMissing = "seal-missing"
    /// With keys given: a profile's seal does not verify over its flagged fields, user and keys.
    case sealMismatch = "seal-mismatch"

    /// How serious the kind is.
    public var severity: Severity {
        switch self {
        case .duplicateCiphertext, .retiredKey: return .warning
        // Its usual finding; a near name, or a schema that refuses every undeclared member, makes it an error.
        case .undeclaredField: return .note
        default: return .error
        }
    }

    /// One sentence on what the kind means, for rule descriptions.
    public var summary: String {
        switch self {
        case .plaintextField:
            return "A field the schema marks encrypted holds a value that is not a ciphertext."
        case .malformedCiphertext:
            return "A base64 value too short to hold a nonce and a tag (40 bytes)."
        case .nonceReuse:
            return "Different ciphertexts share a nonce, which reuses the key stream."
        case .duplicateCiphertext:
            return "The same ciphertext stands in more than one place."
        case .undecryptable:
            return "A ciphertext that none of the given keys authenticates."
        case .retiredKey:
            return "A ciphertext that opens only under a retired key."
        case .identifierEncrypted:
            return "The schema marks email or phone_number encrypted; Rownd looks users up by them."
        case .unreadableFile:
            return "A file that is not valid JSON or NDJSON profiles."
        case .mixedKeys:
            return "One profile holds ciphertexts from more than one key history: a user's key was forked."
        case .unknownKey:
            return "A v2 ciphertext sealed under a key that none of the given keys is."
        case .v1InBoundField:
            return "A v1 ciphertext, which names no field, in a field the schema makes v2."
        case .fieldBesideData:
            return "A flagged field's name beside the data object that holds the profile's fields."
        case .undeclaredField:
            return "A profile field the schema does not declare; an error when its name is near an encrypted field's."
        case .sealMissing:
            return "The schema asks for profile seals and the profile has none."
        case .sealMismatch:
            return "The profile's seal does not verify: a flagged field was changed, rolled back, dropped or added."
        }
    }

    /// What to do about a finding of this kind, in words for any reader: it names no tool's commands or flags.
    public var remedy: String {
        switch self {
        case .plaintextField:
            return "Encrypt the field under the app's schema and check how the value was written unencrypted."
        case .malformedCiphertext:
            return "The value was truncated or is not a ciphertext; restore it from a source that has it whole."
        case .nonceReuse:
            return "Re-encrypt every value involved with fresh random nonces and find the code that reused one."
        case .duplicateCiphertext:
            return "Copied data reveals that the values are equal; re-encrypt the copies so each has its own nonce."
        case .undecryptable:
            return "Check that the right key id was given; otherwise the value was tampered with or its key is lost."
        case .retiredKey:
            return "Rotate the value to the current key."
        case .identifierEncrypted:
            return "Set the field's encryption state to \"disabled\" in the schema."
        case .unreadableFile:
            return "Fix or remove the file; nothing in it past the problem was audited."
        case .mixedKeys:
            return "Give the device that made the other key the user's key (a key transfer), then re-encrypt its values."
        case .unknownKey:
            return "Give the key id that holds the key, or receive the key from the device that made it."
        case .v1InBoundField:
            return "Migrate data you trust (rotate its v1 values to v2), then rotate the key; otherwise restore the field."
        case .fieldBesideData:
            return "Move the member into data, or drop data if the profile's own members are its fields."
        case .undeclaredField:
            return "Fix the misspelt name (in the schema or the profile), or declare the field in the schema; encrypt the data again."
        case .sealMissing:
            return "Restore the profile from a source that has its seal; a profile from before seals gets one when it is encrypted anew."
        case .sealMismatch:
            return "Restore the profile as its user's device last wrote it; check that the right key id was given."
        }
    }

    public static func < (lhs: FindingKind, rhs: FindingKind) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// How serious a finding is. Maps to SARIF's `level`.
public enum Severity: String, Sendable, Comparable {
    /// Fails the audit whatever `--fail-on` says.
    case error
    /// Fails the audit by default (`--fail-on warning`); `--fail-on error` lets it pass.
    case warning
    /// For information: reported and counted, and fails the audit only with `--fail-on note`.
    case note

    public static func < (lhs: Severity, rhs: Severity) -> Bool {
        let order: [Severity] = [.note, .warning, .error]
        return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
    }
}

/// Where a value sits in a file.
public enum Location: Hashable, Sendable, CustomStringConvertible {
    /// The 1-based line of an NDJSON file.
    case line(Int)
    /// An RFC 6901 JSON pointer into a JSON file, such as `/3/data/ssn`; `""` is the whole document.
    case pointer(String)

    public var description: String {
        switch self {
        case .line(let number): return String(number)
        case .pointer(let pointer): return pointer
        }
    }
}

/// One place a finding points at.
public struct Place: Sendable, Hashable {
    /// The file, as it was reached from the paths given.
    public let file: String
    /// Where in the file.
    public let location: Location
    /// The profile field the value belongs to; nil for findings about a whole file.
    public let field: String?
    /// The 1-based line the place starts on, as near as is known: the line itself for
    /// NDJSON, the line its profile starts on for JSON. For SARIF regions.
    public let line: Int
    /// Document order within the file, for sorting.
    let order: Int

    /// Describes a place.
    package init(file: String, location: Location, field: String?, line: Int) {
        self.init(file: file, location: location, field: field, line: line, order: 0)
    }

    init(file: String, location: Location, field: String?, line: Int, order: Int) {
        self.file = file
        self.location = location
        self.field = field
        self.line = line
        self.order = order
    }

    public static func == (lhs: Place, rhs: Place) -> Bool {
        lhs.file == rhs.file && lhs.location == rhs.location && lhs.field == rhs.field && lhs.line == rhs.line
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(file)
        hasher.combine(location)
        hasher.combine(field)
    }
}

/// One problem an audit found. Messages say what is wrong and never quote a value,
/// so reports are safe to keep in CI logs.
public struct Finding: Sendable, Equatable {
    /// What kind of problem.
    public let kind: FindingKind
    /// Every place the problem occurs; at least one. Only `nonce-reuse` and
    /// `duplicate-ciphertext` span two: the repeat, then where its nonce was first seen.
    public let places: [Place]
    /// What is wrong, in one line.
    public let message: String

    /// How serious it is, when not as its kind says.
    private let assignedSeverity: Severity

    /// Describes a finding, as serious as its kind says.
    /// - Parameters:
    ///   - kind: the kind of problem.
    ///   - places: where it occurs; the first is the finding's own place.
    ///   - message: one line, without any value from the data.
    package init(kind: FindingKind, places: [Place], message: String) {
        self.init(kind: kind, places: places, message: message, severity: kind.severity)
    }

    /// Describes a finding whose severity depends on more than its kind (`undeclared-field`).
    /// - Parameters:
    ///   - kind: the kind of problem.
    ///   - places: where it occurs; the first is the finding's own place.
    ///   - message: one line, without any value from the data.
    ///   - severity: how serious this finding is.
    package init(kind: FindingKind, places: [Place], message: String, severity: Severity) {
        precondition(!places.isEmpty, "a finding needs a place")
        self.kind = kind
        self.places = places
        self.message = message
        assignedSeverity = severity
    }

    /// How serious it is: its kind's severity, except for `undeclared-field`, which is an error when the
    /// name is near an encrypted field's (or the schema refuses every undeclared field), else a note.
    public var severity: Severity { assignedSeverity }
    /// The first place's file.
    public var file: String { places[0].file }
    /// The first place's location.
    public var location: Location { places[0].location }
    /// The first place's field.
    public var field: String? { places[0].field }
    /// Whether the finding lists several places.
    public var spansPlaces: Bool { kind == .nonceReuse || kind == .duplicateCiphertext }
}

/// Ciphertexts found in more than one place, summarised once the whole audit has been read:
/// each repeat is a finding of its own as it is met, and this says how they group.
public struct RepeatGroups: Sendable, Equatable {
    /// Distinct ciphertexts that stand in more than one place.
    public var copiedCiphertexts = 0
    /// Nonces that different ciphertexts share.
    public var sharedNonces = 0
    /// The most places any one nonce stands in (0 when nothing repeats).
    public var largestGroup = 0
    /// Where that largest group was first seen.
    public var largestGroupFirstPlace: Place?

    /// No repeats yet.
    package init() {}

    /// Whether nothing repeats.
    public var isEmpty: Bool { copiedCiphertexts == 0 && sharedNonces == 0 }
}

/// The counts of an audit, known once it has read everything.
public struct AuditSummary: Sendable, Equatable {
    /// How many files were read.
    public var fileCount = 0
    /// How many values were audited: strings that look like ciphertexts, or, with a
    /// schema, the non-null values of encrypted fields.
    public var valueCount = 0
    /// How many profiles (JSON objects) were read.
    public var profileCount = 0
    /// How many blank NDJSON lines were skipped.
    public var blankLineCount = 0
    /// Findings reported, per kind (ignored kinds are not counted).
    public var findingCounts: [FindingKind: Int] = [:]
    /// Findings reported, per severity: what `--fail-on` looks at, as one kind's findings may differ
    /// in severity (`undeclared-field`).
    public var findingCountsBySeverity: [Severity: Int] = [:]
    /// How repeated nonces group.
    public var groups = RepeatGroups()
    /// The key census: how many ciphertexts each key sealed, by the key a v2 value's header names. It needs no
    /// key (the header is public), so it is the same with `--key` or without, on one machine or on Spark: before a
    /// rotation ends, a retired key still sealing values shows here.
    public var valuesByKey: [KeyFingerprint: Int] = [:]
    /// Ciphertexts that name no key (v1, Rownd's format): the census cannot attribute them without the keys.
    public var valuesNamingNoKey = 0

    /// An empty summary.
    package init() {}

    /// All findings reported.
    public var findingCount: Int { findingCounts.values.reduce(0, +) }

    /// The number of findings of each kind that occurs, in `FindingKind` order.
    public var countsByKind: [(kind: FindingKind, count: Int)] {
        FindingKind.allCases.compactMap { kind in
            let count = findingCounts[kind] ?? 0
            return count == 0 ? nil : (kind, count)
        }
    }
}

/// The result of an audit gathered in memory: findings in the order they were found (the
/// schema's, then file by file in document order), and counts. For large exports, stream
/// the findings instead (`Auditor.audit(paths:progress:onFinding:)`).
public struct AuditReport: Sendable, Equatable {
    /// Every finding, in the order found.
    public let findings: [Finding]
    /// The counts.
    public let summary: AuditSummary

    /// Makes a report.
    package init(findings: [Finding], summary: AuditSummary) {
        self.findings = findings
        self.summary = summary
    }

    /// How many files were read.
    public var fileCount: Int { summary.fileCount }
    /// How many values were audited.
    public var valueCount: Int { summary.valueCount }
    /// Whether nothing was found.
    public var isClean: Bool { findings.isEmpty }
}
