import Foundation
import SealKit
import SealTestSupport
import Testing

@_spi(CLI) import SealKitBackup

@Suite("Paper backup")
struct PaperBackupTests {
    @Test func roundTripAndRefusals() throws {
        let keys = [try history("alice", retired: 1), try history("bob")]
        let passphrase = try Passphrase("correct horse battery staple")
        let made = Date(timeIntervalSince1970: 1_750_000_000)
        let lines = try PaperBackup.make(keys, passphrase: passphrase, kdf: .interactive, now: made)
        try #require(lines.count == 1)
        #expect(lines[0].hasPrefix("sealkit-backup-v1:"))
        let contents = try PaperBackup.restore(lines[0], passphrase: passphrase)
        #expect(contents.created == made)
        expectSameKeys(contents.keys, keys)
        expectSameKeys([try contents.history(for: KeyID("bob"))], [keys[1]])
        #expect(throws: BackupError(CodeError.notInBackup(try KeyID("carol"), holds: keys.map(\.id)))) {
            try contents.history(for: KeyID("carol"))
        }
        #expect(throws: BackupError(CodeError.wrongPassphrase)) { try PaperBackup.restore(lines[0], passphrase: Passphrase("wrong")) }

        // Altered salt or body: the passphrase-derived key no longer opens it.
        let body = try #require(CodeText.decode(lines[0].dropFirst("sealkit-backup-v1:".count)))
        try #require(body.count > 20, "a body of \(body.count) bytes")
        for position in [20, body.count - 1] {
            var changed = body
            changed[position] ^= 0x80
            #expect(throws: BackupError(CodeError.wrongPassphrase)) {
                try PaperBackup.restore("sealkit-backup-v1:" + CodeText.encode(changed), passphrase: passphrase)
            }
        }
        // Limits beyond libsodium's sensitive preset are refused before any work.
        var greedy = body
        greedy[8] = 0x7F
        #expect(throws: BackupError(CodeError.unsupportedKDF)) {
            try PaperBackup.restore("sealkit-backup-v1:" + CodeText.encode(greedy), passphrase: passphrase)
        }
        #expect(throws: BackupError(CodeError.malformed(.backup, reason: "truncated"))) {
            try PaperBackup.restore("sealkit-backup-v1:AAAA", passphrase: passphrase)
        }
    }
}

@Suite("Paper backup parts")
struct PaperBackupPartsTests {
    /// An app restores a backup of many keys from its parts as they were printed or scanned: in any
    /// order, one per line, blank lines skipped; a missing part is named.
    @Test func aLongBackupRestoresFromItsPartsInAnyOrder() throws {
        let keys = try (0..<40).map { try history("user-\($0)") }
        let passphrase = try Passphrase("correct horse battery staple")
        let lines = try PaperBackup.make(keys, passphrase: passphrase, kdf: .interactive, now: Date())
        #expect(lines.count >= 2 && lines.allSatisfy { $0.hasPrefix("sealkit-part-v1:") })
        let shuffled = Array(lines.reversed()).joined(separator: "\n\n")
        try PaperBackup.check(shuffled)
        expectSameKeys(try PaperBackup.restore(shuffled + "\n", passphrase: passphrase).keys, keys)
        #expect(throws: BackupError(CodeError.missingParts([1], count: lines.count))) {
            try PaperBackup.restore(lines.dropFirst().joined(separator: "\n"), passphrase: passphrase)
        }
    }

    @Test func aChosenPassphraseTooShortSaysItsLength() throws {
        let short = try Passphrase("eleven char")
        do {
            try PaperBackup.checkChosen(short)
            Issue.record("a passphrase of 11 characters was accepted")
        } catch {
            #expect(error.reason == .passphraseTooShort)
            #expect(error.description.hasPrefix("a backup passphrase you choose needs at least 12 characters (this one has 11)"))
        }
        try PaperBackup.checkChosen(Passphrase("twelve chars"))
    }
}
