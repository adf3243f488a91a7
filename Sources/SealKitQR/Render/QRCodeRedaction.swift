/// A QR code never prints its modules: they spell its payload, which may be a transfer
/// link or a backup. `print`, string interpolation, `String(reflecting:)` and `dump` show its size.
extension QRCode: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The version, the size and the correction level: never the modules.
    public var description: String { "QRCode(version \(version), \(size)x\(size) modules redacted, correction \(correction))" }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The size, version and correction level, so `dump` shows no module.
    public var customMirror: Mirror {
        Mirror(self, children: ["size": size, "version": version, "correction": correction], displayStyle: .struct)
    }
}
