// Key transfer between devices through a magic-wormhole mailbox relay (swift-nio), on top of SealKit.
// Backups are the SealKitBackup product's.
@_exported import SealKit
@_spi(CLI) import SealCore
import SealKeystore
import SealMailbox
@_exported import SealTransfer

/// Moves a user's keys between devices through a magic-wormhole mailbox relay, for async code.
///
/// The receiver shows a short code (`7-guitarist-revenge`); a person types it on the sender. Both sides
/// prove the code (SPAKE2) before anything travels, both show the keys' fingerprints for people to
/// compare, and the receiver stores all of them or none and tells the sender which. Both calls end
/// within `timeout` whatever the relay does, and on task cancellation as on Ctrl-C: the nameplate is
/// released and the mailbox closed.
///
/// ```swift
/// let stored = try await KeyTransfer.receive(into: keystore) { offered in
///     await askThePerson(toCompare: offered)   // true stores them
/// }
/// ```
public enum KeyTransfer {
    /// The public relay magic-wormhole's own clients use.
    public static let publicRelay = RelayURL.publicRelay.description

    /// Receives keys into `keystore`: allocates a code (`.codeAllocated`), waits for the sender, shows
    /// the keys (`.keysOffered`) and stores them when `confirm` says yes. The sender is told either way.
    /// - Parameters:
    ///   - keystore: where the keys go; an id already holding a different key is refused, nothing stored.
    ///   - relay: the mailbox relay's WebSocket URL.
    ///   - timeout: seconds to wait for the other side at each step.
    ///   - passphrase: protects new keys at rest, and unlocks protected ones already stored.
    ///   - events: progress, for the app to show.
    ///   - confirm: decides, after people compared the fingerprints; false stores nothing.
    /// - Returns: the keys stored.
    /// - Throws: `SealKitError`: `.declined` when `confirm` said no, `.conflictingKey`, `.wrongCode`,
    ///   `.timedOut`, `.relayUnavailable`, `.protocolViolation`, `.cancelled`.
    @discardableResult
    public static func receive(
        into keystore: Keystore, relay: String = publicRelay, timeout: Int = 600, passphrase: Passphrase? = nil,
        events: AsyncStream<TransferEvent>.Continuation? = nil,
        confirm: @escaping @Sendable ([KeyOffer]) async -> Bool
    ) async throws(SealKitError) -> [KeyOffer] {
        let storage = keystore.storage
        do {
            let keys = try await AsyncKeyTransfer.receive(relay: try RelayURL(relay), timeout: timeout, events: events) { keys in
                guard await confirm(keys.map(KeyOffer.init)) else { throw KeysDeclined(.declined) }
                try storage.storeAll(keys, passphrase: passphrase)
            }
            return keys.map(KeyOffer.init)
        } catch {
            throw SealKitError(transferFailure: error)
        }
    }

    /// Sends the keys of `ids` to the receiver showing `code`, and returns once it stored them.
    /// - Parameters:
    ///   - ids: the ids whose keys (current and retired) go.
    ///   - keystore: where they are read from.
    ///   - passphrase: unlocks protected keys.
    ///   - code: the code the receiver shows.
    ///   - relay: the mailbox relay's WebSocket URL; the receiver's.
    ///   - timeout: seconds to wait for the other side at each step.
    ///   - events: progress, for the app to show.
    /// - Throws: `SealKitError`: `.declined` or `.conflictingKey` when the receiver stored nothing, and as `receive`.
    public static func send(
        _ ids: [KeyID], from keystore: Keystore, passphrase: Passphrase? = nil, code: String, relay: String = publicRelay,
        timeout: Int = 600, events: AsyncStream<TransferEvent>.Continuation? = nil
    ) async throws(SealKitError) {
        do {
            let keys = try ids.map { id throws(KeystoreError) in try keystore.storage.history(for: id, passphrase: passphrase) }
            try await AsyncKeyTransfer.send(
                keys, code: try WormholeCode(parsing: code), relay: try RelayURL(relay), timeout: timeout, events: events)
        } catch {
            throw SealKitError(transferFailure: error)
        }
    }
}

extension SealKitError {
    /// Whatever a transfer threw, with its message unchanged.
    package init(transferFailure error: any Error) {
        switch error {
        case let error as SealKitError: self = error
        case let error as KeystoreError: self.init(error)
        case let declined as KeysDeclined: self.init(declined.reason, "the keys were not stored: \(declined.reason.rawValue)")
        case let refused as ReceiverRefusedError:
            // The receiver's Ctrl-C declined this side's keys: this side was not cancelled.
            self.init(refused.reason == .cancelled ? .declined : refused.reason, String(describing: refused))
        case is CancellationError: self.init(.cancelled, "the transfer was cancelled: nothing was stored")
        case let error as MailboxError:
            let reason: Reason
            switch error {
            case .badRelay, .badCode: reason = .invalidArgument
            case .unreachable, .unwelcome, .server, .connectionLost, .flooded, .stalled: reason = .relayUnavailable
            case .timedOut: reason = .timedOut
            case .wrongCode: reason = .wrongCode
            case .notSealKit, .protocolViolation, .messageTooLarge: reason = .protocolViolation
            case .interrupted: reason = .cancelled
            // The receiver cancelled, as far as the relay can tell: the other side's doing, as a decline is.
            case .receiverGone: reason = .declined
            }
            self.init(reason, String(describing: error), advice: error.advice)
        case let error as WormholeCodeError: self.init(.invalidArgument, String(describing: error))
        case let error as TransferError: self.init(error)
        default: self.init(.invalidTransfer, String(describing: error))
        }
    }

    /// A transfer's or backup's error, with its message unchanged.
    package init(_ error: TransferError) {
        let reason: Reason
        var keyID: KeyID?
        switch error {
        case .code(.wrongPassphrase): reason = .wrongPassphrase
        case .code(.notInBackup(let id, _)): reason = .missingInput; keyID = id
        case .code(.noInput): reason = .missingInput
        case .badLifetime, .code(.nothingToSend): reason = .invalidArgument
        // A malformed code is what the person typed (64); a well-formed one that is not the other side's, 77.
        case .badCode: reason = .invalidArgument
        case .wrongCode: reason = .wrongCode
        case .code(.tooManyVersions(let id, _)): reason = .tooLarge; keyID = id
        case .code(.tooLarge), .code(.tooManyKeys): reason = .tooLarge
        default: reason = .invalidTransfer
        }
        self.init(reason, keyID: keyID, String(describing: error), advice: error.advice)
    }

    private init(_ refusal: Refusal, _ description: String) {
        switch refusal {
        case .conflict: self.init(Reason.conflictingKey, description)
        case .invalid: self.init(Reason.protocolViolation, description)
        case .declined, .failed: self.init(Reason.declined, description)
        case .cancelled: self.init(Reason.cancelled, description)
        }
    }
}
