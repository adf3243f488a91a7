import SealKit

/// A magic-wormhole mailbox relay both ends of a network transfer meet on: a `ws://` address, checked when it is
/// made, so that ``KeyReceiver`` and ``KeySender`` are never given one that is not a relay.
///
/// ```swift
/// let relay = try Relay("ws://relay.example:4000")   // the mailbox endpoint /v1 on it
/// let receiver = try await KeyReceiver(relay: relay)
/// ```
///
/// Only plain `ws://` is spoken: every message between the two ends is sealed with the key the code proves, so TLS
/// would hide only what the relay sees anyway.
public struct Relay: Sendable, Equatable, CustomStringConvertible {
    /// The public relay magic-wormhole's own clients use, where nothing else is configured.
    public static let `public` = Relay(url: .publicRelay)

    package let url: RelayURL

    package init(url: RelayURL) {
        self.url = url
    }

    /// Reads a relay's address as a person gives it: a `ws://` URL such as `ws://relay.example:4000`. An address
    /// without a path is the mailbox endpoint `/v1` on it; any other path is kept.
    /// - Parameter address: the relay's address.
    /// - Throws: `SealKitError.Reason.invalidArgument` for an address that is no relay (`wss://`, no host, a port
    ///   out of range, a space or a control character).
    public init(_ address: String) throws(SealKitError) {
        do {
            url = try RelayURL(endpoint: address)
        } catch {
            throw SealKitError(transferFailure: error)
        }
    }

    /// The relay's WebSocket URL, such as `ws://relay.magic-wormhole.io:4000/v1`.
    public var description: String { url.description }
}
