import SealCore

/// The on-disk form of one id's keys: a small line-based text format, parsed straight
/// from a byte buffer so key material never passes through unwipeable Swift strings.
///
/// ```
/// sealkit-keyfile 1
/// id <base64 of the id's UTF-8>
/// protection none | protection argon2id <opslimit> <memlimit> <salt base64>
/// key <fingerprint hex> <created unix time> <retired unix time or -> <material base64>
/// ```
/// One `key` line per key, the current key first (the only one without a retired time),
/// then retired keys, newest first. Material is the key itself, or under `argon2id` the
/// key sealed (secretbox) under the passphrase-derived key. See docs/format.md.
package struct KeyFile: Sendable {
    package struct Entry: Sendable {
        package var fingerprint: [UInt8]
        package var created: Int64
        package var retired: Int64?
        /// The base64 characters of the material; secret when the file is unprotected.
        package var material: SecureBytes
    }

    package struct Protection: Sendable, Equatable {
        package var kdf: PassphraseKDF
        package var salt: [UInt8]
    }

    package var id: KeyID
    package var protection: Protection?
    package var entries: [Entry]

    static let magic = "sealkit-keyfile 1"

    /// Parses a key file's bytes.
    /// - Throws: a one-line reason (for `KeystoreError.damagedKeyFile`).
    package static func parse(_ bytes: [UInt8]) throws(KeyFileError) -> KeyFile {
        guard bytes.last == UInt8(ascii: "\n") else { throw .init("truncated: no final newline") }
        let lines = bytes.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard lines.count >= 4, String(decoding: lines[0], as: UTF8.self) == magic else {
            throw .init("not a SealKit key file, or a version this SealKit does not know")
        }
        let idFields = fields(lines[1])
        guard idFields.count == 2, idFields[0] == "id", let idBytes = Base64.decode(idFields[1]),
            let idText = String(validating: idBytes, as: UTF8.self), let id = try? KeyID(idText)
        else { throw .init("bad id line") }

        let protectionFields = fields(lines[2])
        var protection: Protection?
        switch protectionFields.first {
        case "protection" where protectionFields.count == 2 && protectionFields[1] == "none":
            protection = nil
        case "protection" where protectionFields.count == 5 && protectionFields[1] == "argon2id":
            guard let ops = UInt64(protectionFields[2]), let mem = UInt64(protectionFields[3]),
                let salt = Base64.decode(protectionFields[4]), salt.count == PassphraseKDF.saltByteCount
            else { throw .init("bad protection line") }
            let kdf = PassphraseKDF(opsLimit: ops, memLimit: mem)
            guard kdf.isAcceptable else { throw .init("unsupported Argon2id limits") }
            protection = Protection(kdf: kdf, salt: salt)
        default:
            throw .init("bad protection line")
        }

        var entries: [Entry] = []
        for line in lines[3...] {
            // Only the material (last field) may be secret; split off the public fields
            // without copying it anywhere but guarded memory.
            let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 4, omittingEmptySubsequences: false)
            guard parts.count == 5, String(decoding: parts[0], as: UTF8.self) == "key",
                let fingerprint = hexBytes(parts[1]), fingerprint.count == 8,
                let created = Int64(String(decoding: parts[2], as: UTF8.self))
            else { throw .init("bad key line") }
            let retiredText = String(decoding: parts[3], as: UTF8.self)
            let retired: Int64?
            if retiredText == "-" {
                retired = nil
            } else if let value = Int64(retiredText) {
                retired = value
            } else {
                throw .init("bad key line")
            }
            guard !parts[4].isEmpty, !parts[4].contains(UInt8(ascii: " ")) else { throw .init("bad key line") }
            entries.append(Entry(
                fingerprint: fingerprint, created: created, retired: retired,
                material: SecureBytes(copying: parts[4])))
        }
        guard let first = entries.first, first.retired == nil, entries.dropFirst().allSatisfy({ $0.retired != nil })
        else { throw .init("it must hold exactly one current key, listed first") }
        return KeyFile(id: id, protection: protection, entries: entries)
    }

    /// The file's bytes in guarded memory (they hold key material when unprotected).
    package func serialized() -> SecureBytes {
        var header = Self.magic + "\n"
        header += "id " + Base64.encode(Array(id.rawValue.utf8)) + "\n"
        if let protection {
            header += "protection argon2id \(protection.kdf.opsLimit) \(protection.kdf.memLimit) \(Base64.encode(protection.salt))\n"
        } else {
            header += "protection none\n"
        }
        let linePrefixes = entries.map { entry in
            "key \(hex(entry.fingerprint)) \(entry.created) \(entry.retired.map(String.init) ?? "-") "
        }
        let total = header.utf8.count + zip(linePrefixes, entries).reduce(0) { $0 + $1.0.utf8.count + $1.1.material.count + 1 }
        return SecureBytes(count: total) { out in
            var offset = 0
            func append(_ bytes: UnsafeRawBufferPointer) {
                UnsafeMutableRawBufferPointer(rebasing: out[offset..<(offset + bytes.count)]).copyMemory(from: bytes)
                offset += bytes.count
            }
            Array(header.utf8).withUnsafeBytes(append)
            for (prefix, entry) in zip(linePrefixes, entries) {
                Array(prefix.utf8).withUnsafeBytes(append)
                entry.material.withUnsafeBytes(append)
                [UInt8(ascii: "\n")].withUnsafeBytes(append)
            }
        }
    }

    private static func fields(_ line: ArraySlice<UInt8>) -> [String] {
        line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func hexBytes(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            guard let high = nibble(text[index]), let low = nibble(text[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return text
}

/// Why key file bytes could not be parsed.
package struct KeyFileError: Error, Equatable, Sendable {
    package let reason: String
    init(_ reason: String) { self.reason = reason }
}
