/// A choice never prints the codes it took: they may be a transfer code, a reply holding
/// keys, or a backup. `print`, string interpolation, `String(reflecting:)` and `dump` show counts and
/// the other codes' kinds, which `QRScanner/choose(_:from:in:)` already wrote without their contents.
extension QRChoice: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// How many codes were taken (redacted) and the kinds of the others.
    public var description: String {
        "QRChoice(\(codes.count) code(s) redacted" + (ignored.isEmpty ? ")" : ", also held: \(ignored.joined(separator: "; ")))")
    }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The count of codes taken and the other codes' kinds, so `dump` shows no code.
    public var customMirror: Mirror {
        Mirror(self, children: ["codes": "\(codes.count) redacted", "ignored": ignored], displayStyle: .struct)
    }
}
