/// Shares and opened backups never print their words or keys: `print`, string
/// interpolation, `String(reflecting:)` and `dump` show where a share belongs and how many keys a
/// backup holds, nothing that restores them.
extension ShareBackup.Share: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The share's place (group, member and thresholds, counted from 1): never its words.
    public var description: String {
        "ShareBackup.Share(group \(groupIndex + 1) of \(groupCount), share \(memberIndex + 1), "
            + "\(memberThreshold) restore the group, \(groupThreshold) groups the backup; words redacted)"
    }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The share's place only, so `dump` shows nothing of its value.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "groupIndex": groupIndex, "groupCount": groupCount, "groupThreshold": groupThreshold,
                "memberIndex": memberIndex, "memberThreshold": memberThreshold,
            ], displayStyle: .struct)
    }
}

extension ShareBackup.Made: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// How many shares each group has: never a share's words, nor the bundle (two logged shares and
    /// the bundle would restore the keys).
    public var description: String {
        "ShareBackup.Made(shares per group \(shares.map(\.count)); bundle and shares redacted)"
    }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// How many shares each group has, so `dump` shows no share and no bundle.
    public var customMirror: Mirror { Mirror(self, children: ["sharesPerGroup": shares.map(\.count)], displayStyle: .struct) }
}

extension PaperBackup.Contents: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// When the backup was made and the ids it holds: never a key.
    public var description: String {
        "PaperBackup.Contents(created \(created), ids \(keys.map(\.id.rawValue)); keys redacted)"
    }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The time and each id's keys as `KeyHistory` shows them (id, fingerprint, count), so `dump` shows no key.
    public var customMirror: Mirror { Mirror(self, children: ["created": created, "keys": keys], displayStyle: .struct) }
}
