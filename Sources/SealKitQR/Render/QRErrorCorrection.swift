/// How much of a QR code can be damaged or hidden and still scan.
///
/// More correction means more redundant modules, so less room for the payload:
/// see ``QRCode/maximumPayload(correction:)``.
public enum QRErrorCorrection: String, CaseIterable, Sendable {
    /// About 7% of the symbol can be restored.
    case low = "L"
    /// About 15% can be restored; the usual choice for screens and paper.
    case medium = "M"
    /// About 25% can be restored.
    case quartile = "Q"
    /// About 30% can be restored.
    case high = "H"
}
