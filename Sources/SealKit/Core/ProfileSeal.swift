import CSodium

/// A profile seal: a MAC over a user's flagged profile fields and a version number,
/// under a subkey of the user's key, that lets a device see a field rolled back, dropped or
/// added, moved between the top level and `data`, and a whole profile served again after a newer
/// one. docs/format.md specifies it byte by byte.
///
/// Text: `sks2:` (format 2, written) or `sks1:` (format 1, still read) then standard padded base64
/// of the 49-byte body `format ‖ key fingerprint (8) ‖ u64be(version) ‖ MAC (32)`.
///
/// MAC: BLAKE2b-256 (`crypto_generichash`, 32 bytes) keyed with the subkey
/// `crypto_kdf_derive_from_key(32, 1, "sksealv1", key)` of the key the fingerprint names, over
/// `format ‖ fingerprint (8) ‖ u64be(version) ‖ u32be(len user) ‖ user ‖ [format 2: where (1)] ‖ u32be(count) ‖ entries`,
/// one entry per flagged field present in the profile, sorted by the bytes of their names:
/// `u32be(len name) ‖ name ‖ 0x00` for `null`, `u32be(len name) ‖ name ‖ 0x01 ‖ u32be(len value) ‖ value`
/// for a string (its UTF-8). A field not present has no entry, so dropping or adding one changes
/// the count and the entries. Format 2 adds where the fields sit (0 at the top level, 1 in `data`)
/// and names each entry by the schema's spelling of the field, as v2 ciphertexts name their place;
/// format 1 named it by the profile member's bytes and bound no place, so a profile whose fields
/// moved still verified under it.
package struct ProfileSeal: Sendable, Equatable {
    /// The text that starts every seal SealKit writes now.
    package static let prefix = "sks2:"
    /// The format SealKit writes: the body's first byte, and the MAC input's.
    package static let currentFormat: UInt8 = 2
    /// Bytes of the MAC.
    package static let macByteCount = 32
    /// Bytes of the body: format, fingerprint, version, MAC.
    static let bodyByteCount = 1 + 8 + 8 + macByteCount
    /// The `crypto_kdf` context (the purpose) and subkey id of the seal key.
    static let kdfContext = Array("sksealv1".utf8)
    static let subkeyID: UInt64 = 1
    /// The length of a seal's text.
    package static let textLength = 5 + 68

    /// The seal's format: 2 binds where the fields sit and names them by the schema; 1 (read only) did neither.
    package let format: UInt8
    /// The key that made the seal.
    package let keyTag: KeyFingerprint
    /// The profile's version: 1 for the first sealed write, one more for each later one.
    package let version: UInt64
    /// The MAC.
    package let mac: [UInt8]

    /// A flagged field's value as the MAC covers it.
    package enum Value: Sendable, Equatable {
        /// JSON `null`.
        case null
        /// A string, by its UTF-8 (a ciphertext).
        case string([UInt8])
    }

    /// A flagged field as the MAC covers it: by the profile member's name (format 1) or by the
    /// schema's spelling of the field (format 2), with its value.
    package struct Entry: Sendable, Equatable {
        /// The member's name as the profile spells it.
        package let member: String
        /// The field's name as the schema spells it, which v2 ciphertexts bind as their place.
        package let field: String
        /// Its value.
        package let value: Value

        package init(member: String, field: String, value: Value) {
            self.member = member
            self.field = field
            self.value = value
        }
    }

    package init(format: UInt8 = ProfileSeal.currentFormat, keyTag: KeyFingerprint, version: UInt64, mac: [UInt8]) {
        self.format = format
        self.keyTag = keyTag
        self.version = version
        self.mac = mac
    }

    /// Reads a seal's text; nil when it is not one: another prefix, not canonical base64, a body of
    /// another length, a format byte other than the prefix's, or version 0.
    package init?(parsing text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == Self.textLength, let format = Self.formats.first(where: { utf8.starts(with: $0.prefix.utf8) })?.byte
        else { return nil }
        guard let body = utf8[5...].withUnsafeBytes({ encoded -> [UInt8]? in
            guard Base64.decodedLength(of: encoded) == Self.bodyByteCount else { return nil }
            var body = [UInt8](repeating: 0, count: Self.bodyByteCount)
            let ok = body.withUnsafeMutableBytes { Base64.decode(encoded, into: $0) }
            return ok ? body : nil
        }) else { return nil }
        guard body[0] == format else { return nil }
        let version = body[9..<17].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard version > 0 else { return nil }
        self.init(format: format, keyTag: KeyFingerprint(bytes: Array(body[1..<9])), version: version, mac: Array(body[17...]))
    }

    /// The formats read, each with its text's prefix: a prefix and a body byte that disagree are not a seal.
    private static let formats: [(prefix: String, byte: UInt8)] = [("sks2:", 2), ("sks1:", 1)]

    /// The seal as text: its format's prefix and base64 of the body.
    package var text: String {
        var body: [UInt8] = [format]
        body.append(contentsOf: keyTag.bytes)
        body.append(contentsOf: Self.bigEndian(version))
        body.append(contentsOf: mac)
        return (format == 1 ? "sks1:" : Self.prefix) + Base64.encode(body)
    }

    /// Two seals are the same when format, key, version and MAC are: the MACs compared in constant time.
    package static func == (a: ProfileSeal, b: ProfileSeal) -> Bool {
        let macsEqual = ConstantTime.equals(a.mac, b.mac)
        return a.format == b.format && a.keyTag == b.keyTag && a.version == b.version && macsEqual
    }

    /// What the device remembers of this seal: its version and MAC.
    package var mark: SealMark { SealMark(version: version, mac: mac, keyTag: keyTag) }

    /// Seals a profile's flagged fields for `user` at `version` with `key`, in the current format.
    /// - Parameters:
    ///   - fields: every flagged field present, in any order.
    ///   - inData: whether the profile keeps them in `data` (Rownd's user-state shape) rather than at its top level.
    package static func make(
        key: SymmetricKey, user: String, version: UInt64, fields: [Entry], inData: Bool
    ) throws(SecureMemoryError) -> ProfileSeal {
        let tag = key.fingerprint
        let mac = try computeMAC(format: currentFormat, key: key, keyTag: tag, user: user, version: version, fields: fields, inData: inData)
        return ProfileSeal(keyTag: tag, version: version, mac: mac)
    }

    /// Whether this seal is the MAC of `fields` for `user` under `key` (the key its tag names), as its
    /// format computes it, compared in constant time.
    package func verifies(key: SymmetricKey, user: String, fields: [Entry], inData: Bool) throws(SecureMemoryError) -> Bool {
        let expected = try Self.computeMAC(
            format: format, key: key, keyTag: keyTag, user: user, version: version, fields: fields, inData: inData)
        return ConstantTime.equals(expected, mac)
    }

    /// The exact bytes the MAC covers.
    package static func macInput(
        format: UInt8 = currentFormat, keyTag: KeyFingerprint, user: String, version: UInt64, fields: [Entry], inData: Bool
    ) -> [UInt8] {
        var input: [UInt8] = [format]
        input.append(contentsOf: keyTag.bytes)
        input.append(contentsOf: bigEndian(version))
        appendPrefixed(Array(user.utf8), to: &input)
        if format >= 2 { input.append(inData ? 1 : 0) }
        let sorted = fields.map { (name: Array((format >= 2 ? $0.field : $0.member).utf8), value: $0.value) }
            .sorted { $0.name.lexicographicallyPrecedes($1.name) }
        input.append(contentsOf: bigEndian32(sorted.count))
        for field in sorted {
            appendPrefixed(field.name, to: &input)
            switch field.value {
            case .null: input.append(0)
            case .string(let bytes):
                input.append(1)
                appendPrefixed(bytes, to: &input)
            }
        }
        return input
    }

    private static func computeMAC(
        format: UInt8, key: SymmetricKey, keyTag: KeyFingerprint, user: String, version: UInt64, fields: [Entry], inData: Bool
    ) throws(SecureMemoryError) -> [UInt8] {
        Sodium.ready
        let input = macInput(format: format, keyTag: keyTag, user: user, version: version, fields: fields, inData: inData)
        let subkey: SecureBytes
        do {
            subkey = try SecureBytes.allocate(count: 32) { out in
                key.storage.withUnsafeBytes { master in
                    kdfContext.withUnsafeBufferPointer { context in
                        context.withMemoryRebound(to: CChar.self) { context in
                            _ = crypto_kdf_derive_from_key(
                                out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, subkeyID, context.baseAddress!,
                                master.baseAddress!.assumingMemoryBound(to: UInt8.self))
                        }
                    }
                }
            }
        } catch let error as SecureMemoryError {
            throw error
        } catch {
            throw .outOfMemory(byteCount: 32)
        }
        var mac = [UInt8](repeating: 0, count: macByteCount)
        subkey.withUnsafeBytes { keyBytes in
            _ = crypto_generichash(
                &mac, macByteCount, input, UInt64(input.count), keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
        }
        return mac
    }

    private static func appendPrefixed(_ bytes: [UInt8], to output: inout [UInt8]) {
        output.append(contentsOf: bigEndian32(bytes.count))
        output.append(contentsOf: bytes)
    }

    private static func bigEndian32(_ count: Int) -> [UInt8] {
        let value = UInt32(truncatingIfNeeded: count)
        return [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
    }
}

/// What a device remembers of a user's profiles: the highest seal version it wrote or verified,
/// that seal's MAC, which tells the same profile from another written at the same version, and the
/// key that made it, whose history the record belongs to.
package struct SealMark: Sendable, Equatable {
    /// The highest version.
    package let version: UInt64
    /// The MAC of the seal with that version.
    package let mac: [UInt8]
    /// When this device wrote `version` and has not read it back since: the version of the profile that
    /// write was made over (for a profile without a seal, the floor the record had before). A kill between recording and handing the
    /// profile out leaves such a mark with nothing handed out, and the app's retry, an edit of that same
    /// earlier version, must still be accepted (docs/format.md, "Record, then hand out"). Nil once a read
    /// verified `version`.
    package let writtenOver: UInt64?
    /// The key that made the seal with that version. A record belongs to the keys of one history (a key and
    /// the keys it was rotated from): when none of the user's keys here is this one, the user's key was
    /// replaced (deleted and made again, or received anew), and the new key starts a history of its own.
    /// Nil in a record written before records named their key, which applies to any key, as it always did.
    package let keyTag: KeyFingerprint?

    package init(version: UInt64, mac: [UInt8], writtenOver: UInt64? = nil, keyTag: KeyFingerprint? = nil) {
        self.version = version
        self.mac = mac
        self.writtenOver = writtenOver
        self.keyTag = keyTag
    }

    /// The same mark, as recorded by a write made over the profile of version `base`.
    package func written(over base: UInt64) -> SealMark { SealMark(version: version, mac: mac, writtenOver: base, keyTag: keyTag) }

    /// The lowest version an edited profile may carry into a write: the version recorded, or for a write
    /// not yet read back, the version it was made over.
    package var lowestVersionToEdit: UInt64 { writtenOver ?? version }

    /// Whether the record is about the history of a ring holding keys of these fingerprints.
    package func belongs(to keys: some Sequence<KeyFingerprint>) -> Bool {
        guard let keyTag else { return true }
        return keys.contains(keyTag)
    }

    /// Whether the record is about this ring's history, by the ring's cached key tags: checked once per profile,
    /// so a line of many does not hash every key again.
    package func belongs(to ring: KeyRing) -> Bool {
        guard let keyTag else { return true }
        return ring.holdsKey(tagged: keyTag)
    }

    /// Marks are the same when every part is: the MACs compared in constant time.
    package static func == (a: SealMark, b: SealMark) -> Bool {
        let macsEqual = ConstantTime.equals(a.mac, b.mac)
        return a.version == b.version && a.writtenOver == b.writtenOver && a.keyTag == b.keyTag && macsEqual
    }

    /// The mark as its file holds it: `sealkit-seal-mark 2 KEY-HEX VERSION MAC-HEX`, then ` WRITTEN-OVER` for
    /// a write not yet read back, and a newline (`sealkit-seal-mark 1 VERSION MAC-HEX ...`, without the key, for
    /// a mark read from such a record).
    package var fileText: [UInt8] {
        let head = keyTag.map { "sealkit-seal-mark 2 \(Hex.encode($0.bytes)) " } ?? "sealkit-seal-mark 1 "
        return Array("\(head)\(version) \(Hex.encode(mac))\(writtenOver.map { " \($0)" } ?? "")\n".utf8)
    }

    /// Reads a mark file's text; nil when it is not exactly one.
    package init?(fileText: some Collection<UInt8>) {
        guard fileText.count < 256, let text = String(validating: Array(fileText), as: UTF8.self), text.hasSuffix("\n") else { return nil }
        var parts = text.dropLast().split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "sealkit-seal-mark", parts[1] == "1" || parts[1] == "2" else { return nil }
        var keyTag: KeyFingerprint?
        if parts[1] == "2" {
            guard parts.count >= 3, let tag = Hex.decode(String(parts[2])), tag.count == 8, Hex.encode(tag) == parts[2] else { return nil }
            keyTag = KeyFingerprint(bytes: tag)
            parts.remove(at: 2)
        }
        guard parts.count == 4 || parts.count == 5,
            let version = Self.decimal(parts[2]), version > 0,
            let mac = Hex.decode(String(parts[3])), mac.count == ProfileSeal.macByteCount,
            Hex.encode(mac) == parts[3]
        else { return nil }
        var base: UInt64?
        if parts.count == 5 {
            guard let written = Self.decimal(parts[4]), written < version else { return nil }
            base = written
        }
        self.init(version: version, mac: mac, writtenOver: base, keyTag: keyTag)
    }

    /// A decimal without leading zeros (0 itself is "0").
    private static func decimal(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text == "0" || text.first != "0", text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return UInt64(text)
    }

    /// What recording `new` over this mark means.
    package enum Comparison: Sendable, Equatable {
        /// `new` is higher: record it.
        case newer
        /// The same seal.
        case same
        /// Lower than this mark: a rollback.
        case older
        /// The same version with another MAC: two writes of one version.
        case conflicting
    }

    /// How `new` compares with this mark.
    package func compare(_ new: SealMark) -> Comparison {
        if new.version > version { return .newer }
        if new.version < version { return .older }
        return ConstantTime.equals(new.mac, mac) ? .same : .conflicting
    }

    /// What a record holding this mark does with `new`.
    package enum Recording: Sendable, Equatable {
        /// Write `new`: a higher version, a read confirming this device's own write, or (only when
        /// accepting one) a conflicting write.
        case record
        /// Nothing to write: the same seal.
        case unchanged
        /// Keep this mark and refuse `new`: lower, or of the same version with another MAC.
        case refuse
    }

    /// What recording `new` over this mark does.
    package func recording(_ new: SealMark, acceptingConflict: Bool) -> Recording {
        switch compare(new) {
        case .newer: return .record
        case .same: return writtenOver != nil && new.writtenOver == nil ? .record : .unchanged
        case .conflicting where acceptingConflict: return .record
        case .older, .conflicting: return .refuse
        }
    }
}
