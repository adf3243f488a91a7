/// Keys never print: `String(reflecting:)` and `dump` show what `description` shows.
extension KeyHistory: CustomDebugStringConvertible, CustomReflectable {
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The id, the current key's fingerprint and how many keys there are, so `dump` shows no key.
    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "fingerprint": fingerprint, "keyCount": keyCount], displayStyle: .struct)
    }
}

extension Keystore: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The namespace and where the keys live: never a key, even of an in-memory keystore.
    public var description: String { "Keystore(namespace '\(namespace)', \(location))" }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The namespace and the location, so `dump` shows no key.
    public var customMirror: Mirror {
        Mirror(self, children: ["namespace": namespace, "location": location], displayStyle: .struct)
    }
}
