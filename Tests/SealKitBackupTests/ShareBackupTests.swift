import Foundation
@_spi(CLI) import SealKit
import SealTestSupport
import Testing

@_spi(CLI) import SealKitBackup

/// The public share-backup API (`ShareBackup.make`/`restore`), as an app uses it: shares of keys and
/// back, and each failure as a `BackupError` reason with the CLI's one-line text.
@Suite("Share backup API")
struct ShareBackupTests {
    @Test func anyTwoOfThreeSharesRestoreTheKeys() throws {
        let keys = [try history("alice", retired: 1), try history("bob")]
        let made = Date(timeIntervalSince1970: 1_750_000_000)
        let backup = try ShareBackup.make(keys, groups: [.init(threshold: 2, count: 3)], now: made)
        #expect(backup.bundle.hasPrefix("sealkit-shares-v1:"))
        try #require(backup.shares.map(\.count) == [3])
        #expect(backup.shares[0].allSatisfy { $0.split(separator: " ").count == 33 })
        for pair in [(0, 1), (0, 2), (2, 1)] {
            let shares = try [backup.shares[0][pair.0], backup.shares[0][pair.1]].map { try ShareBackup.Share($0) }
            try ShareBackup.check(shares)
            let restored = try ShareBackup.restore(bundle: backup.bundle, shares: shares)
            expectSameKeys(restored.keys, keys)
            #expect(restored.created == made)
        }
        let one = [try ShareBackup.Share(backup.shares[0][1])]
        #expect(one[0].memberIndex == 1 && one[0].memberThreshold == 2 && one[0].groupCount == 1)
        #expect(one[0].prefix == backup.shares[0][1].split(separator: " ").prefix(4).joined(separator: " "))
        let notEnough = BackupError(.notEnoughShares, "not enough shares: 1 more share needed")
        #expect(throws: notEnough) { try ShareBackup.check(one) }
        #expect(throws: notEnough) { try ShareBackup.restore(bundle: backup.bundle, shares: one) }
    }

    @Test func groupsRestoreWithEnoughGroups() throws {
        let keys = [try history("alice")]
        let backup = try ShareBackup.make(
            keys, groups: [.init(threshold: 1, count: 1), .init(threshold: 2, count: 3)], groupThreshold: 2)
        try #require(backup.shares.map(\.count) == [1, 3])
        let shares = try [backup.shares[1][2], backup.shares[0][0], backup.shares[1][0]].map { try ShareBackup.Share($0) }
        expectSameKeys(try ShareBackup.restore(bundle: backup.bundle, shares: shares).keys, keys)
        #expect(throws: BackupError.self) { try ShareBackup.check(Array(shares.prefix(2))) }
    }

    @Test func aWrongPassphraseIsToldFromAnotherBackupsShares() throws {
        let keys = [try history("alice")]
        let passphrase = try Passphrase("shares passphrase")
        let backup = try ShareBackup.make(keys, groups: [.init(threshold: 2, count: 2)], passphrase: passphrase)
        try #require(backup.shares.map(\.count) == [2])
        let shares = try backup.shares[0].map { try ShareBackup.Share($0) }
        expectSameKeys(try ShareBackup.restore(bundle: backup.bundle, shares: shares, passphrase: passphrase).keys, keys)

        let wrong = BackupError(.wrongPassphrase, "wrong passphrase: the shares are this bundle's, but this SLIP-39 passphrase does not open it")
        #expect(throws: wrong) { try ShareBackup.restore(bundle: backup.bundle, shares: shares, passphrase: Passphrase("other")) }
        #expect(throws: wrong) { try ShareBackup.restore(bundle: backup.bundle, shares: shares) }

        let other = try ShareBackup.make(keys, groups: [.init(threshold: 2, count: 2)], passphrase: passphrase)
        try #require(other.shares.map(\.count) == [2])
        let otherShares = try other.shares[0].map { try ShareBackup.Share($0) }
        #expect(throws: BackupError(
            .sharesOfAnotherBackup, "the shares do not open this bundle: they belong to another backup (or a wrong passphrase was given)")
        ) {
            try ShareBackup.restore(bundle: backup.bundle, shares: otherShares, passphrase: passphrase)
        }
        let mixed = [shares[0], otherShares[1]]
        #expect(throws: BackupError.self) { try ShareBackup.check(mixed) }
        do {
            try ShareBackup.check(mixed)
        } catch {
            #expect(error.reason == .mismatchedShares, "\(error)")
        }
    }

    @Test func aLayoutSLIP39RefusesIsRefusedBeforeTheKeys() throws {
        do {
            _ = try ShareBackup.make([], groups: [.init(threshold: 1, count: 3)])
            Issue.record("a group of three with threshold 1 was made")
        } catch {
            #expect(error.reason == .invalidShareLayout)
            #expect(error.description == "a group of several shares with threshold 1 is not allowed: use 1 of 1")
        }
        #expect(throws: BackupError(CodeError.nothingToSend)) { try ShareBackup.make([], groups: [.init(threshold: 2, count: 3)]) }
    }

    @Test func sharesAreReadAndCorrectedWordByWord() throws {
        let backup = try ShareBackup.make([try history("alice")], groups: [.init(threshold: 2, count: 3)])
        try #require(backup.shares.map(\.count) == [3])
        let share = backup.shares[0][0]
        var words = share.split(separator: " ").map(String.init)
        try #require(words.count == 33, "\(words.count) words")
        // Four letters of each word are that word.
        #expect(ShareBackup.Words.completing(words.map { String($0.prefix(4)).uppercased() }.joined(separator: "  ")) == share)
        #expect(ShareBackup.Words.all.count == 1024)
        // One wrong word: the checksum names its one correction.
        let original = words[9]
        words[9] = ShareBackup.Words.all.first { $0 != original }!
        let typo = words.joined(separator: " ")
        do {
            _ = try ShareBackup.Share(typo)
            Issue.record("a share with a wrong word was read")
        } catch {
            #expect(error.reason == .invalidShare)
            #expect(!error.description.contains(words[9]), "an error repeats a word of the share")
        }
        let fix = try #require(ShareBackup.Words.correction(of: typo))
        #expect(fix.share == share && fix.position == 10 && fix.word == original)
    }

    @Test func aPaperBackupIsNotABundleAndTheOtherWayRound() throws {
        let keys = [try history("alice")]
        let bundle = try ShareBackup.make(keys, groups: [.init(threshold: 1, count: 1)]).bundle
        do {
            try PaperBackup.check(bundle)
            Issue.record("a bundle passed as a paper backup")
        } catch {
            #expect(error.reason == .notABackup)
            #expect(error.description == "this is a share backup bundle, not a paper backup")
            #expect(error.detail == .shareBundleAsPaperBackup)
        }
        #expect(throws: BackupError(CodeError.notCodeText(expected: .backup))) { try PaperBackup.check("hello") }
    }
}
