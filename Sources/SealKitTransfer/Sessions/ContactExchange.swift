import SealKit

/// Two people's sharing identities swapped through a magic-wormhole mailbox (`sealkit contacts exchange`): the code,
/// read aloud or shown, authenticates both sides through SPAKE2 as a key transfer's does, so each identity that
/// arrives is the one the other person's device sent.
///
/// One side starts without a code (``code`` is then the one allocated, to show), the other joins with it; both then
/// call ``exchange(_:)``.
@_spi(CLI) public actor ContactExchange {
    /// The application id: a contact exchange never meets a key transfer on the same relay.
    static let appID = "sealkit/contact-exchange/v1"
    /// The identity text is one line of about a hundred characters; anything longer is not one.
    static let maximumMessageBytes = 4096

    private let wormhole: Wormhole
    /// The code allocated for the other side to type, when this side started; nil when it joined one.
    public nonisolated let code: String?

    /// Connects to `relay`, and allocates a code (`code` nil) or joins the one given.
    /// - Throws: `SealKitError`: `.invalidArgument` for a code or relay that is not one, `.relayUnavailable`,
    ///   `.timedOut`, `.protocolViolation`, `.cancelled`.
    public init(relay: Relay = .public, code: String?, timeout: Duration) async throws(SealKitError) {
        do {
            let wormhole = try await Wormhole(
                relay: relay.url, appID: Self.appID, appVersions: .object([]), timeout: timeout.wholeSeconds)
            self.wormhole = wormhole
            if let code {
                try await wormhole.join(code: try WormholeCode(parsing: code), requiringReceiver: false)
                self.code = nil
            } else {
                self.code = try await wormhole.allocateCode().revealedText
            }
        } catch {
            throw SealKitError(transferFailure: error)
        }
    }

    /// Sends `identity` once the other side proved the code, and returns the identity text it sent.
    /// - Throws: `SealKitError`: `.wrongCode` when the codes differ, `.timedOut`, `.relayUnavailable`,
    ///   `.protocolViolation` for a message that is not one line of text.
    public func exchange(_ identity: String) async throws(SealKitError) -> String {
        do {
            _ = try await wormhole.waitForPeer()
            try await wormhole.send(Array(identity.utf8))
            guard let received = try await wormhole.receive(), received.count <= Self.maximumMessageBytes,
                let text = received.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }), !text.contains("\n")
            else {
                await wormhole.close(mood: .errory)
                throw SealKitError(.protocolViolation, "the other side sent no identity text: it is not exchanging contacts")
            }
            await wormhole.close(mood: .happy)
            return text
        } catch let error as SealKitError {
            throw error
        } catch {
            await wormhole.close(mood: .errory)
            throw SealKitError(transferFailure: error)
        }
    }

    /// Ends the exchange at once (Ctrl-C): the code is released and the connection closed.
    @discardableResult
    public func abandon() async -> Bool { await wormhole.abandon(mood: .lonely) }
}
