import SealKit

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
    package static let sealOverhead = Secretbox.overheadByteCount

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
        Secretbox.seal(plaintext, key: storage)
    }

    /// Seals with a given nonce, for test vectors only: a repeated nonce under one key loses secrecy.
    package func seal(_ plaintext: some ContiguousByteSource, nonce: [UInt8]) -> [UInt8] {
        Secretbox.seal(plaintext, key: storage, nonce: nonce)
    }

    /// Opens a sealed message into guarded memory, for plaintexts that hold secrets (key bundles).
    /// - Parameter sealed: nonce || secretbox.
    /// - Returns: the plaintext, wiped when released; nil for an empty plaintext.
    /// - Throws: `WormholeKeyError.cannotOpen` for a message sealed under another key
    ///   (the usual sign of a wrong code) or altered on its way.
    package func openSecret(_ sealed: [UInt8]) throws(WormholeKeyError) -> SecureBytes? {
        do {
            return try Secretbox.open(sealed, key: storage)
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

extension SPAKE2Symmetric {
    /// Starts an exchange for a wormhole code, with the app id as the identity, as
    /// magic-wormhole does (`SPAKE2_Symmetric(code, idSymmetric=appid)`).
    /// - Parameters:
    ///   - code: the code both people share.
    ///   - appID: the application id, such as `sealkit/key-transfer/v1`.
    package convenience init(code: WormholeCode, appID: String) {
        self.init(password: code.storage, identity: Array(appID.utf8))
    }

    /// Completes the exchange with the other side's message (see `sharedSecret(peerMessage:)`).
    /// - Parameter peerMessage: the 33 bytes the other side sent.
    /// - Returns: the shared key, the root of magic-wormhole's key schedule.
    /// - Throws: `SPAKE2Error` for a message that is not a valid symmetric SPAKE2 message, or when
    ///   this exchange already finished.
    package func finish(peerMessage: [UInt8]) throws(SPAKE2Error) -> WormholeKey {
        WormholeKey(storage: try sharedSecret(peerMessage: peerMessage))
    }
}
