import SealKit
import Testing

/// Rownd's published vector needs Rownd's key in the keystore, which no public call takes (keys arrive by
/// transfer or backup): the test stores it through the package's own door, then reads through the Vault.
@Test func aVaultDecryptsRowndsVector() throws {
    let storage = InMemoryKeystore()
    let id = try KeyID("rownd")
    try storage.store(SymmetricKey(base64Encoded: "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="), as: id, mode: .import, passphrase: nil)
    let vault = Vault(keystore: Keystore(storage), user: id, format: .v1)
    let plaintext = try vault.decrypt(ciphertext:
        "Di0IyYbC141WIPKzFnlsQc0BIi1AWKSpLf6Th9TcDDJiidPfkVazXtFibnsqJyKFaQf7SaF68yihnqJXidodfKqKzjM2MnbHbh+O8wpxFO3gO6OhVg==")
    #expect(plaintext == "This super secret string will never be known.")
}
