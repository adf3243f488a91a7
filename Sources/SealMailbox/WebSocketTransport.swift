import Dispatch
import Glibc
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// What the connection hands to the protocol's thread, in arrival order.
enum TransportEvent: Sendable, Equatable {
    /// The WebSocket upgrade finished; messages may flow.
    case opened
    /// One whole text message (fragments already joined).
    case text([UInt8])
    /// The connection ended or failed; `reason` says why, for the one-line error.
    case closed(reason: String)
    /// A message was larger than the bound.
    case tooLarge
    /// The user asked to stop (Ctrl-C).
    case interrupted
    /// More arrived than `TransportInbox` holds: the relay is flooding us.
    case flooded
}

/// Events from swift-nio's event loop, waited for by the one thread that runs the protocol.
///
/// `@unchecked Sendable`: `events`, `head`, `ended` and `queuedBytes` are touched only under `lock`.
final class TransportInbox: @unchecked Sendable {
    private let lock = NIOLock()
    private var events: [TransportEvent] = []
    private var head = 0
    private var ended = false
    private var queuedBytes = 0
    private let available = DispatchSemaphore(value: 0)
    /// What may wait unread. The protocol thread reads as fast as messages come, so only a relay
    /// sending far more than any transfer needs fills this; then the inbox ends with `.flooded`.
    static let maximumQueuedEvents = 4096
    static let maximumQueuedBytes = 8 << 20

    /// Queues an event; after a `.closed` or `.flooded` nothing more is queued.
    func push(_ event: TransportEvent) {
        let queued = lock.withLock { () -> Bool in
            if ended, event != .interrupted { return false }
            if case .closed = event { ended = true }
            if case .text(let bytes) = event {
                queuedBytes += bytes.count
                if events.count - head >= Self.maximumQueuedEvents || queuedBytes > Self.maximumQueuedBytes {
                    ended = true
                    events.append(.flooded)
                    return true
                }
            }
            events.append(event)
            return true
        }
        if queued { available.signal() }
    }

    /// The next event, or nil when none arrives before `deadline`.
    func next(deadline: DispatchTime) -> TransportEvent? {
        guard available.wait(timeout: deadline) == .success else { return nil }
        return lock.withLock {
            let event = events[head]
            head += 1
            if case .text(let bytes) = event { queuedBytes -= bytes.count }
            if head > 64 && head * 2 > events.count {
                events.removeFirst(head)
                head = 0
            }
            return event
        }
    }
}

/// One WebSocket connection to a mailbox server, through swift-nio's HTTP client upgrade.
///
/// Blocking by design: the protocol runs on the caller's thread and waits for `next`;
/// the event loop only moves frames. Incoming messages are bounded by `maximumMessageBytes`.
///
/// `@unchecked Sendable`: every stored property is immutable; a swift-nio `Channel` is thread-safe,
/// and the inbox has its own lock.
final class WebSocketTransport: @unchecked Sendable {
    let relay: RelayURL
    private let inbox: TransportInbox
    private let channel: Channel

    private init(relay: RelayURL, channel: Channel, inbox: TransportInbox) {
        self.relay = relay
        self.channel = channel
        self.inbox = inbox
    }

    /// Connects and upgrades to WebSocket, waiting at most `timeout` seconds in all.
    /// - Throws: `MailboxError.unreachable` naming the relay when it cannot be reached or is not a WebSocket server.
    static func connect(to relay: RelayURL, timeout: Int, maximumMessageBytes: Int) throws(MailboxError) -> WebSocketTransport {
        let inbox = TransportInbox()
        let group = MultiThreadedEventLoopGroup.singleton
        let requestKey = NIOWebSocketClientUpgrader.randomRequestKey()
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(Int64(max(1, timeout))))
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                let upgrader = NIOWebSocketClientUpgrader(
                    requestKey: requestKey, maxFrameSize: maximumMessageBytes, automaticErrorHandling: true,
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            let sync = channel.pipeline.syncOperations
                            try sync.addHandler(NIOWebSocketFrameAggregator(
                                minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 4096,
                                maxAccumulatedFrameSize: maximumMessageBytes))
                            try sync.addHandler(WebSocketFrameHandler(inbox: inbox))
                            inbox.push(.opened)
                        }
                    })
                let configuration: NIOHTTPClientUpgradeSendableConfiguration = (
                    upgraders: [upgrader], completionHandler: { _ in })
                // The relay sends its welcome right behind the 101 answer, often in the same packet:
                // those bytes must reach the WebSocket decoder, not be dropped.
                return channel.pipeline.addHTTPClientHandlers(
                    leftOverBytesStrategy: .forwardBytes, withClientUpgrade: configuration
                ).flatMapThrowing {
                    // On the channel's event loop already: the handler is added synchronously, so it never crosses threads.
                    try channel.pipeline.syncOperations.addHandler(ConnectionWatcher(inbox: inbox, relay: relay))
                }
            }
        let channel: Channel
        do {
            channel = try bootstrap.connect(host: relay.host, port: relay.port).wait()
        } catch {
            throw .unreachable(relay, reason: describe(error))
        }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: relay.path)
        head.headers.add(name: "Host", value: relay.hostHeader)
        head.headers.add(name: "Content-Length", value: "0")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)

        switch inbox.next(deadline: .now() + .seconds(max(1, timeout))) {
        case .opened:
            return WebSocketTransport(relay: relay, channel: channel, inbox: inbox)
        case .closed(let reason):
            channel.close(promise: nil)
            throw .unreachable(relay, reason: reason)
        default:
            channel.close(promise: nil)
            throw .unreachable(relay, reason: "no WebSocket answer within \(timeout) seconds")
        }
    }

    /// Waits for the next event until `deadline`; nil when the time ran out.
    func next(deadline: DispatchTime) -> TransportEvent? { inbox.next(deadline: deadline) }

    /// Makes the waiting thread stop at its next event (from a signal handler's queue).
    func interrupt() { inbox.push(.interrupted) }

    /// Sends one text message; returns once it is handed to the socket (or the connection failed).
    @discardableResult
    func send(_ text: String) -> Bool {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)
        do {
            try channel.writeAndFlush(frame).wait()
            return true
        } catch {
            return false
        }
    }

    /// Says goodbye with a close frame and closes the socket.
    func close() {
        guard channel.isActive else { return }
        var data = channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: .normalClosure)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
        _ = try? channel.writeAndFlush(frame).wait()
        _ = try? channel.close().wait()
    }

    private static func describe(_ error: Error) -> String {
        if let connect = error as? NIOConnectionError {
            if connect.dnsAAAAError != nil || connect.dnsAError != nil, connect.connectionErrors.isEmpty {
                return "its host name does not resolve"
            }
            if let first = connect.connectionErrors.first {
                if let io = first.error as? IOError { return String(cString: strerror(io.errnoCode)).lowercased() }
                return printable(String(describing: first.error))
            }
        }
        if error is ChannelError { return "connection timed out" }
        return printable(String(describing: error))
    }
}

/// Before the upgrade: turns a refused upgrade or a dropped connection into one event.
private final class ConnectionWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let inbox: TransportInbox
    let relay: RelayURL

    init(inbox: TransportInbox, relay: RelayURL) {
        self.inbox = inbox
        self.relay = relay
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // After the upgrade, frames pass on to the frame handler; before it, an HTTP answer that
        // is not an upgrade also arrives as an error, which `errorCaught` reports.
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        let reason: String
        if error is NIOHTTPClientUpgradeError {
            reason = "it did not accept a WebSocket connection at \(relay.path)"
        } else if let frameError = error as? NIOWebSocketError, frameError == .invalidFrameLength {
            inbox.push(.tooLarge)
            context.close(promise: nil)
            return
        } else {
            reason = printable(String(describing: error))
        }
        inbox.push(.closed(reason: reason))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.push(.closed(reason: "the connection closed"))
        context.fireChannelInactive()
    }
}

/// After the upgrade: text messages to the inbox, pings answered, close frames honoured.
private final class WebSocketFrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame
    let inbox: TransportInbox

    init(inbox: TransportInbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            var payload = frame.unmaskedData
            inbox.push(.text(payload.readBytes(length: payload.readableBytes) ?? []))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            inbox.push(.closed(reason: "the relay closed the connection"))
            var data = context.channel.allocator.buffer(capacity: 2)
            data.write(webSocketErrorCode: .normalClosure)
            let reply = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
            // Close once the reply is written; the write's future completes on this event loop, so the
            // context is used on its own loop (NIOLoopBound checks that, and tells the compiler).
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(reply)).whenComplete { _ in loopBound.value.close(promise: nil) }
        case .binary:
            inbox.push(.closed(reason: "the relay sent a binary message, which the mailbox protocol never uses"))
            context.close(promise: nil)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let frameError = error as? NIOWebSocketError, frameError == .invalidFrameLength {
            inbox.push(.tooLarge)
        } else {
            inbox.push(.closed(reason: printable(String(describing: error))))
        }
        context.close(promise: nil)
    }
}
