import CQREncode
import SealKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A QR code symbol: a square grid of dark and light modules made by libqrencode.
///
/// The payload is always encoded in 8-bit byte mode, so any bytes (UTF-8 text, binary,
/// NUL included) scan back exactly as given; the smallest version that fits is chosen.
///
/// ```swift
/// let code = try QRCode("https://example.com", correction: .medium)
/// let png = try code.rendered(as: .png)
/// ```
public struct QRCode: Sendable {
    /// The modules along one side, without the quiet zone (21 for version 1, 177 for version 40).
    public let size: Int
    /// The QR version, 1 through 40; each step adds 4 modules per side.
    public let version: Int
    /// The error correction level the symbol was made with.
    public let correction: QRErrorCorrection
    /// Row-major, `size * size` entries, true for dark.
    private let modules: [Bool]

    /// Light modules every reader expects around the symbol, on each side.
    public static let quietZone = 4

    /// Encodes bytes as a QR code.
    /// - Parameters:
    ///   - payload: the bytes to carry; scanners in binary mode return exactly these.
    ///   - correction: the error correction level; medium by default.
    /// - Throws: `SealKitError`: `.missingInput` for an empty payload, `.tooLarge` when even
    ///   version 40 cannot hold `payload` at `correction`, `.fileSystem` when libqrencode fails.
    public init(_ payload: [UInt8], correction: QRErrorCorrection = .medium) throws(SealKitError) {
        do {
            try self.init(encoding: payload, correction: correction)
        } catch {
            throw SealKitError(error)
        }
    }

    /// The byte initializer, with the SealKitQR module's own error.
    package init(encoding payload: [UInt8], correction: QRErrorCorrection = .medium) throws(QRCodeError) {
        guard !payload.isEmpty else { throw .emptyPayload }
        let maximum = Self.maximumPayload(correction: correction)
        // Past the version-40 capacity libqrencode would refuse with ERANGE anyway;
        // checking first also keeps the count within the C `int` it takes.
        guard payload.count <= maximum else {
            throw .payloadTooLong(byteCount: payload.count, maximum: maximum, correction: correction)
        }
        errno = 0
        let symbol = payload.withUnsafeBufferPointer { bytes in
            // Version 0 asks libqrencode for the smallest version that fits.
            QRcode_encodeData(Int32(bytes.count), bytes.baseAddress, 0, correction.level)
        }
        guard let symbol else {
            let code = errno
            if code == ERANGE {
                throw .payloadTooLong(byteCount: payload.count, maximum: maximum, correction: correction)
            }
            throw .encodingFailed(reason: code == 0 ? "unknown error" : String(cString: strerror(code)))
        }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        // Bit 0 of each byte is the module's colour; the other bits describe its role.
        modules = (0..<width * width).map { symbol.pointee.data[$0] & 1 == 1 }
        size = width
        version = Int(symbol.pointee.version)
        self.correction = correction
    }

    /// Encodes a string's UTF-8 bytes as a QR code.
    /// - Parameters:
    ///   - text: the text to carry.
    ///   - correction: the error correction level; medium by default.
    /// - Throws: `SealKitError`, as for the byte initializer.
    public init(_ text: String, correction: QRErrorCorrection = .medium) throws(SealKitError) {
        try self.init(Array(text.utf8), correction: correction)
    }

    /// Whether the module at column `x`, row `y` is dark.
    ///
    /// Coordinates outside the symbol are light, as the quiet zone around it is.
    /// - Returns: true for a dark module.
    public func isDark(x: Int, y: Int) -> Bool {
        guard (0..<size).contains(x), (0..<size).contains(y) else { return false }
        return modules[y * size + x]
    }

    /// The most bytes a QR code (version 40, byte mode) holds at a correction level.
    /// - Parameter correction: the error correction level.
    /// - Returns: 2953 for L, 2331 for M, 1663 for Q, 1273 for H (ISO/IEC 18004, table 7).
    public static func maximumPayload(correction: QRErrorCorrection) -> Int {
        switch correction {
        case .low: 2953
        case .medium: 2331
        case .quartile: 1663
        case .high: 1273
        }
    }
}

extension QRErrorCorrection {
    package var level: QRecLevel {
        switch self {
        case .low: QR_ECLEVEL_L
        case .medium: QR_ECLEVEL_M
        case .quartile: QR_ECLEVEL_Q
        case .high: QR_ECLEVEL_H
        }
    }
}
