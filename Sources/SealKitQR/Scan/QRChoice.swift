import SealKit

/// The kind of code an option reads from images: codes starting with one of its prefixes, or numbered
/// parts of one whole, and codes that go along with it (the shares of a share backup's bundle).
///
/// `QRScanner/choose(_:from:in:)` takes the one code (or the one whole) of this kind out of everything
/// an image holds.
public struct QRCodeKind: Sendable {
    /// What one is called in messages: "transfer code", "offer", "reply".
    public let name: String
    /// The plural, in messages: "transfer codes".
    public let plural: String
    private let prefixes: [String]
    private let partPrefix: String?
    private let companion: (@Sendable (String) -> Bool)?
    private let matcher: (@Sendable (String) -> Bool)?

    /// A kind of code.
    /// - Parameters:
    ///   - name: what one is called in messages.
    ///   - plural: the plural; `name` and an s when not given.
    ///   - prefixes: the texts a code of this kind starts with, compared ignoring ASCII case (QR codes in
    ///     alphanumeric mode hold capitals); none: every text code is of this kind.
    ///   - partPrefix: the prefix of numbered parts, `<partPrefix><id>:<i>/<n>:<piece>`, that join into
    ///     one code of this kind: parts with the same id are one whole.
    ///   - companions: codes taken along with the one whole without counting as a second one (a share
    ///     backup's shares, which go with its bundle).
    public init(
        name: String, plural: String? = nil, prefixes: [String], partPrefix: String? = nil,
        companions: (@Sendable (String) -> Bool)? = nil
    ) {
        self.name = name
        self.plural = plural ?? name + "s"
        self.prefixes = prefixes.map { $0.lowercasedASCII }
        self.partPrefix = partPrefix?.lowercasedASCII
        self.companion = companions
        self.matcher = nil
    }

    /// A kind whose codes have no prefix of their own, told apart by their shape (a key: bare base64,
    /// or a link with the key after `#`). With no prefixes every code would be of the kind, and a key
    /// photographed beside any other code would be refused as two keys.
    /// - Parameters:
    ///   - name: what one is called in messages.
    ///   - plural: the plural; `name` and an s when not given.
    ///   - matching: whether a code is one of this kind; it sees the code's text, so it must keep it
    ///     to itself (no message, no log).
    public init(name: String, plural: String? = nil, matching: @escaping @Sendable (String) -> Bool) {
        self.name = name
        self.plural = plural ?? name + "s"
        self.prefixes = []
        self.partPrefix = nil
        self.companion = nil
        self.matcher = matching
    }

    /// What a code is to this kind.
    fileprivate enum Role: Hashable {
        /// A whole code of this kind (its text), or a part of the whole with this id.
        case whole(String), part(id: String)
        /// Goes along with the whole.
        case companion
    }

    fileprivate func role(of code: String) -> Role? {
        let lowered = code.lowercasedASCII
        if let partPrefix, lowered.hasPrefix(partPrefix) {
            return .part(id: String(lowered.dropFirst(partPrefix.count).prefix { $0 != ":" }))
        }
        if let matcher {
            if matcher(code) { return .whole(code) }
        } else if prefixes.isEmpty || prefixes.contains(where: { lowered.hasPrefix($0) }) {
            return .whole(code)
        }
        if let companion, companion(code) { return .companion }
        return nil
    }
}

/// The code (or the parts of the one whole) an option takes from images, and what else they held.
public struct QRChoice: Sendable {
    /// The codes taken, in reading order: one code, or every part of one whole, with its companions.
    public let codes: [String]
    /// Each other code, by kind only ("a sealkit-offer-v2: code", "a code of 43 bytes"): never its
    /// contents, which may be a key.
    public let ignored: [String]
}

extension QRScanner {
    /// Takes the code of `kind` out of every code images hold: the one rule of every option that reads
    /// one thing from images (`--code-qr`, `--to-qr`, `receive --offline --qr`, `keys restore --qr`,
    /// `keys import --qr`). Read the whole image first (`scan(imageFile:)` always does); then
    /// - one code of the kind (or the parts of one whole, whatever their number) is taken, other codes
    ///   are named in `QRChoice/ignored` by kind only;
    /// - two or more of the kind (two codes, or parts of two wholes) are refused, saying how many: an
    ///   image with a second code of the kind may be a hostile one laid beside the real one;
    /// - none of the kind: the image's only code is taken for the caller to check (its own error says
    ///   what it is not), and several are refused, naming their kinds.
    /// - Parameters:
    ///   - kind: what the option reads.
    ///   - payloads: every code of the images, in reading order (`scan(imageFile:)`).
    ///   - place: what holds them, for messages: "the image", a file's name, "a.png and b.png".
    /// - Returns: the codes taken and what the others are.
    /// - Throws: `SealKitError/Reason/unreadableImage` for no code at all, two of the kind, or several
    ///   codes none of which is of the kind; the message names counts and kinds, never a code's contents.
    public static func choose(_ kind: QRCodeKind, from payloads: [[UInt8]], in place: String = "the image") throws(SealKitError)
        -> QRChoice
    {
        guard !payloads.isEmpty else { throw SealKitError(.unreadableImage, "no QR code found in \(place)") }
        let texts = payloads.map { String(validating: $0, as: UTF8.self) }
        var wholes: [Role] = []
        var taken: [String] = []
        var ignored: [String] = []
        for (payload, text) in zip(payloads, texts) {
            guard let text, let role = kind.role(of: text) else {
                ignored.append(Self.kind(of: payload))
                continue
            }
            if role != .companion, !wholes.contains(role) { wholes.append(role) }
            // The same code twice (two photos of one offer, a part in two images) is one code.
            if !taken.contains(text) { taken.append(text) }
        }
        // "the image holds", "a.png and b.png hold".
        let holds = "\(place) \(place.contains(" and ") ? "hold" : "holds")"
        if wholes.count > 1 {
            let parts = wholes.contains { if case .part = $0 { true } else { false } }
            throw SealKitError(
                .unreadableImage,
                "\(holds) \(parts ? "parts of " : "")\(wholes.count) \(kind.plural); give an image of one \(kind.name) alone")
        }
        if wholes.isEmpty && taken.isEmpty {
            guard payloads.count > 1 else {
                // One code of another kind: the caller's reading of it says what it is not. A code that
                // is not text cannot be any SealKit code.
                guard let text = texts[0] else {
                    throw SealKitError(.unreadableImage, "the code in \(place) is not text, so it is no \(kind.name)")
                }
                return QRChoice(codes: [text], ignored: [])
            }
            throw SealKitError(
                .unreadableImage,
                "\(holds) \(payloads.count) QR codes, none of them a \(kind.name) (\(ignored.joined(separator: ", "))); "
                    + "give an image of the \(kind.name) alone")
        }
        return QRChoice(codes: taken, ignored: ignored)
    }

    /// What a code is, without its contents (a key's code is the key): its `sealkit-...:` or URI
    /// scheme prefix, else its length.
    static func kind(of payload: [UInt8]) -> String {
        if let colon = payload.firstIndex(of: UInt8(ascii: ":")), colon <= 24, colon > 0,
            payload[..<colon].allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D })
        {
            return "a \(String(decoding: payload[...colon], as: UTF8.self)) code"
        }
        return "a code of \(payload.count) bytes"
    }
}

private typealias Role = QRCodeKind.Role

extension String {
    /// ASCII letters in lower case, everything else as it is.
    fileprivate var lowercasedASCII: String {
        String(decoding: utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
