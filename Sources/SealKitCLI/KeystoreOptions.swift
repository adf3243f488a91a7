import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit
import SealKitTPM

#if canImport(Glibc)
import Glibc
#endif

/// Options every keystore-using command shares.
struct KeystoreOptions: ParsableArguments {
    @Option(help: "Keeps apps and environments apart (default: $SEALKIT_NAMESPACE, else 'default').")
    var namespace: String?

    @Option(help: ArgumentHelp(
        "Read the passphrase from this file (first line); pipes, FIFOs and /dev/fd/N work.", valueName: "path"),
        completion: .file())
    var passphraseFile: String?

    @Option(
        name: .customLong("keystore"),
        help: ArgumentHelp(
            "Where keys live: 'file' or 'secret-service' (the desktop keyring) (default: $SEALKIT_KEYSTORE, else 'file').",
            valueName: "kind"))
    var backend: KeystoreBackend?

    /// The keystore chosen with `--keystore` or `$SEALKIT_KEYSTORE`, at the configured namespace.
    func openKeystore() throws -> Keystore { try Self.openKeystore(chosenBackend(), namespace: namespace) }

    /// The keystore of kind `backend` at the configured namespace (and root, for files).
    func openKeystore(_ backend: KeystoreBackend) throws -> Keystore { try Self.openKeystore(backend, namespace: namespace) }

    /// `--keystore`, else `$SEALKIT_KEYSTORE`, else the file keystore.
    func chosenBackend() throws -> KeystoreBackend {
        try backend ?? Self.backendFromEnvironment()
    }

    /// `$SEALKIT_KEYSTORE`, else the file keystore.
    static func backendFromEnvironment() throws -> KeystoreBackend {
        guard let name = ProcessInfo.processInfo.environment["SEALKIT_KEYSTORE"], !name.isEmpty else { return .file }
        guard let chosen = KeystoreBackend(rawValue: name) else {
            throw CLIFailure("SEALKIT_KEYSTORE must be 'file' or 'secret-service', not '\(name)'", status: .usage)
        }
        return chosen
    }

    /// The keystore of kind `backend` in `namespace`, else `$SEALKIT_NAMESPACE`, else `default`. A file
    /// keystore waits `$SEALKIT_LOCK_TIMEOUT` seconds (default 10) for another process's lock; the keyring
    /// waits `$SEALKIT_KEYRING_TIMEOUT` seconds (default 10) for an answer.
    /// Where the keystore opened last lives (its folder, or the keyring), for errors that name it.
    /// The CLI opens keystores on its main thread only.
    nonisolated(unsafe) static var opened: String?
    /// The keystore opened last, for the ids a "did you mean" chooses from.
    nonisolated(unsafe) static var openedKeystore: Keystore?
    /// Whether file keystores opened from now on seal the ids they create to the TPM (`--tpm`).
    nonisolated(unsafe) static var sealNewKeysToTPM = false

    static func openKeystore(_ backend: KeystoreBackend, namespace: String?) throws -> Keystore {
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
            #if os(Linux)
            let keystore = try Keystore.secretService(namespace: name, timeout: timeout)
            opened = keystore.location
            openedKeystore = keystore
            return keystore
            #else
            throw CLIFailure("the desktop keyring (Secret Service) is a Linux keystore: use --keystore file here", status: .usage)
            #endif
        case .file:
            guard let root = Self.defaultRoot(environment: environment) else {
                throw CLIFailure("cannot find a place for keys: set SEALKIT_HOME or HOME", status: .usage)
            }
            var lockTimeout = Duration.seconds(10)
            if let text = environment["SEALKIT_LOCK_TIMEOUT"], !text.isEmpty {
                guard let seconds = Double(text), seconds.isFinite, (0...86_400).contains(seconds) else {
                    throw CLIFailure("SEALKIT_LOCK_TIMEOUT must be a number of seconds from 0 to 86400", status: .usage)
                }
                lockTimeout = .milliseconds(Int64((seconds * 1000).rounded()))
            }
            // Keys sealed to the TPM open through `$SEALKIT_TPM_TCTI` (default device:/dev/tpmrm0); nothing
            // connects to it unless such a key is used.
            let keystore = try Keystore(directory: root, namespace: name, lockTimeout: lockTimeout)
                .using(try Self.tpm(), sealingNewKeys: sealNewKeysToTPM)
            opened = keystore.location
            openedKeystore = keystore
            return keystore
        }
    }

    /// The TPM `$SEALKIT_TPM_TCTI` names, else the machine's, with each call bounded by `$SEALKIT_TPM_TIMEOUT`
    /// (whole seconds, 30 by default).
    /// - Throws: a usage error for a TCTI that is not one tpm2-tss names (a TCTI is a library loaded into this
    ///   process: a path, or the `cmd` TCTI, would run code the environment chose), for `device:` naming
    ///   something other than a character device (tpm2-tss would write TPM commands into a regular file),
    ///   or a timeout out of range.
    static func tpm() throws -> TPM {
        let environment = ProcessInfo.processInfo.environment
        var tpm = TPM()
        if let tcti = environment["SEALKIT_TPM_TCTI"], !tcti.isEmpty {
            guard TPM.isNamedTCTI(tcti) else {
                throw CLIFailure(
                    "SEALKIT_TPM_TCTI must name a TCTI tpm2-tss documents, with its configuration after ':' "
                        + "(device:/dev/tpmrm0, swtpm:host=127.0.0.1,port=2321, mssim:..., tabrmd:...), not a library path or another TCTI",
                    status: .usage)
            }
            if let problem = TPM.deviceProblem(tcti) {
                throw CLIFailure("SEALKIT_TPM_TCTI names a device that is not one: \(problem)", status: .usage)
            }
            tpm = TPM(tcti: tcti)
        }
        if let text = environment["SEALKIT_TPM_TIMEOUT"], !text.isEmpty {
            guard let seconds = Int(text), (1...600).contains(seconds) else {
                throw CLIFailure("SEALKIT_TPM_TIMEOUT must be a whole number of seconds from 1 to 600", status: .usage)
            }
            tpm.timeout = .seconds(seconds)
        }
        return tpm
    }

    /// `$SEALKIT_HOME`, else `$XDG_DATA_HOME/sealkit`, else `$HOME/.local/share/sealkit`.
    static func defaultRoot(environment: [String: String]) -> String? {
        if let home = environment["SEALKIT_HOME"], !home.isEmpty { return home }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/sealkit" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.local/share/sealkit" }
        return nil
    }

    /// A passphrase given without asking: `--passphrase-file`, else `$SEALKIT_PASSPHRASE`.
    /// - Throws: for an empty passphrase from either source, which would otherwise
    ///   silently mean "no passphrase".
    func givenPassphrase() throws -> Passphrase? {
        if let passphraseFile { return try Self.readPassphrase(from: passphraseFile, option: "--passphrase-file") }
        if let text = ProcessInfo.processInfo.environment["SEALKIT_PASSPHRASE"] {
            guard !text.isEmpty else {
                throw CLIFailure(
                    "SEALKIT_PASSPHRASE is set but empty: set it to the passphrase, or unset it to be asked on the terminal",
                    status: .usage)
            }
            return try Passphrase(text)
        }
        return nil
    }

    /// The longest passphrase file line read: a passphrase is short, and a pipe that never
    /// ends (or /dev/zero) must not make us read forever.
    static let passphraseFileLimit = 4096

    /// The first line of `path`, read with a bounded number of bytes: regular files, pipes,
    /// FIFOs and `/dev/fd/N` (a shell's process substitution) alike.
    static func readPassphrase(from path: String, option: String) throws -> Passphrase {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CLIFailure(
                "cannot read the passphrase file \(path): \(String(cString: strerror(errno)).lowercased()); check the path",
                status: .noInput)
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw CLIFailure("cannot read the passphrase file \(path): it is a folder; give the file holding the passphrase", status: .noInput)
        }
        // One buffer, never grown, so no unwiped copy of the passphrase is left behind.
        var bytes = [UInt8](repeating: 0, count: passphraseFileLimit + 1)
        defer { wipe(&bytes) }
        var filled = 0
        while filled < bytes.count, !bytes[..<filled].contains(UInt8(ascii: "\n")) {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw CLIFailure("cannot read the passphrase file \(path): \(String(cString: strerror(errno)).lowercased())", status: .ioError)
            }
            if count == 0 { break }
            filled += count
        }
        // The first line is the passphrase, so files written by `echo` work.
        var end = bytes[..<filled].firstIndex(of: UInt8(ascii: "\n")) ?? filled
        guard end <= passphraseFileLimit else {
            throw CLIFailure(
                "the first line of the passphrase file \(path) is longer than \(passphraseFileLimit) bytes: write only the passphrase on it",
                status: .dataError)
        }
        if end > 0 && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end > 0 else {
            throw CLIFailure("the passphrase file \(path) is empty: write the passphrase on its first line (\(option))", status: .usage)
        }
        return try bytes.withUnsafeBytes { try Passphrase(utf8: UnsafeRawBufferPointer(rebasing: $0[..<end])) }
    }

    /// The passphrase for unlocking `id`: none when its keys are not protected, else the
    /// given one, else a prompt on the terminal, which allows three tries.
    func passphrase(toUnlock id: KeyID, in keystore: Keystore) throws -> Passphrase? {
        guard let entry = try keystore.entry(for: id), entry.isProtected else { return nil }
        return try passphrase(toUnlockProtected: id, in: keystore)
    }


    /// The passphrase for keys known to be protected: the given one, else a prompt, which allows
    /// three tries, each checked against the keys in `keystore`.
    func passphrase(toUnlockProtected id: KeyID, in keystore: Keystore) throws -> Passphrase {
        if let given = try givenPassphrase() { return given }
        var refusal: SealKitError?
        let isPIN = (try? keystore.entry(for: id))??.isSealedToTPM == true
        // Every wrong PIN counts toward the TPM's lockout of every key with a PIN: offer fewer than it has left.
        let tries = isPIN ? try keystore.pinPromptTries(for: id, atMost: Self.tries) : Self.tries
        for attempt in 1...tries {
            let left = tries - attempt + 1
            if isPIN && (attempt > 1 || left == 1) {
                let count = left == 1 ? "1 try left" : "\(left) tries left"
                TerminalPrompt.say(attempt > 1 ? "Wrong PIN, try again (\(count))." : "\(count) before the TPM locks out PINs.")
            }
            guard let typed = try Self.ask("\(isPIN ? "TPM PIN" : "Passphrase") for key \(id.shown): ") else {
                // No terminal: the keys' own refusal says how to give the passphrase.
                if attempt == 1 {
                    throw Self.failure(unlocking: id, in: keystore, with: nil)
                        ?? CLIFailure("key \(id.shown) needs a passphrase and none was given", status: .noPermission)
                }
                continue
            }
            guard let error = Self.failure(unlocking: id, in: keystore, with: typed) else { return typed }
            guard error.reason == .wrongPassphrase || error.reason == .wrongPIN else { throw error }
            refusal = error
            if attempt < tries && !isPIN { TerminalPrompt.say("Wrong passphrase, try again.") }
        }
        throw refusal ?? CLIFailure("wrong passphrase for key \(id.shown): nothing was changed", status: .noPermission)
    }

    /// Why `passphrase` does not unlock `id`'s keys; nil when it does.
    static func failure(unlocking id: KeyID, in keystore: Keystore, with passphrase: Passphrase?) -> SealKitError? {
        if case .notPossible(let error) = Vault(keystore: keystore, user: id, format: .v1, passphrase: passphrase).encryptionStatus() {
            return error
        }
        return nil
    }

    /// The passphrase for protecting new keys: the given one, else (with `ask`) one typed twice.
    func passphrase(toProtect ask: Bool) throws -> Passphrase? {
        // Read once: a pipe or process substitution (--passphrase-file <(...)) is empty the second time.
        if let given = try givenPassphrase() { return given }
        guard ask else { return nil }
        // With --tpm the secret asked for is the TPM PIN (--tpm-pin), and the prompt says so.
        if Self.sealNewKeysToTPM {
            return try newPassphrase(prompt: "New TPM PIN: ", missing: "--tpm-pin needs a PIN", abandoned: "nothing was stored")
        }
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
        return try Self.askTwice(
            prompt: prompt,
            missing: "\(missing): set SEALKIT_PASSPHRASE, use --passphrase-file, or run on a terminal", abandoned: abandoned)
    }

    /// How many times a terminal prompt may be answered wrongly (empty, mismatched, wrong).
    static let tries = 3

    /// One prompt on the terminal; an empty answer is refused and asked again.
    /// - Returns: nil when there is no terminal.
    static func ask(_ prompt: String) throws -> Passphrase? {
        for attempt in 1...tries {
            do {
                return try TerminalPrompt.passphrase(prompt)
            } catch let error as SealKitError where error.reason == .invalidArgument {
                if attempt == tries { throw error }
                TerminalPrompt.say("The passphrase is empty, try again.")
            }
        }
        return nil
    }

    /// A new passphrase typed twice on the terminal, with three tries to type it the same twice.
    static func askTwice(prompt: String, missing: String, abandoned: String) throws -> Passphrase {
        for attempt in 1...tries {
            guard let first = try ask(prompt) else { throw CLIFailure(missing, status: .usage) }
            let again = "Repeat " + prompt.prefix(1).lowercased() + prompt.dropFirst()
            if let second = try ask(again), first == second { return first }
            if attempt < tries { TerminalPrompt.say("The passphrases do not match, try again.") }
        }
        throw CLIFailure("the passphrases do not match: \(abandoned)", status: .usage)
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

extension KeystoreOptions {
    /// The ids named, or with `all` every id in the namespace: what a backup or transfer carries.
    func idsToExport(_ names: [String], all: Bool, in keystore: Keystore) throws -> [KeyID] {
        let ids = all ? try keystore.entries().map(\.id) : try names.map(keyID)
        guard !ids.isEmpty else { throw CLIFailure("no keys to send: name key ids, or use --all", status: .usage) }
        guard Set(ids).count == ids.count else { throw ValidationError("each key id may be given once") }
        return ids
    }

    /// The ids' keys with their history, unlocked with one passphrase (given, or asked once).
    func exportKeys(_ ids: [KeyID], from keystore: Keystore) throws -> [KeyHistory] {
        let protected = try ids.filter { try keystore.entry(for: $0)?.isProtected == true }
        var passphrase: Passphrase?
        if let first = protected.first {
            passphrase = try givenPassphrase()
            if passphrase == nil {
                // One try, and only while the TPM takes more than one more wrong PIN for any id sealed with one.
                for id in protected { _ = try keystore.pinPromptTries(for: id, atMost: 1) }
                passphrase = try TerminalPrompt.passphrase(
                    protected.count == 1
                        ? "\(try keystore.entry(for: first)?.isSealedToTPM == true ? "TPM PIN" : "Passphrase") for key '\(first)': "
                        : "Passphrase for the protected keys: ")
            }
            if passphrase == nil {
                throw Self.failure(unlocking: first, in: keystore, with: nil)
                    ?? CLIFailure("key '\(first)' needs a passphrase and none was given", status: .noPermission)
            }
        }
        return try keystore.exportKeys(ids, passphrase: passphrase)
    }

    /// One passphrase for storing received or restored keys: it unlocks ids already stored and
    /// protected, and protects new ids (as `keys import` does). With `protect`, an id already
    /// stored without a passphrase is refused before anything is stored: --protect never leaves
    /// keys unprotected while saying otherwise.
    func passphrase(forStoring ids: [KeyID], protect: Bool, in keystore: Keystore) throws -> Passphrase? {
        try Self.checkSealingToTPM(ids, in: keystore)
        if protect, let unprotected = try ids.first(where: { try keystore.entry(for: $0)?.isProtected == false }) {
            throw protectExisting(unprotected)
        }
        if let locked = try ids.first(where: { try keystore.entry(for: $0)?.isProtected == true }) {
            return try passphrase(toUnlock: locked, in: keystore)
        }
        return try passphrase(toProtect: protect)
    }
}
