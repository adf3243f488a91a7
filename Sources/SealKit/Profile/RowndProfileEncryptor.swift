
/// Encrypts, decrypts and rotates profiles exactly as Rownd's SDKs did, for profiles that Rownd
/// apps wrote or will read (`sealkit profile ... --rownd`).
///
/// Rownd's SDKs (rownd/ios 2.8.3 `UserState.dataAsEncrypted`/`dataAsDecrypted`, rownd/android
/// 3.2.0 `User.dataAsEncrypted`/`dataAsDecrypted`) look at the top-level fields of a user's `data`
/// and touch only flagged fields that hold strings; they ignore the schema's `type`, and a value
/// that fails is kept as it was. So here:
/// - Encrypting turns the string value of each flagged field into a ciphertext. Numbers, booleans,
///   objects and arrays stay in plaintext (and are noted); `null` stays `null`.
/// - Decrypting turns each flagged string that opens under the user's keys into its plaintext, as a
///   string whatever the schema's type. A flagged value that is not a ciphertext or does not open
///   is left as it is and noted, by path and reason, never by value.
/// - `meta` (Rownd's iOS SDK after 2.8.3, commit c036d41): in the user-state shape, the flagged
///   fields of the `meta` object are decrypted (and rotated) like `data`'s, and never encrypted.
///
/// Two deliberate differences from the SDKs: a string that already opens under the user's keys is
/// not encrypted again (the SDKs would seal it twice), and a plaintext that is not UTF-8 is left as
/// a ciphertext and noted (the SDKs would put replacement characters in its place).
package struct RowndProfileEncryptor: Sendable {
    /// The schema that says which fields are encrypted; its types are not used, as Rownd's SDKs do not use them.
    package let schema: ProfileSchema

    /// Makes an encryptor that treats profiles as Rownd's SDKs do.
    package init(schema: ProfileSchema) {
        self.schema = schema
    }

    /// Encrypts the string value of every flagged field of `data` (or of a bare profile) under the current key.
    /// - Parameters:
    ///   - profile: the profile, as fields or in Rownd's user-state shape.
    ///   - keys: the user's keys; new ciphertexts use `keys.current`.
    /// - Returns: the profile, and a note for each flagged value left in plaintext because it is not a string.
    /// - Throws: `ProfileError.notAnObject` only.
    package func encrypt(_ profile: JSONValue, with keys: KeyRing) throws(ProfileError) -> RowndProfileResult {
        try map(profile, includingMeta: false, notingUndeclared: true) { field, value -> RowndFieldOutcome in
            switch value {
            case .null:
                return .kept
            case .string(let text):
                // Already a ciphertext: sealing it again would hide the value, under the user's keys
                // or, worse, under a key this keystore lacks (a second device's fork).
                if (try? keys.decrypt(text, place: .field(field.name))) != nil { return .kept }
                if CiphertextShape(of: text) != nil { return .noted(.sealedUnderUnknownKey) }
                return .replaced(.string(FieldCipher.encrypt(text, using: keys.current)))
            default:
                return .noted(.leftInPlaintext(found: value.kindName))
            }
        }
    }

    /// Decrypts every flagged string of `data` and `meta` (or of a bare profile) that opens under
    /// the current or a retired key; everything else is left as it is.
    /// - Parameters:
    ///   - profile: the profile, as fields or in Rownd's user-state shape.
    ///   - keys: the user's current and retired keys.
    /// - Returns: the profile, a note for each flagged value left as it is, and the fields that
    ///   only a retired key opened.
    /// - Throws: `ProfileError.notAnObject` only.
    package func decrypt(_ profile: JSONValue, with keys: KeyRing) throws(ProfileError) -> RowndProfileResult {
        try map(profile, includingMeta: true) { field, value -> RowndFieldOutcome in
            switch Self.open(value, field: field, keys: keys) {
            case .none: return .kept
            case .failed(let reason): return .noted(reason)
            case .opened(let plaintext, let needsRotation):
                return .replaced(.string(plaintext), underRetiredKey: needsRotation)
            }
        }
    }

    /// Re-encrypts under the current key every flagged ciphertext of `data` and `meta` that only a
    /// retired key opens. Plaintext is not encrypted here, so `meta` stays as Rownd wrote it.
    /// - Parameters:
    ///   - profile: the profile, as fields or in Rownd's user-state shape.
    ///   - keys: the user's current key, which encrypts, and retired keys, which only decrypt.
    /// - Returns: the profile, a note for each flagged value that is not a ciphertext or does not
    ///   open (left as it is), and the fields that were re-encrypted.
    /// - Throws: `ProfileError.notAnObject` only.
    package func rotate(_ profile: JSONValue, with keys: KeyRing) throws(ProfileError) -> RowndProfileResult {
        try map(profile, includingMeta: true, notingUndeclared: true) { field, value -> RowndFieldOutcome in
            switch Self.open(value, field: field, keys: keys) {
            case .none, .opened(_, false): return .kept
            case .failed(let reason): return .noted(reason)
            case .opened(let plaintext, true):
                return .replaced(.string(FieldCipher.encrypt(plaintext, using: keys.current)), underRetiredKey: true)
            }
        }
    }

    // MARK: Fields

    private enum Opened {
        case none
        case opened(plaintext: String, needsRotation: Bool)
        case failed(RowndFieldNote.Reason)
    }

    private static func open(_ value: JSONValue, field: ProfileSchema.Field, keys: KeyRing) -> Opened {
        switch value {
        case .null:
            return .none
        case .string(let text):
            do {
                let (plaintext, needsRotation) = try keys.decrypt(text, place: .field(field.name))
                return .opened(plaintext: plaintext, needsRotation: needsRotation)
            } catch {
                return .failed(.undecryptable(error))
            }
        default:
            return .failed(.notACiphertext(found: value.kindName))
        }
    }

    /// Applies `transform` to every flagged field of the profile's fields and, with `includingMeta`,
    /// of its `meta` object, keeping everything else.
    private func map(
        _ profile: JSONValue, includingMeta: Bool, notingUndeclared: Bool = false, _ transform: (ProfileSchema.Field, JSONValue) -> RowndFieldOutcome
    ) throws(ProfileError) -> RowndProfileResult {
        guard case .object(var members) = profile else { throw .notAnObject(found: profile.kindName) }
        var notes: [RowndFieldNote] = []
        var retired: [String] = []

        func mapFields(_ fields: inout [(key: String, value: JSONValue)], under container: String) {
            // Rownd's SDKs send a member the schema does not declare as it is, misspelt or not: say so.
            if notingUndeclared && container != "meta" {
                for member in schema.undeclared(in: fields) {
                    notes.append(RowndFieldNote(
                        path: SchemaPath.join(container, member.name), reason: .undeclared(member)))
                }
            }
            for index in fields.indices {
                guard let field = schema.field(named: fields[index].key), field.isEncrypted else { continue }
                let path = SchemaPath.join(container, field.name)
                switch transform(field, fields[index].value) {
                case .kept:
                    break
                case .replaced(let value, let underRetiredKey):
                    fields[index].value = value
                    if underRetiredKey { retired.append(path) }
                case .noted(let reason):
                    notes.append(RowndFieldNote(path: path, reason: reason))
                }
            }
        }

        // Rownd's SDKs read only `data`'s fields: a flagged name beside it is left, and said.
        for name in schema.encryptedFieldsBesideData(in: members) {
            notes.append(RowndFieldNote(path: name, reason: .besideData))
        }
        // Rownd's user state: the fields are in `data`, and `meta` holds more of them.
        if let dataIndex = schema.dataIndex(in: members), case .object(var data) = members[dataIndex].value {
            mapFields(&data, under: "data")
            members[dataIndex].value = .object(data)
            if includingMeta, let metaIndex = members.firstIndex(where: { $0.key == "meta" }),
                case .object(var meta) = members[metaIndex].value
            {
                mapFields(&meta, under: "meta")
                members[metaIndex].value = .object(meta)
            }
        } else {
            mapFields(&members, under: "")
        }
        return RowndProfileResult(profile: .object(members), notes: notes, fieldsUnderRetiredKeys: retired)
    }
}

/// What happened to one flagged field.
private enum RowndFieldOutcome {
    case kept
    case replaced(JSONValue, underRetiredKey: Bool = false)
    case noted(RowndFieldNote.Reason)
}

/// A profile after a Rownd-compatible operation.
package struct RowndProfileResult: Sendable, Equatable {
    /// The resulting profile.
    package let profile: JSONValue
    /// The flagged values left as they were and why, in profile order (`data`, then `meta`).
    package let notes: [RowndFieldNote]
    /// Paths of fields that only a retired key opened: after `decrypt`, `rotate` moves them to the
    /// current key; after `rotate`, the fields that were re-encrypted.
    package let fieldsUnderRetiredKeys: [String]
}

/// A flagged value that a Rownd-compatible operation left as it was. Names the field, never the value.
package struct RowndFieldNote: Sendable, Equatable, CustomStringConvertible {
    /// Why the value was left.
    package enum Reason: Sendable, Equatable {
        /// On encrypt: the value is not a string, and Rownd encrypts only strings.
        case leftInPlaintext(found: String)
        /// On decrypt or rotate: the value is not a string, so it cannot be a ciphertext.
        case notACiphertext(found: String)
        /// On decrypt or rotate: the string is not a ciphertext, or no key of the user's opens it.
        case undecryptable(CiphertextError)
        /// On encrypt: the value is already a ciphertext that no key of the user's opens, so it is
        /// left byte for byte rather than sealed a second time.
        case sealedUnderUnknownKey
        /// A top-level member named like a flagged field in a profile whose fields are in `data`:
        /// Rownd's SDKs read only `data`'s fields, so it is not touched.
        case besideData
        /// On encrypt or rotate: a member the schema does not declare, which strict mode refuses (its
        /// name is near an encrypted field's, or the schema refuses every undeclared member); Rownd's
        /// SDKs send it as it is.
        case undeclared(UndeclaredMember)
    }

    /// The field's path: `data.ssn`, `meta.ssn`, or `ssn` in a bare profile.
    package let path: String
    /// Why it was left.
    package let reason: Reason

    /// Names the field that was left and why.
    package init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    package var description: String { description(receiveHint: "") }

    /// The note, with `receiveHint` after "receive that key" where a key is missing: a tool's own way to receive it.
    package func description(receiveHint: String) -> String {
        switch reason {
        case .leftInPlaintext(let found):
            return "\(path) left in plaintext: it holds \(found), and Rownd encrypts only strings"
        case .notACiphertext(let found):
            return "\(path) left as it is: it holds \(found), not a ciphertext"
        case .sealedUnderUnknownKey:
            return "\(path) left as it is: it already looks like a ciphertext (padded base64 of 40 bytes or more, or "
                + "SealKit's prefix) that none of the user's keys opens, so it is not sealed twice; if it is one, it was "
                + "sealed under a key this keystore does not have: receive that key\(receiveHint) instead of making a new one"
        case .besideData:
            return "\(path) left as it is: a top-level member beside \"data\", which holds the profile's fields, "
                + "so Rownd's SDKs neither read nor encrypt it; move it into \"data\""
        case .undeclared(let member):
            return "\(TextSafety.printable(path)) left in plaintext: \(member) (Rownd's SDKs send it as it is)"
        case .undecryptable(.notUTF8):
            return "\(path) left as it is: it opens, but not to UTF-8 text (Rownd's SDKs would show replacement characters)"
        case .undecryptable(.notBase64), .undecryptable(.tooShort):
            return "\(path) left as it is: not a ciphertext (\(Self.describe(reason)))"
        case .undecryptable:
            return "\(path) left as it is: it does not open with the user's keys (\(Self.describe(reason)))"
        }
    }

    private static func describe(_ reason: Reason) -> String {
        guard case .undecryptable(let error) = reason else { return "" }
        return error.description
    }
}
