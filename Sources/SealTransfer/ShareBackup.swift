#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealCore
import SealKeystore

/// The sealed bundle of a share backup (`keys backup --shares N --threshold K`): the keys, sealed as
/// a paper backup's are, under a fresh random 256-bit secret that SLIP-39 shares hold instead of a
/// passphrase. Without enough shares the bundle is useless, so it may be kept anywhere.
///
/// Text: `sealkit-shares-v1:` and base64url of `version (1) ‖ tag (16) ‖ sealed ‖ check (4)`, where
/// `sealed` is `nonce ‖ crypto_secretbox(created (i64) ‖ keys)` under the secret, and `tag` is a
/// tag of the shares' encrypted secret (before the SLIP-39 passphrase): it tells shares of another
/// backup apart from a wrong passphrase. The bundle opens with the secret alone, so shares that
/// python-shamir-mnemonic makes afresh from the same secret open it too (they may carry another tag).
package enum ShareBackup {
    static let formatVersion: UInt8 = 1
    /// Bytes of the shares' tag.
    package static let tagByteCount = 16

    /// Seals `keys` under `secret`, a fresh random key whose bytes the shares hold.
    /// - Parameters:
    ///   - keys: every key of each id to back up.
    ///   - secret: the fresh random key the SLIP-39 shares hold.
    ///   - sharesTag: the tag SLIP-39's split gave for the shares that hold `secret`.
    ///   - now: the backup's time, written into it.
    package static func seal(_ keys: [KeyHistory], secret: SymmetricKey, sharesTag: [UInt8], now: Date = Date()) throws(TransferError) -> String {
        try KeyBundle.validate(keys)
        precondition(sharesTag.count == tagByteCount)
        let plaintext = SecureBytes(count: 8 + KeyBundle.byteCount(of: keys)) { buffer in
            var writer = ByteWriter(buffer)
            writer.write(unixTime(now))
            KeyBundle.write(keys, into: &writer)
        }
        let sealed = SecretWrap.seal(plaintext, using: secret)
        return TransferText.checkedText([formatVersion] + sharesTag + sealed, as: .shares)
    }

    /// The tag of the shares a bundle was made with.
    package static func sharesTag(of text: String) throws(TransferError) -> [UInt8] {
        Array(try body(of: text)[1...tagByteCount])
    }

    /// Opens a bundle with the secret the shares hold.
    /// - Throws: `.wrongPassphrase` when `secret` does not open it (another secret: another backup's
    ///   shares, or the right shares under a wrong SLIP-39 passphrase); `TransferError` for damaged text.
    package static func open(_ text: String, secret: SymmetricKey) throws(TransferError) -> PaperBackup.Contents {
        let body = try body(of: text)
        let plaintext: SecureBytes
        do {
            plaintext = try SecretWrap.open(Array(body[(1 + tagByteCount)...]), using: secret)
        } catch {
            throw .wrongPassphrase
        }
        return try plaintext.reading { (raw) throws(TransferError) -> PaperBackup.Contents in
            var reader = ByteReader(raw, kind: .shares)
            let created = try reader.int64()
            guard KeyTime.admits(created) else { throw .malformed(.shares, reason: "its time is out of range") }
            let keys = try KeyBundle.read(from: &reader, as: .shares)
            try reader.finish()
            return PaperBackup.Contents(created: Date(timeIntervalSince1970: TimeInterval(created)), keys: keys)
        }
    }

    private static func body(of text: String) throws(TransferError) -> [UInt8] {
        let body = try TransferText.checkedBody(of: TransferText.trimmed(text), as: .shares)
        guard body.count > 1 + tagByteCount + FieldCipher.minimumByteCount else { throw .malformed(.shares, reason: "truncated") }
        guard body[0] == formatVersion else { throw .malformed(.shares, reason: "inner format \(body[0]) does not match its prefix") }
        return body
    }
}
