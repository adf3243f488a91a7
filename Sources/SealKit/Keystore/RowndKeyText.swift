
/// Key material as people paste it into `keys import`: a bare base64 key, Rownd's key-transfer
/// text `<sign-in link>#<base64 key>` (the fragment percent-encoded or not), or the older
/// `{"data":"<sign-in link>#<base64 key>"}` form that earlier SealKit versions printed.
///
/// Parsed from bytes, never through Swift strings, so the key text can be wiped.
package enum KeyText {
    /// Reads a key from any of the accepted forms. Surrounding whitespace is ignored.
    /// - Parameter bytes: the text; the caller should wipe its copy.
    /// - Returns: the key.
    /// - Throws: `KeyTextError` saying which form was recognised and what is wrong with it.
    package static func parseKey(_ bytes: [UInt8]) throws(KeyTextError) -> SymmetricKey {
        var text = ArraySlice(bytes)
        while let first = text.first, isWhitespace(first) { text.removeFirst() }
        while let last = text.last, isWhitespace(last) { text.removeLast() }
        guard !text.isEmpty else { throw .empty }

        if text.first == UInt8(ascii: "{") {
            var data = try rowndData(text)
            defer { ConstantTime.wipe(&data) }
            guard data.contains(UInt8(ascii: "#")) else { throw .noKeyInLink }
            return try keyFromLink(data[...])
        }
        if text.contains(UInt8(ascii: "#")) { return try keyFromLink(text) }
        do {
            return try SymmetricKey(base64Encoded: text)
        } catch {
            throw .notAKey
        }
    }

    /// Rownd's key-transfer text for a key: `<link>#<base64 key>`, the sign-in link with the key
    /// (standard base64 with padding, as Rownd's "copy key" gives it) as the URL's fragment.
    ///
    /// This is the QR code's content. Rownd's iOS scanner (rownd/ios 2.8.3,
    /// `KeyTransferViewController.receiveKeyTransfer`) passes the whole scanned text to `URL(string:)`,
    /// stores the fragment as the key and opens the rest to sign the user in. The `{"data": ...}`
    /// wrapper its key view builds is the argument of the hub's QR-drawing call, not the QR's text.
    /// Base64's `+`, `/` and `=` are all allowed in a URL fragment, so the key goes in unescaped.
    /// - Parameters:
    ///   - key: the user's current key.
    ///   - link: the sign-in link from Rownd's API, without a fragment.
    /// - Returns: the text in guarded memory: it holds the raw key.
    package static func rowndLinkText(for key: SymmetricKey, link: String) -> SecureBytes {
        let prefix = Array((link + "#").utf8)
        let encoded = key.base64EncodedBytes()
        return SecureBytes(count: prefix.count + encoded.count) { out in
            prefix.withUnsafeBytes { out.copyMemory(from: $0) }
            encoded.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: out[prefix.count...]).copyMemory(from: $0)
            }
        }
    }

    // MARK: Parsing

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The key after the link's last `#`, percent-decoded (links may escape `+`, `/`, `=`).
    private static func keyFromLink(_ link: ArraySlice<UInt8>) throws(KeyTextError) -> SymmetricKey {
        guard let hash = link.lastIndex(of: UInt8(ascii: "#")) else { throw .noKeyInLink }
        guard var fragment = PercentEncoding.decode(link[(hash + 1)...]) else { throw .notAKey }
        defer { ConstantTime.wipe(&fragment) }
        do {
            return try SymmetricKey(base64Encoded: fragment)
        } catch {
            throw .notAKey
        }
    }

    /// The value of `data` in `{"data": "..."}`, with JSON escapes resolved.
    private static func rowndData(_ text: ArraySlice<UInt8>) throws(KeyTextError) -> [UInt8] {
        var index = text.startIndex
        func skipSpace() { while index < text.endIndex, isWhitespace(text[index]) { index += 1 } }
        func expect(_ byte: UInt8) throws(KeyTextError) {
            skipSpace()
            guard index < text.endIndex, text[index] == byte else { throw .notRowndText }
            index += 1
        }
        func string() throws(KeyTextError) -> [UInt8] {
            try expect(UInt8(ascii: "\""))
            var out: [UInt8] = []
            while index < text.endIndex {
                let byte = text[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return out
                case UInt8(ascii: "\\"):
                    guard index < text.endIndex else { throw .notRowndText }
                    let escaped = text[index]
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                    case UInt8(ascii: "u"):
                        // Only ASCII escapes can occur in a link and a base64 key.
                        guard index + 4 <= text.endIndex, let unit = Hex.decode(text[index..<(index + 4)]),
                            unit[0] == 0, unit[1] < 0x80
                        else { throw .notRowndText }
                        out.append(unit[1])
                        index += 4
                    default: throw .notRowndText
                    }
                case 0..<0x20:
                    throw .notRowndText
                default:
                    out.append(byte)
                }
            }
            throw .notRowndText
        }
        try expect(UInt8(ascii: "{"))
        var data: [UInt8]?
        repeat {
            let name = try string()
            try expect(UInt8(ascii: ":"))
            let value = try string()
            if name == Array("data".utf8) { data = value }
            skipSpace()
        } while index < text.endIndex && text[index] == UInt8(ascii: ",") && { index += 1; return true }()
        try expect(UInt8(ascii: "}"))
        skipSpace()
        guard index == text.endIndex, let data else { throw .notRowndText }
        return data
    }
}

/// Why pasted key text was refused. Never repeats the text.
package enum KeyTextError: Error, Equatable, Sendable, CustomStringConvertible {
    /// There is no text.
    case empty
    /// The text names a key that is not 32 bytes of base64.
    case notAKey
    /// The text is not Rownd's key text (`key:` or a link).
    case notRowndText
    /// The link carries no key.
    case noKeyInLink

    package var description: String {
        switch self {
        case .empty:
            return "no key material on stdin: pipe in a base64 key, or Rownd's key text <link>#<base64 key>"
        case .notAKey:
            return "not a key: expected 32 bytes as standard base64 (44 characters), or Rownd's key text <link>#<base64 key>"
        case .notRowndText:
            return "not Rownd's key QR text in its wrapped form: expected {\"data\":\"<link>#<base64 key>\"}"
        case .noKeyInLink:
            return "the link holds no key: expected '#<base64 key>' at its end"
        }
    }
}
