
/// The text form of every SealKit code (transfer offers and replies, their parts, paper backups,
/// share bundles): a prefix naming kind and version, then unpadded base64url (RFC 4648 §5). Only
/// `A-Z a-z 0-9 - _ :` occur, so codes survive copy and paste, URLs and QR byte mode unchanged.
/// Backups and transfers share it, so it lives here, below both.
package enum CodeText {
    /// Encodes public bytes (ciphertexts, public keys) as unpadded base64url.
    package static func encode(_ bytes: [UInt8]) -> String {
        var text = Base64.encode(bytes)
        while text.last == "=" { text.removeLast() }
        return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// Decodes strict, canonical, unpadded base64url.
    /// - Returns: nil for any other character, padding, or a non-canonical ending.
    package static func decode(_ text: Substring) -> [UInt8]? {
        guard text.utf8.count % 4 != 1 else { return nil }
        var standard = ""
        standard.reserveCapacity(text.utf8.count + 2)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "-"): standard.append("+")
            case UInt8(ascii: "_"): standard.append("/")
            default: return nil
            }
        }
        while standard.utf8.count % 4 != 0 { standard.append("=") }
        return Base64.decode(standard)
    }

    /// Which kind of code `text` is, checking only its `sealkit-<kind>-v<n>:` prefix.
    /// - Returns: nil when it is no SealKit code at all.
    /// - Throws: `.retiredVersion` for a version 1 offer or reply, `.unsupportedVersion` for
    ///   any other version than the kind's current one.
    package static func kind(of text: Substring) throws(CodeError) -> CodeKind? {
        for kind in [CodeKind.offer, .reply, .part, .backup, .shares] {
            let stem = "sealkit-\(kind.rawValue)-v"
            guard text.hasPrefix(stem) else { continue }
            if text.hasPrefix(kind.prefix) { return kind }
            let version = text.dropFirst(stem.count).prefix { $0 != ":" }.prefix(12)
            if version == "1" && (kind == .offer || kind == .reply) { throw .retiredVersion(kind) }
            throw .unsupportedVersion(kind, version: "v" + version)
        }
        return nil
    }

    /// Bytes of the check at the end of offers and replies (version 2).
    package static let checkByteCount = 4

    /// The text of an offer or reply: the prefix, then base64url of `body` and a short BLAKE2b
    /// of it. The check finds a damaged paste before anything is spent on it; it is no
    /// protection (anyone can compute it), the SPAKE2 key is.
    package static func checkedText(_ body: [UInt8], as kind: CodeKind) -> String {
        kind.prefix + encode(body + check(body, kind))
    }

    /// The body of an offer or reply whose check matches.
    package static func checkedBody(of text: Substring, as kind: CodeKind) throws(CodeError) -> [UInt8] {
        let bytes = try body(of: text, as: kind)
        guard bytes.count > checkByteCount else { throw .malformed(kind, reason: "truncated") }
        let body = Array(bytes.dropLast(checkByteCount))
        guard Array(bytes.suffix(checkByteCount)) == check(body, kind) else {
            throw .malformed(kind, reason: "cut short or mistyped: its check does not match")
        }
        return body
    }

    private static func check(_ body: [UInt8], _ kind: CodeKind) -> [UInt8] {
        Array(GenericHash.hash(Array("SealKit \(kind.rawValue) v2 check".utf8) + body, byteCount: 16).prefix(checkByteCount))
    }

    /// The base64url body of a code expected to be of `kind`, decoded.
    package static func body(of text: Substring, as kind: CodeKind) throws(CodeError) -> [UInt8] {
        guard let found = try self.kind(of: text) else { throw .notCodeText(expected: kind) }
        guard found == kind else { throw .wrongKind(found: found, expected: kind) }
        guard let bytes = decode(text.dropFirst(kind.prefix.count)) else {
            throw .malformed(kind, reason: "not base64url after the prefix")
        }
        return bytes
    }

    /// Removes the spaces, tabs and line ends that copying and pasting add around a code.
    package static func trimmed(_ text: some StringProtocol) -> Substring {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        let start = text.firstIndex { !isSpace($0) } ?? text.endIndex
        let end = text.lastIndex { !isSpace($0) }.map { text.index(after: $0) } ?? start
        return Substring(text[start..<end])
    }
}

/// Writes big-endian fields into a buffer sized in advance.
package struct ByteWriter {
    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    package init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    package mutating func write(_ bytes: UnsafeRawBufferPointer) {
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + bytes.count)]).copyMemory(from: bytes)
        offset += bytes.count
    }

    package mutating func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    package mutating func write(_ byte: UInt8) { write([byte]) }

    package mutating func write(_ value: UInt16) { write([UInt8(value >> 8), UInt8(value & 0xFF)]) }

    package mutating func write(_ value: Int64) {
        let bits = UInt64(bitPattern: value)
        write((0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * $0)) })
    }

    package mutating func write(_ value: UInt64) { write(Int64(bitPattern: value)) }
}

/// Reads big-endian fields with bounds checks; every read past the end throws.
package struct ByteReader {
    private let buffer: UnsafeRawBufferPointer
    private(set) var offset = 0
    private let kind: CodeKind

    package init(_ buffer: UnsafeRawBufferPointer, kind: CodeKind) {
        self.buffer = buffer
        self.kind = kind
    }

    package var remaining: Int { buffer.count - offset }

    /// The next `count` bytes, borrowed from the buffer.
    package mutating func bytes(_ count: Int) throws(CodeError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw .malformed(kind, reason: "truncated") }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
    }

    package mutating func array(_ count: Int) throws(CodeError) -> [UInt8] { Array(try bytes(count)) }

    package mutating func byte() throws(CodeError) -> UInt8 { try bytes(1)[0] }

    package mutating func uint16() throws(CodeError) -> UInt16 {
        let raw = try bytes(2)
        return UInt16(raw[0]) << 8 | UInt16(raw[1])
    }

    package mutating func uint64() throws(CodeError) -> UInt64 {
        try bytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    package mutating func int64() throws(CodeError) -> Int64 { Int64(bitPattern: try uint64()) }

    /// Throws unless every byte was read.
    package func finish() throws(CodeError) {
        guard remaining == 0 else { throw .malformed(kind, reason: "\(remaining) unexpected bytes at the end") }
    }
}

extension SecureBytes {
    /// `withUnsafeBytes` for bodies that throw `CodeError`, keeping the error's type.
    package func reading<R>(_ body: (UnsafeRawBufferPointer) throws(CodeError) -> R) throws(CodeError) -> R {
        let result: Result<R, CodeError> = withUnsafeBytes { raw in
            do throws(CodeError) {
                return .success(try body(raw))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
