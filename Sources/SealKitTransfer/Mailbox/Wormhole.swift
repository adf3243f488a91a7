import SealKit

/// One end of a magic-wormhole: a mailbox on a relay shared with one peer, a SPAKE2 key from
/// the code, and numbered messages sealed with per-phase keys (magic-wormhole's client protocol).
///
/// It speaks to magic-wormhole's Python client and mailbox server as they are. Every wait and
/// every write is bounded by the timeout and holds no thread: each step (connecting, the code, the
/// peer joining, each message) takes at most the timeout, its writes included. Cancelling the
/// waiting task ends the wait with `MailboxError.interrupted`. Call `close(mood:)` on every way out, cancelled or not: it
/// releases the nameplate and closes the mailbox, within a few seconds whatever the relay does.
///
/// ```swift
/// let wormhole = try await Wormhole(relay: relay, appID: "example/app", appVersions: ["v": 1], timeout: 600)
/// let code = try await wormhole.allocateCode()      // show code.revealedText to the person
/// let theirs = try await wormhole.waitForPeer()     // their app_versions, once their key is proven
/// try await wormhole.send(message); let answer = try await wormhole.receive()
/// await wormhole.close(mood: .happy)
/// ```
package actor Wormhole {
    /// The relay this wormhole goes through.
    package nonisolated let relay: RelayURL
    /// The application id: both sides must use the same one (it is also SPAKE2's identity).
    package nonisolated let appID: String
    /// The server's message of the day, if its welcome had one.
    package private(set) var messageOfTheDay: String?

    private let side: String
    private let appVersions: JSONValue
    private let timeout: Int
    /// When the current step's waits and writes give up.
    private var deadline: ContinuousClock.Instant
    private let transport: WebSocketTransport
    private var nameplate = NameplateMachine()
    private var mailbox = MailboxMachine()
    private var order = OrderMachine()
    private var allocated: String?
    private var spake: SPAKE2Symmetric?
    private var key: WormholeKey?
    private var peerSide: String?
    private var peerVersions: JSONValue?
    /// Numbered messages that arrived ahead of the application; nil stands for an empty one
    /// (guarded memory cannot hold zero bytes).
    private var received: [Int: Message] = [:]
    private struct Message {
        let bytes: SecureBytes?
    }
    private var receivedBytes = 0
    private var nextReceivePhase = 0
    private var nextSendPhase = 0
    private var peerReleasedNameplate = false

    /// Most numbered messages held out of order before the application reads them.
    static let maximumBufferedBytes = 64 * 1024 * 1024

    /// Connects to the relay and binds to `appID` with a fresh random side.
    /// - Parameters:
    ///   - relay: the mailbox server.
    ///   - appID: the application id, such as `sealkit/key-transfer/v1`.
    ///   - appVersions: this application's `app_versions`, sent in the encrypted `version` message.
    ///   - timeout: seconds each step may take (connecting, the code, the peer joining, each message
    ///     sent or awaited), its writes included: a relay that stops reading ends the transfer with `.stalled`.
    /// - Throws: `MailboxError.unreachable` or `.unwelcome` naming the relay;
    ///   `.interrupted` when the task is cancelled meanwhile.
    package init(relay: RelayURL, appID: String, appVersions: JSONValue, timeout: Int) async throws(MailboxError) {
        self.relay = relay
        self.appID = appID
        self.appVersions = appVersions
        self.timeout = max(1, timeout)
        deadline = .now + .seconds(self.timeout)
        // magic-wormhole's sides are 5 random bytes as hex.
        side = Hex.encode(SecureRandom.bytes(count: 5))
        transport = try await WebSocketTransport.connect(
            to: relay, timeout: min(self.timeout, 30), maximumMessageBytes: ServerMessage.maximumBytes)
        do {
            try await pump(until: { $0.welcomed }, connecting: true)
            try await transmit(.bind(appID: appID, side: side, clientVersion: "1"))
        } catch {
            await transport.close(before: .now + WebSocketTransport.writeGrace)
            throw error
        }
    }

    private var welcomed = false

    // MARK: - Codes

    /// Allocates a nameplate, makes a code on it, and opens the mailbox (the receiving side).
    /// - Returns: the code to show to the person on the other side.
    package func allocateCode() async throws(MailboxError) -> WormholeCode {
        deadline = .now + .seconds(timeout)
        try await transmit(.allocate)
        try await pump { $0.allocated != nil }
        let code: WormholeCode
        do {
            code = try WormholeCode.generate(nameplate: allocated!)
        } catch {
            throw .protocolViolation("the relay allocated an unusable nameplate")
        }
        try await use(code)
        return code
    }

    /// Joins the mailbox of a code the person typed (the sending side).
    /// - Parameters:
    ///   - code: the code the other side showed.
    ///   - requiringReceiver: fail with `.receiverGone` when the relay holds no nameplate of the code's
    ///     number: the receiver allocated it and holds it until a sender joins, so it is gone (cancelled),
    ///     and waiting for it would only time out. False claims the nameplate whatever the relay holds.
    package func join(code: WormholeCode, requiringReceiver: Bool = true) async throws(MailboxError) {
        // Asked before the claim, whose answer the relay sends after this one's; a relay that does not
        // answer `list` changes nothing.
        if requiringReceiver {
            joining = code.nameplate
            try await transmit(.list)
        }
        try await use(code)
    }

    /// The nameplate a sender joins, until the relay's `nameplates` answer was checked.
    private var joining: String?

    private func use(_ code: WormholeCode) async throws(MailboxError) {
        deadline = .now + .seconds(timeout)
        let exchange = SPAKE2Symmetric(code: code, appID: appID)
        spake = exchange
        if let claim = nameplate.claim(code.nameplate) { try await transmit(claim) }
        try await pump { $0.mailbox.isOpen }
        let body = JSONValue.object([(key: "pake_v1", value: .string(Hex.encode(exchange.message)))]).serialized()
        try await transmit(.add(phase: "pake", body: Array(body.utf8)))
    }

    // MARK: - Talking to the peer

    /// Waits until the peer has joined, both keys agree (its first message decrypted) and its
    /// `version` message arrived.
    /// - Returns: the peer's `app_versions` (an empty object when it sent none).
    /// - Throws: `.timedOut` when nobody comes within the timeout, `.wrongCode` when the peer's
    ///   messages do not decrypt.
    package func waitForPeer() async throws(MailboxError) -> JSONValue {
        deadline = .now + .seconds(timeout)
        try await pump { $0.peerVersions != nil }
        return peerVersions!
    }

    /// The verifier both sides can compare: equal exactly when the keys are. Nil before the key exists.
    package var verifier: [UInt8]? { key?.verifier }

    /// Seals `plaintext` as the next numbered phase ("0", "1", ...) and adds it to the mailbox.
    /// It goes out from a cancelled task too (within a few seconds at most), so that a cancelled
    /// transfer can still answer its peer.
    /// - Precondition: `waitForPeer()` returned.
    /// - Throws: `.stalled` when the relay did not take it within the timeout, `.connectionLost`
    ///   when the connection is gone, `.interrupted` when the task was cancelled before it went out.
    package func send(_ plaintext: some ContiguousByteSource & Sendable) async throws(MailboxError) {
        guard let key else { preconditionFailure("send before the key exists") }
        let phase = String(nextSendPhase)
        nextSendPhase += 1
        deadline = .now + .seconds(timeout)
        try await transmit(.add(phase: phase, body: key.phaseKey(side: side, phase: phase).seal(plaintext)))
    }

    /// The peer's next numbered message, in order whatever order they arrived in.
    /// - Returns: the plaintext, in guarded memory; nil when the message is empty.
    package func receive() async throws(MailboxError) -> SecureBytes? {
        deadline = .now + .seconds(timeout)
        try await pump { $0.received[$0.nextReceivePhase] != nil }
        let message = received.removeValue(forKey: nextReceivePhase)!.bytes
        receivedBytes -= message?.count ?? 0
        nextReceivePhase += 1
        return message
    }

    // MARK: - Ending

    /// Releases the nameplate and closes the mailbox with `mood`, waits briefly for the
    /// server to confirm both, and disconnects: within `goodbyeWait` whatever the relay does (a
    /// relay that stops reading is left then). Safe to call on any way out, more than once.
    package func close(mood: Mood) async {
        // Writes and confirmations share one bound: a server that does not take or answer them within it is left.
        let deadline = ContinuousClock.now + Self.goodbyeWait
        if await sayGoodbye(mood: mood, before: deadline) { await awaitConfirmations(before: deadline) }
        await transport.close(before: max(deadline, .now + .milliseconds(250)))
    }

    /// For a process about to exit (a Ctrl-C handler): sends the release and close the server
    /// needs, waits for the server to confirm the release, and disconnects, all within
    /// `goodbyeWait`. It may run while another task waits on this wormhole; that wait then ends as
    /// the connection closes.
    /// - Returns: whether the server confirmed that it holds no nameplate for us (true also when
    ///   none was claimed); false when the relay did not confirm the release in time.
    @discardableResult
    package func abandon(mood: Mood) async -> Bool {
        let deadline = ContinuousClock.now + Self.goodbyeWait
        if await sayGoodbye(mood: mood, before: deadline) { await awaitConfirmations(before: deadline) }
        await transport.close(before: max(deadline, .now + .milliseconds(250)))
        return nameplate.isSettled
    }

    /// The most `close(mood:)` and `abandon(mood:)` wait for the relay to take and confirm the goodbye.
    static let goodbyeWait: Duration = .seconds(1)

    /// Whether a task is waiting in `pump`, reading the relay's messages.
    private var pumping = false

    /// Waits until the relay confirmed the release and the close, or `deadline`, or the task is
    /// cancelled. The answers are read here, or by the task waiting in `pump` when there is one
    /// (one reader at a time), which records them as it goes.
    private func awaitConfirmations(before deadline: ContinuousClock.Instant) async {
        while !(nameplate.isSettled && mailbox.isSettled), ContinuousClock.now < deadline {
            if pumping {
                do { try await Task.sleep(for: .milliseconds(20)) } catch { return }
                continue
            }
            guard let event = await transport.next(before: deadline), case .text(let bytes) = event,
                let message = try? ServerMessage(parsing: bytes)
            else { return }
            switch message {
            case .released: nameplate.gotReleased()
            case .closed: mailbox.gotClosed()
            default: continue
            }
        }
    }

    /// Sends the release and the close that are still owed; true when every one went out.
    @discardableResult
    private func sayGoodbye(mood: Mood, before deadline: ContinuousClock.Instant) async -> Bool {
        var wentOut = true
        if let release = nameplate.release() { wentOut = await transport.send(release.text(id: messageID()), before: deadline) && wentOut }
        if let close = mailbox.close(mood: mood) { wentOut = await transport.send(close.text(id: messageID()), before: deadline) && wentOut }
        return wentOut
    }

    // MARK: - The loop

    /// Sends `message`, waiting at most until the step's deadline for the socket to take it.
    private func transmit(_ message: ClientMessage) async throws(MailboxError) {
        guard await transport.send(message.text(id: messageID()), before: deadline) else {
            if Task.isCancelled { throw .interrupted }
            if transport.hasStalled { throw .stalled(relay, seconds: timeout) }
            throw .connectionLost(relay)
        }
    }

    private func messageID() -> String { Hex.encode(SecureRandom.bytes(count: 2)) }

    /// Handles server messages until `done` holds, at most until the step's deadline.
    private func pump(
        until done: (isolated Wormhole) -> Bool, connecting: Bool = false
    ) async throws(MailboxError) {
        pumping = true
        defer { pumping = false }
        // The relay's acks and echoes do not extend the deadline.
        while !done(self) {
            guard let event = await transport.next(before: deadline) else {
                if connecting { throw .unreachable(relay, reason: "it sent no welcome within \(timeout) seconds") }
                throw .timedOut(seconds: timeout)
            }
            switch event {
            case .text(let bytes):
                try await handle(try ServerMessage(parsing: bytes))
            case .closed(let reason):
                if connecting { throw .unreachable(relay, reason: reason) }
                throw .connectionLost(relay)
            case .tooLarge: throw .messageTooLarge(limit: ServerMessage.maximumBytes)
            case .flooded:
                throw .flooded(relay, reason: "more than \(TransportInbox.maximumQueuedEvents) messages or "
                    + "\(TransportInbox.maximumQueuedBytes >> 20) MiB arrived faster than they could be read")
            case .interrupted: throw .interrupted
            }
        }
    }

    private func handle(_ message: ServerMessage) async throws(MailboxError) {
        switch message {
        case .welcome(let motd, let error):
            if let error { throw .unwelcome(relay, message: TextSafety.printable(error)) }
            welcomed = true
            messageOfTheDay = motd.map { TextSafety.printable($0) }
        case .ack, .pong, .unknown: break
        case .nameplates(let ids):
            guard let nameplate = joining else { return }
            joining = nil
            if !ids.contains(nameplate) { throw .receiverGone(nameplate: nameplate) }
        case .allocated(let nameplate):
            if allocated == nil { allocated = nameplate }
        case .claimed(let mailboxID):
            guard nameplate.gotClaimed() else { return }
            if let open = mailbox.open(mailboxID) { try await transmit(open) }
        case .released: nameplate.gotReleased()
        case .closed: mailbox.gotClosed()
        case .error(let text): throw .server(text)
        case .message(let side, let phase, let body):
            // Our own messages come back from the server; magic-wormhole ignores them too.
            guard side != self.side else { return }
            // Once the peer is here, the nameplate has done its job: free the number.
            if !peerReleasedNameplate {
                peerReleasedNameplate = true
                if let release = nameplate.release() { try await transmit(release) }
            }
            switch order.receive(PeerMessage(side: side, phase: phase, body: body)) {
            case .overflow:
                throw .flooded(relay, reason: "more than \(OrderMachine.maximumStashedMessages) messages or "
                    + "\(OrderMachine.maximumStashBytes / 1024) KiB came before the peer's PAKE message")
            case .deliver(let messages):
                for message in messages { try await deliver(message) }
            }
        }
    }

    private func deliver(_ message: PeerMessage) async throws(MailboxError) {
        if message.phase == "pake" { return try await gotPAKE(message) }
        guard let key else { return }  // OrderMachine delivers nothing before the PAKE message.
        // magic-wormhole: a message that does not decrypt means a wrong code (or an attacker).
        let plaintext: SecureBytes?
        do {
            plaintext = try key.phaseKey(side: message.side, phase: message.phase).openSecret(message.body)
        } catch {
            throw .wrongCode
        }
        if message.phase == "version" {
            let bytes = plaintext?.withUnsafeBytes { Array($0) } ?? []
            guard let versions = try? JSONValue.parse(bytes), versions.objectValue != nil else {
                throw .notSealKit("its version message is not a JSON object")
            }
            peerVersions = versions["app_versions"] ?? [:]
        } else if let number = Int(message.phase), String(number) == message.phase, number >= 0 {
            guard number >= nextReceivePhase, number < nextReceivePhase + 100_000 else { return }
            receivedBytes += plaintext?.count ?? 0
            guard receivedBytes <= Self.maximumBufferedBytes, received.count < 4096 else {
                throw .protocolViolation("the peer sent more than the application has read")
            }
            received[number] = Message(bytes: plaintext)
        }
        // Other phases (dilation and later extensions) are not for this client: ignored, as magic-wormhole does.
    }

    private func gotPAKE(_ message: PeerMessage) async throws(MailboxError) {
        guard let spake else { return }
        // Body: JSON {"pake_v1": hex(SPAKE2 message)}. Anything else is what magic-wormhole
        // calls a bad PAKE: the same outcome as a wrong code.
        guard let value = try? JSONValue.parse(message.body), let hex = value["pake_v1"]?.stringValue,
            let peerMessage = Hex.decode(hex)
        else { throw .wrongCode }
        let shared: WormholeKey
        do {
            shared = try spake.finish(peerMessage: peerMessage)
        } catch {
            throw .wrongCode
        }
        key = shared
        peerSide = message.side
        // As magic-wormhole does: our version goes out as soon as the key exists.
        let versions = JSONValue.object([(key: "app_versions", value: appVersions)]).serialized()
        try await transmit(.add(phase: "version", body: shared.phaseKey(side: side, phase: "version").seal(Array(versions.utf8))))
    }
}
