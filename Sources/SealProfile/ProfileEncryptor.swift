import SealCore
import SealJSON

/// Encrypts, decrypts and rotates the fields of user profiles that a schema marks encrypted.
///
/// A profile is a JSON object of fields, or Rownd's user-state shape
/// `{"id": ..., "data": {...}, "redacted": [...]}`, where only `data` holds fields and everything
/// else passes through unchanged. (A profile counts as user-state when it has a `data` object and
/// the schema defines no field called `data`.) Fields that are not encrypted, and fields the schema
/// does not know, pass through unchanged; member order is kept.
///
/// Values:
/// - A string encrypts exactly as `FieldCipher.encrypt(value, using: keys.current)` does, so
///   Rownd's SDKs decrypt it.
/// - A number, boolean, object or array encrypts as its compact JSON text (Rownd would leave it in
///   plaintext), and decryption restores it by the field's schema `type`; numbers keep their exact text.
/// - `null` stays `null`: there is nothing to protect.
public struct ProfileEncryptor: Sendable {
    /// The schema that says which fields are encrypted.
    public let schema: ProfileSchema

    /// Makes an encryptor for profiles described by `schema`.
    public init(schema: ProfileSchema) {
        self.schema = schema
    }

    /// Encrypts every encrypted field under the current key.
    ///
    /// Idempotent: a string that already decrypts under any of `keys` counts as encrypted and is
    /// left as it is, so encrypting twice never double-encrypts. The other side of that rule: a
    /// string field whose *plaintext* is itself a valid ciphertext under one of the user's keys is
    /// taken as already encrypted and left alone, so decrypting it yields the inner plaintext.
    /// Poly1305 authentication means this only happens to text that really is a ciphertext made
    /// with this user's key; other text, however much it looks like base64, is encrypted.
    /// - Parameters:
    ///   - profile: the profile, as fields or in Rownd's user-state shape.
    ///   - keys: the user's keys; new ciphertexts use `keys.current`.
    /// - Returns: the profile with every encrypted field as a ciphertext string.
    /// - Throws: `ProfileError.notAnObject`, or `ProfileError.fieldsFailed` listing every field that
    ///   does not match its schema type or holds a non-string value without one. Nothing is
    ///   returned when any field fails.
    public func encrypt(_ profile: JSONValue, with keys: KeyRing) throws(ProfileError) -> JSONValue {
        return try mapEncryptedFields(of: profile) { field, value -> FieldOutcome in
            switch value {
            case .null:
                return .value(value)
            case .string(let text):
                if let (plaintext, _) = try? keys.decrypt(text) {
                    guard Self.restore(plaintext, as: field.type) != nil else {
                        return .failed(.decryptedTypeMismatch(expected: field.type ?? .string))
                    }
                    return .value(value)
                }
                if let type = field.type, type != .string {
                    return .failed(.typeMismatch(expected: type, found: value.kindName))
                }
                return .value(.string(FieldCipher.encrypt(text, using: keys.current)))
            default:
                // Only null has no type, and it was handled above.
                guard let valueType = ProfileSchema.FieldType(of: value) else { return .value(value) }
                guard let type = field.type else { return .failed(.missingType(found: valueType)) }
                guard type == valueType else { return .failed(.typeMismatch(expected: type, found: value.kindName)) }
                return .value(.string(FieldCipher.encrypt(value.serialized(), using: keys.current)))
            }
        }.profile
    }

    /// Decrypts every encrypted field with the current or a retired key.
    /// - Parameters:
    ///   - profile: the profile, as fields or in Rownd's user-state shape.
    ///   - keys: the user's current and retired keys.
    /// - Returns: the plaintext profile, and the fields that only a retired key opened (`rotate` them).
    /// - Throws: `ProfileError.notAnObject`, or `ProfileError.fieldsFailed` listing every encrypted,
    ///   non-null field that is not a ciphertext, opens under none of the keys, or does not decrypt to
    ///   its schema type. Nothing is returned when any field fails.
    public func decrypt(_ profile: JSONValue, with keys: KeyRing) throws(ProfileError) -> DecryptedProfile {
        let (plain, retired) = try mapEncryptedFields(of: profile) { field, value -> FieldOutcome in
            switch Self.open(value, field: field, keys: keys) {
            case .failed(let reason): return .failed(reason)
            case .null: return .value(value)
            case .opened(_, let restored, let needsRotation): return .value(restored, noted: needsRotation)
            }
        }
        return DecryptedProfile(profile: plain, fieldsUnderRetiredKeys: retired)
    }

    /// Re-encrypts under the current key every field that only a retired key opens.
    ///
    /// Fields already under the current key are left untouched, so their ciphertexts do not change.
    /// - Parameters:
    ///   - profile: an encrypted profile, as fields or in Rownd's user-state shape.
    ///   - keys: the user's current key, which encrypts, and retired keys, which only decrypt.
    /// - Returns: the profile, and the fields that were re-encrypted.
    /// - Throws: the same errors as `decrypt`, listing every failing field. Nothing is returned
    ///   when any field fails.
    public func rotate(_ profile: JSONValue, with keys: KeyRing) throws(ProfileError) -> RotatedProfile {
        let (rotated, fields) = try mapEncryptedFields(of: profile) { field, value -> FieldOutcome in
            switch Self.open(value, field: field, keys: keys) {
            case .failed(let reason): return .failed(reason)
            case .opened(let plaintext, _, true):
                return .value(.string(FieldCipher.encrypt(plaintext, using: keys.current)), noted: true)
            case .null, .opened: return .value(value)
            }
        }
        return RotatedProfile(profile: rotated, rotatedFields: fields)
    }

    // MARK: Fields

    /// What a stored encrypted field holds.
    private enum OpenedField {
        case null
        /// The plaintext, the value it restores to, and whether only a retired key opened it.
        case opened(plaintext: String, restored: JSONValue, needsRotation: Bool)
        case failed(FieldFailure.Reason)
    }

    /// Opens one stored field value with any of the user's keys and restores it to the field's type.
    private static func open(_ value: JSONValue, field: ProfileSchema.Field, keys: KeyRing) -> OpenedField {
        switch value {
        case .null:
            return .null
        case .string(let ciphertext):
            let plaintext: String
            let needsRotation: Bool
            do {
                (plaintext, needsRotation) = try keys.decrypt(ciphertext)
            } catch {
                return .failed(.undecryptable(error))
            }
            guard let restored = restore(plaintext, as: field.type) else {
                return .failed(.decryptedTypeMismatch(expected: field.type ?? .string))
            }
            return .opened(plaintext: plaintext, restored: restored, needsRotation: needsRotation)
        default:
            return .failed(.notEncrypted(found: value.kindName))
        }
    }

    /// The value a plaintext stands for under the field's type, or nil when it is not one.
    private static func restore(_ plaintext: String, as type: ProfileSchema.FieldType?) -> JSONValue? {
        guard let type, type != .string else { return .string(plaintext) }
        guard let value = try? JSONValue.parse(plaintext), ProfileSchema.FieldType(of: value) == type else {
            return nil
        }
        return value
    }

    /// Applies `transform` to every encrypted field of the profile's fields, keeping everything
    /// else. Collects every failure before throwing, so the caller hears about all of them at once.
    /// - Returns: the new profile and the names of fields for which `transform` said `noted`.
    private func mapEncryptedFields(
        of profile: JSONValue,
        _ transform: (ProfileSchema.Field, JSONValue) -> FieldOutcome
    ) throws(ProfileError) -> (profile: JSONValue, noted: [String]) {
        guard case .object(var members) = profile else { throw .notAnObject(found: profile.kindName) }
        if schema.field(named: "data") == nil,
            let dataIndex = members.firstIndex(where: { $0.key == "data" }),
            case .object(let data) = members[dataIndex].value
        {
            let (fields, noted) = try mapFields(data, transform)
            members[dataIndex].value = .object(fields)
            return (.object(members), noted)
        }
        let (fields, noted) = try mapFields(members, transform)
        return (.object(fields), noted)
    }

    private func mapFields(
        _ members: [(key: String, value: JSONValue)],
        _ transform: (ProfileSchema.Field, JSONValue) -> FieldOutcome
    ) throws(ProfileError) -> (fields: [(key: String, value: JSONValue)], noted: [String]) {
        var fields = members
        var noted: [String] = []
        var failures: [FieldFailure] = []
        for index in fields.indices {
            guard let field = schema.field(named: fields[index].key), field.isEncrypted else { continue }
            switch transform(field, fields[index].value) {
            case .value(let value, let isNoted):
                fields[index].value = value
                if isNoted { noted.append(field.name) }
            case .failed(let reason):
                failures.append(FieldFailure(field: field.name, reason: reason))
            }
        }
        guard failures.isEmpty else { throw .fieldsFailed(failures) }
        return (fields, noted)
    }
}

/// What happened to one encrypted field: its new value (and whether to report the field back), or why it failed.
private enum FieldOutcome {
    case value(JSONValue, noted: Bool = false)
    case failed(FieldFailure.Reason)
}

/// A decrypted profile.
public struct DecryptedProfile: Sendable, Equatable {
    /// The profile with every encrypted field in plaintext.
    public let profile: JSONValue
    /// Fields that only a retired key opened, in profile order: `rotate` moves them to the current key.
    public let fieldsUnderRetiredKeys: [String]
}

/// A profile after rotation.
public struct RotatedProfile: Sendable, Equatable {
    /// The profile with every encrypted field under the current key.
    public let profile: JSONValue
    /// Fields that were re-encrypted, in profile order.
    public let rotatedFields: [String]
}

extension ProfileSchema.FieldType {
    /// The type of a non-null JSON value.
    init?(of value: JSONValue) {
        switch value {
        case .null: return nil
        case .bool: self = .boolean
        case .number: self = .number
        case .string: self = .string
        case .array: self = .array
        case .object: self = .object
        }
    }
}
