import SealKit

/// How far an audit has read, for progress displays.
public struct AuditProgress: Sendable {
    /// Bytes read so far.
    public let bytesRead: Int
    /// Bytes there are to read: every file's size, known before the first is read and read once
    /// (0 when unknown: stdin is among them).
    public let bytesTotal: Int
    /// Values audited so far.
    public let valuesRead: Int

    init(bytesRead: Int, bytesTotal: Int, valuesRead: Int = 0) {
        self.bytesRead = bytesRead
        self.bytesTotal = bytesTotal
        self.valuesRead = valuesRead
    }
}

/// Audits exported profiles and ciphertext fixtures for plaintext where ciphertext should
/// be, malformed and undecryptable ciphertexts, keys due for rotation, and reused nonces.
///
/// One pass, streamed: findings are handed out as they are found, and memory grows with the
/// number of distinct nonces (about 40 bytes each), not with file size or the number of findings.
/// A ciphertext whose nonce was seen before is reported where it repeats, naming the place the
/// nonce was first seen; how the repeats group is summarised at the end (`RepeatGroups`).
public struct Auditor: Sendable {
    /// Which fields must be encrypted; without one, strings that look like ciphertexts are audited.
    public let schema: AuditSchema?
    /// Key rings to check ciphertexts against; empty for no key checks.
    package let keys: [KeyRing]
    /// Kinds of finding not to report (nor count).
    public let ignoring: Set<FindingKind>

    /// Makes an auditor.
    /// - Parameters:
    ///   - schema: which fields must hold ciphertexts. Without one, every string that is
    ///     canonical base64 of at least 40 bytes counts as a ciphertext.
    ///   - keys: rings to try; a ciphertext opening under no current key is reported as
    ///     `retired-key` (a retired key opens it) or `undecryptable` (none does).
    ///   - ignoring: kinds of finding to leave out.
    package init(schema: AuditSchema? = nil, keys: [KeyRing] = [], ignoring: Set<FindingKind> = []) {
        self.schema = schema
        self.keys = keys
        self.ignoring = ignoring
    }

    /// Audits files and folders, handing each finding to `onFinding` as it is found.
    /// - Parameters:
    ///   - paths: `.json`, `.ndjson` and `.jsonl` files, or folders to walk for them.
    ///   - progress: called as bytes are read.
    ///   - onFinding: called with each finding, the schema's first, then file by file
    ///     (sorted by path) in document order.
    /// - Returns: the counts, and how repeated nonces group.
    /// - Throws: `SealKitError`: `.invalidArgument` when a path does not exist or a named file has another
    ///   extension, `.fileSystem` when a file cannot be read. Bad content is a finding, not an error.
    public func audit(
        paths: [String], progress: ((AuditProgress) -> Void)? = nil, onFinding: @escaping (Finding) -> Void
    ) throws(SealKitError) -> AuditSummary {
        do throws(AuditError) {
            var excluded: Set<String> = []
            if let schema { excluded.insert(FileWalker.canonicalPath(schema.path)) }
            let files = try FileWalker.files(in: paths, excluding: excluded)
            let run = AuditRun(auditor: self, files: files, progress: progress, onFinding: onFinding)
            return try run.run()
        } catch {
            throw SealKitError(error)
        }
    }

    /// Audits files and folders, gathering the findings in memory.
    /// - Returns: the findings in the order found, and the counts.
    /// - Throws: as `audit(paths:progress:onFinding:)`.
    public func audit(paths: [String], progress: ((AuditProgress) -> Void)? = nil) throws(SealKitError) -> AuditReport {
        var findings: [Finding] = []
        let summary = try audit(paths: paths, progress: progress) { findings.append($0) }
        return AuditReport(findings: findings, summary: summary)
    }
}

/// The first 16 bytes of a nonce. Nonces are random, so 128 bits tell them apart as
/// well as all 192 do, and the table stays small.
package struct NonceKey: Hashable, BitwiseCopyable {
    package let high: UInt64
    package let low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }
}

/// Where a nonce was first seen, packed: enough to name the place in a later finding
/// without keeping any string per value.
struct FirstSight {
    /// 32 bits of a hash of the whole ciphertext: the same tells a copy, another tells nonce reuse.
    let digest: UInt32
    let file: UInt32
    let line: UInt32
    /// The profile's index in a JSON array (`UInt32.max` for none).
    let position: UInt32
    /// The field and the pointer below the profile, interned (`Route.unknown` past the table's cap).
    let route: UInt32
}

/// A nonce seen more than once: how many places, and whether copies or other ciphertexts share it.
struct RepeatState {
    var places: UInt32 = 1
    var copies = false
    var reuse = false
}

/// One audit over a list of files, in one pass.
final class AuditRun {
    private enum PathToken {
        case key(String)
        case index(Int)
    }

    /// Interned (field, pointer below the profile) pairs, so a first sighting names its place in 4 bytes.
    private struct Route: Hashable {
        let field: String
        let tail: String
        static let unknown = UInt32.max
        static let cap = 1 << 20
        /// Up to this many routes, a route is looked up by comparing it with each.
        static let linearLimit = 16
    }

    private let schema: AuditSchema?
    private let keys: [KeyRing]
    private let currentKeys: [SymmetricKey]
    private let retiredKeys: [SymmetricKey]
    private let ignoring: Set<FindingKind>
    private let files: [AuditFile]
    private let progress: ((AuditProgress) -> Void)?
    private let onFinding: (Finding) -> Void
    /// Facts mode (`AuditFacts`): per-value facts go here instead of into the nonce table.
    private let facts: AuditFacts.Writer?

    // Each value reads and writes the state below several times; the dynamic exclusivity checks on a class's
    // stored properties took a tenth of an audit. They are off for the properties read per value
    // (`@exclusivity(unchecked)`): no access to one of them overlaps another, as no method holds one across
    // a call that could come back into the run (the reader's callbacks run between profiles).

    @exclusivity(unchecked) private var summary = AuditSummary()
    /// Distinct nonces, each to its first sighting in `sightings`: with them, the memory that grows with the data.
    @exclusivity(unchecked) private var ledger = NonceTable()
    @exclusivity(unchecked) private var sightings = MappedArray<FirstSight>()
    /// The nonce table or the sightings could take no more: the run stops with an error after the current file.
    private var tablesFull = false
    /// Only for nonces seen more than once, by sighting index.
    private var repeats: [UInt32: RepeatState] = [:]
    @exclusivity(unchecked) private var routeIndex: [Route: UInt32] = [:]
    @exclusivity(unchecked) private var routes: [Route] = []

    private var bytesRead = 0
    private let bytesTotal: Int

    // The value being looked at.
    @exclusivity(unchecked) private var fileIndex = 0
    @exclusivity(unchecked) private var file: AuditFile
    /// The file places name: the file's path, or in facts mode the tag of the line being read.
    @exclusivity(unchecked) private var fileLabel = ""
    /// In facts mode, the line's facts and findings so far: their order within the line.
    @exclusivity(unchecked) private var sequence = 0
    @exclusivity(unchecked) private var line = 0
    @exclusivity(unchecked) private var position: Int?
    @exclusivity(unchecked) private var order = 0
    @exclusivity(unchecked) private var path: [PathToken] = []
    /// How many tokens of `path` lead to the profile (its array index), before its fields.
    @exclusivity(unchecked) private var profileDepth = 0
    private var firstNonProfile: Place?
    private var nonProfileCount = 0
    @exclusivity(unchecked) private var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)

    init(
        auditor: Auditor, files: [AuditFile], progress: ((AuditProgress) -> Void)?, facts: AuditFacts.Writer? = nil,
        onFinding: @escaping (Finding) -> Void
    ) {
        self.facts = facts
        schema = auditor.schema
        keys = auditor.keys
        currentKeys = auditor.keys.map(\.current)
        retiredKeys = auditor.keys.flatMap(\.retired)
        ignoring = auditor.ignoring
        self.files = files
        self.progress = progress
        self.onFinding = onFinding
        file = files.first ?? AuditFile(path: "", format: .json, byteCount: 0)
        // With stdin among the files the total is unknown (0): the files' sizes alone would be a total that
        // stdin's bytes run past.
        bytesTotal = files.contains { $0.path == AuditFile.standardInput } ? 0 : files.reduce(0) { $0 + $1.byteCount }
    }

    deinit {
        scratch.deallocate()
        ledger.deallocate()
        sightings.deallocate()
    }

    func run() throws(AuditError) -> AuditSummary {
        // In facts mode the schema's findings are the report's (`AuditFacts.report`), not each part's.
        if facts == nil { for finding in schema?.findings ?? [] { emit(finding) } }
        for index in files.indices {
            try read(fileAt: index)
            if tablesFull { throw .tooManyNonces(ledger.count) }
        }
        if let facts {
            facts.counts(summary)
            return summary
        }
        summary.fileCount = files.count
        summariseRepeats()
        ledger.deallocate()
        ledger = NonceTable()
        sightings.deallocate()
        sightings = MappedArray()
        return summary
    }

    private func emit(_ finding: Finding) {
        guard !ignoring.contains(finding.kind) else { return }
        summary.findingCounts[finding.kind, default: 0] += 1
        summary.findingCountsBySeverity[finding.severity, default: 0] += 1
        if let facts {
            facts.finding(finding, sequence: sequence)
            sequence += 1
            return
        }
        onFinding(finding)
    }

    // MARK: Files and profiles

    private func read(fileAt index: Int) throws(AuditError) {
        fileIndex = index
        file = files[index]
        fileLabel = file.path
        warnedUndeclared.removeAll(keepingCapacity: true)
        order = 0
        firstNonProfile = nil
        nonProfileCount = 0
        var reader = ProfileReader(file: file) { [unowned self] count in
            bytesRead += count
            progress?(AuditProgress(bytesRead: bytesRead, bytesTotal: bytesTotal, valuesRead: summary.valueCount))
        }
        reader.blankLine = { [unowned self] in summary.blankLineCount += 1 }
        if let facts {
            // Each line carries its place; bad lines are facts, merged per file by the shuffle.
            reader.tagged = true
            reader.badLine = { tag, line, message in facts.badLine(file: tag, line: line, message: message) }
        }
        let problem = try reader.forEachProfile { record in visit(record) }
        if let problem {
            let place = Place(file: file.path, location: problem.location, field: nil, line: problem.line, order: Int.max)
            emit(Finding(kind: .unreadableFile, places: [place], message: problem.message))
        }
        // One unreadable-file finding per file: a parse problem says more than a stray value.
        if problem == nil, let firstNonProfile {
            emit(Finding(
                kind: .unreadableFile, places: [firstNonProfile],
                message: Self.notProfileMessage(at: firstNonProfile.location, count: nonProfileCount)))
        }
    }

    /// What the `unreadable-file` finding of a file holding `count` values that are not profiles says.
    static func notProfileMessage(at location: Location, count: Int) -> String {
        let more = count > 1 ? " (\(count) in all)" : ""
        return "holds a value that is not a profile (a JSON object) at \(describe(location))\(more); it was not audited"
    }

    private func visit(_ record: ProfileRecord) {
        line = record.line
        if let tag = record.fileTag {
            fileLabel = String(tag)
            order = 0
            sequence = 0
        }
        path.removeAll(keepingCapacity: true)
        position = nil
        if file.format == .json, let index = record.position {
            path.append(.index(index))
            position = index
        }
        profileDepth = path.count
        guard case .object(let members) = record.value else {
            if let facts, let tag = record.fileTag {
                facts.notProfile(file: tag, line: line)
                return
            }
            nonProfileCount += 1
            if firstNonProfile == nil { firstNonProfile = place(field: nil) }
            return
        }
        summary.profileCount += 1
        profileHistories.removeAll(keepingCapacity: true)
        var fields = members
        // Rownd's user-state shape keeps the fields under `data`.
        if schema?.definesDataField != true, let data = members.first(where: { $0.key == "data" }),
            case .object(let dataMembers) = data.value
        {
            if let schema {
                for (key, _) in members where schema.encryptedFields.contains(key) {
                    order += 1
                    summary.valueCount += 1
                    path.append(.key(key))
                    report(.fieldBesideData, field: key,
                        "\(key) is flagged encrypted but stands beside \"data\", which holds the profile's fields: "
                            + "nothing reads or encrypts it there")
                    path.removeLast()
                }
            }
            fields = dataMembers
            path.append(.key("data"))
        }
        for (key, value) in fields {
            path.append(.key(key))
            if let schema {
                if schema.encryptedFields.contains(key) {
                    inspectEncryptedField(value, field: key)
                } else if let undeclared = schema.undeclaredField(named: key) {
                    // A note once per name and file (every profile of an export may carry `user_id`);
                    // an error wherever it stands, as each is a value in plaintext.
                    // Facts carry every note: the merge applies the once-per-file rule over all parts.
                    if undeclared.isError || facts != nil || warnedUndeclared.count >= Self.warnedUndeclaredCap
                        || warnedUndeclared.insert(key).inserted
                    {
                        reportUndeclared(field: key, undeclared.nearEncryptedField, isError: undeclared.isError)
                    }
                }
            } else {
                inspectAnyValue(value, field: key)
            }
            path.removeLast()
        }
        if profileHistories.count > 1 { reportMixedKeys() }
        if let sealing = schema?.sealing { inspectSeal(record.value, schema: sealing) }
    }

    /// A profile whose schema asks for seals: its seal must be there and, with keys, verify.
    /// Versions are not checked: an audit remembers none.
    private func inspectSeal(_ profile: JSONValue, schema: ProfileSchema) {
        path.removeLast(path.count - profileDepth)
        path.append(.key(ProfileSchema.sealMember))
        defer { path.removeLast() }
        order += 1
        let seal: ProfileSeal
        do {
            guard let found = try ProfileEncryptor.seal(of: profile) else {
                report(.sealMissing, field: ProfileSchema.sealMember,
                    "the schema asks for profile seals and this profile has none (\(ProfileSchema.sealMember))")
                return
            }
            seal = found
        } catch {
            report(.sealMismatch, field: ProfileSchema.sealMember, error.description)
            return
        }
        guard !keys.isEmpty else { return }
        guard let ring = keys.first(where: { $0.holdsKey(tagged: seal.keyTag) }) else {
            report(.sealMismatch, field: ProfileSchema.sealMember,
                "the profile's seal does not match: it was made with key \(seal.keyTag), which none of the keys given is")
            return
        }
        do {
            _ = try ProfileEncryptor(schema: schema).verifySeal(of: profile, with: ring, against: nil)
        } catch {
            report(.sealMismatch, field: ProfileSchema.sealMember, error.description)
        }
    }

    /// The key histories of one profile's ciphertexts: a given id's ring (its current and retired
    /// keys are one history), or a v2 key tag that no given ring holds.
    private enum History: Hashable {
        case ring(Int)
        case tag(KeyFingerprint)
    }
    @exclusivity(unchecked) private var profileHistories: Set<History> = []

    private func reportMixedKeys() {
        let names = profileHistories.map { history -> String in
            switch history {
            case .ring(let index): return keys[index].id.map { "'\($0)'" } ?? "key \(keys[index].current.fingerprint)"
            case .tag(let tag): return "key \(tag)"
            }
        }.sorted()
        guard !ignoring.contains(.mixedKeys) else { return }
        emit(Finding(
            kind: .mixedKeys, places: [place(field: nil)],
            message: "one profile holds ciphertexts from \(names.count) key histories (\(names.joined(separator: ", "))): "
                + "a device made its own key for the user instead of receiving theirs"))
    }

    /// A v2 value (its body decoded into `scratch`): its nonce is tracked as a v1 value's is; its key tag
    /// names its history; with keys, it must be one of theirs and open for its field.
    private func inspectBound(_ text: String, tag: KeyFingerprint, byteCount: Int, field: String, bindsField: Bool) {
        summary.valueCount += 1
        summary.valuesByKey[tag, default: 0] += 1
        checkBound(text, tag: tag, field: field, bindsField: bindsField)
        // The checks above decrypt through their own buffers; `scratch` still holds the body.
        track(UnsafeRawBufferPointer(rebasing: scratch[0..<byteCount]), nonceAt: BoundCipher.headerByteCount, field: field)
    }

    private func checkBound(_ text: String, tag: KeyFingerprint, field: String, bindsField: Bool) {
        guard let ringIndex = keys.firstIndex(where: { $0.holdsKey(tagged: tag) }) else {
            profileHistories.insert(.tag(tag))
            if !keys.isEmpty {
                report(.unknownKey, field: field,
                    "\(field) is a v2 ciphertext sealed under key \(tag), which none of the keys given is")
            }
            return
        }
        profileHistories.insert(.ring(ringIndex))
        let ring = keys[ringIndex]
        if ring.current.fingerprint != tag {
            report(.retiredKey, field: field, "\(field) opens only under a retired key: rotate it to the current key")
        }
        guard bindsField else { return }
        do {
            _ = try ring.decrypt(text, place: .field(field))
        } catch {
            report(.undecryptable, field: field, "\(field) does not open under the key its header names: \(error)")
        }
    }

    // MARK: Values

    /// Without a schema: every string that could be a ciphertext, at any depth (which the
    /// parser bounds at 512).
    private func inspectAnyValue(_ value: JSONValue, field: String) {
        switch value {
        case .string(let text):
            order += 1
            switch shape(of: text) {
            case .sealed(let count): inspectSealed(byteCount: count, field: field)
            case .bound(let tag, let count): inspectBound(text, tag: tag, byteCount: count, field: field, bindsField: false)
            case .notBase64, .tooShort, .unsupportedVersion: break
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                path.append(.index(index))
                inspectAnyValue(element, field: field)
                path.removeLast()
            }
        case .object(let members):
            for (key, member) in members {
                path.append(.key(key))
                inspectAnyValue(member, field: field)
                path.removeLast()
            }
        case .null, .bool, .number:
            break
        }
    }

    /// With a schema: a field flagged encrypted must hold a ciphertext, or null.
    private func inspectEncryptedField(_ value: JSONValue, field: String) {
        order += 1
        switch value {
        case .null:
            return
        case .string(let text):
            switch shape(of: text) {
            case .notBase64:
                summary.valueCount += 1
                report(.plaintextField, field: field, "\(field) is flagged encrypted but holds text that is not base64: it is stored in plaintext")
            case .tooShort(let count):
                summary.valueCount += 1
                report(.malformedCiphertext, field: field,
                    "\(field) holds base64 of \(count) bytes, too short for a ciphertext (at least \(FieldCipher.minimumByteCount): nonce and tag)")
            case .sealed(let count):
                if schema?.boundFields.contains(field) == true {
                    report(.v1InBoundField, field: field,
                        "\(field) holds a v1 ciphertext, which names no field, but the schema makes it v2: "
                            + "it may have been moved from another field, and SealKit does not open it there")
                }
                inspectSealed(byteCount: count, field: field)
            case .bound(let tag, let count):
                inspectBound(text, tag: tag, byteCount: count, field: field, bindsField: true)
            case .unsupportedVersion where SharedValue.isShared(text):
                inspectShared(text, field: field)
            case .unsupportedVersion:
                summary.valueCount += 1
                report(.malformedCiphertext, field: field, "\(field) has SealKit's prefix but a format version this SealKit does not read")
            }
        default:
            summary.valueCount += 1
            report(.plaintextField, field: field,
                "\(field) is flagged encrypted but holds \(value.kindName), not a ciphertext string: it is stored in plaintext")
        }
    }

    /// A shared value (sk3): its signature checked for this field (a value moved from another field fails it), opened
    /// with the keys' sharing identities when keys are given, and its payload nonce tracked as any value's.
    private func inspectShared(_ text: String, field: String) {
        summary.valueCount += 1
        let value: SharedValue
        do {
            value = try SharedValue(text: text, place: .field(field))
        } catch {
            report(.malformedCiphertext, field: field, "\(field) holds a shared value (sk3) that is not valid for this field: \(error)")
            return
        }
        if !keys.isEmpty {
            let identities = keys.flatMap { ShareIdentity.all(of: $0) }
            do {
                _ = try value.open(with: identities)
            } catch {
                report(.undecryptable, field: field, "\(field) holds a shared value that the keys given do not open: \(error)")
            }
        }
        value.envelopeBytes.withUnsafeBytes { track($0, nonceAt: value.payloadNonceOffset, field: field) }
    }

    /// A decoded ciphertext in `scratch`: check it against the keys, then track its nonce.
    private func inspectSealed(byteCount: Int, field: String) {
        summary.valueCount += 1
        summary.valuesNamingNoKey += 1
        let sealed = UnsafeRawBufferPointer(rebasing: scratch[0..<byteCount])
        if !keys.isEmpty { checkKeys(sealed, field: field) }
        track(sealed, nonceAt: 0, field: field)
    }

    /// Tracks the nonce at `offset` of a ciphertext of either format: a repeat is reported where it is met.
    private func track(_ sealed: UnsafeRawBufferPointer, nonceAt offset: Int, field: String) {
        if let facts {
            facts.value(sealed, nonceAt: offset, place: place(field: field), sequence: sequence)
            sequence += 1
            return
        }
        // Tables that are full (their limit, or no memory to grow) stop the audit after this file (`run()`),
        // never by losing count or crashing; nothing is looked up in them after that.
        if tablesFull { return }
        let key = NonceKey(
            high: sealed.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
            low: sealed.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
        // One hasher for both: the key's hash places it in the table, and the digest goes on from there
        // with the rest of the ciphertext. Where the key stands and the length are hashed too, so the
        // digest is a hash of every byte, in a form no two ciphertexts share.
        var hasher = NonceTable.hasher(of: key)
        let placement = hasher.finalizedCopy()
        hasher.combine(offset)
        hasher.combine(sealed.count)
        hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: sealed[..<offset]))
        hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: sealed[(offset + MemoryLayout<NonceKey>.size)...]))
        let digest = UInt32(truncatingIfNeeded: hasher.finalize())

        guard let seen = ledger.firstSighting(of: key, hashValue: placement) else {
            if ledger.isFull { tablesFull = true; return }
            tablesFull = !sightings.append(FirstSight(
                digest: digest, file: UInt32(truncatingIfNeeded: fileIndex), line: UInt32(clamping: line),
                position: position.map { UInt32(clamping: $0) } ?? UInt32.max, route: route(field: field)))
            return
        }
        let first = sightings[Int(seen)]
        let copy = first.digest == digest
        var state = repeats[seen] ?? RepeatState()
        state.places &+= 1
        if copy { state.copies = true } else { state.reuse = true }
        repeats[seen] = state
        let firstPlace = place(of: first)
        report(copy ? .duplicateCiphertext : .nonceReuse, field: field, also: firstPlace,
            Self.repeatMessage(copy: copy, firstPlace: firstPlace))
    }

    /// What a repeat finding says: the place its nonce was first seen, and whether it is a copy.
    static func repeatMessage(copy: Bool, firstPlace: Place) -> String {
        let there = describe(firstPlace)
        if copy { return "the same ciphertext stands at \(there): copies show the values are equal" }
        return "a different ciphertext at \(there) has the same nonce: the key stream is reused, which can reveal both plaintexts"
    }

    private func checkKeys(_ sealed: UnsafeRawBufferPointer, field: String) {
        let bytes = [UInt8](sealed)
        if let (_, index) = try? FieldCipher.open(bytes, usingAnyOf: currentKeys) {
            profileHistories.insert(.ring(index))
            return
        }
        if !retiredKeys.isEmpty, let (_, index) = try? FieldCipher.open(bytes, usingAnyOf: retiredKeys) {
            profileHistories.insert(.ring(ringIndex(ofRetired: index)))
            report(.retiredKey, field: field,
                "\(field) opens only under a retired key: rotate it to the current key")
            return
        }
        report(.undecryptable, field: field,
            "\(field) does not authenticate under any key given (current or retired): tampered, or made with another key")
    }

    /// The ring a key of `retiredKeys` (all rings' retired keys, ring by ring) belongs to.
    private func ringIndex(ofRetired index: Int) -> Int {
        var remaining = index
        for (ringIndex, ring) in keys.enumerated() {
            if remaining < ring.retired.count { return ringIndex }
            remaining -= ring.retired.count
        }
        return keys.count - 1
    }

    /// An `undeclared-field` finding: an error for a name near an encrypted field's (or when the schema
    /// refuses every undeclared field), a note otherwise.
    /// The undeclared field names warned about in this file; at most `warnedUndeclaredCap` of them are
    /// remembered, past which each is reported where it stands.
    private var warnedUndeclared: Set<String> = []
    static let warnedUndeclaredCap = 4096

    private func reportUndeclared(field: String, _ nearEncryptedField: String?, isError: Bool) {
        guard !ignoring.contains(.undeclaredField) else { return }
        let name = TextSafety.printable(field)
        let message: String
        if let near = nearEncryptedField {
            message = UndeclaredMember.nearFact(member: field, field: near) + "; its value is not audited as a ciphertext"
        } else if isError {
            message = "`\(name)` is not in the schema, and undeclared fields are refused"
        } else {
            message = "`\(name)` is not in the schema (reported once per file)"
        }
        emit(Finding(
            kind: .undeclaredField, places: [place(field: field)], message: message,
            severity: isError ? .error : .note))
    }

    private func report(_ kind: FindingKind, field: String, also other: Place? = nil, _ message: String) {
        guard !ignoring.contains(kind) else { return }
        var places = [place(field: field)]
        if let other { places.append(other) }
        emit(Finding(kind: kind, places: places, message: message))
    }

    // MARK: Repeated nonces

    /// The field and where below the profile the value sits, interned; JSON files need the
    /// pointer, NDJSON ones only the field (their location is the line).
    private func route(field: String) -> UInt32 {
        let tail = file.format == .json ? pointer(from: profileDepth) : ""
        let key = Route(field: field, tail: tail)
        // An export has a few fields: comparing with each is cheaper than hashing two strings per value.
        if routes.count <= Route.linearLimit {
            if let id = routes.firstIndex(of: key) { return UInt32(id) }
        } else if let id = routeIndex[key] {
            return id
        }
        guard routes.count < Route.cap else { return Route.unknown }
        let id = UInt32(routes.count)
        routes.append(key)
        routeIndex[key] = id
        return id
    }

    /// The place a first sighting stands for.
    private func place(of sight: FirstSight) -> Place {
        let seenIn = files[Int(sight.file)]
        let route = sight.route == Route.unknown ? nil : routes[Int(sight.route)]
        let location: Location
        switch seenIn.format {
        case .lines: location = .line(Int(sight.line))
        case .json:
            let profile = sight.position == UInt32.max ? "" : "/" + String(sight.position)
            location = .pointer(profile + (route?.tail ?? ""))
        }
        return Place(file: seenIn.path, location: location, field: route?.field, line: Int(sight.line), order: 0)
    }

    /// Once everything is read: how the repeats group, for the summary.
    private func summariseRepeats() {
        var groups = RepeatGroups()
        var largest: (places: UInt32, sighting: UInt32)?
        for (sighting, state) in repeats {
            if state.copies { groups.copiedCiphertexts += 1 }
            if state.reuse { groups.sharedNonces += 1 }
            // Ties go to the earliest sighting, so the summary does not depend on hashing order.
            if largest == nil || state.places > largest!.places || (state.places == largest!.places && sighting < largest!.sighting) {
                largest = (state.places, sighting)
            }
        }
        if let largest {
            groups.largestGroup = Int(largest.places)
            groups.largestGroupFirstPlace = place(of: sightings[Int(largest.sighting)])
        }
        summary.groups = groups
        repeats = [:]
    }

    // MARK: Helpers

    private enum Shape {
        case notBase64
        case tooShort(Int)
        /// Decoded into `scratch`.
        case sealed(Int)
        /// A v2 ciphertext under the key with this fingerprint, its body decoded into `scratch`.
        case bound(KeyFingerprint, Int)
        /// SealKit's prefix with a version this SealKit does not read.
        case unsupportedVersion
    }

    /// Decodes `text` into `scratch` when it is canonical base64.
    private func shape(of text: String) -> Shape {
        var text = text
        // The first byte first: `hasPrefix` costs more than the rest of a value's shape.
        if text.utf8.first == UInt8(ascii: "s"), text.hasPrefix("sk") {
            switch CiphertextShape(of: text) {
            case .v2(let tag)?:
                // Checked as v2 already: the body after `sk2:` is base64 of at least the smallest body.
                guard let count = decode(&text, from: BoundCipher.prefix.utf8.count) else { return .notBase64 }
                return .bound(tag, count)
            case .unsupportedVersion?: return .unsupportedVersion
            case .v1?, nil: break
            }
        }
        return text.withUTF8 { utf8 in
            let raw = UnsafeRawBufferPointer(utf8)
            guard let length = Base64.decodedLength(of: raw), length > 0 else { return .notBase64 }
            if length > scratch.count {
                scratch.deallocate()
                scratch = .allocate(byteCount: max(length, scratch.count * 2), alignment: 16)
            }
            guard Base64.decode(raw, into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<length])) else {
                return .notBase64
            }
            return length < FieldCipher.minimumByteCount ? .tooShort(length) : .sealed(length)
        }
    }

    /// Decodes the base64 in `text` from byte `offset` into `scratch`; nil when it is not base64.
    private func decode(_ text: inout String, from offset: Int) -> Int? {
        text.withUTF8 { utf8 in
            let raw = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[offset...])
            guard let length = Base64.decodedLength(of: raw), length > 0 else { return nil }
            if length > scratch.count {
                scratch.deallocate()
                scratch = .allocate(byteCount: max(length, scratch.count * 2), alignment: 16)
            }
            return Base64.decode(raw, into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<length])) ? length : nil
        }
    }

    private func place(field: String?) -> Place {
        let location: Location
        switch file.format {
        case .lines: location = .line(line)
        case .json: location = .pointer(pointer(from: 0))
        }
        return Place(file: fileLabel, location: location, field: field, line: line, order: order)
    }

    private func pointer(from start: Int) -> String {
        var text = ""
        for token in path[min(start, path.count)...] {
            text += "/"
            switch token {
            case .key(let key): text += JSONPointer.escape(key)
            case .index(let index): text += String(index)
            }
        }
        return text
    }

    private static func describe(_ location: Location) -> String {
        switch location {
        case .line(let number): return "line \(number)"
        case .pointer(let pointer): return pointer.isEmpty ? "the top level" : pointer
        }
    }

    /// `file:line` or `file#pointer`, as the text report writes places.
    private static func describe(_ place: Place) -> String {
        switch place.location {
        case .line(let number): return place.file + ":" + String(number)
        case .pointer(let pointer): return place.file + "#" + pointer
        }
    }
}
