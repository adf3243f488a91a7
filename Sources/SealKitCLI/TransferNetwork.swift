import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// The network way of `transfer send` and `transfer receive`: a code, a PAKE and a
/// magic-wormhole mailbox relay (SealKitTransfer's KeyReceiver and KeySender do the work; this file handles the terminal).
enum TransferNetwork {
    /// Seconds a transfer waits for the other side by default.
    static let defaultTimeout = 600

    /// `--relay`, else `SEALKIT_RELAY`, else the public magic-wormhole relay; an address without a
    /// path gets the mailbox endpoint `/v1`, as in a `sealkit-transfer:` URI.
    /// The library reads no environment variable; the command does.
    static func relay(_ option: String?) throws -> Relay {
        if let option { return try Relay(option) }
        guard let value = getenv("SEALKIT_RELAY"), value.pointee != 0 else { return .public }
        do {
            return try Relay(String(cString: value))
        } catch {
            // Name where the address came from: the person may not know the variable is set.
            throw CLIFailure("SEALKIT_RELAY: \(error) (or give --relay URL)", status: ExitStatus(error.reason))
        }
    }

    /// Receives keys: shows the code (stdout's first line with `text`), waits for the sender,
    /// asks on a terminal, stores, confirms to the sender, and prints one line per id.
    static func receive(
        relay: Relay, timeout: Int, format: TransferFormat, assumeYes: Bool, protect: Bool,
        keystoreOptions: KeystoreOptions
    ) async throws {
        let keystore = try keystoreOptions.openKeystore()
        let interrupts = InterruptHandler()
        let receiver = try await KeyReceiver(relay: relay, timeout: .seconds(timeout))
        interrupts.arm { await receiver.abandon() ? nil : TransferNetwork.unreleased }
        let code = receiver.code.text
        // The whole command the sender types: with our relay, unless it is the one a sender uses by default.
        let command = "sealkit transfer send ID (or --all)" + (relay == .public ? "" : " --relay \(relay)")
        switch format {
        case .text:
            let output = StandardOutput()
            try output.write(code + "\n")
            try output.flush()
            progress("On the sending device, run: \(command) and type the code above.\n")
        case .qr:
            StandardError.write("On the sending device, run: \(command) and type this code, or scan it (--code-qr):\n")
            // The QR holds the code and the relay, in magic-wormhole's URI form under SealKit's scheme.
            TransferDisplay.showQR(receiver.link)
            StandardError.write(code + "\n")
        }
        progress("Waiting for the sender (up to \(timeout) seconds; Ctrl-C cancels)...\n")

        let keys = try await interrupts.guarding { try await receiver.receiveKeys() }
        if StandardError.isTerminal { TransferDisplay.describe(keys, "Received") }
        if StandardInput.isTerminal && StandardError.isTerminal && !assumeYes {
            guard try TerminalPrompt.confirm("Check that the sender shows the same fingerprints. Store these keys? [y/N] ") else {
                await receiver.decline(.declined)
                throw CLIFailure("nothing was stored", status: .negative)
            }
        }
        let passphrase: Passphrase?
        do {
            passphrase = try keystoreOptions.passphrase(forStoring: keys.map(\.id), protect: protect, in: keystore)
        } catch {
            await receiver.decline(.failed)
            throw error
        }
        // From here on Ctrl-C waits: the keystore is being written. A failure to store tells the sender.
        await interrupts.disarm()
        let (imported, senderTold) = try await receiver.store(into: keystore, passphrase: passphrase)
        if !senderTold {
            // Stored all the same: the keys are good. The sender reports a failure, and must hear otherwise from here.
            StandardError.write(
                "sealkit: warning: the keys are stored, but the connection to the relay was lost, so the sender was not told: "
                    + "its screen says the transfer failed; tell the person at the sending device\n")
        }
        let output = StandardOutput()
        for key in keys {
            try output.write("\(key.id)\t\(key.fingerprint)\t\(imported.contains(key.id) ? "imported" : "unchanged")\n")
        }
        try output.flush()
    }

    /// Sends keys to the receiver whose code is given (or asked for on a terminal), and returns
    /// once the receiver confirmed that it stored them.
    static func send(
        _ keys: [KeyHistory], code codeOption: String?, relay: Relay, timeout: Int
    ) async throws {
        // Taken before the code prompt: Ctrl-C there says, as docs/transfer.md does, that the transfer was cancelled.
        let interrupts = InterruptHandler()
        let code = try codeOption.map(CodeEntry.parse(given:)) ?? askForCode()
        let sender = try await KeySender(code: code, relay: relay, timeout: .seconds(timeout))
        interrupts.arm {
            // Once the keys went out, "cancelled" would be untrue: the receiver may still store them.
            let sent = await sender.hasSentKeys
            let released = await sender.abandon()
            guard sent else { return released ? nil : TransferNetwork.unreleased }
            return "interrupted: the keys were already sent, so the receiver may still store them"
                + (released ? "; its code was released" : "; the relay did not confirm the release of its code")
        }
        if StandardError.isTerminal { TransferDisplay.describe(keys, "Sending") }
        progress("Waiting for the receiver to join...\n")
        // The stream ends with the transfer: waiting for it keeps this line before whatever the send ends with.
        let events = sender.events()
        let joined = Task {
            for await event in events where event == .peerJoined { progress("The receiver joined; waiting for it to confirm...\n") }
        }
        // Once the keys went out and no answer came, the error says the receiver may have stored them.
        do {
            try await interrupts.guarding { try await sender.send(keys) }
        } catch {
            await joined.value
            throw error
        }
        await joined.value
        await interrupts.disarm()
        let count = keys.count
        progress("The receiver stored \(count == 1 ? "the key" : "all \(count) ids' keys").\n")
    }

    /// What Ctrl-C says when the relay did not confirm the release: the claim is made only when it did.
    static let unreleased =
        "interrupted: the transfer was cancelled, but the relay did not confirm the release of its code (it frees the code itself later)"

    /// Progress for a person at a terminal; scripts see only the contract lines, and a failure
    /// stays one line on stderr.
    private static func progress(_ text: String) {
        if StandardError.isTerminal { StandardError.write(text) }
    }

    /// Asks for the code on the terminal (prompt on stderr, answer from the tty).
    /// Tab completes the words; one mistyped word is offered for correction before anything is sent.
    private static func askForCode() throws -> TransferCode {
        guard StandardInput.isTerminal, let code = try CodeEntry.ask("Enter the code the receiving device shows (such as 7-guitarist-revenge): ")
        else {
            throw CLIFailure("give the receiver's code with --code CODE (such as 7-guitarist-revenge)", status: .usage)
        }
        return code
    }
}

/// Ctrl-C during a network transfer: release the nameplate, close the mailbox (within a few
/// seconds, whatever the relay does), exit 130, with nothing stored. Disarmed while the keystore is written, so a store is never cut short.
///
/// The main task may be blocked at a prompt (a synchronous read of the terminal), so the handler
/// does not cancel it: it abandons the transfer from a task of its own and exits. A second Ctrl-C
/// while that runs exits at once.
///
/// `@unchecked Sendable`: the state is behind `state`'s mutex; the signal source is swift-dispatch's,
/// which is thread-safe.
final class InterruptHandler: @unchecked Sendable {
    private struct State {
        var abandon: (@Sendable () async -> String?)?
        var armed = true
        var firing = false
    }
    private let state = Mutex(State())
    private let source: DispatchSourceSignal
    /// What an interrupt says the transfer became.
    private static let cancelled = "interrupted: the transfer was cancelled"

    init() {
        // The default action would kill us before the relay hears anything: take SIGINT here.
        PromptInterrupt.transferOwnsInterrupts.store(true, ordering: .releasing)
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [self] in fire() }
        source.resume()
    }

    /// From now on an interrupt runs `abandon` before exiting, and says what it returns (when nil,
    /// that the transfer was cancelled and its code released). Before the first `arm`, an interrupt
    /// says only that the transfer was cancelled: nothing confirmed a release.
    func arm(_ abandon: @escaping @Sendable () async -> String?) {
        state.withLock {
            $0.abandon = abandon
            $0.armed = true
        }
    }

    /// Interrupts are ignored from now on. When one is already being handled this never returns:
    /// that handler ends the process, and what the caller would do next (write the keystore) must not start.
    func disarm() async {
        state.withLock { $0.armed = false }
        await giveWayToTheHandler()
    }

    /// Runs `body`; a failure that comes while an interrupt is being handled is the handler's doing
    /// (abandoning closes the connection), so it is not reported: the handler says what happened
    /// and ends the process.
    func guarding<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            await giveWayToTheHandler()
            throw error
        }
    }

    private func giveWayToTheHandler() async {
        while state.withLock({ $0.firing }) { try? await Task.sleep(for: .seconds(60)) }
    }

    private func fire() {
        enum Step { case ignore, exitNow, abandon((@Sendable () async -> String?)?) }
        let step = state.withLock { state -> Step in
            guard state.armed else { return .ignore }
            if state.firing { return .exitNow }
            state.firing = true
            return .abandon(state.abandon)
        }
        switch step {
        case .ignore: return
        case .exitNow: Glibc.exit(ExitStatus.interrupted.rawValue)
        case .abandon(let abandon):
            Task {
                let text: String
                if let abandon {
                    text = await abandon() ?? "\(Self.cancelled) and its code released"
                } else {
                    text = Self.cancelled
                }
                // At a prompt the terminal is in libedit's mode, and the line holds what was typed:
                // give the terminal back as it was and start a line of our own.
                let atPrompt = PromptInterrupt.restoreTerminal()
                StandardError.write((atPrompt ? "\n" : "") + "sealkit: \(text)\n")
                Glibc.exit(ExitStatus.interrupted.rawValue)
            }
        }
    }
}
