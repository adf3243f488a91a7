import SealKit

extension KeyTransfer {
    /// The relay at `address`, checked: a `ws://` URL such as `ws://relay.example:4000`; an address without a
    /// path gets the mailbox endpoint `/v1`. Where no address is configured, use ``publicRelay``.
    /// - Parameter address: the relay's address, as a person gave it.
    /// - Returns: the relay's WebSocket URL, as ``KeyReceiver`` and ``KeySender`` take it.
    /// - Throws: `SealKitError.Reason.invalidArgument` for an address that is no relay.
    @available(*, deprecated, message: "use Relay(_:), which KeyReceiver and KeySender take")
    public static func relay(_ address: String) throws(SealKitError) -> String {
        do {
            return try RelayURL(endpoint: address).description
        } catch {
            throw SealKitError(transferFailure: error)
        }
    }
}

/// The receiving end of a network transfer: it allocates the code, waits for the sender, and stores the keys or
/// refuses them, telling the sender which, once.
///
/// Make one (it connects and allocates ``code``), show the code, then either call
/// ``receive(into:passphrase:confirm:)->[KeyHistory]``, which does the rest in one call, or go step by step, for apps that ask a
/// person at a prompt and choose the passphrase themselves: wait in ``receiveKeys()->[KeyHistory]``, show the fingerprints, then
/// ``store(into:passphrase:)`` or ``decline(_:)``. ``events()`` reports each step. ``abandon()`` may run from another
/// task at any time (Ctrl-C): the wait ends, the code is released.
public actor KeyReceiver {
    /// The code to show; the sender types it.
    public nonisolated let code: TransferCode
    /// The relay in use.
    public nonisolated let relay: String
    private let receiver: NetworkKeyReceiver
    private nonisolated let log = TransferEventLog()
    private var keys: [KeyHistory]?
    /// Whether the transfer is over: the sender was answered, the receive failed, or it was abandoned.
    private var ended = false

    /// Connects to `relay`, allocates a code and opens its mailbox.
    /// - Parameters:
    ///   - relay: the mailbox relay.
    ///   - timeout: how long to wait for the sender, and for each later step (whole seconds, rounded up).
    /// - Throws: `SealKitError`: `.relayUnavailable`, `.timedOut`, `.protocolViolation`, `.cancelled` when the task is
    ///   cancelled.
    public init(relay: Relay = .public, timeout: Duration = .seconds(600)) async throws(SealKitError) {
        do {
            receiver = try await NetworkKeyReceiver(relay: relay.url, timeout: timeout.wholeSeconds)
        } catch {
            throw SealKitError(transferFailure: error)
        }
        code = TransferCode(receiver.code)
        self.relay = receiver.relay.description
        log.yield(.codeAllocated(code))
    }

    /// Connects to the relay at the WebSocket URL `relay`, allocates a code and opens its mailbox.
    /// - Parameters:
    ///   - relay: the mailbox relay's WebSocket URL, such as `ws://relay.example:4000/v1`.
    ///   - timeout: how long to wait for the sender, and for each later step (whole seconds, rounded up).
    /// - Throws: `SealKitError`: `.invalidArgument`, `.relayUnavailable`, `.timedOut`, `.protocolViolation`,
    ///   `.cancelled` when the task is cancelled.
    @_disfavoredOverload
    @available(*, deprecated, message: "pass a Relay: KeyReceiver(relay: try Relay(address), timeout:)")
    public init(relay: String = KeyTransfer.publicRelay, timeout: Duration = .seconds(600)) async throws(SealKitError) {
        // Not delegating to init(relay: Relay, ...): an actor's delegating initializer is a convenience one, another
        // declaration than 1.0's.
        do {
            receiver = try await NetworkKeyReceiver(relay: try RelayURL(relay), timeout: timeout.wholeSeconds)
        } catch {
            throw SealKitError(transferFailure: error)
        }
        code = TransferCode(receiver.code)
        self.relay = receiver.relay.description
        log.yield(.codeAllocated(code))
    }

    /// The relay in use, as ``KeySender`` takes it.
    public nonisolated var mailboxRelay: Relay { Relay(url: receiver.relay) }

    // A receiver let go of mid-transfer ends its subscribers' streams: no loop over `events()` waits for ever.
    deinit { log.finish() }

    /// The code and the relay in one `sealkit-transfer:` link, for a QR code the sender scans.
    public nonisolated var link: String { TransferLink.make(code: code, relay: receiver.relay) }

    /// The transfer's events: ``TransferEvent/codeAllocated(_:)`` first (every subscriber gets every event from the
    /// start), then ``TransferEvent/peerJoined``, ``TransferEvent/keysOffered(_:)``, and ``TransferEvent/stored`` or
    /// ``TransferEvent/refused(_:)``. The stream finishes when the transfer ends, however it ends.
    /// - Returns: a stream of its own for each call.
    public nonisolated func events() -> AsyncStream<TransferEvent> { log.subscribe() }

    /// Receives the keys and stores them in `keystore` once `confirm` says yes: ``receiveKeys()->[KeyHistory]``, then
    /// ``store(into:passphrase:)`` or, when `confirm` says no or the task was cancelled meanwhile, a refusal.
    /// - Parameters:
    ///   - keystore: where the keys go; an id already holding a different key is refused, nothing stored.
    ///   - passphrase: protects new keys at rest, and unlocks protected ones already stored.
    ///   - confirm: decides, after people compared the fingerprints; false stores nothing.
    /// - Returns: the keys stored, as the sender offered them: the type the offline receiver and backups give.
    /// - Throws: `SealKitError`: `.declined` when `confirm` said no, `.conflictingKey`, `.wrongCode`,
    ///   `.timedOut`, `.relayUnavailable`, `.protocolViolation`, `.cancelled`. The sender is told when nothing was stored.
    @discardableResult
    public func receive(
        into keystore: Keystore, passphrase: Passphrase? = nil, confirm: @Sendable ([KeyHistory]) async -> Bool
    ) async throws(SealKitError) -> [KeyHistory] {
        let offered: [KeyHistory] = try await receiveKeys()
        let accepted = await confirm(offered)
        // A task cancelled while the person decided is a Ctrl-C: nothing is stored, whatever the answer.
        let refusal: SealKitError? = Task.isCancelled
            ? SealKitError(.cancelled, "the transfer was cancelled: nothing was stored")
            : accepted ? nil : SealKitError(.declined, "the keys were not stored: declined")
        if let refusal {
            await answer(Refusal(refusing: refusal))
            throw refusal
        }
        _ = try await store(into: keystore, passphrase: passphrase)
        return offered
    }

    /// Receives the keys and stores them in `keystore` once `confirm` says yes, showing `confirm` each id's
    /// ``KeyOffer``.
    /// - Parameters:
    ///   - keystore: where the keys go; an id already holding a different key is refused, nothing stored.
    ///   - passphrase: protects new keys at rest, and unlocks protected ones already stored.
    ///   - confirm: decides, after people compared the fingerprints; false stores nothing.
    /// - Returns: the keys stored, as the sender offered them.
    /// - Throws: as ``receive(into:passphrase:confirm:)->[KeyHistory]``.
    @_disfavoredOverload
    @available(*, deprecated, message: "confirm and the result take [KeyHistory], as OfflineKeyReceiver.accept(_:) returns")
    @discardableResult
    public func receive(
        into keystore: Keystore, passphrase: Passphrase? = nil, confirm: @Sendable ([KeyOffer]) async -> Bool
    ) async throws(SealKitError) -> [KeyOffer] {
        let stored: [KeyHistory] = try await receive(into: keystore, passphrase: passphrase) { keys in
            await confirm(keys.map(KeyOffer.init))
        }
        return stored.map(KeyOffer.init)
    }

    /// Waits for the sender and reads its keys: every id, current and retired.
    /// - Returns: the keys, in the sender's order, for people to compare the fingerprints (they show the id, the
    ///   current key's fingerprint and the count, never a key): the type the offline receiver and backups give.
    /// - Throws: `SealKitError`: `.wrongCode`, `.timedOut`, `.relayUnavailable`, `.protocolViolation`,
    ///   `.cancelled` when the task is cancelled or ``abandon()`` ran; the transfer is over then.
    public func receiveKeys() async throws(SealKitError) -> [KeyHistory] {
        do {
            let keys = try await receiver.receiveKeys(onPeer: { [log] in log.yield(.peerJoined) })
            self.keys = keys
            log.yield(.keysOffered(keys.map(KeyOffer.init)))
            return keys
        } catch {
            ended = true
            log.finish()
            throw SealKitError(transferFailure: error)
        }
    }

    /// Waits for the sender and reads its keys, as each id's ``KeyOffer``.
    /// - Returns: the keys, in the sender's order.
    /// - Throws: as ``receiveKeys()->[KeyHistory]``.
    @_disfavoredOverload
    @available(*, deprecated, message: "receiveKeys() returns [KeyHistory], as OfflineKeyReceiver.accept(_:) does")
    public func receiveKeys() async throws(SealKitError) -> [KeyOffer] {
        let keys: [KeyHistory] = try await receiveKeys()
        return keys.map(KeyOffer.init)
    }

    /// Stores every received key in `keystore`, or none, and tells the sender which.
    /// - Parameters:
    ///   - keystore: where the keys go; an id already holding a different key refuses them all.
    ///   - passphrase: protects new ids, and unlocks protected ones already stored.
    /// - Returns: the ids whose keys were new here (the others were stored already, unchanged), and
    ///   whether the sender heard that they are stored: false when the connection to the relay was lost
    ///   first, so the sender's screen says the transfer failed.
    /// - Throws: `SealKitError` from the keystore (`.conflictingKey`, ...); the sender is told that
    ///   nothing was stored. `.invalidArgument` before ``receiveKeys()->[KeyHistory]`` returned keys, or once the
    ///   transfer ended (declined, or abandoned): nothing is stored then.
    public func store(into keystore: Keystore, passphrase: Passphrase?) async throws(SealKitError)
        -> (imported: Set<KeyID>, senderTold: Bool)
    {
        guard let keys else { throw SealKitError(.invalidArgument, "no keys have arrived: wait for them with receiveKeys() first") }
        guard !ended else { throw SealKitError(.invalidArgument, "the transfer has ended: nothing was stored") }
        let outcomes: [StoreOutcome]
        do {
            outcomes = try keystore.storage.storeAll(keys, passphrase: passphrase)
        } catch {
            let failure = SealKitError(error)
            await answer(Refusal(refusing: failure))
            throw failure
        }
        ended = true
        let told = await receiver.answer(.stored)
        log.yield(.stored)
        log.finish()
        return (Set(zip(keys, outcomes).filter { $0.1 == .stored }.map(\.0.id)), told)
    }

    /// Stores nothing and tells the sender why; nothing once the transfer ended.
    /// - Parameter reason: what the sender is told: `.declined` when a person said no, `.failed` when
    ///   the keys could not be stored.
    public func decline(_ reason: Refusal = .declined) async {
        await answer(reason)
    }

    /// Tells the sender that nothing was stored, for `reason`: the one place a receiver's refusal goes out.
    private func answer(_ reason: Refusal) async {
        guard !ended else { return }
        ended = true
        await receiver.answer(.refused(reason))
        log.yield(.refused(reason))
        log.finish()
    }

    /// Ends the transfer at once, for a process about to exit: a sender whose keys arrived is told
    /// that nothing was stored, the code is released and the connection closed, within a few seconds
    /// whatever the relay does. A ``receiveKeys()->[KeyHistory]`` waiting in another task ends.
    /// - Returns: whether the relay confirmed the release of the code.
    @discardableResult
    public func abandon() async -> Bool {
        if keys != nil && !ended { log.yield(.refused(.cancelled)) }
        ended = true
        log.finish()
        return await receiver.abandon()
    }
}

/// The sending end of a network transfer: it joins the receiver's code and sends the keys, for apps that show
/// progress (``events()``) and may be interrupted (``abandon()``).
///
/// ```swift
/// let sender = try await KeySender(code: try TransferCode(typed))
/// try await sender.send(try keystore.exportKeys([alice], passphrase: nil))
/// ```
public actor KeySender {
    private let sender: NetworkKeySender
    private nonisolated let log = TransferEventLog()

    /// Connects to `relay` and joins the receiver's code.
    /// - Parameters:
    ///   - code: the code the receiver shows.
    ///   - relay: the receiver's mailbox relay.
    ///   - timeout: how long to wait for the receiver, and for each later step (whole seconds, rounded up).
    /// - Throws: `SealKitError`: `.invalidArgument` for a code of another transfer form, `.relayUnavailable`,
    ///   `.timedOut`, `.protocolViolation`, `.cancelled` when the task is cancelled.
    public init(code: TransferCode, relay: Relay = .public, timeout: Duration = .seconds(600)) async throws(SealKitError) {
        do {
            sender = try await NetworkKeySender(relay: relay.url, code: code.code, timeout: timeout.wholeSeconds)
        } catch {
            throw SealKitError(transferFailure: error)
        }
    }

    /// Connects to the relay at the WebSocket URL `relay` and joins the receiver's code.
    /// - Parameters:
    ///   - code: the code the receiver shows.
    ///   - relay: the receiver's mailbox relay's WebSocket URL, such as `ws://relay.example:4000/v1`.
    ///   - timeout: how long to wait for the receiver, and for each later step (whole seconds, rounded up).
    /// - Throws: `SealKitError`: `.invalidArgument`, `.relayUnavailable`, `.timedOut`, `.protocolViolation`,
    ///   `.cancelled` when the task is cancelled.
    @_disfavoredOverload
    @available(*, deprecated, message: "pass a Relay: KeySender(code:relay: try Relay(address), timeout:)")
    public init(code: TransferCode, relay: String = KeyTransfer.publicRelay, timeout: Duration = .seconds(600)) async throws(SealKitError) {
        // Not delegating: an actor's delegating initializer is a convenience one, another declaration than 1.0's.
        do {
            sender = try await NetworkKeySender(relay: try RelayURL(relay), code: code.code, timeout: timeout.wholeSeconds)
        } catch {
            throw SealKitError(transferFailure: error)
        }
    }

    // A sender let go of mid-transfer ends its subscribers' streams: no loop over `events()` waits for ever.
    deinit { log.finish() }

    /// The transfer's events: ``TransferEvent/peerJoined`` and ``TransferEvent/keysOffered(_:)`` once the receiver
    /// proved the code, then ``TransferEvent/stored`` or ``TransferEvent/refused(_:)`` as the receiver answered.
    /// Every subscriber gets every event from the start; the stream finishes when the transfer ends, however it ends.
    /// - Returns: a stream of its own for each call.
    public nonisolated func events() -> AsyncStream<TransferEvent> { log.subscribe() }

    /// Sends `keys` once the receiver proved the code, and returns when it confirms storing them.
    /// - Parameter keys: the keys to send (`Keystore.exportKeys(_:passphrase:)`).
    /// - Throws: `SealKitError`: `.declined` or `.conflictingKey` when the receiver stored nothing,
    ///   `.wrongCode`, `.timedOut`, `.relayUnavailable`, `.protocolViolation`, `.cancelled`. When no
    ///   answer came after the keys went out, the message says the receiver may have stored them.
    public func send(_ keys: [KeyHistory]) async throws(SealKitError) {
        defer { log.finish() }
        let offered = keys.map(KeyOffer.init)
        do {
            try await sender.send(keys, onPeer: { [log] in
                log.yield(.peerJoined)
                log.yield(.keysOffered(offered))
            })
            log.yield(.stored)
        } catch let refused as ReceiverRefusedError {
            log.yield(.refused(refused.reason))
            throw SealKitError(transferFailure: refused)
        } catch let error as MailboxError {
            // Once the keys went out, "nothing was transferred" would be untrue: say what is known.
            guard await sender.hasSentKeys else { throw SealKitError(transferFailure: error) }
            let why: String
            switch error {
            case .connectionLost(let relay): why = "the connection to the mailbox relay \(relay) was lost"
            case .stalled(let relay, _): why = "the mailbox relay \(relay) stopped taking messages"
            case .timedOut(let seconds): why = "none within \(seconds) seconds"
            default: throw SealKitError(transferFailure: error)
            }
            throw SealKitError(
                SealKitError(transferFailure: error).reason,
                "the keys were delivered, but no answer came from the receiver (\(why)): "
                    + "the receiver may have stored the keys: check on the receiving device")
        } catch {
            throw SealKitError(transferFailure: error)
        }
    }

    /// Whether the keys may have gone out (their sending began): an interrupt after that cannot take them back,
    /// and the receiver may store them.
    public var hasSentKeys: Bool {
        get async { await sender.mayHaveSentKeys }
    }

    /// Ends the transfer at once, for a process about to exit: the code is released and the connection
    /// closed, within a few seconds whatever the relay does. A ``send(_:)`` waiting in another task ends.
    /// - Returns: whether the relay confirmed the release of the code.
    @discardableResult
    public func abandon() async -> Bool {
        log.finish()
        return await sender.abandon()
    }
}

/// A receiver's code and relay in one text, `sealkit-transfer:<code>?...`: magic-wormhole's URI form
/// under SealKit's own scheme, for the QR code a receiver shows (``KeyReceiver/link``).
public struct TransferLink: Sendable {
    /// The scheme every link starts with.
    public static let scheme = TransferURI.scheme
    /// The code the link holds: the transfer's secret.
    public let code: TransferCode
    /// The relay the receiver waits on, when the link names one, as its WebSocket URL.
    public let relay: String?
    /// The relay the receiver waits on, when the link names one, as ``KeySender`` takes it.
    public var mailboxRelay: Relay? { relayURL.map(Relay.init(url:)) }
    private let relayURL: RelayURL?

    /// Parses a link.
    /// - Parameter text: a `sealkit-transfer:` URI (a `wormhole-transfer:` one is refused with its own reason).
    /// - Throws: `SealKitError.Reason.invalidArgument` saying what is wrong with it, its code included
    ///   (never the code itself).
    public init(parsing text: String) throws(SealKitError) {
        let uri: TransferURI
        do {
            uri = try TransferURI(parsing: text)
        } catch {
            throw SealKitError(.invalidArgument, String(describing: error))
        }
        code = try TransferCode(uri.code)
        relay = uri.relay?.description
        relayURL = uri.relay
    }

    static func make(code: TransferCode, relay: RelayURL) -> String {
        TransferURI.make(code: code.text, relay: relay)
    }
}
