// Encrypt exactly the fields an app schema flags, and get every value back with its type.
import SealKit

let schema = try ProfileSchema(json: #"""
    {"ssn": {"type": "string", "encryption": {"state": "enabled"}},
     "score": {"type": "number", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
     "name": {"type": "string"}}
    """#)
let vault = Vault(keystore: try .inMemory(), user: try KeyID("ada"), format: .v2)
try vault.ensureKey(existing: "{}")
// Prepare each operation once; the schema decides each field's format (score is v2, ssn v1).
let encrypting = try ProfileProcessor(.encrypt, schema: schema)
let decrypting = try ProfileProcessor(.decrypt, schema: schema)
let upload = try encrypting.process(#"{"ssn": "078-05-1120", "score": 812, "name": "Ada"}"#, with: vault).json
let back = try decrypting.process(upload, with: vault)
print(back.json)  // {"ssn":"078-05-1120","score":812,"name":"Ada"}
// Options are set once per processor: indented output for a person to read, here.
let forPeople = try ProfileProcessor(.decrypt, schema: schema, options: .init(pretty: true))
print(try forPeople.process(upload, with: vault).json)
// Before a second device makes a key, it checks the user's data: sealed under another key means receive it.
let phone = Vault(keystore: try .inMemory(), user: try KeyID("ada"), format: .v2)
do {
    try phone.ensureKey(existing: upload, schema: schema)
} catch where error.reason == .keyElsewhere {
    print(error)  // receive the user's key instead of making a new one
}
