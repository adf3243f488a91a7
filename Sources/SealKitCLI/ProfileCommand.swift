import ArgumentParser
import Foundation
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
            Strings encrypt as Rownd's SDKs do; numbers, booleans, objects and arrays encrypt as their JSON text \
            and come back by the schema's type.
            """,
        subcommands: [Encrypt.self, Decrypt.self, Rotate.self])

    struct Encrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Encrypt a profile's encrypted fields with the key's current key.",
            discussion: "Fields that already decrypt under the key's keys are left as they are.")

        @OptionGroup var options: ProfileOptions

        func run() throws {
            let (encryptor, keys) = try options.prepare()
            try options.process { profile in (try encryptor.encrypt(profile, with: keys), []) }
        }
    }

    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decrypt a profile's encrypted fields with the key's current or retired keys.",
            discussion: "Fields that only a retired key opens are named on stderr; 'profile rotate' re-encrypts them.")

        @OptionGroup var options: ProfileOptions

        func run() throws {
            let (encryptor, keys) = try options.prepare()
            try options.process(retiredWarning: "decrypted only with a retired key") { profile in
                let decrypted = try encryptor.decrypt(profile, with: keys)
                return (decrypted.profile, decrypted.fieldsUnderRetiredKeys)
            }
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-encrypt under the current key the fields that only a retired key opens.",
            discussion: "Fields already under the current key keep their ciphertexts.")

        @OptionGroup var options: ProfileOptions

        func run() throws {
            let (encryptor, keys) = try options.prepare()
            try options.process { profile in
                (try encryptor.rotate(profile, with: keys).profile, [])
            }
        }
    }
}

/// What every `profile` subcommand takes.
struct ProfileOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The app schema JSON file.", valueName: "path")) var schema: String
    @Option(help: "The key id whose keys to use (in Rownd's model, the user id).") var key: String
    @Flag(help: "Read one profile per line and write one per line, streamed, for bulk work.") var ndjson = false
    @Flag(help: "Write the profile indented, for people to read.") var pretty = false
    @OptionGroup var keystoreOptions: KeystoreOptions
    @Argument(help: ArgumentHelp("The profile JSON file; stdin when absent or '-'.", valueName: "file")) var file: String?

    func validate() throws {
        if ndjson && pretty { throw ValidationError("--pretty writes several lines per profile; it cannot go with --ndjson") }
    }

    /// Reads the schema, then unlocks the keys, so a bad schema fails before any passphrase prompt.
    func prepare() throws -> (ProfileEncryptor, KeyRing) {
        guard let bytes = FileManager.default.contents(atPath: schema) else {
            throw CLIFailure("cannot read the schema file \(schema): check the path", status: .noInput)
        }
        let parsed: ProfileSchema
        do {
            parsed = try ProfileSchema(parsing: bytes)
        } catch {
            throw CLIFailure("\(schema): \(error)", status: .dataError)
        }
        let id = try keyID(key)
        let keystore = try keystoreOptions.keystore()
        let passphrase = try keystoreOptions.passphrase(toUnlock: id, in: keystore)
        return (ProfileEncryptor(schema: parsed), try keystore.keyRing(for: id, passphrase: passphrase))
    }

    /// Runs `operation` over the profile (or, with --ndjson, each line's profile) and writes the
    /// results. `operation` returns the new profile and the fields to warn about with `retiredWarning`.
    func process(
        retiredWarning: String? = nil,
        _ operation: @escaping @Sendable (JSONValue) throws -> (profile: JSONValue, warnFields: [String])
    ) throws {
        let output = StandardOutput()
        let fd = try openInput()
        defer { if fd != 0 { close(fd) } }
        if ndjson {
            try processLines(from: fd, to: output, retiredWarning: retiredWarning, operation)
        } else {
            var bytes: [UInt8] = []
            let reader = LineReader(fd: fd)
            while let chunk = try reader.readChunk() { bytes.append(contentsOf: chunk) }
            let result = try bytes.withUnsafeBytes { try Self.run(operation, on: $0, lineNumber: nil) }
            try output.write(result.profile.serialized(pretty: pretty) + "\n")
            try output.flush()
            if let retiredWarning, !result.warnFields.isEmpty {
                StandardError.write(
                    "sealkit: warning: \(result.warnFields.joined(separator: ", ")) \(retiredWarning); "
                        + "run 'sealkit profile rotate' to move them to the current key\n")
            }
        }
    }

    /// --ndjson: profiles are independent, so batches of lines are spread over every core and
    /// their results written back in input order. What reaches stdout, the first failing line
    /// that stops the run, and the warnings are exactly those of a line-by-line loop.
    private func processLines(
        from fd: Int32, to output: StandardOutput, retiredWarning: String?,
        _ operation: @escaping @Sendable (JSONValue) throws -> (profile: JSONValue, warnFields: [String])
    ) throws {
        let reader = LineReader(fd: fd)
        // Small enough that a batch's text and results stay in cache (1,024 lines took 20% more CPU
        // per profile), large enough that the hand-off between batches is rare.
        let batchSize = 128
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        var warnedProfiles = 0
        var firstWarning: (line: Int, fields: [String])?
        var finished = false
        while !finished {
            // Copy a batch of lines out of the reader's block: they outlive the next read.
            var text: [UInt8] = []
            var bounds: [Range<Int>] = []
            var firstLine = 0
            while bounds.count < batchSize {
                let more = try reader.nextLine { line in
                    bounds.append(text.count..<text.count + line.count)
                    text.append(contentsOf: line)
                }
                if !more {
                    finished = true
                    break
                }
                if firstLine == 0 { firstLine = reader.lineNumber }
            }
            if bounds.isEmpty { break }
            let batch = LineBatch(text: text, bounds: bounds, firstLine: firstLine)
            let count = bounds.count
            let chunks = min(count, workers * 4)
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let range = (count * chunk / chunks)..<(count * (chunk + 1) / chunks)
                for index in range { batch.process(index, operation) }
            }
            for result in batch.results {
                switch result {
                case .failed(let failure):
                    throw failure
                case .done(let line, let lineNumber, let warnFields):
                    if !warnFields.isEmpty {
                        warnedProfiles += 1
                        if firstWarning == nil { firstWarning = (lineNumber, warnFields) }
                    }
                    // One write per line, so whatever reaches stdout is whole lines.
                    try output.write(line)
                case nil:
                    throw CLIFailure("internal error: a line of the batch was not processed", status: .dataError)
                }
            }
        }
        try output.flush()
        if let retiredWarning, let firstWarning {
            let profiles = warnedProfiles == 1 ? "1 profile has" : "\(warnedProfiles) profiles have"
            StandardError.write(
                "sealkit: warning: \(profiles) fields \(retiredWarning) (first, line \(firstWarning.line): "
                    + "\(firstWarning.fields.joined(separator: ", "))); run 'sealkit profile rotate' to move them to the current key\n")
        }
    }

    fileprivate static func run(
        _ operation: (JSONValue) throws -> (profile: JSONValue, warnFields: [String]),
        on bytes: UnsafeRawBufferPointer, lineNumber: Int?
    ) throws -> (profile: JSONValue, warnFields: [String]) {
        let prefix = lineNumber.map { "line \($0): " } ?? ""
        let profile: JSONValue
        do {
            profile = try JSONValue.parse(bytes)
        } catch {
            // Within one line the parser's line is always 1; report the input's line instead.
            let located = lineNumber.map {
                JSONError(reason: error.reason, line: $0, column: error.column, byteOffset: error.byteOffset)
            }
            throw CLIFailure("the profile is \(located ?? error)", status: .dataError)
        }
        do {
            return try operation(profile)
        } catch let error as ProfileError {
            throw CLIFailure(prefix + error.description, status: .dataError)
        }
    }

    /// stdin, or the named file, as a file descriptor.
    private func openInput() throws -> Int32 {
        guard let file, file != "-" else { return 0 }
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CLIFailure("cannot read the profile file \(file): \(reason)", status: errno == ENOENT ? .noInput : .ioError)
        }
        return fd
    }
}

/// One batch of --ndjson lines and their results. Each worker writes only the slots of the
/// lines it was given, and the batch is read only after every worker has finished
/// (`concurrentPerform` returns), so the slots need no lock.
private final class LineBatch: @unchecked Sendable {
    enum Result {
        /// The output line (newline included), its input line number, and fields to warn about.
        case done(String, lineNumber: Int, warnFields: [String])
        case failed(CLIFailure)
    }

    let text: [UInt8]
    let bounds: [Range<Int>]
    let firstLine: Int
    private let slots: UnsafeMutableBufferPointer<Result?>

    init(text: [UInt8], bounds: [Range<Int>], firstLine: Int) {
        self.text = text
        self.bounds = bounds
        self.firstLine = firstLine
        slots = .allocate(capacity: bounds.count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    /// Every line's result, in input order; nil only for a line no worker was given.
    var results: [Result?] { Array(slots) }

    func process(_ index: Int, _ operation: (JSONValue) throws -> (profile: JSONValue, warnFields: [String])) {
        let lineNumber = firstLine + index
        let outcome: Result
        do {
            let result = try text.withUnsafeBytes { raw in
                let line = UnsafeRawBufferPointer(rebasing: raw[bounds[index]])
                guard line.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else {
                    throw CLIFailure("line \(lineNumber): empty; each line must hold one profile", status: .dataError)
                }
                return try ProfileOptions.run(operation, on: line, lineNumber: lineNumber)
            }
            outcome = .done(result.profile.serialized() + "\n", lineNumber: lineNumber, warnFields: result.warnFields)
        } catch let failure as CLIFailure {
            outcome = .failed(failure)
        } catch {
            outcome = .failed(CLIFailure("line \(lineNumber): \(error)", status: .dataError))
        }
        slots[index] = outcome
    }
}
