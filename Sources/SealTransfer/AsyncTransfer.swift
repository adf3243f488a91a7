import SealCore
import SealKeystore
import SealMailbox

/// What happens during a network key transfer, in order, for an app to show.
public enum TransferEvent: Sendable, Equatable {
    /// The receiver has its code: show it (read it out; the sender types it).
    case codeAllocated(String)
    /// The other side joined and proved the code.
    case peerJoined
    /// The keys that arrived (receiver) or go out (sender): ids and fingerprints, for people to compare.
    case keysOffered([KeyOffer])
    /// The receiver stored the keys (and told the sender so).
    case stored
    /// The receiver stored nothing, for this reason.
    case refused(Refusal)
}

/// One id's keys as a transfer shows them: never key material.
public struct KeyOffer: Sendable, Equatable {
    /// The id the keys belong to.
    public let id: KeyID
    /// The current key's fingerprint, for people to compare on both screens.
    public let fingerprint: KeyFingerprint
    /// How many keys travel: the current one and retired ones.
    public let keyCount: Int

    /// What a person is shown of `history`: its id, its current key's fingerprint, and how many keys it holds.
    public init(_ history: KeyHistory) {
        id = history.id
        fingerprint = history.current.fingerprint
        keyCount = history.versions.count
    }
}

/// A receiver's decision not to store offered keys: throw it from the `store` callback of
/// `AsyncKeyTransfer.receive`, and the sender is told `reason`.
package struct KeysDeclined: Error, Equatable, Sendable {
    /// What the sender is told.
    package let reason: Refusal
    /// Declines with `reason` (by default, that the person said no).
    package init(_ reason: Refusal = .declined) { self.reason = reason }
}

/// Network key transfer for async code: `receive` and `send` are `async throws`, wait without
/// holding a thread (swift-nio's event loop underneath), report progress as
/// `TransferEvent`s, and end within their `timeout` whatever the relay does (a relay that stops
/// reading included), and on Task cancellation as on Ctrl-C: the wait stops, the release and the
/// mailbox's close are sent (a write the relay does not take is given up after a second), and a
/// receiver that already holds the keys tells the sender it stored nothing.
package enum AsyncKeyTransfer {
    /// Receives keys: allocates a code (`.codeAllocated`), waits for the sender, and hands the keys to
    /// `store`, which decides. When `store` returns, the sender is told the keys are stored; when it
    /// throws (`KeysDeclined` for a reason of the app's; `KeystoreError.conflictingKey` is
    /// `.conflict`; anything else `.failed`; cancellation `.cancelled`), the sender is told nothing
    /// was stored. The answer is always sent, once.
    /// - Returns: the keys that `store` accepted.
    package static func receive(
        relay: RelayURL, timeout: Int = 600, events: AsyncStream<TransferEvent>.Continuation? = nil,
        store: @Sendable ([KeyHistory]) async throws -> Void
    ) async throws -> [KeyHistory] {
        let receiver = try await NetworkKeyReceiver(relay: relay, timeout: timeout)
        events?.yield(.codeAllocated(receiver.code.revealedText))
        let keys = try await receiver.receiveKeys(onPeer: { events?.yield(.peerJoined) })
        events?.yield(.keysOffered(keys.map(KeyOffer.init)))
        do {
            try Task.checkCancellation()
            try await store(keys)
        } catch {
            let reason = refusal(for: error)
            await receiver.answer(.refused(reason))
            events?.yield(.refused(reason))
            throw error
        }
        await receiver.answer(.stored)
        events?.yield(.stored)
        return keys
    }

    /// Sends `keys` to the receiver whose code is `code`, and returns once it confirmed storing them
    /// (`.stored`); `ReceiverRefusedError` when it stored nothing.
    package static func send(
        _ keys: [KeyHistory], code: WormholeCode, relay: RelayURL, timeout: Int = 600,
        events: AsyncStream<TransferEvent>.Continuation? = nil
    ) async throws {
        let sender = try await NetworkKeySender(relay: relay, code: code, timeout: timeout)
        let offer = keys.map(KeyOffer.init)
        do {
            try await sender.send(keys, onPeer: {
                events?.yield(.peerJoined)
                events?.yield(.keysOffered(offer))
            })
        } catch let refused as ReceiverRefusedError {
            events?.yield(.refused(refused.reason))
            throw refused
        }
        events?.yield(.stored)
    }

    static func refusal(for error: Error) -> Refusal {
        switch error {
        case let declined as KeysDeclined: return declined.reason
        case is CancellationError: return .cancelled
        case KeystoreError.conflictingKey: return .conflict
        default: return .failed
        }
    }
}
