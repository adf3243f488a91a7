// Backing up a user's keys: on paper under a passphrase SealKit makes, or as SLIP-39 shares for people to keep.
import SealKitBackup

func printPaperBackup(of user: KeyID, from keystore: Keystore) throws -> [String] {
    // Six words of the EFF list (about 77 bits); a passphrase a person chooses needs at least 12 characters.
    let passphrase = PaperBackup.makePassphrase(wordCount: PaperBackup.generatedWordCount)
    print("a chosen passphrase needs \(PaperBackup.minimumChosenLength) characters or more")
    let lines = try PaperBackup.make(try keystore.exportKeys([user], passphrase: nil), passphrase: passphrase)
    // One line, or numbered parts when the keys do not fit one QR code: print each as its own code.
    print(lines.count == 1 ? lines[0].hasPrefix(PaperBackup.prefix) : lines[0].hasPrefix(PaperBackup.partPrefix))
    return lines
}

// Restoring: lines as they are scanned, in any order; the passphrase is asked for once the backup is whole.
func restorePaperBackup(scanned: [String], askPassphrase: () throws -> Passphrase, into keystore: Keystore) throws {
    var assembler = PaperBackup.Assembler()
    for line in scanned {
        guard let whole = try assembler.add(line) else { continue }
        try PaperBackup.check(whole)
        let contents = try PaperBackup.restore(whole, passphrase: try askPassphrase())
        print("made \(contents.created), \(contents.keys.count) ids")
        let history = try contents.history(for: try KeyID("user-123"))
        print("\(history.id): \(history.keyCount) keys, current \(history.fingerprint)")
        try keystore.importKeys(contents.keys, passphrase: nil)
        return
    }
    throw assembler.incompleteError
}

// Two of three family members, or one of two safes: SLIP-39 groups. The bundle is stored anywhere (it is sealed);
// the shares open it.
func makeShares(of keys: [KeyHistory]) throws -> ShareBackup.Made {
    let made = try ShareBackup.make(
        keys, groups: [ShareBackup.Group(threshold: 2, count: 3), .init(threshold: 1, count: 2)], groupThreshold: 1)
    print(made.bundle.hasPrefix(ShareBackup.bundlePrefix), made.shares.map(\.count))
    return made
}

// Nil until the shares typed so far suffice.
func restoreFromShares(bundle: String, typed: [String]) throws -> PaperBackup.Contents? {
    var shares: [ShareBackup.Share] = []
    for text in typed {
        let share = try ShareBackup.Share(text)
        if shares.contains(where: { share.isDuplicate(of: $0) }) { continue }
        print("group \(share.groupIndex + 1) of \(share.groupCount) (\(share.groupThreshold) needed),",
              "member \(share.memberIndex + 1) (\(share.memberThreshold) needed), starts \(share.prefix)")
        shares.append(share)
        if enough(shares) { return try ShareBackup.restore(bundle: bundle, shares: shares) }
    }
    return nil
}

// Says how many more shares each group needs, until they suffice.
func enough(_ shares: [ShareBackup.Share]) -> Bool {
    do {
        try ShareBackup.check(shares)
        return true
    } catch {
        print(error)
        return false
    }
}
