// The examples in the library's doc comments, line for line as they appear there, so that each one compiles.
// Scripts/check-doc-examples fails on a doc comment's example that is not here (or, for package-only API, in a
// test target's DocCommentExamples.swift), so an example cannot drift from the API it shows.
import SealKit
import SealKitBackup
import SealKitQR
import SealKitTransfer

// What an app shows the person and asks them; here they print and agree.
func show(_ text: String) { print(text) }
func askThePerson(toCompare offered: [KeyHistory]) async -> Bool { !offered.isEmpty }

// Keystore
func openUsersVault() throws -> Vault {
    let keystore = try Keystore(directory: "/home/ada/.local/share/sealkit")
    let vault = Vault(keystore: keystore, user: try KeyID("user-123"), format: .v2)
    return vault
}

// Vault
func sealBloodType(folder: String, profileFromServer: String) throws -> String {
    let vault = Vault(keystore: try Keystore(directory: folder), user: try KeyID("user-123"), format: .v2)
    try vault.ensureKey(existing: profileFromServer)
    let sealed = try vault.encrypt(plaintext: "A+ blood type", context: "blood-type")
    let opened = try vault.decrypt(ciphertext: sealed, context: "blood-type")
    return opened
}

// SealKitError
func readBillingNote(from vault: Vault, stored: String) throws {
    do {
        let note = try vault.decrypt(ciphertext: stored, context: "billing-note")
        print(note)
    } catch let error where error.reason == .wrongPlace {
        // sealed for another user or context: a value copied where it does not belong
    }
}

// ProfileProcessor
func uploadAndRead(profileJSON: String, lines: [[UInt8]], schema: ProfileSchema, vault: Vault) throws -> [UInt8] {
    let encrypting = try ProfileProcessor(.encrypt, schema: schema)
    let upload = try encrypting.process(profileJSON, with: vault).json

    let decrypting = try ProfileProcessor(.decrypt, schema: schema)
    var output: [UInt8] = []
    for (index, line) in lines.enumerated() {
        let outcome = try line.withUnsafeBufferPointer {
            try decrypting.process($0, with: vault, line: index + 1, appendingTo: &output)
        }
        if outcome != nil { output.append(UInt8(ascii: "\n")) }
    }
    print(upload)
    return output
}

// Relay
func receiveThroughOwnRelay() async throws -> KeyReceiver {
    let relay = try Relay("ws://relay.example:4000")   // the mailbox endpoint /v1 on it
    let receiver = try await KeyReceiver(relay: relay)
    return receiver
}

// PaperBackup
func backUpOnPaper(_ keys: [KeyHistory]) throws -> PaperBackup.Contents {
    let passphrase = PaperBackup.makePassphrase()          // six words to write down
    let lines = try PaperBackup.make(keys, passphrase: passphrase)
    // ... later, on another device:
    let restored = try PaperBackup.restore(lines.joined(separator: "\n"), passphrase: passphrase)
    return restored
}

// PaperBackup.Assembler
func restoreScanned(_ scannedLines: [String], passphrase: Passphrase) throws -> PaperBackup.Contents {
    var assembler = PaperBackup.Assembler()
    for line in scannedLines {
        if let whole = try assembler.add(line) { return try PaperBackup.restore(whole, passphrase: passphrase) }
    }
    throw assembler.incompleteError
}

// ShareBackup
func backUpAsShares(_ keys: [KeyHistory], first: String, third: String) throws -> PaperBackup.Contents {
    let backup = try ShareBackup.make(keys, groups: [.init(threshold: 2, count: 3)])
    // Keep backup.bundle anywhere; hand each of backup.shares[0] to its keeper.
    let shares = try [first, third].map(ShareBackup.Share.init)
    let restored = try ShareBackup.restore(bundle: backup.bundle, shares: shares)
    return restored
}

// QRCode
func linkAsPNG() throws -> [UInt8] {
    let code = try QRCode("https://example.com", correction: .medium)
    let png = try code.rendered(as: .png)
    return png
}

// KeyTransfer
func receiveKeys(into keystore: Keystore) async throws -> [KeyHistory] {
    let receiver = try await KeyReceiver()
    show(receiver.code.text)                     // the sender types it
    let stored = try await receiver.receive(into: keystore) { offered in
        await askThePerson(toCompare: offered)   // true stores them
    }
    return stored
}

// KeySender
func sendKeys(of alice: KeyID, from keystore: Keystore, typed: String) async throws {
    let sender = try await KeySender(code: try TransferCode(typed))
    try await sender.send(try keystore.exportKeys([alice], passphrase: nil))
}
