import SealKit

// Transfer codes, links and the sessions holding them never print their secret:
// `print`, string interpolation, `String(reflecting:)` and `dump` show the public part only.

extension TransferCode: CustomDebugStringConvertible, CustomReflectable {
    /// The same as `description`: the code's number only.
    public var debugDescription: String { description }
    /// The code's number only, so `dump` shows no word of it.
    public var customMirror: Mirror { Mirror(self, children: ["number": code.nameplate], displayStyle: .struct) }
}

extension TransferLink: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The relay the link names: never its code.
    public var description: String { "TransferLink(relay \(relay ?? "none"), code redacted)" }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The relay only, so `dump` shows no code.
    public var customMirror: Mirror { Mirror(self, children: ["relay": relay as Any], displayStyle: .struct) }
}

extension OfflineKeyReceiver: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Its code's number only: never the code or the private key.
    public var description: String { "OfflineKeyReceiver(code \(code.description), private key redacted)" }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The code as `TransferCode` shows it (its number), so `dump` shows no secret.
    public var customMirror: Mirror { Mirror(self, children: ["code": code], displayStyle: .class) }
}

extension KeyReceiver: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The relay and the code's number: never the code's words or the session's keys.
    public nonisolated var description: String { "KeyReceiver(relay \(relay), code \(code.description))" }
    /// The same as `description`.
    public nonisolated var debugDescription: String { description }
    /// The relay and the code as `TransferCode` shows it, so `dump` shows no secret.
    public nonisolated var customMirror: Mirror { Mirror(self, children: ["relay": relay, "code": code], displayStyle: .class) }
}

extension KeySender: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Nothing of the code or the session's keys.
    public nonisolated var description: String { "KeySender(code redacted)" }
    /// The same as `description`.
    public nonisolated var debugDescription: String { description }
    /// No children, so `dump` shows no secret.
    public nonisolated var customMirror: Mirror { Mirror(self, children: [:], displayStyle: .class) }
}

/// A transfer's events never print the code: `.codeAllocated`'s code shows as `redacted`
/// in `print`, string interpolation, `String(reflecting:)` and `dump`; the other events show as they are.
extension TransferEvent: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The event, its code redacted.
    public var description: String {
        switch self {
        case .codeAllocated: return "codeAllocated(redacted)"
        case .peerJoined: return "peerJoined"
        case .keysOffered(let offers): return "keysOffered(\(offers))"
        case .stored: return "stored"
        case .refused(let refusal): return "refused(\(refusal))"
        }
    }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The event's case and its public value, so `dump` shows no code.
    public var customMirror: Mirror {
        switch self {
        case .codeAllocated: return Mirror(self, children: ["codeAllocated": "redacted"], displayStyle: .enum)
        case .keysOffered(let offers): return Mirror(self, children: ["keysOffered": offers], displayStyle: .enum)
        case .refused(let refusal): return Mirror(self, children: ["refused": refusal], displayStyle: .enum)
        case .peerJoined, .stored: return Mirror(self, children: [:], displayStyle: .enum)
        }
    }
}
