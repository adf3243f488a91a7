// Key transfer between devices through a magic-wormhole mailbox relay (swift-nio), on top of SealKit.
// Backups are the SealKitBackup product's.
@_exported import SealKit

/// What the two ends of a network transfer share: the relay (``Relay``), and the offline reply's lifetime
/// (``defaultReplyLifetime``).
///
/// A transfer is two actors, one engine: ``KeyReceiver`` allocates a code and stores the keys, ``KeySender`` joins
/// the code and sends them. The receiver has two flavours: step by step (``KeyReceiver/receiveKeys()->[KeyHistory]``, then
/// ``KeyReceiver/store(into:passphrase:)`` or ``KeyReceiver/decline(_:)``), or in one call
/// (``KeyReceiver/receive(into:passphrase:confirm:)->[KeyHistory]``); both actors report progress through `events()`. Both sides prove
/// the code (SPAKE2) before anything travels, both show the keys' fingerprints for people to compare, and the receiver
/// stores all of them or none and tells the sender which, once. Every step ends within the timeout whatever the relay
/// does, and on task cancellation as on Ctrl-C: the nameplate is released and the mailbox closed.
///
/// ```swift
/// let receiver = try await KeyReceiver()
/// show(receiver.code.text)                     // the sender types it
/// let stored = try await receiver.receive(into: keystore) { offered in
///     await askThePerson(toCompare: offered)   // true stores them
/// }
/// ```
public enum KeyTransfer {
    /// The public relay magic-wormhole's own clients use.
    @available(*, deprecated, renamed: "Relay.public")
    public static let publicRelay = RelayURL.publicRelay.description
}

extension Refusal {
    /// What the sender is told when the receiver stores nothing because of `error`: the one rule, for every way a
    /// receive ends without storing (``KeyReceiver/store(into:passphrase:)`` failing,
    /// ``KeyReceiver/receive(into:passphrase:confirm:)->[KeyHistory]`` declined or cancelled).
    init(refusing error: SealKitError) {
        switch error.reason {
        case .declined: self = .declined
        case .conflictingKey: self = .conflict
        case .cancelled: self = .cancelled
        default: self = .failed
        }
    }
}

extension Duration {
    /// The whole seconds the mailbox client counts in: rounded up, at least one.
    var wholeSeconds: Int {
        let (seconds, attoseconds) = components
        return Int(clamping: max(1, attoseconds > 0 ? seconds + 1 : seconds))
    }
}

extension SealKitError {
    /// Whatever a transfer threw, with its message unchanged.
    package init(transferFailure error: any Error) {
        switch error {
        case let error as SealKitError: self = error
        case let error as KeystoreError: self.init(error)
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
            self.init(reason, String(describing: error), detail: error.detail)
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
        self.init(reason, keyID: keyID, String(describing: error), detail: error.detail)
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
