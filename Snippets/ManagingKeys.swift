// A user's keys over their life: made once, listed, protected by a passphrase, imported from Rownd, moved to the
// desktop keyring or sealed to the TPM, and deleted when the account is.
import SealKit
#if canImport(SealKitKeyring)
import SealKitKeyring
#endif
#if canImport(SealKitTPM)
import SealKitTPM
#endif

func keysOfOneUser(keystoreFolder: String, profileFromServer: String) throws {
    let keystore = try Keystore(directory: keystoreFolder)
    print("keys in \(keystore.location)")
    let user = try KeyID("user-123")
    // makeKey refuses when a key exists (ensureKey would use it): for a sign-up flow that must make a new one.
    let vault = Vault(keystore: keystore, user: user, format: .v2)
    try vault.makeKey(existing: profileFromServer)
    if let entry = try keystore.entry(for: user) {
        print(entry.id, entry.fingerprint, entry.created, entry.isProtected, entry.isSealedToTPM,
              "\(entry.retiredFingerprints.count) retired keys")
    }
    // A passphrase the person types arrives as bytes, and goes to guarded memory without becoming a String.
    let typed: [UInt8] = Array("correct horse battery staple".utf8)
    let passphrase = try typed.withUnsafeBytes { bytes throws(SealKitError) in try Passphrase(utf8: bytes) }
    try vault.changePassphrase(to: passphrase)
    // From now on the vault that uses the keys holds the passphrase.
    let unlocked = Vault(keystore: keystore, user: user, format: .v2, passphrase: passphrase)
    try unlocked.changePassphrase(to: nil)
    // The account is closed: its ciphertexts can no longer be opened by anyone.
    try unlocked.deleteKey()
}

// A user's key from a Rownd app (its QR code's text, or the key pasted) and back: Rownd holds one key per user,
// so retired keys stay here.
func rowndKeys(pasted: [UInt8], keystore: Keystore, signInLink: String) throws {
    let key = try PastedKey(parsing: pasted)
    try key.store(as: try KeyID("user-123"), in: keystore, passphrase: nil)
    let text = try RowndKeyText(for: try KeyID("user-123"), in: keystore, passphrase: nil, link: signInLink)
    print(key.fingerprint == text.fingerprint, "\(text.retiredKeyCount) retired keys not sent")
}

#if canImport(SealKitKeyring) && canImport(SealKitTPM)
// One user's keys moved to the desktop keyring, another's sealed to this machine's TPM with a PIN.
func strongerHomes(for user: KeyID, and other: KeyID, from files: Keystore, pin: Passphrase) throws {
    let keyring = try Keystore.secretService(namespace: "my-app", timeout: .seconds(10))
    try files.move(user, to: keyring, passphrase: nil)
    var tpm = TPM(tcti: TPM.defaultTCTI)
    tpm.timeout = .seconds(5)  // a TPM that never answers fails the call in 5 s
    print("TPM through \(tpm.tcti), a named TCTI: \(TPM.isNamedTCTI(tpm.tcti))")
    if let problem = TPM.deviceProblem(tpm.tcti) { print("not a TPM device: \(problem)") }
    try files.sealKeys(of: other, to: tpm, pin: pin, unlockingWith: nil)
    // Offer fewer PIN tries than the TPM allows before its lockout, which would stop every key with a PIN.
    print("ask for the PIN at most \(try files.using(tpm).pinPromptTries(for: other, atMost: 3)) times")
    // A keystore that uses the TPM: new keys are sealed to it as they are made.
    let sealing = files.using(tpm, sealingNewKeys: true)
    try Vault(keystore: sealing, user: try KeyID("user-456"), format: .v2, passphrase: pin).ensureKey(existing: "{}")
}
#endif
