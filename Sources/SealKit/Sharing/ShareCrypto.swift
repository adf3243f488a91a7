import CSodium

/// Unpadded base64 (standard, as age writes it, and URL-safe, as identity and group texts use), through libsodium's
/// constant-time coder.
package enum UnpaddedBase64 {
    /// The alphabets used.
    package enum Alphabet {
        /// Standard base64 without `=` (age's header).
        case standard
        /// URL-safe base64 without `=` (SealKit's texts: no `+` or `/` to escape in a link or a QR code).
        case urlSafe

        var variant: Int32 {
            switch self {
            case .standard: return sodium_base64_VARIANT_ORIGINAL_NO_PADDING
            case .urlSafe: return sodium_base64_VARIANT_URLSAFE_NO_PADDING
            }
        }
    }

    /// The text of `bytes`.
    package static func encode(_ bytes: [UInt8], _ alphabet: Alphabet) -> String {
        Sodium.ready
        let length = sodium_base64_encoded_len(bytes.count, alphabet.variant)
        var out = [CChar](repeating: 0, count: length)
        _ = bytes.withUnsafeBufferPointer { sodium_bin2base64(&out, length, $0.baseAddress, bytes.count, alphabet.variant) }
        return String(decoding: out.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes of `text`, which must be base64 of `alphabet` and nothing else; nil otherwise.
    package static func decode(_ text: some Collection<UInt8>, _ alphabet: Alphabet) -> [UInt8]? {
        Sodium.ready
        let chars = Array(text)
        guard !chars.isEmpty else { return [] }
        guard !chars.contains(where: { $0 == UInt8(ascii: "=") }) else { return nil }
        var out = [UInt8](repeating: 0, count: chars.count * 3 / 4 + 1)
        var written = 0
        var end: UnsafePointer<CChar>?
        let status = chars.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { input in
                sodium_base642bin(&out, out.count, input.baseAddress, input.count, nil, &written, &end, alphabet.variant)
            }
        }
        guard status == 0 else { return nil }
        // A trailing partial group or stray bytes: libsodium stops before them.
        let consumed = chars.withUnsafeBufferPointer { input in
            end.map { UnsafeRawPointer($0) == UnsafeRawPointer(input.baseAddress!) + input.count } ?? false
        }
        guard consumed else { return nil }
        // Canonical only: re-encoding gives the text back, so one value has one text.
        let bytes = Array(out[..<written])
        guard encode(bytes, alphabet).utf8.elementsEqual(chars) else { return nil }
        return bytes
    }
}

/// age's key derivations, on the package's HKDF-SHA-256 (RFC 5869 over libsodium's HMAC), as byte arrays the
/// callers wipe.
enum AgeKDF {
    /// HMAC-SHA-256 of `message` under `key`.
    static func hmac(key: some ContiguousByteSource, _ message: some ContiguousByteSource) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: SHA256.byteCount)
        key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                out.withUnsafeMutableBytes { HKDF.hmac(key: key, parts: [message], into: $0) }
            }
        }
        return out
    }

    /// HKDF-SHA-256 of `secret` with `salt` (empty: none) and `info`, 32 bytes: one block, so RFC 5869's two steps
    /// are two HMACs. `HKDF.deriveBytes` gives the same bytes in guarded memory, whose three allocations per call
    /// (memory mappings each) cost more than the X25519 of a stanza; here the secrets live in arrays wiped on return.
    static func derive(secret: some ContiguousByteSource, salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        precondition(count == SHA256.byteCount, "age derives 32-byte keys only")
        var pseudorandomKey = hmac(key: salt, secret)
        defer { ConstantTime.wipe(&pseudorandomKey) }
        return hmac(key: pseudorandomKey, info + [1])
    }
}

/// age's X25519 recipients and payload (age-encryption.org/v1), the envelope of a shared value: written so that
/// the file opens with `age -d -i` given the recipient's identity in age's form, and read back strictly.
///
/// The header is `age-encryption.org/v1`, one `-> X25519 <ephemeral share>` stanza per recipient wrapping a
/// 16-byte file key with ChaCha20-Poly1305 under HKDF-SHA-256 of the X25519 shared secret, and `--- <MAC>`, an
/// HMAC-SHA-256 of the header under a key derived from the file key. The payload is a 16-byte nonce and the
/// plaintext in 64 KiB ChaCha20-Poly1305 chunks (the STREAM construction), keyed from the file key and the nonce.
package enum AgeEnvelope {
    static let intro = Array("age-encryption.org/v1\n".utf8)
    static let stanzaLabel = Array("age-encryption.org/v1/X25519".utf8)
    static let chunkSize = 64 * 1024
    static let tagSize = Int(crypto_aead_chacha20poly1305_ietf_ABYTES)

    /// An age file for `recipients` (X25519 public keys) holding `plaintext`.
    package static func seal(_ plaintext: UnsafeRawBufferPointer, to recipients: [[UInt8]]) throws(ShareError) -> [UInt8] {
        Sodium.ready
        var fileKey = SecureRandom.bytes(count: 16)
        defer { ConstantTime.wipe(&fileKey) }
        var header = intro
        for recipient in recipients {
            var ephemeral = SecureRandom.bytes(count: 32)
            defer { ConstantTime.wipe(&ephemeral) }
            var share = [UInt8](repeating: 0, count: 32)
            _ = crypto_scalarmult_base(&share, ephemeral)
            var shared = [UInt8](repeating: 0, count: 32)
            defer { ConstantTime.wipe(&shared) }
            guard crypto_scalarmult(&shared, ephemeral, recipient) == 0 else {
                throw .malformed(what: "a recipient's identity", reason: "its X25519 key is a low-order point")
            }
            var wrapKey = AgeKDF.derive(secret: shared, salt: share + recipient, info: stanzaLabel, count: 32)
            defer { ConstantTime.wipe(&wrapKey) }
            var body = [UInt8](repeating: 0, count: 16 + tagSize)
            let nonce = [UInt8](repeating: 0, count: 12)
            _ = crypto_aead_chacha20poly1305_ietf_encrypt(&body, nil, fileKey, 16, nil, 0, nil, nonce, wrapKey)
            header += Array("-> X25519 \(UnpaddedBase64.encode(share, .standard))\n\(UnpaddedBase64.encode(body, .standard))\n".utf8)
        }
        header += Array("---".utf8)
        var macKey = AgeKDF.derive(secret: fileKey, salt: [], info: Array("header".utf8), count: 32)
        defer { ConstantTime.wipe(&macKey) }
        let mac = AgeKDF.hmac(key: macKey, header)
        header += Array(" \(UnpaddedBase64.encode(mac, .standard))\n".utf8)
        let nonce = SecureRandom.bytes(count: 16)
        var payloadKey = AgeKDF.derive(secret: fileKey, salt: nonce, info: Array("payload".utf8), count: 32)
        defer { ConstantTime.wipe(&payloadKey) }
        var out = header + nonce
        let chunkCount = max(1, (plaintext.count + chunkSize - 1) / chunkSize)
        out.reserveCapacity(out.count + plaintext.count + chunkCount * tagSize)
        for index in 0..<chunkCount {
            let start = index * chunkSize
            let end = min(start + chunkSize, plaintext.count)
            let chunkNonce = streamNonce(index, last: index == chunkCount - 1)
            let at = out.count
            out += repeatElement(0, count: end - start + tagSize)
            // An empty plaintext still needs a valid pointer for libsodium.
            let zero: [UInt8] = [0]
            out.withUnsafeMutableBufferPointer { buffer in
                zero.withUnsafeBufferPointer { zero in
                    let source = end > start ? plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self) + start : zero.baseAddress!
                    _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                        buffer.baseAddress! + at, nil, source, UInt64(end - start), nil, 0, nil, chunkNonce, payloadKey)
                }
            }
        }
        return out
    }

    static func streamNonce(_ index: Int, last: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        var counter = UInt64(index)
        for position in stride(from: 10, through: 3, by: -1) {
            nonce[position] = UInt8(counter & 0xFF)
            counter >>= 8
        }
        nonce[11] = last ? 1 : 0
        return nonce
    }

    /// An age file's parts, parsed strictly: only X25519 stanzas, canonical base64, one MAC line.
    package struct Parsed: Sendable {
        /// Each stanza's ephemeral share and wrapped file key.
        package let stanzas: [(share: [UInt8], body: [UInt8])]
        /// The header up to and including `---`, which the MAC covers.
        let macked: ArraySlice<UInt8>
        let mac: [UInt8]
        /// The payload: nonce, then chunks.
        let payload: ArraySlice<UInt8>
    }

    /// Parses an age file written for X25519 recipients.
    package static func parse(_ file: [UInt8]) throws(ShareError) -> Parsed {
        func bad(_ reason: String) -> ShareError { .malformed(what: "an age envelope", reason: reason) }
        guard file.starts(with: intro) else { throw bad("it does not start with age-encryption.org/v1") }
        var at = intro.count
        func line() throws(ShareError) -> ArraySlice<UInt8> {
            guard let end = file[at...].firstIndex(of: 0x0A) else { throw bad("a header line has no end") }
            defer { at = end + 1 }
            return file[at..<end]
        }
        var stanzas: [(share: [UInt8], body: [UInt8])] = []
        while true {
            let start = at
            let text = try line()
            if text.starts(with: Array("--- ".utf8)) {
                guard let mac = UnpaddedBase64.decode(text.dropFirst(4), .standard), mac.count == 32 else { throw bad("its MAC is damaged") }
                guard !stanzas.isEmpty else { throw bad("it has no recipient") }
                guard file.count - at >= 16 + tagSize else { throw bad("its payload is truncated") }
                return Parsed(stanzas: stanzas, macked: file[..<(start + 3)], mac: mac, payload: file[at...])
            }
            let words = text.split(separator: 0x20, omittingEmptySubsequences: false)
            guard words.count == 3, Array(words[0]) == Array("->".utf8), Array(words[1]) == Array("X25519".utf8),
                let share = UnpaddedBase64.decode(words[2], .standard), share.count == 32
            else { throw bad("it holds a stanza other than an X25519 recipient") }
            guard let body = UnpaddedBase64.decode(try line(), .standard), body.count == 16 + tagSize else {
                throw bad("a recipient's wrapped key is damaged")
            }
            stanzas.append((share, body))
            // Opening tries every stanza with every identity of the reader's keys (age names no recipient): a bound on
            // stanzas bounds that work for a value made to be slow (a group has at most 1,000 members).
            guard stanzas.count <= 2048 else { throw bad("it names more than 2,048 recipients") }
        }
    }

    /// The file key, when one of the stanzas is addressed to `secret` (whose public key is `publicKey`); the
    /// header MAC is checked with it.
    static func fileKey(of parsed: Parsed, secret: SecureBytes, publicKey: [UInt8]) throws(ShareError) -> SecureBytes? {
        for stanza in parsed.stanzas {
            var shared = [UInt8](repeating: 0, count: 32)
            defer { ConstantTime.wipe(&shared) }
            let status = secret.withUnsafeBytes { crypto_scalarmult(&shared, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), stanza.share) }
            guard status == 0 else { continue }
            var wrapKey = AgeKDF.derive(secret: shared, salt: stanza.share + publicKey, info: stanzaLabel, count: 32)
            defer { ConstantTime.wipe(&wrapKey) }
            let nonce = [UInt8](repeating: 0, count: 12)
            // Opened into an array first, wiped: a stanza for someone else fails here, and guarded memory (a memory
            // mapping per allocation) is made only for the one that opens.
            var opened = [UInt8](repeating: 0, count: 16)
            defer { ConstantTime.wipe(&opened) }
            guard crypto_aead_chacha20poly1305_ietf_decrypt(
                &opened, nil, nil, stanza.body, UInt64(stanza.body.count), nil, 0, nonce, wrapKey) == 0
            else { continue }
            let key = SecureBytes(copying: opened)
            var macKey = AgeKDF.derive(secret: key, salt: [], info: Array("header".utf8), count: 32)
            defer { ConstantTime.wipe(&macKey) }
            guard ConstantTime.equals(AgeKDF.hmac(key: macKey, parsed.macked), parsed.mac) else {
                throw .malformed(what: "an age envelope", reason: "its header MAC does not verify")
            }
            return key
        }
        return nil
    }

    /// Decrypts the payload with the file key.
    static func open(_ parsed: Parsed, fileKey: SecureBytes) throws(ShareError) -> [UInt8] {
        let nonce = Array(parsed.payload.prefix(16))
        var payloadKey = AgeKDF.derive(secret: fileKey, salt: nonce, info: Array("payload".utf8), count: 32)
        defer { ConstantTime.wipe(&payloadKey) }
        let chunks = Array(parsed.payload.dropFirst(16))
        let full = chunkSize + tagSize
        var out: [UInt8] = []
        out.reserveCapacity(chunks.count)
        var start = 0
        var index = 0
        while true {
            let remaining = chunks.count - start
            let last = remaining <= full
            let count = last ? remaining : full
            guard count >= tagSize, !(count == tagSize && index > 0) else {
                throw .malformed(what: "an age envelope", reason: "its payload is truncated or has an empty last chunk")
            }
            let at = out.count
            out += repeatElement(0, count: count - tagSize)
            let opened = out.withUnsafeMutableBufferPointer { buffer in
                chunks.withUnsafeBufferPointer { input in
                    crypto_aead_chacha20poly1305_ietf_decrypt(
                        buffer.baseAddress! + at, nil, nil, input.baseAddress! + start, UInt64(count), nil, 0,
                        streamNonce(index, last: last), payloadKey)
                }
            }
            guard opened == 0 else {
                ConstantTime.wipe(&out)
                throw .malformed(what: "an age envelope", reason: "its payload does not authenticate (altered or truncated)")
            }
            if last { return out }
            start += count
            index += 1
        }
    }
}
