
/// Rownd's key-transfer text for a user: `<sign-in link>#<base64 key>`, which a Rownd app scans as a
/// QR code (or opens as a link) to sign the user in and store the key.
///
/// It holds the user's raw current key, in guarded memory: show it only to the device that should
/// have the key. Retired keys do not travel, because a Rownd app holds one key per user.
/// `description` names the fingerprint only.
public struct RowndKeyText: Sendable, CustomStringConvertible {
    private let text: SecureBytes
    /// The fingerprint of the key the text holds.
    public let fingerprint: KeyFingerprint
    /// How many retired keys the id has, which the text leaves out.
    public let retiredKeyCount: Int

    /// The text for the current key of `id`.
    /// - Parameters:
    ///   - id: the user's key id.
    ///   - keystore: where the key is stored.
    ///   - passphrase: unlocks a protected key.
    ///   - link: the user's sign-in link from Rownd's API, an absolute URL without a `#` fragment.
    /// - Throws: `SealKitError`: `.keyNotFound`, `.passphraseRequired`, `.wrongPassphrase`, or an unusable keystore.
    public init(for id: KeyID, in keystore: Keystore, passphrase: Passphrase?, link: String) throws(SealKitError) {
        let ring: KeyRing
        do {
            ring = try keystore.storage.keyRing(for: id, passphrase: passphrase)
        } catch {
            throw SealKitError(error)
        }
        text = KeyText.rowndLinkText(for: ring.current, link: link)
        fingerprint = ring.current.fingerprint
        retiredKeyCount = ring.retired.count
    }

    /// Calls `body` with the text's UTF-8 bytes, which stay in guarded memory: write them straight
    /// to where they go, without a copy in an ordinary buffer.
    /// - Parameter body: uses the bytes; they are valid only during the call.
    /// - Returns: what `body` returns.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try text.withUnsafeBytes(body)
    }

    /// The key's fingerprint only: never the text.
    public var description: String { "RowndKeyText(key \(fingerprint))" }
}

/// A key as people paste it into an app or `sealkit keys import`: a bare base64 key (44 characters),
/// Rownd's key text `<sign-in link>#<base64 key>` (the fragment percent-encoded or not), or the older
/// `{"data":"<sign-in link>#<base64 key>"}` form.
///
/// The key stays in guarded memory; `description` names its fingerprint only.
public struct PastedKey: Sendable, CustomStringConvertible {
    private let key: SymmetricKey

    /// Reads the key from pasted text; surrounding whitespace is ignored. Parsed from bytes, never
    /// through a Swift string, so the caller can wipe its copy.
    /// - Parameter text: the text's UTF-8 bytes.
    /// - Throws: `SealKitError.Reason.invalidKeyText` saying which form was recognised and what is
    ///   wrong with it (never the text).
    public init(parsing text: [UInt8]) throws(SealKitError) {
        do {
            key = try KeyText.parseKey(text)
        } catch {
            throw SealKitError(.invalidKeyText, String(describing: error))
        }
    }

    /// The key's fingerprint, for people to compare with the device it came from.
    public var fingerprint: KeyFingerprint { key.fingerprint }

    /// The key's fingerprint only: never the key.
    public var description: String { "PastedKey(\(fingerprint))" }

    /// Stores the key as the current key of `id`: a new id, or the identical key again.
    /// - Parameters:
    ///   - id: the user's key id.
    ///   - keystore: where it goes.
    ///   - passphrase: protects a new id at rest; unlocks a protected one already stored, for comparison.
    /// - Returns: true when the key was written, false when the identical key was stored already.
    /// - Throws: `SealKitError`: `.conflictingKey` when `id` holds a different key, `.passphraseRequired`,
    ///   `.wrongPassphrase`, or an unusable keystore.
    @discardableResult
    public func store(as id: KeyID, in keystore: Keystore, passphrase: Passphrase?) throws(SealKitError) -> Bool {
        do {
            return try keystore.storage.store(key, as: id, mode: .import, passphrase: passphrase) == .stored
        } catch {
            throw SealKitError(error)
        }
    }
}
