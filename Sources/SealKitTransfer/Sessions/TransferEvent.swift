import Synchronization

/// What happens during a network key transfer, in order, for an app to show: ``KeyReceiver/events()`` and
/// ``KeySender/events()``.
public enum TransferEvent: Sendable, Equatable {
    /// The receiver has its code: show it (read it out; the sender types it). Only a receiver's events hold it.
    case codeAllocated(TransferCode)
    /// The other side joined and proved the code.
    case peerJoined
    /// The keys that arrived (receiver) or go out (sender): ids and fingerprints, for people to compare.
    case keysOffered([KeyOffer])
    /// The receiver stored the keys (and told the sender so).
    case stored
    /// The receiver stored nothing, for this reason.
    case refused(Refusal)
}

/// One transfer's events, for any number of subscribers. A transfer has at most five, so each is kept and a
/// subscriber gets every one from the transfer's start (a receiver's code is allocated before anyone can
/// subscribe); each stream finishes when the transfer ends.
final class TransferEventLog: Sendable {
    private struct State {
        var past: [TransferEvent] = []
        var subscribers: [Int: AsyncStream<TransferEvent>.Continuation] = [:]
        var nextToken = 0
        var finished = false
    }
    private let state = Mutex(State())

    init() {}

    /// A stream of every event so far and every later one, finished when the transfer ends.
    func subscribe() -> AsyncStream<TransferEvent> {
        let (stream, continuation) = AsyncStream<TransferEvent>.makeStream()
        let token = state.withLock { state -> Int? in
            for event in state.past { continuation.yield(event) }
            guard !state.finished else { return nil }
            defer { state.nextToken += 1 }
            state.subscribers[state.nextToken] = continuation
            return state.nextToken
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: token) }
        }
        return stream
    }

    /// Tells every subscriber, and every later one, of `event`; nothing once the transfer ended.
    func yield(_ event: TransferEvent) {
        let continuations = state.withLock { state -> [AsyncStream<TransferEvent>.Continuation] in
            guard !state.finished else { return [] }
            state.past.append(event)
            return Array(state.subscribers.values)
        }
        for continuation in continuations { continuation.yield(event) }
    }

    /// Ends every stream: the transfer is over. Later calls do nothing.
    func finish() {
        let continuations = state.withLock { state -> [AsyncStream<TransferEvent>.Continuation] in
            guard !state.finished else { return [] }
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
