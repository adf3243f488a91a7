// A user's fields encrypted with the Vault: a key on first use, unless their data shows one elsewhere.
import SealKit

// The format is chosen once: .v1 is what Rownd's SDKs read; .v2 binds each value to the user and its context.
let vault = Vault(keystore: try .inMemory(), user: try KeyID("user-123"), format: .v2)
// The user's profile as the server holds it: with no ciphertext yet, a key is made.
try vault.ensureKey(existing: #"{"name": "Ada"}"#)
let sealed = try vault.encrypt(plaintext: "DE89 3704", context: "billing")
let iban = try vault.decrypt(ciphertext: sealed, context: "billing")
// Which format a value is in, and which key sealed it, without parsing it by hand.
let info = try vault.inspect(ciphertext: sealed)
do {
    _ = try vault.decrypt(ciphertext: sealed, context: "shipping")
} catch where error.reason == .wrongPlace {
    print("sealed for another context")
}
print(vault.isEncryptionPossible(), iban, info.format, info.keyFingerprint as Any)
