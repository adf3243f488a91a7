import ArgumentParser
import CProcessHardening
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// `sealkit`: field encryption and key transfer, wire-compatible with Rownd's SDKs.
///
/// Every failure prints one line, `sealkit: <what went wrong and what to do>`, on
/// stderr, nothing on stdout, and exits with a code below 126 (see `ExitStatus`).
@main
struct SealKitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sealkit",
        abstract: "End-to-end field encryption and key transfer, wire-compatible with Rownd's SDKs.",
        discussion: """
            Keys live in $SEALKIT_HOME, else $XDG_DATA_HOME/sealkit, else ~/.local/share/sealkit; with
            --keystore secret-service (or SEALKIT_KEYSTORE=secret-service), in the desktop keyring.
            Passphrases come from --passphrase-file, $SEALKIT_PASSPHRASE, or a prompt on a terminal.
            """,
        version: "sealkit \(sealkitVersion) (\(buildCommit))",
        subcommands: [
            KeysCommand.self, EncryptCommand.self, DecryptCommand.self, StatusCommand.self,
            ProfileCommand.self, TransferCommand.self, QRCommand.self, ScanCommand.self, AuditCommand.self,
            ContactsCommand.self, GroupsCommand.self,
        ])

    /// Parses and runs, turning every error into one line on stderr and an exit code.
    static func main() async {
        // Before anything holds a secret: no core file, no crash report printing memory.
        CrashGuard.install()
        // A closed pipe should end us with a message and a code, not a signal.
        signal(SIGPIPE, SIG_IGN)
        // Likewise a file-size limit (ulimit -f): write then fails with EFBIG, reported as one line.
        signal(SIGXFSZ, SIG_IGN)
        // Keep freed heap for the next block of --lines rather than hand the heap's top back to the kernel:
        // each block frees its lines' strings, which glibc's 128 KiB trim threshold returned and faulted in
        // again every block (encrypt --lines of 64-byte values: 5,136 page faults, 1,139 before 1.0).
        _ = sealkit_keep_freed_heap(64 << 20)
        do {
            try suggestSubcommand(for: Array(CommandLine.arguments.dropFirst()))
            var command = try parseAsRoot()
            // Network transfers are async (AsyncParsableCommand); every other command runs as it is.
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            fail(error)
        }
    }

    /// An unknown subcommand would reach the parser as a stray argument and be reported by its
    /// first option ("Unknown option '--key'"); name it and the nearest command instead.
    static func suggestSubcommand(for arguments: [String]) throws {
        var command: any ParsableCommand.Type = SealKitCommand.self
        var route = "sealkit"
        for argument in arguments {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, !argument.hasPrefix("-"), argument != "help" else { return }
            let name = { (type: any ParsableCommand.Type) in type.configuration.commandName ?? "" }
            if let match = subcommands.first(where: { name($0) == argument }) {
                command = match
                route += " " + argument
                continue
            }
            let known = subcommands.map(name)
            let nearest = SealKitError.nearest(to: argument, among: known)
            let hint = nearest.map { "did you mean '\($0)'?" } ?? "commands are " + known.joined(separator: ", ")
            throw CLIFailure(
                "'\(SealKitError.quoting(argument))' is not a \(route) command: \(hint) (see '\(route) --help')", status: .usage)
        }
    }

    /// The subcommand the arguments name, such as `sealkit keys restore`: where its help is.
    static func route(of arguments: [String]) -> String {
        var command: any ParsableCommand.Type = SealKitCommand.self
        var route = "sealkit"
        for argument in arguments {
            guard let match = command.configuration.subcommands.first(where: { $0.configuration.commandName == argument }) else { break }
            command = match
            route += " " + argument
        }
        return route
    }

    /// " (keystore: FOLDER)" for a key not found, so the person sees where SealKit looked.
    static func keystorePlace(for error: any Error) -> String {
        guard (error as? SealKitError)?.reason == .keyNotFound, let place = KeystoreOptions.opened else { return "" }
        return " (keystore: \(place))"
    }

    /// The library's "no key for ID" with the stored id nearest to ID suggested first, before the
    /// advice to make a key: `--key Ada` where `ada` is stored must not end in a second key for `ada`'s
    /// person. The same id in another case first, else the nearest within two edits; nil when none is near.
    static func suggestingNearID(for error: any Error) -> String? {
        guard let error = error as? SealKitError, error.reason == .keyNotFound, let id = error.keyID,
            let ids = try? KeystoreOptions.openedKeystore?.entries().map(\.id), !ids.isEmpty
        else { return nil }
        let near = ids.first { $0.rawValue.lowercased() == id.rawValue.lowercased() }
            ?? SealKitError.nearest(to: id.rawValue, among: ids.map(\.rawValue)).flatMap { try? KeyID($0) }
        guard let near, near != id else { return nil }
        let text = said(error)
        guard let advice = text.firstRange(of: ": make one with ") else { return text + "; did you mean \(near.shown)?" }
        return text[..<advice.lowerBound] + ": did you mean \(near.shown)? If not, make one with " + text[advice.upperBound...]
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
                message = (suggestingNearID(for: error) ?? said(error)) + keystorePlace(for: error)
            } else {
                // Help, version and argument errors: argument-parser knows what to print.
                let code = exitCode(for: error)
                if code == .success || error is CleanExit { exit(withError: error) }
                status = .usage
                let parserMessage = self.message(for: error)
                    .split(whereSeparator: \.isNewline).map { $0.trimmingBlanks() }
                    .filter { !$0.isEmpty }.joined(separator: "; ")
                message = parserMessage + " (see '\(route(of: Array(CommandLine.arguments.dropFirst()))) --help')"
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
    /// Try again later: another process holds the keystore's lock, or nobody joined a transfer in time.
    case temporaryFailure = 75
    /// The process crashed (a bug, or a signal sent from outside); see `CrashGuard`.
    case internalError = 70
    /// A passphrase is missing or wrong, or a file's permissions are unsafe.
    case noPermission = 77
    /// The mailbox relay cannot be reached, refused us, or dropped the connection; or the TPM cannot be reached.
    case unavailable = 69
    /// The peer is not a SealKit key transfer, or broke the protocol.
    case protocolError = 76
    /// Ctrl-C: the shell's convention for SIGINT, 128 + 2.
    case interrupted = 130

    /// The status for an error of the library's: every public call throws `SealKitError`. Nil for the others
    /// (argument-parser's), which say themselves how they end.
    init?(for error: any Error) {
        guard let error = error as? SealKitError else { return nil }
        self.init(error.reason)
    }

    /// The status for each reason a library call gives, as scripts have always seen it (`dataError` for a reason
    /// `listed(for:)` does not know).
    init(_ reason: SealKitError.Reason) { self = Self.listed(for: reason) ?? .dataError }

    /// The status listed for `reason`. `Reason` is open (a later library may add one), so this switch cannot be
    /// exhaustive: nil for a reason not listed, which the CLI's tests rule out for every reason of this library
    /// (`SealKitError.Reason.all`).
    static func listed(for reason: SealKitError.Reason) -> ExitStatus? {
        switch reason {
        case .invalidArgument, .tooLarge: return .usage
        case .keyNotFound, .missingInput: return .noInput
        case .keyExists, .conflictingKey, .keyElsewhere: return .conflict
        case .passphraseRequired, .wrongPassphrase, .unsafeFile, .keyringLocked: return .noPermission
        case .wrongPIN, .tpmLockout, .sealedToAnotherTPM: return .noPermission
        case .tpmUnavailable, .libraryUnavailable: return .unavailable
        case .keystoreBusy: return .temporaryFailure
        case .keyringUnavailable, .fileSystem: return .ioError
        case .damagedKey, .notCiphertext, .unsupportedFormat, .unknownKey, .wrongPlace, .notBound, .authenticationFailed,
            .invalidKeyText, .invalidJSON, .invalidSchema, .profileFields, .unreadableData, .invalidTransfer,
            .unreadableImage, .sealMissing, .sealMismatch, .sealRolledBack, .sealConflict:
            return .dataError
        case .relayUnavailable: return .unavailable
        case .protocolViolation: return .protocolError
        case .declined: return .negative
        case .keyNotInBackup, .incompleteBackup: return .noInput
        case .noKeys, .tooManyKeys, .passphraseTooShort, .invalidShareLayout: return .usage
        case .notABackup, .damagedBackup, .passphraseKDFFailed, .invalidShare, .mismatchedShares, .notEnoughShares,
            .sharesOfAnotherBackup:
            return .dataError
        case .wrongCode: return .noPermission
        case .timedOut: return .temporaryFailure
        case .cancelled: return .interrupted
        case .untrustedSender, .contactConflict, .groupRefused: return .dataError
        case .contactNotFound: return .noInput
        case .notAddressed, .notGroupCreator: return .noPermission
        default: return nil
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
