import ArgumentParser
import FoundationEssentials
import SealKit

/// Options every keystore-using command shares.
struct KeystoreOptions: ParsableArguments {
    @Option(help: "Keeps apps and environments apart (default: $SEALKIT_NAMESPACE, else 'default').")
    var namespace: String?

    @Option(help: ArgumentHelp("Read the passphrase from this file (first line).", valueName: "path"))
    var passphraseFile: String?

    @Option(
        name: .customLong("keystore"),
        help: ArgumentHelp(
            "Where keys live: 'file' or 'secret-service' (the desktop keyring) (default: $SEALKIT_KEYSTORE, else 'file').",
            valueName: "kind"))
    var backend: KeystoreBackend?

    /// The keystore chosen with `--keystore` or `$SEALKIT_KEYSTORE`, at the configured namespace.
    func keystore() throws -> any Keystore { try keystore(chosenBackend()) }

    /// `--keystore`, else `$SEALKIT_KEYSTORE`, else the file keystore.
    func chosenBackend() throws -> KeystoreBackend {
        if let backend { return backend }
        guard let name = ProcessInfo.processInfo.environment["SEALKIT_KEYSTORE"], !name.isEmpty else { return .file }
        guard let chosen = KeystoreBackend(rawValue: name) else {
            throw CLIFailure("SEALKIT_KEYSTORE must be 'file' or 'secret-service', not '\(name)'", status: .usage)
        }
        return chosen
    }

    /// The keystore of kind `backend` at the configured namespace (and root, for files).
    func keystore(_ backend: KeystoreBackend) throws -> any Keystore {
        let environment = ProcessInfo.processInfo.environment
        let name = namespace ?? environment["SEALKIT_NAMESPACE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        switch backend {
        case .secretService:
            // How long one call to the keyring may take: a keyring waiting on an unlock prompt
            // must not hang a script.
            var timeout = Duration.seconds(10)
            if let text = environment["SEALKIT_KEYRING_TIMEOUT"], !text.isEmpty {
                guard let seconds = Int(text), (1...600).contains(seconds) else {
                    throw CLIFailure("SEALKIT_KEYRING_TIMEOUT must be a whole number of seconds from 1 to 600", status: .usage)
                }
                timeout = .seconds(seconds)
            }
            return SecretServiceKeystore(namespace: try Namespace(name), timeout: timeout, environment: environment)
        case .file:
            guard let root = FileKeystore.defaultRoot(environment: environment) else {
                throw CLIFailure("cannot find a place for keys: set SEALKIT_HOME or HOME", status: .usage)
            }
            return FileKeystore(root: root, namespace: try Namespace(name))
        }
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
        return try passphrase(toUnlockProtected: id)
    }

    /// The passphrase for keys known to be protected: the given one, else a prompt.
    func passphrase(toUnlockProtected id: KeyID) throws -> Passphrase {
        if let given = try givenPassphrase() { return given }
        return try TerminalPrompt.passphrase("Passphrase for key '\(id)': ") ?? { throw KeystoreError.locked(id) }()
    }

    /// The passphrase for protecting new keys: the given one, else (with `ask`) one typed twice.
    func passphrase(toProtect ask: Bool) throws -> Passphrase? {
        if !ask, try givenPassphrase() == nil { return nil }
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

/// The keystores `--keystore` chooses between.
enum KeystoreBackend: String, ExpressibleByArgument, CaseIterable {
    /// 0600 files under $SEALKIT_HOME: the default.
    case file
    /// The freedesktop Secret Service (GNOME Keyring, KWallet) through libsecret.
    case secretService = "secret-service"
}

/// Parses a key id argument.
func keyID(_ text: String) throws -> KeyID { try KeyID(text) }
