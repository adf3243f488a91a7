import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitTransfer

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
        @Flag(help: ArgumentHelp(
            "With a schema that asks for seals: seal a stored profile that holds ciphertexts but no seal, on a device that has seen the id's profiles sealed.",
            discussion: "Without it such a profile is refused (exit 65): its seal may have been removed to roll a field back. The new seal vouches for every field as it stands, so use it only for a profile you know is the id's latest, one written before the schema asked for seals."))
        var reseal = false
        @Option(
            name: .customLong("share"),
            help: ArgumentHelp(
                "Share FIELD with these contacts or group:GROUP (repeatable): the field becomes an sk3 value that the key's devices and each of them open.",
                valueName: "field=name[,name...]"))
        var share: [String] = []

        func validate() throws {
            try options.validate(format: format)
            if !share.isEmpty && (options.ndjson || options.rownd) {
                throw ValidationError("--share shares one profile's fields: it cannot go with --ndjson or --rownd")
            }
            if reseal && options.rownd {
                throw ValidationError("--rownd never writes a seal: --reseal cannot go with it")
            }
        }

        func run() throws {
            let prepared = try options.prepare(.encrypt, format: format, resealing: reseal)
            guard !share.isEmpty else { return try options.process(prepared) }
            try options.process(prepared, before: try ProfileSharing.sharing(share, with: prepared.1))
        }
    }

    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decrypt",
            abstract: "Decrypt a profile's encrypted fields with the key's current or retired keys.",
            discussion: "Fields that only a retired key opens are named on stderr; 'profile rotate' re-encrypts them.")

        @OptionGroup var options: ProfileOptions
        @Flag(
            name: .customLong("accept-conflict"),
            help: ArgumentHelp(
                "With a schema that asks for seals: read a profile whose seal conflicts with this device's write of the same version, to merge it.",
                discussion: "Two devices that wrote at once make two seals of one version. Read the other one with this flag, merge, and encrypt the result: it takes a higher version. An older or mismatched seal is still refused."))
        var acceptConflict = false
        @Flag(help: ArgumentHelp(
            "Open only the fields shared with the key's identity or its groups, leaving every other field as it is (another person's profile).",
            discussion: "Without it, the owner's decrypt opens shared fields with the others."))
        var shared = false

        func validate() throws {
            if acceptConflict && (options.rownd || options.ndjson) {
                throw ValidationError("--accept-conflict is for one sealed profile: it cannot go with --rownd or --ndjson")
            }
            if shared && (options.rownd || options.ndjson || acceptConflict) {
                throw ValidationError("--shared opens one profile's shared fields: it cannot go with --rownd, --ndjson or --accept-conflict")
            }
        }

        func run() throws {
            if shared { return try ProfileSharing.openShared(options) }
            let prepared = try options.prepare(.decrypt, acceptingConflict: acceptConflict)
            try options.process(prepared, retiredWarning: "decrypted only with a retired key", after: { opened in
                try ProfileSharing.openingShared(opened, with: prepared.1, pretty: options.pretty)
            })
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
            try options.process(try options.prepare(.rotate, format: format, migratingFromV1: fromV1))
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
    @Flag(help: ArgumentHelp(
        "The schema declares every field: refuse a profile holding a member it does not declare (exit 65).",
        discussion: """
            As the schema's "sealkit": {"undeclared": "error"} does. Without it, encrypt and rotate refuse only an \
            undeclared member whose name is near an encrypted field's (salary beside a flagged salery); with --rownd, \
            such members are named on stderr and left as they are.
            """))
    var completeSchema = false
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
    /// - Parameters:
    ///   - operation: what to do to each profile.
    ///   - format: `--format`, which overrides every field's own: the schema read with it decides, as any
    ///     schema does. `--rownd` writes v1 whatever the schema says, and refuses one that makes a field v2
    ///     even with `--format v1`, so there it changes nothing.
    ///   - migratingFromV1: `rotate --from-v1`.
    ///   - acceptingConflict: `decrypt --accept-conflict`.
    ///   - resealing: `encrypt --reseal`.
    func prepare(
        _ operation: ProfileProcessor.Operation, format: CiphertextFormat? = nil, migratingFromV1: Bool = false,
        acceptingConflict: Bool = false, resealing: Bool = false
    ) throws -> (ProfileProcessor, Vault) {
        let bytes = try readSchema()
        let processor: ProfileProcessor
        do {
            var parsed = try ProfileSchema(json: bytes)
            if completeSchema { parsed.undeclaredMembers = .refused }
            if let format, !rownd { parsed = parsed.writing(format) }
            processor = try ProfileProcessor(
                operation, schema: parsed,
                options: .init(
                    asRownd: rownd, pretty: pretty, migratingFromV1: migratingFromV1, acceptingConflict: acceptingConflict,
                    resealing: resealing))
        } catch where error.reason == .invalidArgument && rownd {
            throw CLIFailure("\(schema): \(said(error))", status: .usage)
        } catch {
            throw CLIFailure("\(schema): \(said(error))", status: .dataError)
        }
        // Profiles follow the schema's formats (here with --format applied); the vault's is for single values.
        return (processor, try keystoreOptions.unlockedVault(for: try keyID(key), format: .v1))
    }

    /// Runs the processor over the profile (or, with --ndjson, each line's profile) and writes the
    /// results, one per line, warning with `retiredWarning` about fields only a retired key opened.
    /// - Parameters:
    ///   - before: for one profile (not --ndjson), changes its JSON text before the processor sees it (`encrypt --share`).
    ///   - after: for one profile, changes the processor's output before it is written (decrypt's shared fields).
    func process(
        _ prepared: (ProfileProcessor, Vault), retiredWarning: String? = nil, before: (([UInt8]) throws -> [UInt8])? = nil,
        after: (([UInt8]) throws -> [UInt8])? = nil
    ) throws {
        let (processor, vault) = prepared
        let output = StandardOutput()
        let fd = try openInput()
        defer { if fd != 0 { close(fd) } }
        if ndjson {
            try processLines(from: fd, to: output, retiredWarning: retiredWarning, processor, with: vault)
        } else {
            var bytes = try StandardInput.readAll(
                fd: fd, limit: InputLimits.profile, what: "the profile \(inputName)",
                advice: "give one profile, or one per line with --ndjson")
            if let before { bytes = try before(bytes) }
            var result: [UInt8] = []
            let report = try bytes.withUnsafeBufferPointer { text in
                try Self.run(processor, with: vault, on: text, lineNumber: nil, appendingTo: &result)
            }
            if let after { result = try after(result) }
            try result.withUnsafeBytes { try output.write(bytes: $0) }
            try output.flush()
            for note in report?.notes(receiveHint: Self.receiveHint) ?? [] { StandardError.write("sealkit: note: \(note)\n") }
            for warning in report?.warnings ?? [] { StandardError.write("sealkit: warning: \(warning)\n") }
            if let retiredWarning, let retired = report?.fieldsUnderRetiredKeys, !retired.isEmpty {
                StandardError.write(
                    "sealkit: warning: \(retired.joined(separator: ", ")) \(retiredWarning); "
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
        from fd: Int32, to output: StandardOutput, retiredWarning: String?, _ processor: ProfileProcessor, with vault: Vault
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
        // The same for every line (the id's record), so said once.
        var warnings: [String] = []
        var inFlight: (batch: LineBatch, done: DispatchGroup)?
        while true {
            let next = try Self.readBatch(from: reader, chunks: chunksPerBatch)
            var started: (batch: LineBatch, done: DispatchGroup)?
            if let next {
                let done = DispatchGroup()
                done.enter()
                DispatchQueue.global().async {
                    DispatchQueue.concurrentPerform(iterations: next.chunkCount) { next.process(chunk: $0, processor, with: vault) }
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
                        for warning in report.warnings where !warnings.contains(warning) { warnings.append(warning) }
                        if !report.fieldsUnderRetiredKeys.isEmpty {
                            warnedProfiles += 1
                            if firstWarning == nil { firstWarning = (lineNumber, report.fieldsUnderRetiredKeys) }
                        }
                        for note in report.notes(receiveHint: Self.receiveHint) {
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
        for warning in warnings { StandardError.write("sealkit: warning: \(warning)\n") }
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

    /// Processes one profile's text, appending its result and a newline to `output`.
    /// - Parameter lineNumber: the profile's line with --ndjson, where a blank line holds none (nil).
    /// - Returns: the fields to warn about, and notes; nil for a blank line.
    /// - Throws: `CLIFailure` naming the line (with --ndjson) and the problem.
    static func run(
        _ processor: ProfileProcessor, with vault: Vault, on text: UnsafeBufferPointer<UInt8>, lineNumber: Int?,
        appendingTo output: inout [UInt8]
    ) throws(CLIFailure) -> ProfileOutcome? {
        do {
            guard let outcome = try processor.process(text, with: vault, line: lineNumber, appendingTo: &output) else {
                return nil
            }
            output.append(UInt8(ascii: "\n"))
            return outcome
        } catch {
            // A seal record that is not the user's own file is refused as a key file is (77); anything else about a
            // profile is its data's fault (65), as scripts have always seen it.
            throw CLIFailure(said(error), status: error.reason == .unsafeFile ? .noPermission : .dataError)
        }
    }

    /// Names the input in errors.
    var inputName: String { file.map { $0 == "-" ? "on stdin" : "in " + $0 } ?? "on stdin" }

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
    func openInput() throws -> Int32 { try StandardInput.fileDescriptor(file, what: "profile file") }
}

/// One batch of --ndjson lines, cut into chunks, and each chunk's results. Each worker writes only
/// the slot of the chunk it was given, and the batch is read only after every worker has finished
/// (`concurrentPerform` returns), so the slots need no lock: that is what makes `@unchecked Sendable` safe.
private final class LineBatch: @unchecked Sendable {
    /// A chunk's output: its lines' results up to its first failure, the warnings, and that failure.
    struct ChunkResult {
        var output: [UInt8] = []
        var reports: [(lineNumber: Int, report: ProfileOutcome)] = []
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

    /// Processes every line of `chunk`, in order, stopping at the first that fails.
    func process(chunk: Int, _ processor: ProfileProcessor, with vault: Vault) {
        let lines = (bounds.count * chunk / chunkCount)..<(bounds.count * (chunk + 1) / chunkCount)
        var result = ChunkResult()
        result.output.reserveCapacity((bounds[lines.upperBound - 1].upperBound - bounds[lines.lowerBound].lowerBound) * 2)
        text.withUnsafeBufferPointer { text in
            for index in lines {
                let lineNumber = firstLine + index
                let line = UnsafeBufferPointer(rebasing: text[bounds[index]])
                do throws(CLIFailure) {
                    guard let report = try ProfileOptions.run(
                        processor, with: vault, on: line, lineNumber: lineNumber, appendingTo: &result.output)
                    else {
                        result.blankLines += 1
                        continue
                    }
                    if !report.notes.isEmpty || !report.fieldsUnderRetiredKeys.isEmpty || !report.warnings.isEmpty {
                        result.reports.append((lineNumber, report))
                    }
                } catch {
                    result.failure = error
                    break
                }
            }
        }
        slots[chunk] = result
    }
}
