/// An auditor never prints the keys it checks against.
extension Auditor: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The schema's path, how many key rings it holds and the kinds it ignores: never a key.
    public var description: String {
        "Auditor(schema \(schema?.path ?? "none"), \(keys.count) key rings redacted, ignoring \(ignoring.map(\.rawValue).sorted()))"
    }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The schema and the kinds ignored, so `dump` shows no key.
    public var customMirror: Mirror {
        Mirror(self, children: ["schema": schema as Any, "keyRingCount": keys.count, "ignoring": ignoring], displayStyle: .struct)
    }
}
