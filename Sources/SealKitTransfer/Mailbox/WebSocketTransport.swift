#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import SealKit
import Synchronization

/// What the connection hands to the protocol, in arrival order.
enum TransportEvent: Sendable, Equatable {
    /// One whole text message (fragments already joined).
    case text([UInt8])
    /// The connection ended or failed; `reason` says why, for the one-line error.
    case closed(reason: String)
    /// A message was larger than the bound.
    case tooLarge
    /// The waiting task was cancelled.
    case interrupted
    /// More arrived than `TransportInbox` holds: the relay is flooding us.
    case flooded
}

/// Events from the connection's event loop, awaited by the task that runs the protocol.
///
/// A wait ends with the next event, with nil at its deadline, or with `.interrupted` when the
/// waiting task is cancelled, whichever comes first; no thread is held meanwhile. Waits that overlap
/// (a goodbye's, from the task that abandons a transfer, beside the protocol loop's) take events in
/// the order they began: each ends, and none is dropped unresumed, which left its task waiting forever
/// (a sender interrupted with Ctrl-C hung under load: "next(before:) leaked its continuation").
final class TransportInbox: Sendable {
    private struct State {
        var events: [TransportEvent] = []
        var head = 0
        var ended = false
        var queuedBytes = 0
        /// The tasks waiting, oldest first, and which wait each is (a late timer or cancellation must end
        /// its own wait only).
        var waiters: [(ticket: Int, continuation: CheckedContinuation<TransportEvent?, Never>)] = []
        var tickets = 0

        mutating func pop() -> TransportEvent? {
            guard head < events.count else { return nil }
            let event = events[head]
            head += 1
            if case .text(let bytes) = event { queuedBytes -= bytes.count }
            if head > 64 && head * 2 > events.count {
                events.removeFirst(head)
                head = 0
            }
            return event
        }

        /// The waiting tasks that can be handed an event now, each with its event, taken off the queue.
        mutating func takeWaiters() -> [(CheckedContinuation<TransportEvent?, Never>, TransportEvent)] {
            var handOvers: [(CheckedContinuation<TransportEvent?, Never>, TransportEvent)] = []
            while !waiters.isEmpty, let event = pop() {
                handOvers.append((waiters.removeFirst().continuation, event))
            }
            return handOvers
        }
    }
    private let state = Mutex(State())
    /// What may wait unread. The protocol reads as fast as messages come, so only a relay
    /// sending far more than any transfer needs fills this; then the inbox ends with `.flooded`.
    static let maximumQueuedEvents = 4096
    static let maximumQueuedBytes = 8 << 20

    /// Queues an event; after a `.closed` or `.flooded` nothing more is queued.
    func push(_ event: TransportEvent) {
        let handOvers = state.withLock { state -> [(CheckedContinuation<TransportEvent?, Never>, TransportEvent)] in
            guard !state.ended else { return [] }
            if case .closed = event { state.ended = true }
            if case .text(let bytes) = event {
                state.queuedBytes += bytes.count
                if state.events.count - state.head >= Self.maximumQueuedEvents || state.queuedBytes > Self.maximumQueuedBytes {
                    state.ended = true
                    state.events.append(.flooded)
                    return state.takeWaiters()
                }
            }
            state.events.append(event)
            return state.takeWaiters()
        }
        for (continuation, event) in handOvers { continuation.resume(returning: event) }
    }

    /// The next event; nil when none arrives before `deadline`, `.interrupted` when the calling task is cancelled.
    func next(before deadline: ContinuousClock.Instant) async -> TransportEvent? {
        if let ready = state.withLock({ $0.pop() }) { return ready }
        let ticket = state.withLock { state in
            state.tickets += 1
            return state.tickets
        }
        let timer = Task { [self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            if !Task.isCancelled { resume(ticket, with: nil) }
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Checked under the lock that `resume` takes: a timer or a cancellation that came
                // before the waiter was in place is seen here, never lost.
                let answer = state.withLock { state -> TransportEvent?? in
                    if let event = state.pop() { return .some(event) }
                    if Task.isCancelled { return .some(.interrupted) }
                    if ContinuousClock.now >= deadline { return .some(nil) }
                    state.waiters.append((ticket, continuation))
                    return .none
                }
                if case .some(let event) = answer { continuation.resume(returning: event) }
            }
        } onCancel: {
            resume(ticket, with: .interrupted)
        }
    }

    /// Ends wait `ticket` with `event`, if it is still the one waiting.
    private func resume(_ ticket: Int, with event: TransportEvent?) {
        let waiter = state.withLock { state -> CheckedContinuation<TransportEvent?, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.ticket == ticket }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        waiter?.resume(returning: event)
    }
}

/// One WebSocket connection to a mailbox server, on swift-nio: the typed WebSocket client upgrade,
/// then `FrameReader` on the connection's event loop puts text messages into the inbox and answers
/// pings while the socket takes the answer (a flood of pings costs no task a wakeup). The protocol
/// awaits the inbox. Every write goes straight to the channel and is awaited until the socket took
/// it, at most until its deadline: a relay that stops reading cannot hold a transfer past it.
/// Incoming messages are bounded by `maximumMessageBytes`.
final class WebSocketTransport: Sendable {
    let relay: RelayURL
    private let inbox: TransportInbox
    private let channel: Channel
    /// Set once a write outlived its deadline and the connection was closed for it.
    ///
    /// This and the write timers below stay in NIO's lock box, not a `Mutex` like the inbox's state: the
    /// event loop's escaping closures must share them, and a `Mutex` cannot be copied into a closure
    /// (it is `~Copyable`), while the box is a reference.
    private let stalledState = NIOLockedValueBox(false)

    /// What every write may take, whatever its deadline: a task that ran late (a busy machine) still
    /// sends what a healthy socket takes at once. It is also the most a write from a cancelled task
    /// may take (the release, the close, a receiver's answer): cancelling ends a stuck write after it.
    static let writeGrace: Duration = .seconds(1)

    private init(relay: RelayURL, inbox: TransportInbox, channel: Channel) {
        self.relay = relay
        self.inbox = inbox
        self.channel = channel
    }

    private enum Upgrade: Sendable {
        case websocket(Channel)
        case refused
    }

    /// Connects and upgrades to WebSocket, waiting at most `timeout` seconds in all.
    /// - Throws: `MailboxError.unreachable` naming the relay when it cannot be reached or is not a
    ///   WebSocket server; `.interrupted` when the task is cancelled meanwhile.
    static func connect(to relay: RelayURL, timeout: Int, maximumMessageBytes: Int) async throws(MailboxError) -> WebSocketTransport {
        let seconds = Int64(max(1, timeout))
        // The channel while it upgrades, so that a timeout or a cancellation can close it.
        let opening = NIOLockedValueBox<Channel?>(nil)
        let timedOut = NIOLockedValueBox(false)
        let inbox = TransportInbox()
        let negotiation: EventLoopFuture<Upgrade>
        do {
            negotiation = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(seconds))
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .connect(host: relay.host, port: relay.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                            maxFrameSize: maximumMessageBytes, enableAutomaticErrorHandling: true,
                            upgradePipelineHandler: { channel, _ in
                                channel.eventLoop.makeCompletedFuture {
                                    try channel.pipeline.syncOperations.addHandler(NIOWebSocketFrameAggregator(
                                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 4096,
                                        maxAccumulatedFrameSize: maximumMessageBytes))
                                    try channel.pipeline.syncOperations.addHandler(FrameReader(inbox: inbox))
                                    return .websocket(channel)
                                }
                            })
                        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: relay.path)
                        head.headers.add(name: "Host", value: relay.hostHeader)
                        head.headers.add(name: "Content-Length", value: "0")
                        var configuration = NIOUpgradableHTTPClientPipelineConfiguration(
                            upgradeConfiguration: NIOTypedHTTPClientUpgradeConfiguration(
                                upgradeRequestHead: head, upgraders: [upgrader],
                                notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) }))
                        // The relay sends its welcome right behind the 101 answer, often in the same packet:
                        // those bytes must reach the WebSocket decoder, not be dropped.
                        configuration.leftOverBytesStrategy = .forwardBytes
                        let negotiated = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                            configuration: configuration)
                        opening.withLockedValue { $0 = channel }
                        let timer = channel.eventLoop.scheduleTask(in: .seconds(seconds)) {
                            timedOut.withLockedValue { $0 = true }
                            channel.close(promise: nil)
                        }
                        negotiated.whenComplete { _ in timer.cancel() }
                        return negotiated
                    }
                }
        } catch {
            throw .unreachable(relay, reason: describe(error))
        }
        let upgrade: Upgrade
        do {
            upgrade = try await withTaskCancellationHandler {
                try await negotiation.get()
            } onCancel: {
                opening.withLockedValue { $0 }?.close(promise: nil)
            }
        } catch {
            if Task.isCancelled { throw .interrupted }
            if timedOut.withLockedValue({ $0 }) { throw .unreachable(relay, reason: "no WebSocket answer within \(seconds) seconds") }
            if error is NIOHTTPClientUpgradeError { throw .unreachable(relay, reason: "it did not accept a WebSocket connection at \(relay.path)") }
            throw .unreachable(relay, reason: describe(error))
        }
        guard case .websocket(let channel) = upgrade else {
            opening.withLockedValue { $0 }?.close(promise: nil)
            throw .unreachable(relay, reason: "it did not accept a WebSocket connection at \(relay.path)")
        }
        return WebSocketTransport(relay: relay, inbox: inbox, channel: channel)
    }

    /// The connection's frames, on its event loop: text messages to the inbox, pings answered, close
    /// frames honoured. It never waits for a write: a pong or a close frame goes out only while the
    /// socket takes it and is dropped otherwise, so a relay that stops reading cannot stop us reading.
    private final class FrameReader: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame
        private let inbox: TransportInbox

        init(inbox: TransportInbox) { self.inbox = inbox }

        /// The upgrade held back reads while it ran: ask for the next ones (nothing else would, and
        /// a relay's messages behind the bytes read during the upgrade would wait unread).
        func handlerAdded(context: ChannelHandlerContext) {
            context.read()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text:
                var payload = frame.unmaskedData
                inbox.push(.text(payload.readBytes(length: payload.readableBytes) ?? []))
            case .ping:
                answer(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData), context: context)
            case .connectionClose:
                inbox.push(.closed(reason: "the relay closed the connection"))
                answer(WebSocketTransport.closeFrame(), context: context)
                context.close(promise: nil)
            case .binary:
                inbox.push(.closed(reason: "the relay sent a binary message, which the mailbox protocol never uses"))
                context.close(promise: nil)
            default:
                break
            }
        }

        private func answer(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
            if context.channel.isWritable { context.writeAndFlush(wrapOutboundOut(frame), promise: nil) }
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            switch error {
            case NIOWebSocketError.invalidFrameLength, NIOWebSocketFrameAggregator.Error.accumulatedFrameSizeIsTooLarge:
                inbox.push(.tooLarge)
            default:
                inbox.push(.closed(reason: TextSafety.printable(String(describing: error))))
            }
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            inbox.push(.closed(reason: "the connection closed"))
            context.fireChannelInactive()
        }
    }

    fileprivate static func closeFrame() -> WebSocketFrame {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: .normalClosure)
        return WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
    }

    /// Waits for the next event until `deadline`; nil when the time ran out, `.interrupted` when the task is cancelled.
    func next(before deadline: ContinuousClock.Instant) async -> TransportEvent? { await inbox.next(before: deadline) }

    /// Sends one text message, waiting until the socket took it or `deadline` passed.
    /// - Returns: whether it went out; when not, the connection is closed (see `write`).
    @discardableResult
    func send(_ text: String, before deadline: ContinuousClock.Instant) async -> Bool {
        await write(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)), before: deadline)
    }

    /// Whether the connection was closed because a write outlived its deadline: the relay stopped reading.
    var hasStalled: Bool { stalledState.withLockedValue { $0 } }

    /// Says goodbye with a close frame (waiting for the socket until `deadline` at most) and closes
    /// the connection, waiting until it is closed.
    func close(before deadline: ContinuousClock.Instant) async {
        await write(Self.closeFrame(), before: deadline)
        channel.close(promise: nil)
        try? await channel.closeFuture.get()
    }

    /// Writes `frame` and waits until the socket took it: at most until `deadline` (or `writeGrace`,
    /// if that is later), and at most `writeGrace` once the calling task is cancelled (a cancelled task still writes: the
    /// relay is owed the release and the peer its answer). A write still waiting then closes the
    /// connection, which ends it: every later write would wait behind it.
    /// - Returns: whether the frame went out.
    @discardableResult
    private func write(_ frame: WebSocketFrame, before deadline: ContinuousClock.Instant) async -> Bool {
        let channel = channel, stalledState = stalledState
        // The timers that give up on this write. They and the write's completion all run on the event
        // loop, so a write that went out disarms them there, however late the waiting task resumes.
        let timers = NIOLockedValueBox<(ended: Bool, armed: [Scheduled<Void>])>((false, []))
        @Sendable func giveUp(at instant: ContinuousClock.Instant) {
            let wait = max(.zero, instant - ContinuousClock.now)
            let (seconds, attoseconds) = wait.components
            let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
            timers.withLockedValue { state in
                guard !state.ended else { return }
                state.armed.append(channel.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
                    guard !timers.withLockedValue({ $0.ended }) else { return }
                    stalledState.withLockedValue { $0 = true }
                    channel.close(promise: nil)
                })
            }
        }
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { _ in
            for timer in timers.withLockedValue({ state in
                state.ended = true
                return state.armed
            }) { timer.cancel() }
        }
        channel.writeAndFlush(frame, promise: written)
        giveUp(at: max(deadline, .now + Self.writeGrace))
        return await withTaskCancellationHandler {
            (try? await written.futureResult.get()) != nil
        } onCancel: {
            giveUp(at: .now + Self.writeGrace)
        }
    }

    private static func describe(_ error: Error) -> String {
        if let connect = error as? NIOConnectionError {
            if connect.dnsAAAAError != nil || connect.dnsAError != nil, connect.connectionErrors.isEmpty {
                return "its host name does not resolve"
            }
            if let first = connect.connectionErrors.first { return describe(first.error) }
        }
        if let io = error as? IOError { return String(cString: strerror(io.errnoCode)).lowercased() }
        if let channel = error as? ChannelError {
            if case .connectTimeout = channel { return "connection timed out" }
            return "the connection closed before a WebSocket answer"
        }
        return TextSafety.printable(String(describing: error))
    }
}
