#if canImport(Glibc)
import Glibc
#endif

/// A user's keys: the current one, which encrypts, and retired ones kept so that
/// older ciphertexts still open after a rotation.
package struct KeyRing: Sendable {
    /// The id the keys belong to (`alice`, a user), as stored. v2 ciphertexts bind it; a ring
    /// without one reads and writes v1 only.
    package let id: String?
    /// The key new ciphertexts are made with.
    package let current: SymmetricKey
    /// Earlier keys, newest first; they only decrypt.
    package let retired: [SymmetricKey]
    /// v2's derived subkeys and key tags, made on first use.
    let bound = BoundKeyCache()

    /// Makes a ring from a current key and retired keys (newest first).
    /// - Parameters:
    ///   - current: the key new ciphertexts are sealed with.
    ///   - retired: older keys, newest first, kept to decrypt what they sealed.
    ///   - id: the id the keys belong to; v2 ciphertexts need it.
    package init(current: SymmetricKey, retired: [SymmetricKey] = [], id: String? = nil) {
        self.id = id
        self.current = current
        self.retired = retired
    }

    /// Every key, current first: the order decryption tries them in.
    package var all: [SymmetricKey] { [current] + retired }

    /// Encrypts with the current key in Rownd's format (v1).
    /// - Returns: the ciphertext as base64 text.
    package func encrypt(_ plaintext: String) -> String {
        FieldCipher.encrypt(plaintext, using: current)
    }

    /// Encrypts with the current key in `format`; a v2 ciphertext is bound to this ring's id and `place`.
    /// - Precondition: a v2 ciphertext needs a ring made with an id.
    /// - Throws: `SecureMemoryError` when guarded memory for v2's subkeys cannot be had.
    package func encrypt(
        _ plaintext: String, format: CiphertextFormat, place: CiphertextPlace
    ) throws(SecureMemoryError) -> String {
        var plaintext = plaintext
        // `withUTF8` rethrows untyped errors, so the typed one travels in a Result.
        return try plaintext.withUTF8 { bytes in
            Result { () throws(SecureMemoryError) in try encrypt(bytes: UnsafeRawBufferPointer(bytes), format: format, place: place) }
        }.get()
    }

    /// `encrypt(_:format:place:)` for raw UTF-8 bytes.
    package func encrypt(
        bytes plaintext: UnsafeRawBufferPointer, format: CiphertextFormat, place: CiphertextPlace
    ) throws(SecureMemoryError) -> String {
        switch format {
        case .v1:
            return FieldCipher.encrypt(bytes: plaintext, using: current)
        case .v2:
            guard let id else { preconditionFailure("a v2 ciphertext binds its id: make the KeyRing with one") }
            let sealing = try bound.sealing(index: 0, key: current, id: id, place: place)
            let count = BoundCipher.ciphertextLength(forPlaintextByteCount: plaintext.count)
            return String(unsafeUninitializedCapacity: count) { output in
                BoundCipher.seal(plaintext, with: sealing, into: UnsafeMutableRawBufferPointer(output))
                return count
            }
        }
    }

    /// Encrypts many values with the current key in `format`, as one operation: v1's nonces are drawn
    /// from libsodium together (one system call for up to `NonceBatch.maximumDraw` values) and none
    /// outlives the call.
    /// - Returns: the ciphertexts, in order.
    /// - Throws: `SecureMemoryError` when guarded memory for v2's subkeys cannot be had.
    package func encrypt(
        _ plaintexts: [String], format: CiphertextFormat, place: CiphertextPlace
    ) throws(SecureMemoryError) -> [String] {
        guard format == .v1 else {
            var sealed: [String] = []
            sealed.reserveCapacity(plaintexts.count)
            for plaintext in plaintexts { sealed.append(try encrypt(plaintext, format: format, place: place)) }
            return sealed
        }
        return NonceBatch.withBatch(expecting: plaintexts.count) { nonces in
            plaintexts.map { plaintext in
                var plaintext = plaintext
                return plaintext.withUTF8 { bytes in
                    let count = FieldCipher.ciphertextLength(forPlaintextByteCount: bytes.count)
                    return String(unsafeUninitializedCapacity: count) { output in
                        FieldCipher.encrypt(
                            bytes: UnsafeRawBufferPointer(bytes), using: current, nonces: &nonces,
                            into: UnsafeMutableRawBufferPointer(output))
                        return count
                    }
                }
            }
        }
    }

    /// Encrypts each line of `lines` with the current key in `format`, as one operation, appending each
    /// ciphertext and a newline to `output`: the bulk path of `encrypt --lines` and of apps' exports, with no
    /// `String` per value. A line ends at `\n`, which is no part of its value; the last line's may be missing.
    /// Every line is checked first, so on a line that is not UTF-8 nothing is written.
    /// - Returns: nil, or the 1-based number of the first line that is not UTF-8 text (`output` is then as it was).
    /// - Throws: `SecureMemoryError` when guarded memory for v2's subkeys cannot be had (`output` as it was).
    package func encrypt(
        lines: UnsafeRawBufferPointer, format: CiphertextFormat, place: CiphertextPlace, appendingTo output: inout [UInt8]
    ) throws(SecureMemoryError) -> Int? {
        guard let base = lines.baseAddress, !lines.isEmpty else { return nil }
        // Where each line starts, and one past its last byte; then what the output needs.
        var bounds: [(start: Int, end: Int)] = []
        var start = 0
        while start < lines.count {
            let end = memchr(base + start, 0x0A, lines.count - start).map { UnsafeRawPointer($0) - base } ?? lines.count
            guard UTF8Validation.isValid(UnsafeRawBufferPointer(rebasing: lines[start..<end])) else { return bounds.count + 1 }
            bounds.append((start, end))
            start = end + 1
        }
        let v1 = format == .v1
        func length(_ count: Int) -> Int {
            v1 ? FieldCipher.ciphertextLength(forPlaintextByteCount: count) : BoundCipher.ciphertextLength(forPlaintextByteCount: count)
        }
        let total = bounds.reduce(0) { $0 + length($1.end - $1.start) + 1 }
        let sealing: BoundCipher.Sealing?
        if format == .v2 {
            guard let id else { preconditionFailure("a v2 ciphertext binds its id: make the KeyRing with one") }
            sealing = try bound.sealing(index: 0, key: current, id: id, place: place)
        } else {
            sealing = nil
        }
        let seal = { (out: UnsafeMutableRawBufferPointer, first: Int) -> Void in
            NonceBatch.withBatch(expecting: v1 ? bounds.count : 0) { (nonces: inout NonceBatch) -> Void in
                var at = first
                for (start, end) in bounds {
                    let plaintext = UnsafeRawBufferPointer(rebasing: lines[start..<end])
                    let count = length(plaintext.count)
                    let into = UnsafeMutableRawBufferPointer(rebasing: out[at..<(at + count)])
                    if let sealing {
                        BoundCipher.seal(plaintext, with: sealing, into: into)
                    } else {
                        FieldCipher.encrypt(bytes: plaintext, using: current, nonces: &nonces, into: into)
                    }
                    out[at + count] = UInt8(ascii: "\n")
                    at += count + 1
                }
            }
        }
        // Written in place, without zeroing it first: for 1 MiB values, filling the output twice cost 13%.
        if output.isEmpty {
            output = [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
                seal(UnsafeMutableRawBufferPointer(buffer), 0)
                count = total
            }
        } else {
            let first = output.count
            output.append(contentsOf: repeatElement(0, count: total))
            output.withUnsafeMutableBytes { seal($0, first) }
        }
        return nil
    }

    /// Decrypts a v1 or v2 ciphertext. A v1 value is tried with the current key, then the retired
    /// ones; a v2 value opens with the one key its header names, for this ring's id and `place` only.
    ///
    /// A v1 value names no place, so wherever the place matters (a field the schema makes v2, a
    /// caller's context) pass `acceptsV1: false`: otherwise a v1 value copied from any field or
    /// context would open there, and the v2 binding would have a back door.
    /// - Parameters:
    ///   - ciphertext: a v1 (Rownd) or v2 (`sk2:`) ciphertext.
    ///   - place: where a v2 value must have been sealed; the empty context by default.
    ///   - acceptsV1: whether a v1 value may open here; `false` refuses one with `.notBound`.
    /// - Returns: the plaintext, and whether only a retired key opened it (so it should be re-encrypted).
    /// - Throws: `CiphertextError` when no key opens it or it is malformed: for v2, `.unknownKey`,
    ///   `.sealedForAnotherPlace` and `.authenticationFailed` (tampering) apart; `.notBound` for a
    ///   well-formed v1 value where only v2 is accepted.
    package func decrypt(
        _ ciphertext: String, place: CiphertextPlace = .context(""), acceptsV1: Bool = true
    ) throws(CiphertextError) -> (plaintext: String, needsRotation: Bool) {
        var ciphertext = ciphertext
        // `withUTF8` rethrows untyped errors, so the typed one travels in a Result.
        let (plaintext, index) = try ciphertext.withUTF8 { text in
            Result { () throws(CiphertextError) in
                try open(utf8: UnsafeRawBufferPointer(text), place: place, acceptsV1: acceptsV1)
            }
        }.get()
        return (plaintext, index > 0)
    }

    /// Opens a ciphertext's UTF-8 text; returns the plaintext and the index in `all` of the key that opened it.
    package func open(
        utf8 text: UnsafeRawBufferPointer, place: CiphertextPlace, acceptsV1: Bool = true
    ) throws(CiphertextError) -> (plaintext: String, keyIndex: Int) {
        switch BoundCipher.parse(text) {
        case .failed(let error):
            throw error
        case .parsed(let body):
            let tag = BoundCipher.keyTag(of: body)
            let candidates = bound.indices(of: tag, in: self)
            guard !candidates.isEmpty else { throw .unknownKey(KeyFingerprint(bytes: Array(body[1...BoundCipher.tagByteCount]))) }
            for index in candidates {
                let sealing: BoundCipher.Sealing
                do {
                    // A ring without an id binds nothing; no v2 value is sealed for the empty id.
                    sealing = try bound.sealing(index: index, key: key(at: index), id: id ?? "", place: place)
                } catch {
                    throw .authenticationFailed
                }
                if let plaintext = try BoundCipher.open(body: body, with: sealing) { return (plaintext, index) }
            }
            throw .sealedForAnotherPlace
        case .notPrefixed:
            // Anything that is not a well-formed v1 value fails below as it always did.
            if !acceptsV1, CiphertextShape.classify(text) == .v1 {
                throw isStrippedBoundBody(text) ? .headerStripped : .notBound
            }
            do {
                return retired.isEmpty
                    ? try FieldCipher.decrypt(utf8: text, usingAnyOf: CollectionOfOne(current))
                    : try FieldCipher.decrypt(utf8: text, usingAnyOf: all)
            } catch .authenticationFailed {
                throw isStrippedBoundBody(text) ? .headerStripped : .authenticationFailed
            }
        }
    }

    /// Whether base64 `text` is the body of a v2 ciphertext under one of these keys with its
    /// `sk2:` prefix removed: it must not open as v1, and the error says what it is.
    private func isStrippedBoundBody(_ text: UnsafeRawBufferPointer) -> Bool {
        guard let count = Base64.decodedLength(of: text), count >= BoundCipher.minimumByteCount else { return false }
        var body = [UInt8](repeating: 0, count: count)
        guard body.withUnsafeMutableBytes({ Base64.decode(text, into: $0) }), body[0] == BoundCipher.version else { return false }
        return !bound.indices(of: BoundCipher.keyTag(of: body), in: self).isEmpty
    }

    /// The key at `index` of `all`, without building `all`.
    func key(at index: Int) -> SymmetricKey { index == 0 ? current : retired[index - 1] }

    /// Whether one of these keys has the fingerprint `tag`: a v2 value with that key tag is this ring's.
    package func holdsKey(tagged tag: KeyFingerprint) -> Bool {
        guard tag.bytes.count == BoundCipher.tagByteCount else { return false }
        return !bound.indices(of: BoundCipher.keyTag(of: tag), in: self).isEmpty
    }
}

extension KeyRing: CustomStringConvertible {
    package var description: String {
        "KeyRing(current: \(current.fingerprint), retired: \(retired.count))"
    }
}
