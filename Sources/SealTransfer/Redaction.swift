/// A transfer's events never print the code (issue 36): `.codeAllocated`'s code shows as `redacted`
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
