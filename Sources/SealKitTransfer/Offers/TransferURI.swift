import SealKit

/// A receiver's code and relay in one text, for its QR code: magic-wormhole's URI form
/// (magic-wormhole-protocols, `uri-scheme.md`: the code, then `version`, `rendezvous` and `role`,
/// percent-encoded) under SealKit's own scheme, `sealkit-transfer:`. The `wormhole-transfer:` scheme
/// is defined for magic-wormhole's file-transfer app id only; a SealKit code under it would send a
/// stock wormhole app to the wrong app id, so SealKit neither writes nor accepts it.
package struct TransferURI: Sendable, Equatable {
    /// The URI scheme: SealKit's, not magic-wormhole's `wormhole-transfer:`.
    package static let scheme = "sealkit-transfer:"
    /// The code, such as `7-guitarist-revenge`.
    package let code: String
    /// The relay the receiver waits on, with its `/v1` endpoint, when the URI names one.
    package let relay: RelayURL?

    /// The URI for a receiver's code and relay. The role is `leader`: the side that parses the URI,
    /// the sender, is the one that sends. The relay is written without its `/v1` endpoint, as the
    /// spec says.
    package static func make(code: String, relay: RelayURL) -> String {
        var rendezvous = relay.description
        if rendezvous.hasSuffix("/v1") { rendezvous.removeLast(3) }
        return scheme + percentEncoded(code) + "?version=0&rendezvous=" + percentEncoded(rendezvous) + "&role=leader"
    }

    /// Parses a `sealkit-transfer:` URI.
    /// - Throws: `TransferURIError` for another scheme (`wormhole-transfer:` gets its own reason),
    ///   an unknown version, a bad relay, or bad percent-encoding.
    package init(parsing text: String) throws(TransferURIError) {
        let trimmed = Substring(text).drop { $0 == " " }
        if trimmed.lowercased().hasPrefix("wormhole-transfer:") { throw .fileTransferURI }
        guard trimmed.lowercased().hasPrefix(Self.scheme) else { throw .notAURI }
        let rest = trimmed.dropFirst(Self.scheme.count)
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let code = Self.percentDecoded(parts[0]), !code.isEmpty else { throw .malformed("its code is missing or badly encoded") }
        var relay: RelayURL?
        if parts.count == 2 {
            for field in parts[1].split(separator: "&") {
                let pair = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2, let value = Self.percentDecoded(pair[1]) else { throw .malformed("a field is badly encoded") }
                switch pair[0] {
                case "version":
                    guard value == "0" else { throw .malformed("version '\(TextSafety.printable(value))' is not one SealKit reads (0)") }
                case "rendezvous":
                    do {
                        relay = try RelayURL(value.hasSuffix("/v1") ? value : value + (value.hasSuffix("/") ? "v1" : "/v1"))
                    } catch {
                        throw .malformed("its relay: \(error)")
                    }
                case "role":
                    guard value == "leader" else { throw .malformed("its role is '\(TextSafety.printable(value))', not leader: it is not a receiver's code") }
                default:
                    break  // Unknown fields are ignored, as the spec says.
                }
            }
        }
        self.code = code
        self.relay = relay
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + Hex.encode([byte]).uppercased()
            }
        }
        return out
    }

    static func percentDecoded(_ text: Substring) -> String? {
        guard let bytes = PercentEncoding.decode(Array(text.utf8)[...]) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// Why a transfer URI was refused.
package enum TransferURIError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text does not start with the scheme.
    case notAURI
    /// A magic-wormhole file transfer's URI (`wormhole-transfer:`), not a SealKit key transfer's.
    case fileTransferURI
    /// The URI breaks its format, for this reason.
    case malformed(String)

    package var description: String {
        switch self {
        case .notAURI: return "not a sealkit-transfer: URI"
        case .fileTransferURI:
            return "a wormhole-transfer: URI is a magic-wormhole file-transfer code, not a SealKit key-transfer code: "
                + "use the code (or the sealkit-transfer: QR) the receiving SealKit shows"
        case .malformed(let reason): return "the sealkit-transfer: URI is malformed: \(reason)"
        }
    }
}
