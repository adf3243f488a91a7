import ArgumentParser
import FoundationEssentials
import SealKit

/// Options every keystore-using command shares.
struct KeystoreOptions: ParsableArguments {
    @Option(help: "Keeps apps and environments apart (default: $SEALKIT_NAMESPACE, else 'default').")
    var namespace: String?

    @Option(help: ArgumentHelp("Read the passphrase from this file (first line).", valueName: "path"), completion: .file())
    var passphraseFile: String?

    /// The keystore at the configured root and namespace.
    func keystore() throws -> FileKeystore { try Self.keystore(namespace: namespace) }

    /// The keystore at the configured root, in `namespace`, else `$SEALKIT_NAMESPACE`, else `default`.
    static func keystore(namespace: String?) throws -> FileKeystore {
        let environment = ProcessInfo.processInfo.environment
        guard let root = FileKeystore.defaultRoot(environment: environment) else {
            throw CLIFailure("cannot find a place for keys: set SEALKIT_HOME or HOME", status: .usage)
        }
        let name = namespace ?? environment["SEALKIT_NAMESPACE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        return FileKeystore(root: root, namespace: try Namespace(name))
    }

    /// A passphrase given without asking: `--passphrase-file`, else `$SEALKIT_PASSPHRASE`.
    func givenPassphrase() throws -> Passphrase? {
        if let passphraseFile {
            guard var bytes = FileManager.default.contents(atPath: passphraseFile).map(Array.init) else {
                throw CLIFailure("cannot read the passphrase file \(passphraseFile): check the path", status: .noInput)
            }
            defer { ConstantTime.wipe(&bytes) }
            // The first line is the passphrase, so files written by `echo` work.
            let firstLine = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
            var line = Array(firstLine)
            defer { ConstantTime.wipe(&line) }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            do {
                return try Passphrase(bytes: line)
            } catch {
                throw CLIFailure("the passphrase file \(passphraseFile) is empty: write the passphrase on its first line", status: .usage)
            }
        }
        if let text = ProcessInfo.processInfo.environment["SEALKIT_PASSPHRASE"], !text.isEmpty {
            return try Passphrase(text)
        }
        return nil
    }

    /// The passphrase for unlocking `id`: none when its keys are not protected, else the
    /// given one, else a prompt on the terminal.
    func passphrase(toUnlock id: KeyID, in keystore: some Keystore) throws -> Passphrase? {
        guard let entry = try keystore.entry(for: id), entry.isProtected else { return nil }
        if let given = try givenPassphrase() { return given }
        return try TerminalPrompt.passphrase("Passphrase for key '\(id)': ") ?? { throw KeystoreError.locked(id) }()
    }

    /// The passphrase for protecting new keys: the given one, else (with `ask`) one typed twice.
    func passphrase(toProtect ask: Bool) throws -> Passphrase? {
        // Read once: a pipe or process substitution (--passphrase-file <(...)) is empty the second time.
        if let given = try givenPassphrase() { return given }
        guard ask else { return nil }
        return try newPassphrase(
            prompt: "New passphrase: ", missing: "--protect needs a passphrase", abandoned: "nothing was stored")
    }

    /// A passphrase for something new (a protected key, a backup): the given one, else one
    /// typed twice on the terminal, so a typo cannot lock the owner out.
    /// - Parameters:
    ///   - prompt: what to ask, such as "Backup passphrase: ".
    ///   - missing: the start of the error when there is no passphrase and no terminal.
    ///   - abandoned: what the mismatch error says was not done.
    func newPassphrase(prompt: String, missing: String, abandoned: String) throws -> Passphrase {
        if let given = try givenPassphrase() { return given }
        guard let first = try TerminalPrompt.passphrase(prompt) else {
            throw CLIFailure(
                "\(missing): set SEALKIT_PASSPHRASE, use --passphrase-file, or run on a terminal", status: .usage)
        }
        guard let second = try TerminalPrompt.passphrase("Repeat " + prompt.prefix(1).lowercased() + prompt.dropFirst()),
            ConstantTime.equals(first.storage, second.storage)
        else { throw CLIFailure("the passphrases do not match: \(abandoned)", status: .usage) }
        return first
    }
}

/// Parses a key id argument.
func keyID(_ text: String) throws -> KeyID { try KeyID(text) }
