import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitTransfer

#if canImport(Glibc)
import Glibc
#endif

/// Options shared by `encrypt` and `decrypt`.
struct CipherOptions: ParsableArguments {
    @Option(help: "The key id to use.", completion: .keyIDs) var key: String
    @Flag(help: "Treat each input line as one value and write one output line each, streamed.") var lines = false
    @Option(help: ArgumentHelp("Read the input from this file instead of stdin ('-' is stdin).", valueName: "file"), completion: .file())
    var input: String?
    @Option(help: ArgumentHelp(
        "What the value is for: encrypt writes v2 bound to it, and decrypt opens only a v2 value made with it (a v1 value names no context, so it is refused). Without it, v2 values use the empty context.",
        valueName: "text"))
    var context: String?
    @OptionGroup var keystoreOptions: KeystoreOptions

    /// The key id's vault in `format`, its keys unlocked.
    func vault(format: CiphertextFormat) throws -> Vault {
        try keystoreOptions.unlockedVault(for: try keyID(key), format: format)
    }

    func validate(text: String?) throws {
        // `-` names stdin, as it does for every input of every command.
        if lines && text != nil && text != "-" {
            throw ValidationError("--lines reads stdin; give no TEXT argument with it")
        }
        if input != nil && text != nil && text != "-" {
            throw ValidationError("--input names the input; give no argument with it")
        }
    }

    /// The context a v2 value is bound to: the one given, else the empty one.
    var boundContext: String { context ?? "" }

    /// Where the input comes from: `--input FILE`, else stdin (also for `-`).
    func openInput() throws -> Int32 { try StandardInput.fileDescriptor(input, what: "input file") }
}

extension CiphertextFormat: ExpressibleByArgument {}

extension KeystoreOptions {
    /// The vault of `id` in `format`, its keys unlocked now (asking for the passphrase if they are
    /// protected), so that a missing or locked key fails before any input is read.
    /// - Parameter opened: the keystore, opened already; nil opens the configured one.
    func unlockedVault(for id: KeyID, format: CiphertextFormat, in opened: Keystore? = nil) throws -> Vault {
        let keystore = try opened ?? openKeystore()
        let passphrase = try passphrase(toUnlock: id, in: keystore)
        let vault = Vault(keystore: keystore, user: id, format: format, passphrase: passphrase)
        if case .notPossible(let error) = vault.encryptionStatus() { throw error }
        return vault
    }
}

struct EncryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "Encrypt text with a key; prints base64(nonce ‖ tag ‖ ciphertext), as Rownd's SDKs do, or v2 with --format v2.",
        discussion: """
            Reads stdin (or --input FILE) with one trailing newline dropped: printf '%s' "$text" | sealkit encrypt --key ID. \
            Plaintext is never taken as an argument, where shell history and ps would show it.
            """)

    @OptionGroup var options: CipherOptions
    @Option(help: ArgumentHelp(
        "v1: Rownd's format (the default without --context). v2: names its key, and opens only for this id and --context (the default with --context).",
        valueName: "v1|v2"))
    var format: CiphertextFormat?
    @Argument(help: ArgumentHelp("Only '-' (stdin); plaintext as an argument is refused.", valueName: "-")) var text: String?
    @Option(
        name: .customLong("share-with"),
        help: ArgumentHelp(
            "Share the value with this contact, or every member of group:GROUP (repeatable): writes an sk3 value that ID's devices and each recipient open.",
            valueName: "name"), completion: .recipientNames)
    var shareWith: [String] = []

    func validate() throws {
        try options.validate(text: text)
        if !shareWith.isEmpty && (options.lines || format != nil) {
            throw ValidationError("--share-with writes one shared (sk3) value: give it without --lines and --format")
        }
        if format == .v1 && options.context != nil {
            throw ValidationError("a v1 value names no context: --context goes with --format v2 (its default)")
        }
    }

    func run() throws {
        let format = format ?? (options.context == nil ? .v1 : .v2)
        if let text, text != "-" {
            _ = try keyID(options.key)  // an invalid id is refused as such, never echoed below
            // Never echo it: the refusal must not copy the secret into logs too.
            throw CLIFailure(
                "encrypt takes no plaintext argument (shell history and ps would show it): "
                    + "pipe it in, as in printf '%s' \"$text\" | sealkit encrypt --key \(options.key), or use --input FILE",
                status: .usage)
        }
        let fd = try options.openInput()
        defer { if fd != 0 { close(fd) } }
        let vault = try options.vault(format: format)
        if !shareWith.isEmpty { return try encryptShared(fd: fd, vault: vault) }
        let output = StandardOutput()
        if options.lines {
            let reader = LineReader(
                fd: fd, what: "the text on stdin", maximumLineLength: InputLimits.plaintext, maximumTotal: .max)
            // The lines of one block are encrypted together (their nonces drawn together), before the
            // next read, which may wait for input for a long time: no nonce drawn waits with it. They are
            // encrypted where the reader holds them, one after the other, newlines included: no copy, no
            // String per line (`Vault.encrypt(lines:context:appendingTo:)`, which apps have too).
            try Self.readLines(reader, beforeRead: {
                try reader.takeLinesHeld { lines, firstLine in
                    try Self.encrypt(lines, firstLine: firstLine, with: vault, context: options.boundContext, to: output)
                }
            }) { _ in }
        } else {
            let plaintext = try StandardInput.readText(fd: fd, what: "text", limit: InputLimits.plaintext)
            try output.write(try vault.encrypt(plaintext: plaintext, context: options.boundContext) + "\n")
        }
        try output.flush()
    }

    /// Encrypts a block of lines in one call and writes their ciphertexts. A line that is not UTF-8 fails the call, so
    /// the lines before it are encrypted and written first, and the input's line is named.
    static func encrypt(
        _ lines: UnsafeRawBufferPointer, firstLine: Int, with vault: Vault, context: String, to output: StandardOutput
    ) throws {
        var ciphertexts: [UInt8] = []
        do {
            try vault.encrypt(lines: lines, context: context, appendingTo: &ciphertexts)
        } catch {
            guard error.reason == .invalidArgument, let (offset, index) = firstLineNotUTF8(in: lines) else { throw error }
            try vault.encrypt(lines: UnsafeRawBufferPointer(rebasing: lines[..<offset]), context: context, appendingTo: &ciphertexts)
            try ciphertexts.withUnsafeBytes { try output.write(bytes: $0) }
            throw CLIFailure("line \(firstLine + index): not UTF-8 text; nothing more was written", status: .dataError)
        }
        try ciphertexts.withUnsafeBytes { try output.write(bytes: $0) }
    }

    /// Where the first line of `lines` that is not UTF-8 starts, and its index; nil when every line is UTF-8.
    static func firstLineNotUTF8(in lines: UnsafeRawBufferPointer) -> (offset: Int, index: Int)? {
        guard let base = lines.baseAddress else { return nil }
        var offset = 0, index = 0
        while offset < lines.count {
            let stop = memchr(base + offset, 0x0A, lines.count - offset).map { UnsafeRawPointer($0) - base } ?? lines.count
            if !UnsafeRawBufferPointer(rebasing: lines[offset..<stop]).isUTF8 { return (offset, index) }
            (offset, index) = (stop + 1, index + 1)
        }
        return nil
    }

    /// Reads every line into `body`, running `beforeRead` before each read that may block and at the
    /// end. When reading or `body` fails, `beforeRead` runs first, so the lines before the failing
    /// one are handled (and fail) first, in input order, as one line at a time would.
    static func readLines(
        _ reader: LineReader, beforeRead: () throws -> Void, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        do {
            while try reader.nextLine(beforeRead: beforeRead, body) {}
        } catch {
            try beforeRead()
            throw error
        }
        try beforeRead()
    }
}

struct DecryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt",
        abstract: "Decrypt a v1 or v2 ciphertext with a key's current or retired keys.",
        discussion: "Reads CIPHERTEXT, else stdin (or --input FILE) with one trailing newline dropped; '-' is stdin.")

    @OptionGroup var options: CipherOptions
    @Argument(help: "The ciphertext to decrypt (after --); stdin when absent or '-'.") var ciphertext: String?

    func validate() throws { try options.validate(text: ciphertext) }

    func run() throws {
        let fd = try options.openInput()
        defer { if fd != 0 { close(fd) } }
        // A v1 vault opens v1 values and v2 values of the empty context; with --context, only v2 ones made with it.
        let vault = try options.vault(format: options.context == nil ? .v1 : .v2)
        let output = StandardOutput()
        if options.lines {
            let reader = LineReader(
                fd: fd, what: "the ciphertexts on stdin", maximumLineLength: InputLimits.ciphertext, maximumTotal: .max)
            var pending: [String] = []
            var firstPendingLine = 0
            let decryptPending: () throws -> Void = {
                guard !pending.isEmpty else { return }
                let results = try vault.decrypt(ciphertexts: pending, context: options.boundContext)
                pending.removeAll(keepingCapacity: true)
                for (offset, result) in results.enumerated() {
                    let lineNumber = firstPendingLine + offset
                    let plaintext: String
                    switch result {
                    case .success(let opened): plaintext = opened
                    case .failure(let error): throw CLIFailure("line \(lineNumber): \(said(error))", status: .dataError)
                    }
                    guard !plaintext.utf8.contains(UInt8(ascii: "\n")) else {
                        throw CLIFailure(
                            "line \(lineNumber): the plaintext holds a newline, which --lines cannot show; decrypt it alone",
                            status: .dataError)
                    }
                    try output.writeLine(plaintext)
                }
            }
            try EncryptCommand.readLines(reader, beforeRead: decryptPending) { line in
                // A file with CRLF line ends: the CR is no part of a ciphertext (base64 never holds one).
                let end = line.last == UInt8(ascii: "\r") ? line.count - 1 : line.count
                if pending.isEmpty { firstPendingLine = reader.lineNumber }
                pending.append(String(decoding: UnsafeRawBufferPointer(rebasing: line[..<end]), as: UTF8.self))
            }
        } else {
            let given = ciphertext == "-" ? nil : ciphertext
            let input = try given ?? StandardInput.readText(fd: fd, what: "ciphertext", limit: InputLimits.ciphertext)
            // The format allows no whitespace in or around a ciphertext (docs/format.md); stdin's one
            // trailing newline, dropped by readText, is the only exception. Blanks around one get
            // their own words, as "not base64" would puzzle whoever pasted it.
            let scalars = input.unicodeScalars
            if scalars.contains(where: { !Self.isWhitespace($0) }),
                scalars.first.map(Self.isWhitespace) == true || scalars.last.map(Self.isWhitespace) == true
            {
                throw CLIFailure(
                    "the ciphertext has whitespace around it (a space, tab, CR or extra newline): a ciphertext is exactly "
                        + "its text, and only stdin's one trailing newline is dropped", status: .dataError)
            }
            if Vault.isShared(input) { return try openShared(input, vault: vault) }
            // The batch form says what is wrong with the value in its own words, as the command always has.
            try output.write(try vault.decrypt(ciphertexts: [input], context: options.boundContext)[0].get() + "\n")
        }
        try output.flush()
    }
}

extension DecryptCommand {
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace }
}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say whether encryption is possible with a key; exit 0 when it is, 1 when not.",
        discussion: """
            With --profile FILE, also check that the key's keys open every ciphertext in the user's profile \
            (with --schema, the fields it flags; without, every value that parses as a ciphertext), and exit 1 \
            naming the missing key when they do not: a device with another key than the user's data was sealed under.
            """)

    @Option(help: "The key id to check.", completion: .keyIDs) var key: String
    @OptionGroup var data: UserDataOptions
    @OptionGroup var keystoreOptions: KeystoreOptions

    func run() throws {
        let id = try keyID(key)
        let profile = try data.readProfile()
        let keystore = try keystoreOptions.openKeystore()
        let vault: Vault
        do {
            let passphrase = try keystoreOptions.passphrase(toUnlock: id, in: keystore)
            vault = Vault(keystore: keystore, user: id, format: .v1, passphrase: passphrase)
        } catch {
            throw CLIFailure("encryption is not possible for \(id.shown): \(said(error))", status: .negative)
        }
        let status = vault.encryptionStatus(existing: profile, schema: try data.readSchema())
        switch status {
        case .possible(let fingerprint):
            let entry = try keystore.entry(for: id)
            let retired = entry?.retiredFingerprints.count ?? 0
            print("encryption is possible for \(id.shown) in namespace '\(keystore.namespace)': key \(fingerprint)"
                + (entry?.isSealedToTPM == true
                    ? (entry?.isProtected == true ? ", sealed to the TPM with a PIN" : ", sealed to the TPM")
                    : entry?.isProtected == true ? ", passphrase-protected" : "")
                + (retired > 0 ? ", \(retired) retired" : "")
                + (profile != nil ? ", and it opens every ciphertext in the profile" : ""))
        case .notPossible(let error):
            let reason = SealKitCommand.suggestingNearID(for: error) ?? said(error)
            throw CLIFailure("encryption is not possible for \(id.shown): \(reason)", status: .negative)
        }
    }
}

/// The user's data, for the commands that check it before they act (`status`, `keys generate`).
struct UserDataOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("The user's profile as the server holds it: check its ciphertexts against the key.", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var profile: String?
    @Option(
        help: ArgumentHelp("The app schema: check only the fields it flags encrypted (needs --profile).", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var schema: String?

    func validate() throws {
        if schema != nil && profile == nil { throw ValidationError("--schema goes with --profile FILE") }
    }

    /// The profile, parsed; nil without --profile.
    func readProfile() throws -> String? {
        guard let profile else { return nil }
        let fd = try StandardInput.fileDescriptor(profile, what: "profile file")
        defer { if fd != 0 { close(fd) } }
        let bytes = try StandardInput.readAll(
            fd: fd, limit: InputLimits.profile, what: "the profile \(profile == "-" ? "on stdin" : profile)",
            advice: "give one profile's JSON")
        return try Vault.readProfile(bytes, named: "the profile \(profile)")
    }

    /// The schema, parsed; nil without --schema.
    func readSchema() throws -> ProfileSchema? {
        guard let schema else { return nil }
        let bytes = try ProfileOptions.readSchemaFile(schema)
        do {
            return try ProfileSchema(json: bytes)
        } catch {
            throw CLIFailure("\(schema): \(said(error))", status: .dataError)
        }
    }
}
