import SealCore
import SealKeystore
import SealTransfer

/// Rownd's key-transfer text for a user: `<sign-in link>#<base64 key>`, which a Rownd app scans as a
/// QR code (or opens as a link) to sign the user in and store the key.
///
/// It holds the user's raw current key, in guarded memory: show it only to the device that should
/// have the key. Retired keys do not travel, because a Rownd app holds one key per user.
/// ``description`` names the fingerprint only.
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
    /// - Throws: ``SealKitError``: `.keyNotFound`, `.passphraseRequired`, `.wrongPassphrase`, or an unusable keystore.
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
