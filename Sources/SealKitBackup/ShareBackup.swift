#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

/// Keys backed up as SLIP-39 shares (`sealkit keys backup --shares N --threshold K`): any K of the
/// N shares, with the sealed bundle, restore them; fewer reveal nothing. Groups work as SLIP-39's
/// do: any G of several groups, each with its own K of N.
///
/// ```swift
/// let backup = try ShareBackup.make(keys, groups: [.init(threshold: 2, count: 3)])
/// // Keep backup.bundle anywhere; hand each of backup.shares[0] to its keeper.
/// let shares = try [first, third].map(ShareBackup.Share.init)
/// let restored = try ShareBackup.restore(bundle: backup.bundle, shares: shares)
/// ```
///
/// The bundle holds the keys, sealed as a paper backup's are, under a fresh random 256-bit secret
/// that the shares hold instead of a passphrase; without enough shares it is useless, so it may be
/// kept anywhere. Shares are python-shamir-mnemonic's and hardware wallets' 33-word SLIP-39 shares,
/// optionally under a SLIP-39 passphrase.
///
/// Bundle text: `sealkit-shares-v1:` and base64url of `version (1) ‖ tag (16) ‖ sealed ‖ check (4)`,
/// where `sealed` is `nonce ‖ crypto_secretbox(created (i64) ‖ keys)` under the secret, and `tag` is a
/// tag of the shares' encrypted secret (before the SLIP-39 passphrase): it tells shares of another
/// backup apart from a wrong passphrase. The bundle opens with the secret alone, so shares that
/// python-shamir-mnemonic makes afresh from the same secret open it too (they may carry another tag).
public enum ShareBackup {
    /// One group of shares: any `threshold` of its `count` shares restore the group.
    public struct Group: Sendable, Equatable {
        /// How many of the group's shares restore it.
        public let threshold: Int
        /// How many shares the group has (1 to 16).
        public let count: Int

        /// A group of `count` shares, any `threshold` of which restore it.
        /// - Parameters:
        ///   - threshold: how many shares restore the group; 1 only for a group of one share.
        ///   - count: how many shares the group has, 1 to 16.
        public init(threshold: Int, count: Int) {
            self.threshold = threshold
            self.count = count
        }
    }

    /// A share backup just made: the sealed bundle, and the shares group by group.
    public struct Made: Sendable {
        /// The sealed bundle, `sealkit-shares-v1:...`: keep it anywhere, cloud storage too.
        public let bundle: String
        /// The shares, group by group in the order the groups were given, each 33 words
        /// separated by single spaces. Each is secret: hand it to its keeper.
        public let shares: [[String]]
    }

    /// Backs up keys as SLIP-39 shares and a sealed bundle.
    /// - Parameters:
    ///   - keys: every key of each id to back up, each id once.
    ///   - groups: the groups of shares; one group for plain K of N.
    ///   - groupThreshold: how many groups restore the backup (1 to the number of groups).
    ///   - passphrase: SLIP-39's optional passphrase; restoring needs the same one. Nil for none.
    ///   - now: the backup's time, written into it.
    /// - Returns: the bundle and the shares.
    /// - Throws: `SealKitError` with reason `.invalidShareLayout` for groups or thresholds that
    ///   SLIP-39 does not allow (checked first), `.noKeys` or `.tooManyKeys` for the keys.
    public static func make(
        _ keys: [KeyHistory], groups: [Group], groupThreshold: Int = 1, passphrase: Passphrase? = nil, now: Date = Date()
    ) throws(SealKitError) -> Made {
        var slip39Passphrase = bytes(of: passphrase)
        defer { ConstantTime.wipe(&slip39Passphrase) }
        let secret = SymmetricKey.generate()
        let split: (groups: [[String]], encryptedSecretTag: [UInt8])
        do {
            split = try SLIP39.split(
                secret: secret.storage, groupThreshold: groupThreshold, groups: groups.map { ($0.threshold, $0.count) },
                passphrase: slip39Passphrase)
        } catch {
            throw BackupError(error)
        }
        let bundle = try BackupError.converting { () throws(CodeError) in
            try seal(keys, secret: secret, sharesTag: split.encryptedSecretTag, now: now)
        }
        return Made(bundle: bundle, shares: split.groups)
    }

    /// One share, read and checked on its own (its words, length, checksum and thresholds); what
    /// it says about its place in the backup, and nothing of its value.
    public struct Share: Sendable {
        package let slip39: SLIP39.Share

        /// Reads a share: its words in any case, separated by blanks.
        /// - Parameter text: the share's words.
        /// - Throws: `SealKitError` with reason `.invalidShare`, naming the problem by word position
        ///   only (a word not on the list, the length, the checksum and the word most likely mistyped).
        public init(_ text: String) throws(SealKitError) {
            do {
                slip39 = try SLIP39.parse(text)
            } catch {
                throw BackupError(error)
            }
        }

        /// The share's first four words, which name it without revealing its value.
        public var prefix: String { slip39.prefix }
        /// The share's group, 0-based (people count from 1).
        public var groupIndex: Int { slip39.groupIndex }
        /// How many groups the backup has.
        public var groupCount: Int { slip39.groupCount }
        /// How many groups restore the backup.
        public var groupThreshold: Int { slip39.groupThreshold }
        /// The share's place in its group, 0-based (people count from 1).
        public var memberIndex: Int { slip39.memberIndex }
        /// How many shares of its group restore the group.
        public var memberThreshold: Int { slip39.memberThreshold }

        /// Whether `other` is this very share given again: of the same backup, group and place, with the
        /// same value (compared in constant time). A share given twice counts once.
        /// - Parameter other: another share.
        /// - Returns: true for a duplicate.
        public func isDuplicate(of other: Share) -> Bool {
            slip39.commonParameters == other.slip39.commonParameters && slip39.groupIndex == other.slip39.groupIndex
                && slip39.memberIndex == other.slip39.memberIndex && ConstantTime.equals(slip39.value, other.slip39.value)
        }
    }

    /// Checks that shares belong together and suffice to restore their backup (repeats count once;
    /// more than a threshold is fine), as each arrives.
    /// - Parameter shares: the shares so far.
    /// - Throws: `SealKitError` with reason `.notEnoughShares` saying how many more each group needs,
    ///   `.mismatchedShares` for shares of different backups or a damaged one.
    public static func check(_ shares: [Share]) throws(SealKitError) {
        _ = try recover(shares)
    }

    /// Restores keys from the bundle and enough shares.
    /// - Parameters:
    ///   - bundle: the sealed bundle, `sealkit-shares-v1:...`.
    ///   - shares: enough shares of the backup.
    ///   - passphrase: the SLIP-39 passphrase the shares were made with; nil for none.
    /// - Returns: the backup's keys.
    /// - Throws: `SealKitError`: what `check(_:)` throws; `.wrongPassphrase` when the shares are this
    ///   bundle's but the passphrase is wrong; `.sharesOfAnotherBackup` when they open it under no
    ///   passphrase (another backup's shares, or a wrong passphrase); else for a damaged bundle.
    public static func restore(bundle: String, shares: [Share], passphrase: Passphrase? = nil) throws(SealKitError) -> PaperBackup.Contents {
        let recovered = try recover(shares)
        var slip39Passphrase = bytes(of: passphrase)
        defer { ConstantTime.wipe(&slip39Passphrase) }
        let recoveredSecret = recovered.decrypt(passphrase: slip39Passphrase)
        guard recoveredSecret.count == SymmetricKey.byteCount else {
            throw BackupError(
                .sharesOfAnotherBackup, "the shares hold a secret of another length than a SealKit share backup's (32 bytes)")
        }
        do {
            return try open(bundle, secret: SymmetricKey(storage: recoveredSecret))
        } catch .wrongPassphrase {
            // The tag tells the right shares under a wrong passphrase from another backup's shares.
            if (try? sharesTag(of: bundle)) == recovered.tag {
                throw BackupError(
                    .wrongPassphrase, "wrong passphrase: the shares are this bundle's, but this SLIP-39 passphrase does not open it")
            }
            throw BackupError(
                .sharesOfAnotherBackup,
                "the shares do not open this bundle: they belong to another backup (or a wrong passphrase was given)")
        } catch {
            throw BackupError(error)
        }
    }

    /// The SLIP-39 word list, for typing shares: completion, and correcting a share one word off.
    @_spi(CLI) public enum Words {
        /// The 1,024 words, sorted; each is told apart from the others by its first four letters.
        public static var all: [String] { SLIP39Words.all }

        /// A share as people type it on a hardware wallet: each word that is the start, four letters
        /// or more, of exactly one list word becomes that word; other words stay as they are.
        /// - Parameter text: the share as typed.
        /// - Returns: the words in lower case, separated by single spaces.
        public static func completing(_ text: String) -> String { SLIP39.completingPrefixes(text) }

        /// The one share, a single word away from `text`, that reads as a share: the checksum
        /// corrects any one wrong word, so a single typo, or one word not on the list, has exactly one.
        /// - Parameter text: a share that does not read.
        /// - Returns: the corrected share, the 1-based position changed and the word put there; nil
        ///   when no single word, or more than one, makes a valid share.
        public static func correction(of text: String) -> (share: String, position: Int, word: String)? {
            SLIP39.correction(of: text)
        }
    }

    private static func recover(_ shares: [Share]) throws(BackupError) -> SLIP39.EncryptedSecret {
        do {
            return try SLIP39.recover(shares.map(\.slip39))
        } catch {
            throw BackupError(error)
        }
    }

    /// A passphrase's bytes for SLIP-39 (empty for none); the caller wipes them.
    private static func bytes(of passphrase: Passphrase?) -> [UInt8] {
        passphrase?.storage.withUnsafeBytes { Array($0) } ?? []
    }

    static let formatVersion: UInt8 = 1
    /// Bytes of the shares' tag.
    static let tagByteCount = 16

    /// Seals `keys` under `secret`, a fresh random key whose bytes the shares hold.
    /// - Parameters:
    ///   - keys: every key of each id to back up.
    ///   - secret: the fresh random key the SLIP-39 shares hold.
    ///   - sharesTag: the tag SLIP-39's split gave for the shares that hold `secret`.
    ///   - now: the backup's time, written into it.
    package static func seal(_ keys: [KeyHistory], secret: SymmetricKey, sharesTag: [UInt8], now: Date = Date()) throws(CodeError) -> String {
        try KeyBundle.validate(keys)
        precondition(sharesTag.count == tagByteCount)
        let plaintext = SecureBytes(count: 8 + KeyBundle.byteCount(of: keys)) { buffer in
            var writer = ByteWriter(buffer)
            writer.write(unixTime(now))
            KeyBundle.write(keys, into: &writer)
        }
        let sealed = SecretWrap.seal(plaintext, using: secret)
        return CodeText.checkedText([formatVersion] + sharesTag + sealed, as: .shares)
    }

    /// The tag of the shares a bundle was made with.
    package static func sharesTag(of text: String) throws(CodeError) -> [UInt8] {
        Array(try body(of: text)[1...tagByteCount])
    }

    /// Opens a bundle with the secret the shares hold.
    /// - Throws: `.wrongPassphrase` when `secret` does not open it (another secret: another backup's
    ///   shares, or the right shares under a wrong SLIP-39 passphrase); `CodeError` for damaged text.
    package static func open(_ text: String, secret: SymmetricKey) throws(CodeError) -> PaperBackup.Contents {
        let body = try body(of: text)
        let plaintext: SecureBytes
        do {
            plaintext = try SecretWrap.open(Array(body[(1 + tagByteCount)...]), using: secret)
        } catch {
            throw .wrongPassphrase
        }
        return try plaintext.reading { (raw) throws(CodeError) -> PaperBackup.Contents in
            var reader = ByteReader(raw, kind: .shares)
            let created = try reader.int64()
            guard KeyTime.admits(created) else { throw .malformed(.shares, reason: "its time is out of range") }
            let keys = try KeyBundle.read(from: &reader, as: .shares)
            try reader.finish()
            return PaperBackup.Contents(created: Date(timeIntervalSince1970: TimeInterval(created)), keys: keys)
        }
    }

    private static func body(of text: String) throws(CodeError) -> [UInt8] {
        let body = try CodeText.checkedBody(of: CodeText.trimmed(text), as: .shares)
        guard body.count > 1 + tagByteCount + FieldCipher.minimumByteCount else { throw .malformed(.shares, reason: "truncated") }
        guard body[0] == formatVersion else { throw .malformed(.shares, reason: "inner format \(body[0]) does not match its prefix") }
        return body
    }
}
