import ArgumentParser
import FoundationEssentials
import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// `sealkit`: field encryption and key transfer, wire-compatible with Rownd's SDKs.
///
/// Every failure prints one line, `sealkit: <what went wrong and what to do>`, on
/// stderr, nothing on stdout, and exits with a code below 126 (see `ExitStatus`).
@main
struct SealKitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sealkit",
        abstract: "End-to-end field encryption and key transfer, wire-compatible with Rownd's SDKs.",
        discussion: """
            Keys live in $SEALKIT_HOME, else $XDG_DATA_HOME/sealkit, else ~/.local/share/sealkit.
            Passphrases come from --passphrase-file, $SEALKIT_PASSPHRASE, or a prompt on a terminal.
            """,
        version: "0.1.0",
        subcommands: [
            KeysCommand.self, EncryptCommand.self, DecryptCommand.self, StatusCommand.self,
            ProfileCommand.self, TransferCommand.self, QRCommand.self, AuditCommand.self,
        ])

    /// Parses and runs, turning every error into one line on stderr and an exit code.
    static func main() {
        // Before anything holds a secret: no core file, no crash report printing memory.
        CrashGuard.install()
        // A closed pipe should end us with a message and a code, not a signal.
        signal(SIGPIPE, SIG_IGN)
        // Likewise a file-size limit (ulimit -f): write then fails with EFBIG, reported as one line.
        signal(SIGXFSZ, SIG_IGN)
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            fail(error)
        }
    }

    static func fail(_ error: any Error) -> Never {
        let status: ExitStatus
        let message: String
        switch error {
        case let failure as CLIFailure:
            status = failure.status
            message = failure.message
        default:
            if let mapped = ExitStatus(for: error) {
                status = mapped
                message = String(describing: error)
            } else {
                // Help, version and argument errors: argument-parser knows what to print.
                let code = exitCode(for: error)
                if code == .success || error is CleanExit { exit(withError: error) }
                status = .usage
                let parserMessage = self.message(for: error)
                    .split(whereSeparator: \.isNewline).map { $0.trimmingBlanks() }
                    .filter { !$0.isEmpty }.joined(separator: "; ")
                message = parserMessage + " (see 'sealkit --help')"
            }
        }
        StandardError.write("sealkit: " + message.replacing("\n", with: " ") + "\n")
        Glibc.exit(status.rawValue)
    }
}

/// Exit codes, after BSD sysexits, so scripts can tell failures apart.
enum ExitStatus: Int32 {
    /// The operation ran and said no: `status` when encryption is not possible, `audit` with findings.
    case negative = 1
    /// Bad arguments, ids or options.
    case usage = 64
    /// Input that is not what it should be: not base64, tampered, bad JSON, bad key text.
    case dataError = 65
    /// A key or file that does not exist.
    case noInput = 66
    /// A key that exists already, or conflicts with the one given.
    case conflict = 73
    /// Reading or writing failed.
    case ioError = 74
    /// The process crashed (a bug, or a signal sent from outside); see `CrashGuard`.
    case internalError = 70
    /// A passphrase is missing or wrong, or a file's permissions are unsafe.
    case noPermission = 77

    init?(for error: any Error) {
        switch error {
        case is KeyIDError, is NamespaceError, is PassphraseError: self = .usage
        case is CiphertextError, is KeyFormatError, is KeyTextError, is KeyHistoryError, is QRCodeError: self = .dataError
        case let error as TransferError: self.init(error)
        case let error as KeystoreError: self.init(error)
        case let error as VaultError:
            switch error {
            case .noUser: self = .usage
            case .keystore(let inner): self.init(inner)
            case .ciphertext, .profile: self = .dataError
            }
        default: return nil
        }
    }

    init(_ error: TransferError) {
        switch error {
        case .wrongPassphrase: self = .noPermission
        case .notInBackup, .noInput: self = .noInput
        case .badLifetime, .nothingToSend, .tooLarge: self = .usage
        default: self = .dataError
        }
    }

    init(_ error: KeystoreError) {
        switch error {
        case .notFound: self = .noInput
        case .alreadyExists, .conflictingKey: self = .conflict
        case .locked, .wrongPassphrase, .insecurePermissions: self = .noPermission
        case .damagedKeyFile: self = .dataError
        case .fileSystem: self = .ioError
        }
    }
}

/// An error the CLI itself raises, with its message and exit status.
struct CLIFailure: Error {
    let message: String
    let status: ExitStatus

    init(_ message: String, status: ExitStatus = .dataError) {
        self.message = message
        self.status = status
    }
}
