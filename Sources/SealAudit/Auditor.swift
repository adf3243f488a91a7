import SealCore
import SealJSON

/// How far an audit has read, for progress displays.
public struct AuditProgress: Sendable {
    /// Bytes read so far.
    public let bytesRead: Int
    /// Bytes there are to read; grows when a second pass over some files is needed.
    public let bytesTotal: Int
}

/// Audits exported profiles and ciphertext fixtures for plaintext where ciphertext should
/// be, malformed and undecryptable ciphertexts, keys due for rotation, and reused nonces.
///
/// Files stream: memory grows with the number of distinct nonces seen, not with file size.
/// Files holding a nonce seen twice are read a second time to name every place it occurs.
public struct Auditor: Sendable {
    /// Which fields must be encrypted; without one, strings that look like ciphertexts are audited.
    public let schema: AuditSchema?
    /// Key rings to check ciphertexts against; empty for no key checks.
    public let keys: [KeyRing]

    /// Makes an auditor.
    /// - Parameters:
    ///   - schema: which fields must hold ciphertexts. Without one, every string that is
    ///     canonical base64 of at least 40 bytes counts as a ciphertext.
    ///   - keys: rings to try; a ciphertext opening under no current key is reported as
    ///     `retired-key` (a retired key opens it) or `undecryptable` (none does).
    public init(schema: AuditSchema? = nil, keys: [KeyRing] = []) {
        self.schema = schema
        self.keys = keys
    }

    /// Audits files and folders.
    /// - Parameters:
    ///   - paths: `.json`, `.ndjson` and `.jsonl` files, or folders to walk for them.
    ///   - progress: called as bytes are read.
    /// - Returns: the findings, sorted by file and position, and counts.
    /// - Throws: `AuditError` when a path does not exist, a named file has another
    ///   extension, or a file cannot be read. Bad content is a finding, not an error.
    public func audit(
        paths: [String], progress: ((AuditProgress) -> Void)? = nil
    ) throws(AuditError) -> AuditReport {
        var excluded: Set<String> = []
        if let schema { excluded.insert(FileWalker.canonicalPath(schema.path)) }
        let files = try FileWalker.files(in: paths, excluding: excluded)
        let run = AuditRun(auditor: self, files: files, progress: progress)
        return try run.run()
    }
}

/// The first 16 bytes of a nonce. Nonces are random, so 128 bits tell them apart as
/// well as all 192 do, and the table stays small.
struct NonceKey: Hashable {
    let high: UInt64
    let low: UInt64
}

/// What the ledger keeps per distinct nonce, packed into 64 bits: a repeat flag, the index
/// of the file it was first seen in (23 bits), and 40 bits of a hash of the whole ciphertext,
/// which tells a copied ciphertext (same hash) from nonce reuse (different hash).
struct NonceEntry {
    var bits: UInt64

    static let fileBits: UInt64 = 23
    static let unknownFile = Int((1 << fileBits) - 1)

    init(digest: UInt64, file: Int) {
        let fileIndex = UInt64(min(file, Self.unknownFile))
        bits = (fileIndex << 40) | (digest & 0xFF_FFFF_FFFF)
    }

    var isRepeated: Bool { bits >> 63 == 1 }
    var file: Int { Int((bits >> 40) & ((1 << Self.fileBits) - 1)) }
    mutating func markRepeated() { bits |= 1 << 63 }
}

/// One audit over a list of files: a first pass for every finding but the shared-nonce
/// ones, then a second pass over the files that hold repeated nonces, collecting places.
final class AuditRun {
    private enum Pass { case first, second }
    private enum PathToken {
        case key(String)
        case index(Int)
    }

    private let schema: AuditSchema?
    private let keys: [KeyRing]
    private let currentKeys: [SymmetricKey]
    private let retiredKeys: [SymmetricKey]
    private let files: [AuditFile]
    private let progress: ((AuditProgress) -> Void)?

    private var pass = Pass.first
    private var findings: [Finding] = []
    private var valueCount = 0
    private var profileCount = 0
    private var blankLineCount = 0
    private var ledger: [NonceKey: NonceEntry] = [:]
    private var revisit: Set<Int> = []
    private var revisitAll = false
    private var occurrences: [NonceKey: [(place: Place, digest: UInt64)]] = [:]

    private var bytesRead = 0
    private var bytesTotal = 0

    // The value being looked at.
    private var fileIndex = 0
    private var file: AuditFile
    private var line = 0
    private var order = 0
    private var path: [PathToken] = []
    private var firstNonProfile: Place?
    private var nonProfileCount = 0
    private var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)

    init(auditor: Auditor, files: [AuditFile], progress: ((AuditProgress) -> Void)?) {
        schema = auditor.schema
        keys = auditor.keys
        currentKeys = auditor.keys.map(\.current)
        retiredKeys = auditor.keys.flatMap(\.retired)
        self.files = files
        self.progress = progress
        file = files.first ?? AuditFile(path: "", format: .json, byteCount: 0)
        bytesTotal = files.reduce(0) { $0 + $1.byteCount }
    }

    deinit { scratch.deallocate() }

    func run() throws(AuditError) -> AuditReport {
        findings = schema?.findings ?? []
        for index in files.indices { try read(fileAt: index) }

        let second = revisitAll ? Array(files.indices) : revisit.sorted()
        if !second.isEmpty {
            pass = .second
            bytesTotal += second.reduce(0) { $0 + files[$1].byteCount }
            for index in second { try read(fileAt: index) }
            reportSharedNonces()
        }
        ledger = [:]

        findings.sort(by: Self.precedes)
        return AuditReport(
            findings: findings, fileCount: files.count, valueCount: valueCount, profileCount: profileCount,
            blankLineCount: blankLineCount)
    }

    private static func precedes(_ a: Finding, _ b: Finding) -> Bool {
        let pa = a.places[0], pb = b.places[0]
        if pa.file != pb.file { return pa.file.utf8.lexicographicallyPrecedes(pb.file.utf8) }
        if pa.line != pb.line { return pa.line < pb.line }
        if pa.order != pb.order { return pa.order < pb.order }
        return a.kind < b.kind
    }

    private static func placePrecedes(_ a: Place, _ b: Place) -> Bool {
        if a.file != b.file { return a.file.utf8.lexicographicallyPrecedes(b.file.utf8) }
        if a.line != b.line { return a.line < b.line }
        return a.order < b.order
    }

    // MARK: Files and profiles

    private func read(fileAt index: Int) throws(AuditError) {
        fileIndex = index
        file = files[index]
        order = 0
        firstNonProfile = nil
        nonProfileCount = 0
        var reader = ProfileReader(file: file) { [unowned self] count in
            bytesRead += count
            progress?(AuditProgress(bytesRead: bytesRead, bytesTotal: bytesTotal))
        }
        reader.blankLine = { [unowned self] in if pass == .first { blankLineCount += 1 } }
        let problem = try reader.forEachProfile { record in visit(record) }
        guard pass == .first else { return }
        if let problem {
            let place = Place(file: file.path, location: problem.location, field: nil, line: problem.line, order: Int.max)
            findings.append(Finding(kind: .unreadableFile, places: [place], message: problem.message))
        }
        // One unreadable-file finding per file: a parse problem says more than a stray value.
        if problem == nil, let firstNonProfile {
            let more = nonProfileCount > 1 ? " (\(nonProfileCount) in all)" : ""
            findings.append(Finding(
                kind: .unreadableFile, places: [firstNonProfile],
                message: "holds a value that is not a profile (a JSON object) at \(describe(firstNonProfile.location))\(more); "
                    + "it was not audited"))
        }
    }

    private func visit(_ record: ProfileRecord) {
        line = record.line
        path.removeAll(keepingCapacity: true)
        if file.format == .json, let position = record.position { path.append(.index(position)) }
        guard case .object(let members) = record.value else {
            nonProfileCount += 1
            if firstNonProfile == nil { firstNonProfile = place(field: nil) }
            return
        }
        if pass == .first { profileCount += 1 }
        var fields = members
        // Rownd's user-state shape keeps the fields under `data`.
        if schema?.definesDataField != true, let data = members.first(where: { $0.key == "data" }),
            case .object(let dataMembers) = data.value
        {
            fields = dataMembers
            path.append(.key("data"))
        }
        for (key, value) in fields {
            path.append(.key(key))
            if let schema {
                if schema.encryptedFields.contains(key) { inspectEncryptedField(value, field: key) }
            } else {
                inspectAnyValue(value, field: key)
            }
            path.removeLast()
        }
    }

    // MARK: Values

    /// Without a schema: every string that could be a ciphertext, at any depth (which the
    /// parser bounds at 512).
    private func inspectAnyValue(_ value: JSONValue, field: String) {
        switch value {
        case .string(let text):
            order += 1
            if case .sealed(let count) = shape(of: text) { inspectSealed(byteCount: count, field: field) }
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
                countValue()
                report(.plaintextField, field: field, "\(field) is flagged encrypted but holds text that is not base64: it is stored in plaintext")
            case .tooShort(let count):
                countValue()
                report(.malformedCiphertext, field: field,
                    "\(field) holds base64 of \(count) bytes, too short for a ciphertext (at least \(FieldCipher.minimumByteCount): nonce and tag)")
            case .sealed(let count):
                inspectSealed(byteCount: count, field: field)
            }
        default:
            countValue()
            report(.plaintextField, field: field,
                "\(field) is flagged encrypted but holds \(value.kindName), not a ciphertext string: it is stored in plaintext")
        }
    }

    private func countValue() {
        if pass == .first { valueCount += 1 }
    }

    /// A decoded ciphertext in `scratch`: track its nonce, and check it against the keys.
    private func inspectSealed(byteCount: Int, field: String) {
        let sealed = UnsafeRawBufferPointer(rebasing: scratch[0..<byteCount])
        let key = NonceKey(
            high: sealed.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
            low: sealed.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        var hasher = Hasher()
        hasher.combine(bytes: sealed)
        let digest = UInt64(bitPattern: Int64(hasher.finalize()))

        switch pass {
        case .first:
            valueCount += 1
            record(key, digest: digest)
            if !keys.isEmpty { checkKeys(sealed, field: field) }
        case .second:
            if ledger[key]?.isRepeated == true {
                occurrences[key, default: []].append((place(field: field), digest))
            }
        }
    }

    private func record(_ key: NonceKey, digest: UInt64) {
        let fresh = NonceEntry(digest: digest, file: fileIndex)
        guard let existing = ledger[key] else {
            ledger[key] = fresh
            return
        }
        if existing.file == NonceEntry.unknownFile || fileIndex >= NonceEntry.unknownFile { revisitAll = true }
        revisit.insert(existing.file)
        revisit.insert(fileIndex)
        if !existing.isRepeated {
            var repeated = existing
            repeated.markRepeated()
            ledger[key] = repeated
        }
    }

    private func checkKeys(_ sealed: UnsafeRawBufferPointer, field: String) {
        let bytes = [UInt8](sealed)
        if (try? FieldCipher.open(bytes, usingAnyOf: currentKeys)) != nil { return }
        if !retiredKeys.isEmpty, (try? FieldCipher.open(bytes, usingAnyOf: retiredKeys)) != nil {
            report(.retiredKey, field: field,
                "\(field) opens only under a retired key: rotate it to the current key")
            return
        }
        report(.undecryptable, field: field,
            "\(field) does not authenticate under any key given (current or retired): tampered, or made with another key")
    }

    private func report(_ kind: FindingKind, field: String, _ message: String) {
        guard pass == .first else { return }
        findings.append(Finding(kind: kind, places: [place(field: field)], message: message))
    }

    // MARK: Shared nonces

    private func reportSharedNonces() {
        for (_, found) in occurrences {
            let sorted = found.sorted { Self.placePrecedes($0.place, $1.place) }
            var groups: [UInt64: [Place]] = [:]
            var digestOrder: [UInt64] = []
            for (place, digest) in sorted {
                if groups[digest] == nil { digestOrder.append(digest) }
                groups[digest, default: []].append(place)
            }
            if digestOrder.count > 1 {
                findings.append(Finding(
                    kind: .nonceReuse, places: sorted.map(\.place),
                    message: "\(digestOrder.count) different ciphertexts share one nonce in \(sorted.count) places: "
                        + "the key stream is reused, which can reveal their plaintexts"))
            }
            for digest in digestOrder {
                guard let places = groups[digest], places.count > 1 else { continue }
                findings.append(Finding(
                    kind: .duplicateCiphertext, places: places,
                    message: "the same ciphertext stands in \(places.count) places: copies show the values are equal"))
            }
        }
        occurrences = [:]
    }

    // MARK: Helpers

    private enum Shape {
        case notBase64
        case tooShort(Int)
        /// Decoded into `scratch`.
        case sealed(Int)
    }

    /// Decodes `text` into `scratch` when it is canonical base64.
    private func shape(of text: String) -> Shape {
        var text = text
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

    private func place(field: String?) -> Place {
        let location: Location
        switch file.format {
        case .lines: location = .line(line)
        case .json: location = .pointer(pointer())
        }
        return Place(file: file.path, location: location, field: field, line: line, order: order)
    }

    private func pointer() -> String {
        var text = ""
        for token in path {
            text += "/"
            switch token {
            case .key(let key): text += JSONPointer.escape(key)
            case .index(let index): text += String(index)
            }
        }
        return text
    }

    private func describe(_ location: Location) -> String {
        switch location {
        case .line(let number): return "line \(number)"
        case .pointer(let pointer): return pointer.isEmpty ? "the top level" : pointer
        }
    }
}
