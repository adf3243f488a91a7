import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import SealKit

#if canImport(Glibc)
import Glibc
#endif

struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Encrypt, decrypt or rotate the fields of user profiles that an app schema marks encrypted.",
        discussion: """
            SCHEMA is Rownd's app config: {"app": {"schema": {...}}}, {"schema": {...}} or the field map alone. \
            A profile is a JSON object of fields, or Rownd's user state {"id", "data": {...}, ...}. \
            Strict (default): strings encrypt as Rownd's SDKs do; numbers, booleans, objects and arrays encrypt as \
            their JSON text and come back by the schema's type, and any field that fails stops the command. \
            --rownd: exactly what Rownd's SDKs did, for profiles Rownd apps read or wrote: only strings are encrypted, \
            decrypted values are strings, flagged values that do not open are left as they are and named on stderr, \
            and meta's flagged fields are decrypted (never encrypted).
            """,
        subcommands: [Encrypt.self, Decrypt.self, Rotate.self])

    struct Encrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "encrypt",
            abstract: "Encrypt a profile's encrypted fields with the key's current key.",
            discussion: """
                Fields that already decrypt under the key's keys are left as they are. A field that holds a \
                ciphertext no key of the id opens fails the command (exit 65): it was sealed under a key this \
                keystore does not have, and is never encrypted again.
                """)

        @OptionGroup var options: ProfileOptions
        @Option(help: ArgumentHelp(
            "The format of new ciphertexts: v1 (Rownd's) or v2 (bound to the id and field); overrides the schema's per-field setting.",
            valueName: "v1|v2"))
        var format: CiphertextFormat?

        func validate() throws { try options.validate(format: format) }

        func run() throws {
            let (encryptor, keys) = try options.prepare(format: format)
            if options.rownd {
                let rownd = RowndProfileEncryptor(schema: encryptor.schema)
                return try options.process(
                    ProfileOptions.tree(pretty: options.pretty) { profile throws(ProfileError) in
                        ProfileReport(try rownd.encrypt(profile, with: keys))
                    })
            }
            if options.pretty {
                try options.process(ProfileOptions.tree(pretty: true) { profile throws(ProfileError) in ProfileReport(profile: try encryptor.encrypt(profile, with: keys)) })
            } else {
                // Compact output comes straight from the text, without a value tree.
                try options.process { text, output throws(ProfileError) in
                    try encryptor.encrypt(jsonText: text, with: keys, appendingTo: &output)
                    return ProfileReport()
                }
            }
        }
    }

    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decrypt",
            abstract: "Decrypt a profile's encrypted fields with the key's current or retired keys.",
            discussion: "Fields that only a retired key opens are named on stderr; 'profile rotate' re-encrypts them.")

        @OptionGroup var options: ProfileOptions

        func run() throws {
            let (encryptor, keys) = try options.prepare()
            if options.rownd {
                let rownd = RowndProfileEncryptor(schema: encryptor.schema)
                return try options.process(
                    ProfileOptions.tree(pretty: options.pretty) { profile throws(ProfileError) in
                        ProfileReport(try rownd.decrypt(profile, with: keys))
                    },
                    retiredWarning: "decrypted only with a retired key")
            }
            try options.process(
                ProfileOptions.tree(pretty: options.pretty) { profile throws(ProfileError) in
                    let decrypted = try encryptor.decrypt(profile, with: keys)
                    return ProfileReport(profile: decrypted.profile, retiredFields: decrypted.fieldsUnderRetiredKeys)
                },
                retiredWarning: "decrypted only with a retired key")
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Re-encrypt under the current key the fields that only a retired key opens.",
            discussion: """
                Fields already under the current key keep their ciphertexts. A field written as v2 (--format v2, \
                or the schema's setting) opens only v2 values: a v1 value there names no field, so it may have been \
                moved from another, and is refused. --from-v1 migrates once, on purpose: it reads v1 values in such \
                fields and rewrites them as v2 bound to the field they stand in. Migrate data you trust, then rotate \
                the key (sealkit keys rotate) and the profiles again, so no earlier v1 value opens under the new key.
                """)

        @OptionGroup var options: ProfileOptions
        @Option(help: ArgumentHelp(
            "The format of new ciphertexts: v1 (Rownd's) or v2 (bound to the id and field); overrides the schema's per-field setting.",
            valueName: "v1|v2"))
        var format: CiphertextFormat?
        @Flag(name: .customLong("from-v1"), help: "Migrate: read v1 values in fields written as v2, and rewrite them as v2.")
        var fromV1 = false

        func validate() throws {
            try options.validate(format: format)
            if fromV1 && options.rownd {
                throw ValidationError("--rownd writes v1 only, so there is nothing to migrate: --from-v1 cannot go with it")
            }
        }

        func run() throws {
            let (encryptor, keys) = try options.prepare(format: format)
            if options.rownd {
                let rownd = RowndProfileEncryptor(schema: encryptor.schema)
                return try options.process(
                    ProfileOptions.tree(pretty: options.pretty) { profile throws(ProfileError) in
                        let rotated = try rownd.rotate(profile, with: keys)
                        return ProfileReport(profile: rotated.profile, notes: rotated.notes.map(\.description))
                    })
            }
            try options.process(ProfileOptions.tree(pretty: options.pretty) { profile throws(ProfileError) in ProfileReport(profile: try encryptor.rotate(profile, with: keys, migratingFromV1: fromV1).profile) })
        }
    }
}

/// What every `profile` subcommand takes.
struct ProfileOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The app schema JSON file.", valueName: "path"), completion: .file(extensions: ["json"])) var schema: String
    @Option(help: "The key id whose keys to use (in Rownd's model, the user id).", completion: .keyIDs) var key: String
    @Flag(help: "Read one profile per line and write one per line, streamed, for bulk work.") var ndjson = false
    @Flag(help: "Write the profile indented, for people to read.") var pretty = false
    @Flag(help: ArgumentHelp(
        "Do exactly what Rownd's SDKs did: only strings are encrypted; values that do not open are left and named on stderr.",
        discussion: "For profiles that Rownd apps wrote or will read. See the README's Rownd section."))
    var rownd = false
    @OptionGroup var keystoreOptions: KeystoreOptions
    @Argument(help: ArgumentHelp("The profile JSON file; stdin when absent or '-'.", valueName: "file"), completion: .file()) var file: String?

    func validate() throws {
        if ndjson && pretty { throw ValidationError("--pretty writes several lines per profile; it cannot go with --ndjson") }
    }

    /// `--rownd` never writes v2, which Rownd's SDKs cannot read.
    func validate(format: CiphertextFormat?) throws {
        if rownd && format == .v2 {
            throw ValidationError("--rownd writes what Rownd's SDKs read, which is v1 only; --format v2 cannot go with it")
        }
    }

    /// Reads the schema, then unlocks the keys, so a bad schema fails before any passphrase prompt.
    /// - Parameter format: `--format`, which overrides every field's own.
    func prepare(format: CiphertextFormat? = nil) throws -> (ProfileEncryptor, KeyRing) {
        let bytes = try readSchema()
        let parsed: ProfileSchema
        do {
            parsed = try ProfileSchema(parsing: bytes)
            try SchemaLint.requireEncryptedField(parsed)
        } catch {
            throw CLIFailure("\(schema): \(error)", status: .dataError)
        }
        if rownd, let field = parsed.encryptedFields.first(where: { $0.format == .v2 }) {
            throw CLIFailure(
                "\(schema): field \(field.name) asks for v2 ciphertexts, which Rownd's SDKs cannot read; "
                    + "--rownd writes v1 only, so drop --rownd or the field's \"sealkit\": {\"format\": 2}",
                status: .dataError)
        }
        let id = try keyID(key)
        let keystore = try keystoreOptions.keystore()
        let passphrase = try keystoreOptions.passphrase(toUnlock: id, in: keystore)
        return (ProfileEncryptor(schema: parsed, format: format), try keystore.keyRing(for: id, passphrase: passphrase))
    }

    /// Runs `operation` over the profile (or, with --ndjson, each line's profile) and writes the
    /// results, one per line. `operation` returns the fields to warn about with `retiredWarning`.
    func process(_ operation: @escaping ProfileTextOperation, retiredWarning: String? = nil) throws {
        let output = StandardOutput()
        let fd = try openInput()
        defer { if fd != 0 { close(fd) } }
        if ndjson {
            try processLines(from: fd, to: output, retiredWarning: retiredWarning, operation)
        } else {
            let bytes = try StandardInput.readAll(
                fd: fd, limit: InputLimits.profile, what: "the profile \(inputName)",
                advice: "give one profile, or one per line with --ndjson")
            var result: [UInt8] = []
            let report = try bytes.withUnsafeBufferPointer { text in
                try Self.run(operation, on: text, lineNumber: nil, strict: !rownd, appendingTo: &result)
            }
            try result.withUnsafeBytes { try output.write(bytes: $0) }
            try output.flush()
            for note in report.notes { StandardError.write("sealkit: note: \(note)\n") }
            if let retiredWarning, !report.retiredFields.isEmpty {
                StandardError.write(
                    "sealkit: warning: \(report.retiredFields.joined(separator: ", ")) \(retiredWarning); "
                        + "run 'sealkit profile rotate\(rownd ? " --rownd" : "")' to move them to the current key\n")
            }
        }
    }

    /// --ndjson: profiles are independent, so each batch of lines is cut into chunks spread over
    /// every core, each chunk writing its lines' results into its own buffer, and the buffers are
    /// written in input order. While one batch is processed, this thread writes the one before and
    /// reads the one after. What reaches stdout, the first failing line that stops the run, and the
    /// warnings are exactly those of a line-by-line loop.
    private func processLines(
        from fd: Int32, to output: StandardOutput, retiredWarning: String?, _ operation: @escaping ProfileTextOperation
    ) throws {
        let reader = LineReader(
            fd: fd, what: "the profiles \(inputName)", maximumLineLength: InputLimits.profile, maximumTotal: .max)
        let chunksPerBatch = max(1, ProcessInfo.processInfo.activeProcessorCount) * 4
        var warnedProfiles = 0
        var blankLines = 0
        var firstWarning: (line: Int, fields: [String])?
        // Notes are per field and could be one per line of a huge export: the first ones, then a count.
        var notes: [String] = []
        var notesLeftOut = 0
        var inFlight: (batch: LineBatch, done: DispatchGroup)?
        while true {
            let next = try Self.readBatch(from: reader, chunks: chunksPerBatch)
            var started: (batch: LineBatch, done: DispatchGroup)?
            if let next {
                let done = DispatchGroup()
                done.enter()
                DispatchQueue.global().async {
                    DispatchQueue.concurrentPerform(iterations: next.chunkCount) { next.process(chunk: $0, strict: !rownd, operation) }
                    done.leave()
                }
                started = (next, done)
            }
            if let (batch, done) = inFlight {
                done.wait()
                for chunk in 0..<batch.chunkCount {
                    let result = batch.result(of: chunk)
                    // Whole lines only: a chunk's buffer ends after the last line that succeeded.
                    try result.output.withUnsafeBytes { try output.write(bytes: $0) }
                    blankLines += result.blankLines
                    for (lineNumber, report) in result.reports {
                        if !report.retiredFields.isEmpty {
                            warnedProfiles += 1
                            if firstWarning == nil { firstWarning = (lineNumber, report.retiredFields) }
                        }
                        for note in report.notes {
                            if notes.count < Self.notesShown { notes.append("line \(lineNumber): \(note)") } else { notesLeftOut += 1 }
                        }
                    }
                    if let failure = result.failure { throw failure }
                }
            }
            guard let started else { break }
            inFlight = started
        }
        try output.flush()
        for note in notes { StandardError.write("sealkit: note: \(note)\n") }
        if notesLeftOut > 0 {
            StandardError.write("sealkit: note: \(notesLeftOut) more field\(notesLeftOut == 1 ? "" : "s") left as \(notesLeftOut == 1 ? "it was" : "they were"), not listed\n")
        }
        if blankLines > 0 {
            StandardError.write("sealkit: note: \(Self.blankLinesSkipped(blankLines))\n")
        }
        if let retiredWarning, let firstWarning {
            let profiles = warnedProfiles == 1 ? "1 profile has" : "\(warnedProfiles) profiles have"
            StandardError.write(
                "sealkit: warning: \(profiles) fields \(retiredWarning) (first, line \(firstWarning.line): "
                    + "\(firstWarning.fields.joined(separator: ", "))); run 'sealkit profile rotate\(rownd ? " --rownd" : "")' "
                    + "to move them to the current key\n")
        }
    }

    /// How many --rownd notes --ndjson lists before it only counts them.
    private static let notesShown = 20

    /// "1 blank line skipped": the same words `audit` uses.
    static func blankLinesSkipped(_ count: Int) -> String {
        count == 1 ? "1 blank line skipped" : "\(count) blank lines skipped"
    }

    /// Copies the next lines, about 256 KiB of them, out of the reader's block (they outlive the next
    /// read): small enough that a batch's text and results stay in cache, large enough that handing
    /// batches over is rare. Nil at the end of the input.
    private static func readBatch(from reader: LineReader, chunks: Int) throws -> LineBatch? {
        let batchBytes = 256 << 10
        var text: [UInt8] = []
        text.reserveCapacity(batchBytes + 4096)
        var bounds: [Range<Int>] = []
        var firstLine = 0
        while text.count < batchBytes {
            let more = try reader.nextLine { line in
                bounds.append(text.count..<text.count + line.count)
                text.append(contentsOf: line)
            }
            if !more { break }
            if firstLine == 0 { firstLine = reader.lineNumber }
        }
        if bounds.isEmpty { return nil }
        return LineBatch(text: text, bounds: bounds, firstLine: firstLine, chunks: min(bounds.count, chunks))
    }

    /// Runs `operation` on one profile's text, appending its result and a newline to `output`.
    /// - Parameter strict: whether this is the strict mode, whose field failures get a hint about --rownd.
    /// - Returns: the fields to warn about, and notes.
    /// - Throws: `CLIFailure` naming the line (with --ndjson) and the problem.
    fileprivate static func run(
        _ operation: ProfileTextOperation, on text: UnsafeBufferPointer<UInt8>, lineNumber: Int?, strict: Bool,
        appendingTo output: inout [UInt8]
    ) throws(CLIFailure) -> ProfileReport {
        do {
            let report = try operation(text, &output)
            output.append(UInt8(ascii: "\n"))
            return report
        } catch .fieldsFailed(let failures) where strict {
            throw CLIFailure(
                (lineNumber.map { "line \($0): " } ?? "") + ProfileError.fieldsFailed(failures).description
                    + hint(for: failures),
                status: .dataError)
        } catch .invalidJSON(let error) {
            // Within one line the parser's line is always 1; report the input's line instead.
            let located = lineNumber.map {
                JSONError(reason: error.reason, line: $0, column: error.column, byteOffset: error.byteOffset)
            }
            throw CLIFailure("the profile is \(located ?? error)", status: .dataError)
        } catch {
            throw CLIFailure((lineNumber.map { "line \($0): " } ?? "") + error.description, status: .dataError)
        }
    }

    /// What most likely explains a strict failure: a missing key, or a v1 value where v2 is required,
    /// says so in its own reason; anything else may be a profile that a Rownd app wrote, which --rownd reads.
    private static func hint(for failures: [FieldFailure]) -> String {
        let explained = failures.contains {
            switch $0.reason {
            case .sealedUnderUnknownKey, .undecryptable(.notBound): return true
            default: return false
            }
        }
        return explained ? "" : " (written by a Rownd app? try --rownd)"
    }

    /// Names the input in errors.
    private var inputName: String { file.map { $0 == "-" ? "on stdin" : "in " + $0 } ?? "on stdin" }

    /// The schema file's bytes, at most `InputLimits.schema` of them.
    private func readSchema() throws -> [UInt8] { try Self.readSchemaFile(schema) }

    /// A schema file's bytes, at most `InputLimits.schema` of them (`profile` and `--schema` of
    /// `status` and `keys generate` alike).
    static func readSchemaFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CLIFailure("cannot read the schema file \(path): check the path", status: .noInput)
        }
        defer { close(fd) }
        return try StandardInput.readAll(
            fd: fd, limit: InputLimits.schema, what: "the schema file \(path)", advice: "give the app's schema JSON file")
    }

    /// stdin, or the named file, as a file descriptor.
    private func openInput() throws -> Int32 { try StandardInput.fileDescriptor(file, what: "profile file") }
}

/// An operation on one profile's JSON text: appends the resulting profile's JSON (no newline) to
/// the buffer, and returns the fields to warn about. On failure the buffer is as it was.
typealias ProfileTextOperation = @Sendable (UnsafeBufferPointer<UInt8>, inout [UInt8]) throws(ProfileError) -> ProfileReport

/// What one profile's operation reports besides its JSON: fields only a retired key opened, and
/// --rownd's notes (field paths and reasons, never values).
struct ProfileReport: Sendable {
    /// The resulting profile, for operations on the value tree; `tree` writes it and drops it.
    var profile: JSONValue = .null
    var retiredFields: [String] = []
    var notes: [String] = []

    init(profile: JSONValue = .null, retiredFields: [String] = [], notes: [String] = []) {
        self.profile = profile
        self.retiredFields = retiredFields
        self.notes = notes
    }

    init(_ result: RowndProfileResult) {
        self.init(profile: result.profile, retiredFields: result.fieldsUnderRetiredKeys, notes: result.notes.map(\.description))
    }

    var isEmpty: Bool { retiredFields.isEmpty && notes.isEmpty }
}

extension ProfileOptions {
    /// An operation on the profile's value tree, for decrypt, rotate, --rownd and pretty output.
    static func tree(
        pretty: Bool, _ operation: @escaping @Sendable (JSONValue) throws(ProfileError) -> ProfileReport
    ) -> ProfileTextOperation {
        { text, output throws(ProfileError) in
            let profile: JSONValue
            do throws(JSONError) {
                profile = try JSONValue.parse(text)
            } catch {
                throw .invalidJSON(error)
            }
            var result = try operation(profile)
            output.append(contentsOf: result.profile.serialized(pretty: pretty).utf8)
            result.profile = .null
            return result
        }
    }
}

/// One batch of --ndjson lines, cut into chunks, and each chunk's results. Each worker writes only
/// the slot of the chunk it was given, and the batch is read only after every worker has finished
/// (`concurrentPerform` returns), so the slots need no lock: that is what makes `@unchecked Sendable` safe.
private final class LineBatch: @unchecked Sendable {
    /// A chunk's output: its lines' results up to its first failure, the warnings, and that failure.
    struct ChunkResult {
        var output: [UInt8] = []
        var reports: [(lineNumber: Int, report: ProfileReport)] = []
        var failure: CLIFailure?
        /// Blank lines skipped, as `audit` skips them.
        var blankLines = 0
    }

    let text: [UInt8]
    let bounds: [Range<Int>]
    let firstLine: Int
    let chunkCount: Int
    private let slots: UnsafeMutableBufferPointer<ChunkResult>

    init(text: [UInt8], bounds: [Range<Int>], firstLine: Int, chunks: Int) {
        self.text = text
        self.bounds = bounds
        self.firstLine = firstLine
        chunkCount = chunks
        slots = .allocate(capacity: chunks)
        slots.initialize(repeating: ChunkResult())
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func result(of chunk: Int) -> ChunkResult { slots[chunk] }

    /// Runs `operation` on every line of `chunk`, in order, stopping at the first that fails.
    func process(chunk: Int, strict: Bool, _ operation: ProfileTextOperation) {
        let lines = (bounds.count * chunk / chunkCount)..<(bounds.count * (chunk + 1) / chunkCount)
        var result = ChunkResult()
        result.output.reserveCapacity((bounds[lines.upperBound - 1].upperBound - bounds[lines.lowerBound].lowerBound) * 2)
        text.withUnsafeBufferPointer { text in
            for index in lines {
                let lineNumber = firstLine + index
                let line = UnsafeBufferPointer(rebasing: text[bounds[index]])
                if NDJSON.isBlank(UnsafeRawBufferPointer(line)) {
                    result.blankLines += 1
                    continue
                }
                do throws(CLIFailure) {
                    let report = try ProfileOptions.run(
                        operation, on: line, lineNumber: lineNumber, strict: strict, appendingTo: &result.output)
                    if !report.isEmpty { result.reports.append((lineNumber, report)) }
                } catch {
                    result.failure = error
                    break
                }
            }
        }
        slots[chunk] = result
    }
}
