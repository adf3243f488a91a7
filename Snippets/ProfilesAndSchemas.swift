// Encrypt exactly the fields an app schema flags, and get every value back with its type.
import SealKit

let schema = try ProfileSchema(parsing: #"""
    {"ssn": {"type": "string", "encryption": {"state": "enabled"}},
     "score": {"type": "number", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
     "name": {"type": "string"}}
    """#)
let vault = Vault(keystore: InMemoryKeystore(), userID: try KeyID("ada"))
try vault.ensureKey(existing: .object([]))
let upload = try vault.encryptProfile(["ssn": "078-05-1120", "score": 812, "name": "Ada"], schema: schema)
let back = try vault.decryptProfile(upload, schema: schema)
print(back.profile["score"] == 812)
// Before a second device makes a key, it checks the user's data: sealed under another key means receive it.
let phone = Vault(keystore: InMemoryKeystore(), userID: try KeyID("ada"))
if case .notPossible(let reason) = phone.encryptionStatus(for: upload, schema: schema) { print(reason) }
