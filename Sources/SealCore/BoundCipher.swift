import CSodium

/// The two ciphertext formats SealKit reads. Both are always read; v1 is the default for writing.
public enum CiphertextFormat: String, Sendable, CaseIterable {
    /// Rownd's format (`FieldCipher`): standard base64 of `nonce ‖ secretbox`. Knows neither its
    /// key nor its place.
    case v1
    /// SealKit's bound format (`BoundCipher`): `sk2:` and base64 of a header naming the key, the
    /// nonce and an XChaCha20-Poly1305 output whose associated data binds the id and the place.
    case v2
}

/// Where a v2 ciphertext belongs, besides its id: it opens there and nowhere else.
public enum CiphertextPlace: Sendable, Hashable {
    /// A profile field, by its name: `ssn` binds the same in a bare profile and in `data`.
    case field(String)
    /// The caller's context for a bare value (`sealkit encrypt --context`); empty is allowed.
    case context(String)

    /// The kind byte of the place in the associated data.
    var kind: UInt8 {
        switch self {
        case .field: return 1
        case .context: return 2
        }
    }

    var name: String {
        switch self {
        case .field(let name), .context(let name): return name
        }
    }
}

/// What a text is, as far as can be told without a key.
public enum CiphertextShape: Sendable, Equatable {
    /// Standard padded base64 of at least `FieldCipher.minimumByteCount` bytes: a v1 ciphertext,
    /// or a plaintext that happens to look exactly like one.
    case v1
    /// A v2 ciphertext sealed under the key whose fingerprint is `keyTag`.
    case v2(keyTag: KeyFingerprint)
    /// SealKit's prefix with a version this SealKit does not read.
    case unsupportedVersion

    /// Classifies `text`; nil when it cannot be a SealKit ciphertext of either format.
    public init?(of text: String) {
        var text = text
        guard let shape = text.withUTF8({ Self.classify(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = shape
    }

    /// `init(of:)` over a text's UTF-8 bytes, for paths that do not make a `String`.
    package static func classify(_ text: UnsafeRawBufferPointer) -> CiphertextShape? {
        switch BoundCipher.parse(text) {
        case .notPrefixed:
            guard let count = Base64.decodedLength(of: text), count >= FieldCipher.minimumByteCount else { return nil }
            let isBase64 = withUnsafeTemporaryAllocation(byteCount: count, alignment: 16) { Base64.decode(text, into: $0) }
            return isBase64 ? .v1 : nil
        case .failed(.unsupportedVersion): return .unsupportedVersion
        case .failed: return nil
        case .parsed(let body):
            return .v2(keyTag: KeyFingerprint(bytes: Array(body[1..<(1 + BoundCipher.tagByteCount)])))
        }
    }
}

/// SealKit's bound ciphertext format, v2: a ciphertext that says which key sealed it and opens
/// only for the id and place it was sealed for. docs/format.md specifies it byte by byte.
///
/// Text: `sk2:` then standard padded base64 of the body. The colon is outside the base64
/// alphabet, so no v1 text starts that way.
///
/// Body: `0x02 ‖ key tag (8) ‖ place tag (8) ‖ nonce (24) ‖ XChaCha20-Poly1305 output`, where
/// - the key tag is the key's fingerprint (`KeyFingerprint`), which picks the key out of an id's
///   history with no trial decryption;
/// - two subkeys come from the user's key through `crypto_kdf_derive_from_key` (context
///   `sealkit2`): id 1 seals (`crypto_aead_xchacha20poly1305_ietf`), id 2 keys the place tag, so the
///   key's bytes never serve two algorithms;
/// - the place tag is BLAKE2b-64 of the place encoding under subkey 2, so a value opened in the
///   wrong place fails with its own outcome, told apart from tampering;
/// - the associated data is the first 17 bytes of the body, then the place encoding:
///   `u32be(len id) ‖ id ‖ kind (1 field, 2 context) ‖ u32be(len place) ‖ place`.
public enum BoundCipher {
    /// The text that starts every v2 ciphertext.
    public static let prefix = "sk2:"
    /// The version byte that starts the body.
    static let version: UInt8 = 2
    /// Bytes of the key tag and of the place tag.
    static let tagByteCount = 8
    /// Version, key tag and place tag.
    static let headerByteCount = 1 + 2 * tagByteCount
    static let nonceByteCount = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let macByteCount = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    /// The smallest possible body: header, nonce and tag around an empty plaintext.
    public static let minimumByteCount = headerByteCount + nonceByteCount + macByteCount
    /// `crypto_kdf` context and subkey ids.
    static let kdfContext = Array("sealkit2".utf8)
    static let sealingSubkeyID: UInt64 = 1
    static let placeSubkeyID: UInt64 = 2
    static let subkeyByteCount = 32

    /// The length of a v2 ciphertext's text for `byteCount` plaintext bytes.
    public static func ciphertextLength(forPlaintextByteCount byteCount: Int) -> Int {
        prefix.utf8.count + Base64.encodedLength(of: minimumByteCount + byteCount)
    }

    /// The two subkeys of one key, side by side in guarded memory: sealing key, then place key.
    static func deriveSubkeys(of key: SymmetricKey) throws(SecureMemoryError) -> SecureBytes {
        Sodium.ready
        do {
            return try SecureBytes.allocate(count: 2 * subkeyByteCount) { out in
                let base = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                key.storage.withUnsafeBytes { keyBytes in
                    let master = keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    kdfContext.withUnsafeBufferPointer { context in
                        context.withMemoryRebound(to: CChar.self) { context in
                            _ = crypto_kdf_derive_from_key(base, subkeyByteCount, sealingSubkeyID, context.baseAddress!, master)
                            _ = crypto_kdf_derive_from_key(
                                base + subkeyByteCount, subkeyByteCount, placeSubkeyID, context.baseAddress!, master)
                        }
                    }
                }
            }
        } catch let error as SecureMemoryError {
            throw error
        } catch {
            throw .outOfMemory(byteCount: 2 * subkeyByteCount)
        }
    }

    /// `u32be(len id) ‖ id ‖ kind ‖ u32be(len place) ‖ place`.
    static func placeEncoding(id: String, place: CiphertextPlace) -> [UInt8] {
        let idBytes = Array(id.utf8)
        let placeBytes = Array(place.name.utf8)
        var encoding: [UInt8] = []
        encoding.reserveCapacity(9 + idBytes.count + placeBytes.count)
        func appendLength(_ count: Int) {
            let length = UInt32(truncatingIfNeeded: count)
            encoding.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        }
        appendLength(idBytes.count)
        encoding.append(contentsOf: idBytes)
        encoding.append(place.kind)
        appendLength(placeBytes.count)
        encoding.append(contentsOf: placeBytes)
        return encoding
    }

    /// The place tag of `encoding` under the place subkey (the second half of `subkeys`).
    static func placeTag(_ encoding: [UInt8], subkeys: SecureBytes, into tag: UnsafeMutablePointer<UInt8>) {
        subkeys.withUnsafeBytes { keys in
            _ = crypto_generichash(
                tag, tagByteCount, encoding, UInt64(encoding.count),
                keys.baseAddress!.assumingMemoryBound(to: UInt8.self) + subkeyByteCount, subkeyByteCount)
        }
    }

    /// Seals `plaintext` for `id` and `place`, writing the text (prefix included) into `output`.
    /// - Parameters:
    ///   - keyTag: the sealing key's fingerprint bytes.
    ///   - subkeys: the sealing key's subkeys, from `deriveSubkeys(of:)`.
    ///   - output: exactly `ciphertextLength(forPlaintextByteCount: plaintext.count)` bytes.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, keyTag: [UInt8], subkeys: SecureBytes, id: String, place: CiphertextPlace,
        into output: UnsafeMutableRawBufferPointer
    ) {
        let bodyCount = minimumByteCount + plaintext.count
        let prefixCount = prefix.utf8.count
        precondition(output.count == prefixCount + Base64.encodedLength(of: bodyCount))
        let encoding = placeEncoding(id: id, place: place)
        withUnsafeTemporaryAllocation(byteCount: bodyCount, alignment: 16) { body in
            let base = body.baseAddress!.assumingMemoryBound(to: UInt8.self)
            base[0] = version
            for i in 0..<tagByteCount { base[1 + i] = keyTag[i] }
            placeTag(encoding, subkeys: subkeys, into: base + 1 + tagByteCount)
            randombytes_buf(base + headerByteCount, nonceByteCount)
            let associatedData = Array(UnsafeBufferPointer(start: base, count: headerByteCount)) + encoding
            var written: UInt64 = 0
            var empty: UInt8 = 0
            subkeys.withUnsafeBytes { keys in
                withUnsafeMutablePointer(to: &empty) { emptyPointer in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        base + headerByteCount + nonceByteCount, &written,
                        plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(emptyPointer),
                        UInt64(plaintext.count), associatedData, UInt64(associatedData.count), nil,
                        base + headerByteCount, keys.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            for (i, byte) in prefix.utf8.enumerated() { output[i] = byte }
            Base64.encode(UnsafeRawBufferPointer(body), into: UnsafeMutableRawBufferPointer(rebasing: output[prefixCount...]))
        }
    }

    /// A text's v2 body, or why it has none.
    enum Parsed {
        /// No SealKit prefix: not v2 (perhaps v1).
        case notPrefixed
        /// SealKit's prefix, but not a v2 ciphertext SealKit can read.
        case failed(CiphertextError)
        /// The decoded body, at least `minimumByteCount` bytes, version checked.
        case parsed([UInt8])
    }

    /// Reads the prefix (`sk`, a version of one to three digits, `:`) and decodes the body.
    static func parse(_ text: UnsafeRawBufferPointer) -> Parsed {
        guard text.count >= 4, text[0] == UInt8(ascii: "s"), text[1] == UInt8(ascii: "k") else { return .notPrefixed }
        var colon = 2
        while colon < text.count, colon < 6, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[colon]) { colon += 1 }
        guard colon > 2, colon < text.count, text[colon] == UInt8(ascii: ":") else { return .notPrefixed }
        let encoded = UnsafeRawBufferPointer(rebasing: text[(colon + 1)...])
        guard let count = Base64.decodedLength(of: encoded) else { return .failed(.notBase64) }
        var body = [UInt8](repeating: 0, count: count)
        let decoded = body.withUnsafeMutableBytes { Base64.decode(encoded, into: $0) }
        guard decoded else { return .failed(.notBase64) }
        guard colon == 3, text[2] == UInt8(ascii: "2") else { return .failed(.unsupportedVersion) }
        guard count >= minimumByteCount else { return .failed(.truncated(byteCount: count)) }
        guard body[0] == version else { return .failed(.unsupportedVersion) }
        return .parsed(body)
    }

    /// Opens a parsed body for `id` and `place` with the candidate keys its key tag names.
    /// - Parameter candidates: the subkeys and ring index of each key whose fingerprint is the body's key tag.
    /// - Returns: the plaintext and the ring index of the key that opened it.
    /// - Throws: `.unknownKey` when no key has the tag, `.sealedForAnotherPlace` when the place tag
    ///   differs, `.authenticationFailed` when the tags match but the AEAD does not (tampering),
    ///   `.notUTF8`.
    static func open(
        body: [UInt8], candidates: [(index: Int, subkeys: SecureBytes)], id: String, place: CiphertextPlace
    ) throws(CiphertextError) -> (plaintext: String, keyIndex: Int) {
        guard !candidates.isEmpty else {
            throw .unknownKey(KeyFingerprint(bytes: Array(body[1..<(1 + tagByteCount)])))
        }
        let encoding = placeEncoding(id: id, place: place)
        let associatedData = Array(body[..<headerByteCount]) + encoding
        let plainCount = body.count - minimumByteCount
        var placeMatched = false
        for candidate in candidates {
            var tag = [UInt8](repeating: 0, count: tagByteCount)
            placeTag(encoding, subkeys: candidate.subkeys, into: &tag)
            guard ConstantTime.equals(tag, Array(body[(1 + tagByteCount)..<headerByteCount])) else { continue }
            placeMatched = true
            var opened = false
            var isText = true
            let plaintext = body.withUnsafeBufferPointer { box in
                String(unsafeUninitializedCapacity: Swift.max(plainCount, 1)) { output in
                    var written: UInt64 = 0
                    let status = candidate.subkeys.withUnsafeBytes { keys in
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            output.baseAddress!, &written, nil,
                            box.baseAddress! + headerByteCount + nonceByteCount,
                            UInt64(box.count - headerByteCount - nonceByteCount),
                            associatedData, UInt64(associatedData.count),
                            box.baseAddress! + headerByteCount, keys.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                    opened = status == 0
                    guard opened else { return 0 }
                    isText = UTF8Validation.isValid(UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(output)[..<plainCount]))
                    return isText ? plainCount : 0
                }
            }
            guard opened else { continue }
            guard isText else { throw .notUTF8 }
            return (plaintext, candidate.index)
        }
        throw placeMatched ? .authenticationFailed : .sealedForAnotherPlace
    }
}

/// The v2 subkeys and key tags of a ring's keys, made on first use and kept for the ring's life, so
/// that a ring that only reads and writes v1 never derives anything, and one that writes many v2
/// values derives once.
///
/// `@unchecked Sendable`: every stored property is read and written only under `lock`.
final class BoundKeyCache: @unchecked Sendable {
    private let lock = Lock()
    private var subkeys: [Int: SecureBytes] = [:]
    private var tags: [KeyFingerprint: [Int]]?
    private var currentTag: [UInt8]?

    /// The subkeys of `keys[index]`.
    func subkeys(of index: Int, key: SymmetricKey) throws(SecureMemoryError) -> SecureBytes {
        lock.lock()
        defer { lock.unlock() }
        if let known = subkeys[index] { return known }
        let derived = try BoundCipher.deriveSubkeys(of: key)
        subkeys[index] = derived
        return derived
    }

    /// The current key's fingerprint bytes.
    func currentTag(of key: SymmetricKey) -> [UInt8] {
        lock.withLock {
            if let tag = currentTag { return tag }
            let tag = key.fingerprint.bytes
            currentTag = tag
            return tag
        }
    }

    /// The ring indices of the keys whose fingerprint is `tag` (almost always none or one).
    func indices(of tag: KeyFingerprint, in keys: [SymmetricKey]) -> [Int] {
        lock.withLock {
            if tags == nil {
                var map: [KeyFingerprint: [Int]] = [:]
                for (index, key) in keys.enumerated() { map[key.fingerprint, default: []].append(index) }
                tags = map
            }
            return tags![tag] ?? []
        }
    }
}
