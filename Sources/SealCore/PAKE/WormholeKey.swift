import CSodium

/// The 32-byte key two sides share after SPAKE2, and magic-wormhole's key schedule on it.
///
/// One master key yields a separate key for every job through HKDF purpose strings, so no
/// key is used for two things: `phaseKey(side:phase:)` for each mailbox message,
/// `verifier` for comparing screens, `derive(purpose:)` for anything else. `seal`/`open`
/// are magic-wormhole's `encrypt_data`/`decrypt_data`: secretbox, written as nonce || box.
///
/// The bytes live in guarded memory and are wiped when the last copy goes; printing a key
/// shows nothing of it.
package struct WormholeKey: Sendable {
    /// The size of the key in bytes.
    package static let byteCount = 32
    /// Bytes `seal` adds: a 24-byte nonce and a 16-byte tag.
    package static let sealOverhead = Int(crypto_secretbox_NONCEBYTES) + Int(crypto_secretbox_MACBYTES)

    package let storage: SecureBytes

    package init(storage: SecureBytes) {
        precondition(storage.count == Self.byteCount)
        self.storage = storage
    }

    /// Makes a key from 32 raw bytes (test vectors; everything else gets keys from SPAKE2).
    package init(bytes: some ContiguousByteSource) {
        self.init(storage: SecureBytes(copying: bytes))
    }

    /// magic-wormhole's `derive_key(key, purpose)`: HKDF-SHA256 with no salt and the
    /// purpose as `info`.
    /// - Parameter purpose: what the new key is for, such as `wormhole:verifier`.
    /// - Returns: a 32-byte key for that purpose alone.
    package func derive(purpose: some ContiguousByteSource) -> WormholeKey {
        let info = purpose.withUnsafeBytes { Array($0) }
        return WormholeKey(storage: HKDF.deriveBytes(inputKeyMaterial: storage, info: info, outputByteCount: Self.byteCount))
    }

    /// magic-wormhole's `derive_phase_key(key, side, phase)`: the key that `side` seals its
    /// message of `phase` with; the purpose is `wormhole:phase:` || SHA-256(side) || SHA-256(phase).
    /// - Parameters:
    ///   - side: the sending side's id (hex text in magic-wormhole).
    ///   - phase: the phase name, such as `pake`, `version` or `0`.
    /// - Returns: the phase key.
    package func phaseKey(side: String, phase: String) -> WormholeKey {
        derive(purpose: Array("wormhole:phase:".utf8) + SHA256.hash(Array(side.utf8)) + SHA256.hash(Array(phase.utf8)))
    }

    /// magic-wormhole's verifier, `derive_key(key, b"wormhole:verifier")`: equal on both sides
    /// exactly when the keys are, and safe to show (it reveals nothing of the key).
    package var verifier: [UInt8] {
        derive(purpose: Array("wormhole:verifier".utf8)).storage.withUnsafeBytes { Array($0) }
    }

    /// Seals `plaintext` with a fresh random nonce: magic-wormhole's `encrypt_data`.
    /// - Parameter plaintext: the message.
    /// - Returns: nonce || secretbox, `sealOverhead` bytes longer than the plaintext.
    package func seal(_ plaintext: some ContiguousByteSource) -> [UInt8] {
        seal(plaintext, nonce: SecureRandom.bytes(count: Int(crypto_secretbox_NONCEBYTES)))
    }

    /// Seals with a given nonce, for test vectors only: a repeated nonce under one key loses secrecy.
    package func seal(_ plaintext: some ContiguousByteSource, nonce: [UInt8]) -> [UInt8] {
        Sodium.ready
        precondition(nonce.count == Int(crypto_secretbox_NONCEBYTES))
        let nonceCount = nonce.count
        return plaintext.withUnsafeBytes { message in
            [UInt8](unsafeUninitializedCapacity: message.count + Self.sealOverhead) { out, initialized in
                for index in 0..<nonceCount { out[index] = nonce[index] }
                storage.withUnsafeBytes { key in
                    _ = crypto_secretbox_easy(
                        out.baseAddress! + nonceCount, message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        UInt64(message.count), nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
                initialized = message.count + Self.sealOverhead
            }
        }
    }

    /// Opens a sealed message into guarded memory, for plaintexts that hold secrets (key bundles).
    /// - Parameter sealed: nonce || secretbox.
    /// - Returns: the plaintext, wiped when released; nil for an empty plaintext.
    /// - Throws: `WormholeKeyError.cannotOpen` for a message sealed under another key
    ///   (the usual sign of a wrong code) or altered on its way.
    package func openSecret(_ sealed: [UInt8]) throws(WormholeKeyError) -> SecureBytes? {
        Sodium.ready
        guard sealed.count >= Self.sealOverhead else { throw .cannotOpen }
        let nonceCount = Int(crypto_secretbox_NONCEBYTES)
        let plaintextCount = sealed.count - Self.sealOverhead
        func open(into out: UnsafeMutablePointer<UInt8>?) -> Bool {
            sealed.withUnsafeBufferPointer { sealed in
                storage.withUnsafeBytes { key in
                    crypto_secretbox_open_easy(
                        out, sealed.baseAddress! + nonceCount, UInt64(sealed.count - nonceCount),
                        sealed.baseAddress!, key.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
                }
            }
        }
        if plaintextCount == 0 {
            var nothing: UInt8 = 0
            guard open(into: &nothing) else { throw .cannotOpen }
            return nil
        }
        do {
            return try SecureBytes(count: plaintextCount) { out throws(WormholeKeyError) in
                guard open(into: out.baseAddress!.assumingMemoryBound(to: UInt8.self)) else { throw .cannotOpen }
            }
        } catch {
            throw .cannotOpen
        }
    }

    /// Opens a sealed message whose plaintext is not secret (version and acknowledgement
    /// messages): magic-wormhole's `decrypt_data`. Use `openSecret` for key material.
    /// - Parameter sealed: nonce || secretbox.
    /// - Returns: the plaintext.
    /// - Throws: `WormholeKeyError.cannotOpen` for a message sealed under another key or altered.
    package func open(_ sealed: [UInt8]) throws(WormholeKeyError) -> [UInt8] {
        try openSecret(sealed).map { secret in secret.withUnsafeBytes { Array($0) } } ?? []
    }

    /// Lends the key's bytes to `body` (vectors and tests); they must not escape it.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes(body)
    }
}

extension WormholeKey: Equatable {
    /// Compares two keys in constant time.
    package static func == (lhs: WormholeKey, rhs: WormholeKey) -> Bool {
        ConstantTime.equals(lhs.storage, rhs.storage)
    }
}

extension WormholeKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "WormholeKey(hidden)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// Why a sealed wormhole message could not be opened.
package enum WormholeKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Sealed under another key (a wrong code on one side) or altered on its way.
    case cannotOpen

    package var description: String {
        "cannot open the message: the codes differ on the two sides, or it was altered"
    }
}
