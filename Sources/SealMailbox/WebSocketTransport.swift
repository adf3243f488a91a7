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

/// Events from the connection's reading task, awaited by the one task that runs the protocol.
///
/// A wait ends with the next event, with nil at its deadline, or with `.interrupted` when the
/// waiting task is cancelled, whichever comes first; no thread is held meanwhile.
final class TransportInbox: Sendable {
    private struct State {
        var events: [TransportEvent] = []
        var head = 0
        var ended = false
        var queuedBytes = 0
        /// The one task waiting, and which wait it is (a late timer or cancellation must not end the next one).
        var waiter: (ticket: Int, continuation: CheckedContinuation<TransportEvent?, Never>)?
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

        /// The waiting task and the event to hand it, taking the event off the queue.
        mutating func takeWaiter() -> (CheckedContinuation<TransportEvent?, Never>, TransportEvent)? {
            guard let waiter, let event = pop() else { return nil }
            self.waiter = nil
            return (waiter.continuation, event)
        }
    }
    private let state = NIOLockedValueBox(State())
    /// What may wait unread. The protocol reads as fast as messages come, so only a relay
    /// sending far more than any transfer needs fills this; then the inbox ends with `.flooded`.
    static let maximumQueuedEvents = 4096
    static let maximumQueuedBytes = 8 << 20

    /// Queues an event; after a `.closed` or `.flooded` nothing more is queued.
    func push(_ event: TransportEvent) {
        let handOver = state.withLockedValue { state -> (CheckedContinuation<TransportEvent?, Never>, TransportEvent)? in
            guard !state.ended else { return nil }
            if case .closed = event { state.ended = true }
            if case .text(let bytes) = event {
                state.queuedBytes += bytes.count
                if state.events.count - state.head >= Self.maximumQueuedEvents || state.queuedBytes > Self.maximumQueuedBytes {
                    state.ended = true
                    state.events.append(.flooded)
                    return state.takeWaiter()
                }
            }
            state.events.append(event)
            return state.takeWaiter()
        }
        if let (continuation, event) = handOver { continuation.resume(returning: event) }
    }

    /// The next event; nil when none arrives before `deadline`, `.interrupted` when the calling task is cancelled.
    func next(before deadline: ContinuousClock.Instant) async -> TransportEvent? {
        if let ready = state.withLockedValue({ $0.pop() }) { return ready }
        let ticket = state.withLockedValue { state in
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
                let answer = state.withLockedValue { state -> TransportEvent?? in
                    if let event = state.pop() { return .some(event) }
                    if Task.isCancelled { return .some(.interrupted) }
                    if ContinuousClock.now >= deadline { return .some(nil) }
                    state.waiter = (ticket, continuation)
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
        let waiter = state.withLockedValue { state -> CheckedContinuation<TransportEvent?, Never>? in
            guard let waiter = state.waiter, waiter.ticket == ticket else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: event)
    }
}

/// One WebSocket connection to a mailbox server, on swift-nio's async interfaces: the typed
/// WebSocket client upgrade gives a `NIOAsyncChannel`, a task of the connection's own reads its
/// frames into the inbox (answering pings), and sends go through its outbound writer. Incoming
/// messages are bounded by `maximumMessageBytes`.
final class WebSocketTransport: Sendable {
    let relay: RelayURL
    private let inbox: TransportInbox
    private let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    private let connection: Task<Void, Never>

    private init(relay: RelayURL, inbox: TransportInbox, outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, connection: Task<Void, Never>) {
        self.relay = relay
        self.inbox = inbox
        self.outbound = outbound
        self.connection = connection
    }

    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
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
                                    return .websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
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
        let inbox = TransportInbox()
        var connection: Task<Void, Never>?
        let outbound = await withCheckedContinuation { ready in
            connection = Task {
                // executeThenClose always runs its body, and closes the channel when the body returns.
                try? await channel.executeThenClose { inbound, outbound in
                    ready.resume(returning: outbound)
                    await read(inbound, answeringWith: outbound, into: inbox)
                }
            }
        }
        return WebSocketTransport(relay: relay, inbox: inbox, outbound: outbound, connection: connection!)
    }

    /// The connection's reading loop: text messages to the inbox, pings answered, close frames honoured.
    private static func read(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, answeringWith outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>,
        into inbox: TransportInbox
    ) async {
        do {
            for try await frame in inbound {
                switch frame.opcode {
                case .text:
                    var payload = frame.unmaskedData
                    inbox.push(.text(payload.readBytes(length: payload.readableBytes) ?? []))
                case .ping:
                    try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
                case .connectionClose:
                    inbox.push(.closed(reason: "the relay closed the connection"))
                    try? await outbound.write(closeFrame())
                    return
                case .binary:
                    inbox.push(.closed(reason: "the relay sent a binary message, which the mailbox protocol never uses"))
                    return
                default:
                    break
                }
            }
            inbox.push(.closed(reason: "the connection closed"))
        } catch NIOWebSocketError.invalidFrameLength {
            inbox.push(.tooLarge)
        } catch NIOWebSocketFrameAggregator.Error.accumulatedFrameSizeIsTooLarge {
            inbox.push(.tooLarge)
        } catch {
            inbox.push(.closed(reason: printable(String(describing: error))))
        }
    }

    private static func closeFrame() -> WebSocketFrame {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: .normalClosure)
        return WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
    }

    /// Waits for the next event until `deadline`; nil when the time ran out, `.interrupted` when the task is cancelled.
    func next(before deadline: ContinuousClock.Instant) async -> TransportEvent? { await inbox.next(before: deadline) }

    /// Sends one text message; returns once swift-nio has it (false when the connection failed).
    ///
    /// It goes out even from a cancelled task: cancelling a transfer ends its waits, yet the relay is
    /// still owed the release and the peer its answer. `NIOAsyncWriter` refuses writes from a
    /// cancelled task, so the write runs in a task of its own.
    @discardableResult
    func send(_ text: String) async -> Bool {
        await write(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)))
    }

    /// Says goodbye with a close frame and closes the connection, waiting until it is closed.
    func close() async {
        await write(Self.closeFrame())
        outbound.finish()
        connection.cancel()
        await connection.value
    }

    /// Hands `frame` to swift-nio from a task of its own, so that a cancelled caller's write still goes out.
    @discardableResult
    private func write(_ frame: WebSocketFrame) async -> Bool {
        await Task { [outbound] in
            do {
                try await outbound.write(frame)
                return true
            } catch {
                return false
            }
        }.value
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
        return printable(String(describing: error))
    }
}
