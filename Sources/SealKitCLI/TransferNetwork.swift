import Dispatch
import FoundationEssentials
import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// The network way of `transfer send` and `transfer receive`: a code, a PAKE and a
/// magic-wormhole mailbox relay (NetworkTransfer does the work; this file handles the terminal).
enum TransferNetwork {
    /// Seconds a transfer waits for the other side by default.
    static let defaultTimeout = 600

    /// `--relay`, else `SEALKIT_RELAY`, else the public magic-wormhole relay.
    static func relay(_ option: String?) throws -> RelayURL {
        if let option { return try RelayURL(option) }
        var environment: [String: String] = [:]
        if let value = getenv("SEALKIT_RELAY") { environment["SEALKIT_RELAY"] = String(cString: value) }
        return try NetworkTransfer.defaultRelay(environment: environment)
    }

    /// Receives keys: shows the code (stdout's first line with `text`), waits for the sender,
    /// asks on a terminal, stores, confirms to the sender, and prints one line per id.
    static func receive(
        relay: RelayURL, timeout: Int, format: TransferFormat, assumeYes: Bool, protect: Bool,
        keystoreOptions: KeystoreOptions
    ) throws {
        let keystore = try keystoreOptions.keystore()
        let interrupts = InterruptHandler()
        let receiver = try NetworkKeyReceiver(relay: relay, timeout: timeout)
        interrupts.arm(cancel: receiver.abandon)
        let code = receiver.code.revealedText
        switch format {
        case .text:
            let output = StandardOutput()
            try output.write(code + "\n")
            try output.flush()
        case .qr:
            StandardError.write("On the sending device, run: sealkit transfer send ID (or --all) and type this code, or scan it (--code-qr):\n")
            // The QR holds the code and the relay, in magic-wormhole's URI form under SealKit's scheme.
            TransferDisplay.showQR(TransferURI.make(code: code, relay: relay))
            StandardError.write(code + "\n")
        }
        progress("Waiting for the sender (up to \(timeout) seconds; Ctrl-C cancels)...\n")

        let keys = try receiver.receiveKeys()
        if StandardError.isTerminal { TransferDisplay.describe(keys, "Received") }
        if StandardInput.isTerminal && StandardError.isTerminal && !assumeYes {
            guard try TerminalPrompt.confirm("Check that the sender shows the same fingerprints. Store these keys? [y/N] ") else {
                receiver.answer(.refused(.declined))
                throw CLIFailure("nothing was stored", status: .negative)
            }
        }
        let outcomes: [StoreOutcome]
        do {
            let passphrase = try keystoreOptions.passphrase(forStoring: keys.map(\.id), protect: protect, in: keystore)
            // From here on Ctrl-C waits: the keystore is being written.
            interrupts.disarm()
            outcomes = try keystore.storeAll(keys, passphrase: passphrase)
        } catch let error as KeystoreError {
            if case .conflictingKey = error { receiver.answer(.refused(.conflict)) } else { receiver.answer(.refused(.failed)) }
            throw error
        } catch {
            receiver.answer(.refused(.failed))
            throw error
        }
        receiver.answer(.stored)
        let output = StandardOutput()
        for (history, outcome) in zip(keys, outcomes) {
            try output.write("\(history.id)\t\(history.current.fingerprint)\t\(outcome == .stored ? "imported" : "unchanged")\n")
        }
        try output.flush()
    }

    /// Sends keys to the receiver whose code is given (or asked for on a terminal), and returns
    /// once the receiver confirmed that it stored them.
    static func send(
        _ histories: [KeyHistory], code codeOption: String?, relay: RelayURL, timeout: Int
    ) throws {
        let code = try codeOption.map(CodeEntry.parse(given:)) ?? askForCode()
        let interrupts = InterruptHandler()
        let sender = try NetworkKeySender(relay: relay, code: code, timeout: timeout)
        interrupts.arm(cancel: sender.abandon) {
            // Once the keys went out, "cancelled" would be untrue: the receiver may still store them.
            sender.hasSentKeys
                ? "interrupted: the keys were already sent, so the receiver may still store them; its code was released" : nil
        }
        if StandardError.isTerminal { TransferDisplay.describe(histories, "Sending") }
        progress("Waiting for the receiver to confirm...\n")
        try sender.send(histories)
        interrupts.disarm()
        let count = histories.count
        progress("The receiver stored \(count == 1 ? "the key" : "all \(count) ids' keys").\n")
    }

    /// Progress for a person at a terminal; scripts see only the contract lines, and a failure
    /// stays one line on stderr.
    private static func progress(_ text: String) {
        if StandardError.isTerminal { StandardError.write(text) }
    }

    /// Asks for the code on the terminal (prompt on stderr, answer from the tty).
    /// Tab completes the words; one mistyped word is offered for correction before anything is sent.
    private static func askForCode() throws -> WormholeCode {
        guard StandardInput.isTerminal, let code = try CodeEntry.ask("Enter the code the receiving device shows (such as 7-guitarist-revenge): ")
        else {
            throw CLIFailure("give the receiver's code with --code CODE (such as 7-guitarist-revenge)", status: .usage)
        }
        return code
    }
}

/// Ctrl-C during a network transfer: release the nameplate, close the mailbox, exit 130,
/// with nothing stored. Disarmed while the keystore is written, so a store is never cut short.
///
/// `@unchecked Sendable`: `cancel`, `message` and `armed` are read and written under `lock`; the signal
/// source is swift-dispatch's, which is thread-safe.
final class InterruptHandler: @unchecked Sendable {
    private let lock = Lock()
    private var cancel: (@Sendable () -> Void)?
    private var message: (@Sendable () -> String?)?
    private var armed = true
    private let source: DispatchSourceSignal

    init() {
        // The default action would kill us before the relay hears anything: take SIGINT here.
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [self] in fire() }
        source.resume()
    }

    /// From now on an interrupt runs `cancel` before exiting, and says `message()` when that
    /// gives one (else that the transfer was cancelled).
    func arm(cancel: @escaping @Sendable () -> Void, message: (@Sendable () -> String?)? = nil) {
        lock.withLock {
            self.cancel = cancel
            self.message = message
            armed = true
        }
    }

    /// Interrupts are ignored from now on.
    func disarm() { lock.withLock { armed = false } }

    private func fire() {
        let action: (@Sendable () -> Void)?? = lock.withLock { armed ? .some(cancel) : .none }
        guard let action else { return }
        let text = lock.withLock { message }?() ?? "\(MailboxError.interrupted)"
        action?()
        StandardError.write("sealkit: \(text)\n")
        Glibc.exit(ExitStatus.interrupted.rawValue)
    }
}

extension ExitStatus {
    init(_ error: MailboxError) {
        switch error {
        case .badRelay, .badCode: self = .usage
        case .unreachable, .unwelcome, .server, .connectionLost, .flooded: self = .unavailable
        case .timedOut: self = .temporaryFailure
        case .wrongCode: self = .noPermission
        case .notSealKit, .protocolViolation, .messageTooLarge: self = .protocolError
        case .interrupted: self = .interrupted
        }
    }
}
