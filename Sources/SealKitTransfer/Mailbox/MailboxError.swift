import SealKit

/// Why a wormhole through a mailbox server failed. Each description is one line that says
/// what went wrong and what to do; none repeats the code, a key or a message body.
package enum MailboxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The relay address cannot be used.
    case badRelay(String)
    /// No WebSocket connection to the relay could be made.
    case unreachable(RelayURL, reason: String)
    /// The relay answered the connection with an error in its welcome.
    case unwelcome(RelayURL, message: String)
    /// The relay reported an error for one of our requests.
    case server(String)
    /// The relay closed the connection before the transfer ended.
    case connectionLost(RelayURL)
    /// The relay or the peer broke the protocol.
    case protocolViolation(String)
    /// A message from the relay exceeds what this client reads.
    case messageTooLarge(limit: Int)
    /// The code is not of the form `NAMEPLATE-word-word`.
    case badCode(String)
    /// Nobody joined, or the peer went quiet, for this many seconds.
    case timedOut(seconds: Int)
    /// The peer's messages do not decrypt: the two sides typed different codes (or someone guessed).
    case wrongCode
    /// The peer speaks magic-wormhole but not this application's protocol.
    case notSealKit(String)
    /// The transfer was cancelled: its task was, or the user pressed Ctrl-C.
    case interrupted
    /// The relay (or someone on the path to it) sent more than a transfer ever needs, with no PAKE.
    case flooded(RelayURL, reason: String)
    /// The relay stopped taking our messages: one waited this many seconds to go out (the
    /// connection is closed then, since every later message would wait behind it).
    case stalled(RelayURL, seconds: Int)
    /// The relay holds no transfer under the code's number when the sender joins: the receiver that
    /// showed the code cancelled (or timed out, or another sender already used the code).
    case receiverGone(nameplate: String)

    package var description: String {
        switch self {
        case .badRelay(let reason): return reason
        case .unreachable(let relay, let reason):
            return "cannot reach the mailbox relay \(relay) (\(reason))"
        case .unwelcome(let relay, let message):
            return "the mailbox relay \(relay) refused the connection: \(message)"
        case .server(let message): return "the mailbox relay reported an error: \(message)"
        case .connectionLost(let relay):
            return "the connection to the mailbox relay \(relay) was lost before the transfer finished; nothing was transferred, try again"
        case .protocolViolation(let reason): return "the transfer broke off: \(reason)"
        case .messageTooLarge(let limit): return "the transfer broke off: a message from the relay is larger than \(limit) bytes"
        case .badCode(let reason): return reason
        case .timedOut(let seconds):
            return "nobody completed the transfer within \(seconds) second\(seconds == 1 ? "" : "s"): start again and enter the code on the other device sooner"
        case .wrongCode:
            return "wrong code: the other side used a different code (or someone tried to guess it); nothing was transferred, start again with a new code"
        case .notSealKit(let reason): return "the other side is not a SealKit key transfer: \(reason)"
        case .interrupted: return "interrupted: the transfer was cancelled"
        case .receiverGone(let nameplate):
            return "the receiver cancelled: the mailbox relay holds no transfer under this code's number (\(nameplate)), "
                + "as when the receiver pressed Ctrl-C or timed out (or another sender used the code); nothing was sent"
        case .flooded(let relay, let reason):
            return "the transfer was ended: the relay \(relay) (or someone on the path to it) flooded it: \(reason); "
                + "nothing was stored. Use a relay you trust, over a network path you trust (your own relay, or a VPN or SSH tunnel to it)"
        case .stalled(let relay, let seconds):
            return "the mailbox relay \(relay) stopped taking messages (one waited \(seconds) second\(seconds == 1 ? "" : "s") to go out)"
        }
    }

    /// What exactly happened, where the public reason covers cases a person would set right differently.
    package var detail: SealKitError.Detail? {
        switch self {
        case .unreachable: return .relayUnreachable
        case .stalled: return .relayStalled
        case .timedOut: return .nobodyCompleted
        case .receiverGone: return .receiverGone
        default: return nil
        }
    }
}
