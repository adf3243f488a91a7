import CSodium
import Synchronization

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
package enum CiphertextPlace: Sendable, Hashable {
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
package enum CiphertextShape: Sendable, Equatable {
    /// Standard padded base64 of at least `FieldCipher.minimumByteCount` bytes: a v1 ciphertext,
    /// or a plaintext that happens to look exactly like one.
    case v1
    /// A v2 ciphertext sealed under the key whose fingerprint is `keyTag`.
    case v2(keyTag: KeyFingerprint)
    /// SealKit's prefix with a version this SealKit does not read.
    case unsupportedVersion

    /// Classifies `text`; nil when it cannot be a SealKit ciphertext of either format.
    package init?(of text: String) {
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
package enum BoundCipher {
    /// The text that starts every v2 ciphertext.
    package static let prefix = "sk2:"
    /// The version byte that starts the body.
    static let version: UInt8 = 2
    /// Bytes of the key tag and of the place tag.
    package static let tagByteCount = 8
    /// Version, key tag and place tag.
    package static let headerByteCount = 1 + 2 * tagByteCount
    static let nonceByteCount = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let macByteCount = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    /// The smallest possible body: header, nonce and tag around an empty plaintext.
    package static let minimumByteCount = headerByteCount + nonceByteCount + macByteCount
    /// `crypto_kdf` context and subkey ids.
    static let kdfContext = Array("sealkit2".utf8)
    static let sealingSubkeyID: UInt64 = 1
    static let placeSubkeyID: UInt64 = 2
    static let subkeyByteCount = 32

    /// The length of a v2 ciphertext's text for `byteCount` plaintext bytes.
    package static func ciphertextLength(forPlaintextByteCount byteCount: Int) -> Int {
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

    /// The place tag of `encoding`: BLAKE2b with an 8-byte output, keyed with the place subkey
    /// (the second half of `subkeys`).
    static func placeTag(_ encoding: [UInt8], subkeys: SecureBytes) -> UInt64 {
        var tag: UInt64 = 0
        subkeys.withUnsafeBytes { keys in
            withUnsafeMutableBytes(of: &tag) { out in
                _ = crypto_generichash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), tagByteCount, encoding, UInt64(encoding.count),
                    keys.baseAddress!.assumingMemoryBound(to: UInt8.self) + subkeyByteCount, subkeyByteCount)
            }
        }
        return tag
    }

    /// What sealing or opening for one key, id and place needs: everything but the nonce.
    struct Sealing {
        /// The key's subkeys (sealing key, then place key).
        let subkeys: SecureBytes
        /// The key tag and the place tag, as their 8 bytes lie in the header.
        let keyTag: UInt64
        let placeTag: UInt64
        /// The place encoding, which follows the header in the associated data.
        let encoding: [UInt8]
    }

    /// Calls `body` with the associated data for `sealing`: `0x02 ‖ key tag ‖ place tag ‖ place encoding`.
    static func withAssociatedData<R>(_ sealing: Sealing, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeTemporaryAllocation(byteCount: headerByteCount + sealing.encoding.count, alignment: 8) { data in
            data.storeBytes(of: version, toByteOffset: 0, as: UInt8.self)
            data.storeBytes(of: sealing.keyTag, toByteOffset: 1, as: UInt64.self)
            data.storeBytes(of: sealing.placeTag, toByteOffset: 1 + tagByteCount, as: UInt64.self)
            sealing.encoding.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: data[headerByteCount...]).copyMemory(from: $0) }
            return body(UnsafeRawBufferPointer(data))
        }
    }

    /// Seals `plaintext`, writing the text (prefix included) into `output`, which holds exactly
    /// `ciphertextLength(forPlaintextByteCount: plaintext.count)` bytes.
    static func seal(_ plaintext: UnsafeRawBufferPointer, with sealing: Sealing, into output: UnsafeMutableRawBufferPointer) {
        let bodyCount = minimumByteCount + plaintext.count
        let prefixCount = prefix.utf8.count
        precondition(output.count == prefixCount + Base64.encodedLength(of: bodyCount))
        // The binary body is made in the output's last bytes, then turned into base64 in place (no scratch buffer).
        let text = UnsafeMutableRawBufferPointer(rebasing: output[prefixCount...])
        do {
            let body = UnsafeMutableRawBufferPointer(rebasing: text[(text.count - bodyCount)...])
            let base = body.baseAddress!.assumingMemoryBound(to: UInt8.self)
            randombytes_buf(base + headerByteCount, nonceByteCount)
            withAssociatedData(sealing) { associatedData in
                // The header is the associated data's first 17 bytes.
                body.baseAddress!.copyMemory(from: associatedData.baseAddress!, byteCount: headerByteCount)
                var written: UInt64 = 0
                var empty: UInt8 = 0
                sealing.subkeys.withUnsafeBytes { keys in
                    withUnsafeMutablePointer(to: &empty) { emptyPointer in
                        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                            base + headerByteCount + nonceByteCount, &written,
                            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(emptyPointer),
                            UInt64(plaintext.count),
                            associatedData.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count), nil,
                            base + headerByteCount, keys.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
            for (i, byte) in prefix.utf8.enumerated() { output[i] = byte }
            Base64.encodeInPlace(text, byteCount: bodyCount)
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
        var decoded = false
        let body = [UInt8](unsafeUninitializedCapacity: Swift.max(count, 1)) { out, initialized in
            decoded = Base64.decode(encoded, into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(out)[..<count]))
            initialized = decoded ? count : 0
        }
        guard decoded else { return .failed(.notBase64) }
        guard colon == 3, text[2] == UInt8(ascii: "2") else { return .failed(.unsupportedVersion) }
        guard count >= minimumByteCount else { return .failed(.truncated(byteCount: count)) }
        guard body[0] == version else { return .failed(.unsupportedVersion) }
        return .parsed(body)
    }

    /// The key tag of a parsed body, as its 8 bytes lie.
    static func keyTag(of body: [UInt8]) -> UInt64 {
        body.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 1, as: UInt64.self) }
    }

    /// The key tag of the key with this fingerprint: its 8 bytes, as a header holds them.
    static func keyTag(of fingerprint: KeyFingerprint) -> UInt64 {
        fingerprint.bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    /// Opens a parsed body with one candidate key for the place `sealing` stands for.
    /// - Returns: the plaintext, or nil when the place tag differs; throws when the place tag
    ///   matches and the AEAD does not (tampering) or the plaintext is not UTF-8.
    static func open(body: [UInt8], with sealing: Sealing) throws(CiphertextError) -> String? {
        let placeMatches = body.withUnsafeBytes { box in
            withUnsafeBytes(of: sealing.placeTag) { sodium_memcmp(box.baseAddress! + 1 + tagByteCount, $0.baseAddress!, tagByteCount) == 0 }
        }
        guard placeMatches else { return nil }
        let plainCount = body.count - minimumByteCount
        var opened = false
        var isText = true
        let plaintext = body.withUnsafeBufferPointer { box in
            withAssociatedData(sealing) { associatedData in
                String(unsafeUninitializedCapacity: Swift.max(plainCount, 1)) { output in
                    var written: UInt64 = 0
                    let status = sealing.subkeys.withUnsafeBytes { keys in
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            output.baseAddress!, &written, nil,
                            box.baseAddress! + headerByteCount + nonceByteCount,
                            UInt64(box.count - headerByteCount - nonceByteCount),
                            associatedData.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                            box.baseAddress! + headerByteCount, keys.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                    opened = status == 0
                    guard opened else { return 0 }
                    isText = UTF8Validation.isValid(UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(output)[..<plainCount]))
                    return isText ? plainCount : 0
                }
            }
        }
        guard opened else { throw .authenticationFailed }
        guard isText else { throw .notUTF8 }
        return plaintext
    }
}

/// The v2 subkeys, key tags and place encodings of a ring's keys, made on first use and kept for
/// the ring's life, so that a ring that only reads and writes v1 derives nothing, and one that
/// seals many v2 values derives and hashes once per key and place. Shared across threads
/// with its ring: the cache lives in a `Mutex`.
final class BoundKeyCache: Sendable {
    /// A key's index and a place by its exact bytes: `String`'s equality holds NFC and NFD
    /// spellings equal, but the place encoding, and so the binding, is the bytes.
    private struct PlaceKey: Hashable {
        let index: Int
        let kind: UInt8
        let name: [UInt8]
    }
    private struct State {
        var subkeys: [Int: SecureBytes] = [:]
        var keyTags: [Int: UInt64] = [:]
        var places: [PlaceKey: (encoding: [UInt8], tag: UInt64)] = [:]
        var indicesByTag: [UInt64: [Int]]?
    }
    private let state = Mutex(State())
    /// Past this many places the cache starts over: a bound for rings that seal for many contexts.
    private static let placeLimit = 4096

    /// Everything sealing for `keys[index]`, `id` and `place` needs.
    func sealing(index: Int, key: SymmetricKey, id: String, place: CiphertextPlace) throws(SecureMemoryError) -> BoundCipher.Sealing {
        try state.withLock { (state) throws(SecureMemoryError) -> BoundCipher.Sealing in
            let derived: SecureBytes
            if let known = state.subkeys[index] {
                derived = known
            } else {
                derived = try BoundCipher.deriveSubkeys(of: key)
                state.subkeys[index] = derived
            }
            let keyTag: UInt64
            if let known = state.keyTags[index] {
                keyTag = known
            } else {
                keyTag = BoundCipher.keyTag(of: key.fingerprint)
                state.keyTags[index] = keyTag
            }
            let placeKey = PlaceKey(index: index, kind: place.kind, name: Array(place.name.utf8))
            if let known = state.places[placeKey] {
                return BoundCipher.Sealing(subkeys: derived, keyTag: keyTag, placeTag: known.tag, encoding: known.encoding)
            }
            // The ring's id is fixed, so the place alone keys the encoding.
            let encoding = BoundCipher.placeEncoding(id: id, place: place)
            let tag = BoundCipher.placeTag(encoding, subkeys: derived)
            if state.places.count >= Self.placeLimit { state.places.removeAll(keepingCapacity: true) }
            state.places[placeKey] = (encoding, tag)
            return BoundCipher.Sealing(subkeys: derived, keyTag: keyTag, placeTag: tag, encoding: encoding)
        }
    }

    /// The ring indices of the keys whose fingerprint is `tag` (almost always none or one).
    func indices(of tag: UInt64, in ring: KeyRing) -> [Int] {
        state.withLock { state in
            if state.indicesByTag == nil {
                var map: [UInt64: [Int]] = [:]
                for index in 0...ring.retired.count {
                    map[BoundCipher.keyTag(of: ring.key(at: index).fingerprint), default: []].append(index)
                }
                state.indicesByTag = map
            }
            return state.indicesByTag![tag] ?? []
        }
    }
}
