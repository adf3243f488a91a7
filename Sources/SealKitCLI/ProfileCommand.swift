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
        retiredWarning: String? = nil, _ operation: (JSONValue) throws -> (profile: JSONValue, warnFields: [String])
    ) throws {
        let output = StandardOutput()
        let fd = try openInput()
        defer { if fd != 0 { close(fd) } }
        if ndjson {
            let reader = LineReader(fd: fd)
            var warnedProfiles = 0
            var firstWarning: (line: Int, fields: [String])?
            while try reader.nextLine({ line in
                let lineNumber = reader.lineNumber
                guard line.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else {
                    throw CLIFailure("line \(lineNumber): empty; each line must hold one profile", status: .dataError)
                }
                let result = try run(operation, on: line, lineNumber: lineNumber)
                if !result.warnFields.isEmpty {
                    warnedProfiles += 1
                    if firstWarning == nil { firstWarning = (lineNumber, result.warnFields) }
                }
                // One write per line, so whatever reaches stdout is whole lines.
                try output.write(result.profile.serialized() + "\n")
            }) {}
            try output.flush()
            if let retiredWarning, let firstWarning {
                let profiles = warnedProfiles == 1 ? "1 profile has" : "\(warnedProfiles) profiles have"
                StandardError.write(
                    "sealkit: warning: \(profiles) fields \(retiredWarning) (first, line \(firstWarning.line): "
                        + "\(firstWarning.fields.joined(separator: ", "))); run 'sealkit profile rotate' to move them to the current key\n")
            }
        } else {
            var bytes: [UInt8] = []
            let reader = LineReader(fd: fd)
            while let chunk = try reader.readChunk() { bytes.append(contentsOf: chunk) }
            let result = try bytes.withUnsafeBytes { try run(operation, on: $0, lineNumber: nil) }
            try output.write(result.profile.serialized(pretty: pretty) + "\n")
            try output.flush()
            if let retiredWarning, !result.warnFields.isEmpty {
                StandardError.write(
                    "sealkit: warning: \(result.warnFields.joined(separator: ", ")) \(retiredWarning); "
                        + "run 'sealkit profile rotate' to move them to the current key\n")
            }
        }
    }

    private func run(
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
