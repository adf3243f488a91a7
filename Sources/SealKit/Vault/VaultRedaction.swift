/// Plaintexts and the keys behind a vault never print: `print`, string interpolation,
/// `String(reflecting:)` and `dump` show ids, formats and field names, never a value or a key.
extension ProfileOutcome: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The JSON's length, the field names, the notes, the seal's version and the warnings: never the profile's values.
    public var description: String {
        "ProfileOutcome(\(json.utf8.count) bytes of JSON redacted, fieldsUnderRetiredKeys: \(fieldsUnderRetiredKeys), "
            + "rotatedFields: \(rotatedFields), notes: \(notes), sealVersion: \(sealVersion.map(String.init) ?? "nil"), "
            + "warnings: \(warnings))"
    }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// Everything but the JSON, so `dump` shows no plaintext.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "fieldsUnderRetiredKeys": fieldsUnderRetiredKeys, "rotatedFields": rotatedFields, "notes": notes,
                "sealVersion": sealVersion as Any, "warnings": warnings,
            ],
            displayStyle: .struct)
    }
}

extension Vault: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The user, the format and the keystore: never a key or the passphrase.
    public var description: String { "Vault(user '\(user)', format \(format), \(keystore))" }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The keystore, the user and the format, so `dump` shows no key and no passphrase.
    public var customMirror: Mirror {
        Mirror(self, children: ["keystore": keystore, "user": user, "format": format], displayStyle: .class)
    }
}

// Rownd key texts (here rather than in SealKitTransfer: they need libsodium alone).

extension RowndKeyText: CustomDebugStringConvertible, CustomReflectable {
    /// The same as `description`: the key's fingerprint only.
    public var debugDescription: String { description }
    /// The fingerprint and the count of retired keys left out, so `dump` shows no key.
    public var customMirror: Mirror {
        Mirror(self, children: ["fingerprint": fingerprint, "retiredKeyCount": retiredKeyCount], displayStyle: .struct)
    }
}

extension PastedKey: CustomDebugStringConvertible, CustomReflectable {
    /// The same as `description`: the key's fingerprint only.
    public var debugDescription: String { description }
    /// The fingerprint only, so `dump` shows no key.
    public var customMirror: Mirror { Mirror(self, children: ["fingerprint": fingerprint], displayStyle: .struct) }
}
