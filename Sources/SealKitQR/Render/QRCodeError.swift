import SealKit

/// Why a payload could not become a QR code, or a QR code an image.
///
/// Descriptions never include the payload: it may be a key or a secret.
package enum QRCodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// There is nothing to encode.
    case emptyPayload
    /// The payload does not fit even the largest QR code (version 40) at this correction level.
    case payloadTooLong(byteCount: Int, maximum: Int, correction: QRErrorCorrection)
    /// libqrencode failed for a reason other than size, such as running out of memory.
    case encodingFailed(reason: String)
    /// libpng could not write the image.
    case renderingFailed(format: QRFormat, reason: String)

    package var description: String {
        switch self {
        case .emptyPayload:
            return "nothing to encode: the QR payload is empty"
        case .payloadTooLong(let count, let maximum, let correction):
            return "too long for a QR code: \(count) bytes, but at error correction \(correction.rawValue) "
                + "a QR code holds at most \(maximum) bytes"
        case .encodingFailed(let reason):
            return "QR encoding failed: \(reason)"
        case .renderingFailed(let format, let reason):
            return "could not write the QR code as \(format.rawValue): \(reason)"
        }
    }
}

extension SealKitError {
    /// A QR code that could not be made, with its message unchanged.
    package init(_ error: QRCodeError) {
        switch error {
        case .emptyPayload: self.init(.missingInput, error.description)
        case .payloadTooLong(_, let maximum, _): self.init(.tooLarge, error.description, detail: .qrPayloadTooLong, limit: maximum)
        case .encodingFailed, .renderingFailed: self.init(.fileSystem, error.description)
        }
    }
}
