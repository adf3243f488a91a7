// A user's fields encrypted with the Vault: a key on first use, unless their data shows one elsewhere.
import SealKit

let vault = Vault(keystore: InMemoryKeystore(), userID: try KeyID("user-123"))
// The user's profile as the server holds it: with no ciphertext yet, a key is made.
try vault.ensureKey(existing: ["name": "Ada"])
let sealed = try vault.encrypt(plaintext: "A+ blood type")  // Rownd's format (v1)
let opened = try vault.decrypt(ciphertext: sealed)
// v2: names its key, and opens only for this user and context.
let bound = try vault.encrypt(plaintext: "DE89 3704", context: "billing")
let iban = try vault.decrypt(ciphertext: bound, context: "billing")
print(vault.isEncryptionPossible(), opened, iban)
