
/// Why a profile could not be encrypted, decrypted or rotated. Names fields, never values.
package enum ProfileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The profile's text is not strict JSON.
    case invalidJSON(JSONError)
    /// The profile is not a JSON object.
    case notAnObject(found: String)
    /// These fields failed, every one of them, in profile order.
    case fieldsFailed([FieldFailure])
    /// The profile has a `data` object, which holds its fields in Rownd's user-state shape, and
    /// also top-level members named like these flagged fields: which holds the user's values
    /// cannot be told, so nothing is encrypted, decrypted or rotated.
    case fieldsBesideData([String])
    /// Members the schema does not declare, refused by its `undeclaredMembers` setting: a name near an
    /// encrypted field's is most likely that field misspelt (in the schema or in the profile), which
    /// would leave its value in plaintext; nothing is encrypted or rotated.
    case undeclaredMembers([UndeclaredMember])
    /// The profile's seal is missing, does not match, or is not the newest this device has seen.
    case seal(SealProblem)

    package var description: String {
        switch self {
        case .invalidJSON(let error):
            return "the profile is \(error)"
        case .notAnObject(let found):
            return "a profile must be a JSON object of fields, found \(found)"
        case .fieldsFailed(let failures):
            let count = failures.count == 1 ? "1 profile field failed" : "\(failures.count) profile fields failed"
            // One reason once, with its fields: a wrong key fails every field the same way.
            var groups: [(reason: String, fields: [String])] = []
            for failure in failures {
                let reason = failure.reasonDescription
                if let index = groups.firstIndex(where: { $0.reason == reason }) {
                    groups[index].fields.append(failure.field)
                } else {
                    groups.append((reason, [failure.field]))
                }
            }
            return count + ": " + groups.map { $0.fields.joined(separator: ", ") + " " + $0.reason }.joined(separator: "; ")
        case .seal(let problem):
            return problem.description
        case .fieldsBesideData(let fields):
            return "the profile has a \"data\" object, which holds its fields, and also top-level members named like "
                + "flagged fields (\(fields.joined(separator: ", "))), which would not be encrypted: move them into "
                + "\"data\", or drop \"data\" if the profile's own members are its fields"
        case .undeclaredMembers(let members):
            return members.map(\.description).joined(separator: "; ")
        }
    }
}

/// A profile member the schema does not declare, which the schema's `undeclaredMembers` setting refuses.
/// Names the member, never its value.
package struct UndeclaredMember: Sendable, Equatable, CustomStringConvertible {
    /// The member's name.
    package let name: String
    /// The encrypted field whose name is near the member's, if one is.
    package let nearEncryptedField: String?

    /// Describes an undeclared member.
    package init(name: String, nearEncryptedField: String?) {
        self.name = name
        self.nearEncryptedField = nearEncryptedField
    }

    /// "`salary` is not in the schema, and its name is near the encrypted field `salery`" and both remedies,
    /// as either name may be the misspelt one; or, for a member near no encrypted field (refused because the
    /// schema says it declares every field), what to do.
    package var description: String {
        let member = "`" + TextSafety.printable(name) + "`"
        if let near = nearEncryptedField {
            return Self.nearFact(member: name, field: near) + ": declare \(member) in the schema if it is another field, "
                + "or correct whichever of the two names is misspelt, in the schema or in the profile"
        }
        return "\(member) is not in the schema, and undeclared members are refused: declare it in the schema "
            + "or leave it out of the profile"
    }

    /// The facts of a near miss, without a remedy: which member, near which encrypted field.
    package static func nearFact(member: String, field: String) -> String {
        "`\(TextSafety.printable(member))` is not in the schema, and its name is near the encrypted field "
            + "`\(TextSafety.printable(field))`"
    }
}

/// One encrypted field that failed, and why. Never holds or shows the field's value.
package struct FieldFailure: Equatable, Sendable, CustomStringConvertible {
    /// Why a field failed.
    package enum Reason: Equatable, Sendable {
        /// The value's JSON type is not the schema's type for the field.
        case typeMismatch(expected: ProfileSchema.FieldType, found: String)
        /// A non-string value in a field whose schema gives no type, so decryption could not restore it.
        case missingType(found: ProfileSchema.FieldType)
        /// An encrypted field holds something other than a ciphertext string.
        case notEncrypted(found: String)
        /// No key of the user's opens the ciphertext.
        case undecryptable(CiphertextError)
        /// The ciphertext opens, but its plaintext is not a value of the schema's type.
        case decryptedTypeMismatch(expected: ProfileSchema.FieldType)
        /// The value is a ciphertext sealed under a key this keystore lacks (the fingerprint in a v2
        /// header; nil for v1, which names no key). Encrypting never seals it again; decrypting says
        /// so when the header names the key, or when not one flagged v1 value opened.
        case sealedUnderUnknownKey(KeyFingerprint?)
        /// Guarded memory for a v2 subkey could not be had.
        case outOfGuardedMemory
    }

    /// The field's name.
    package let field: String
    /// What went wrong.
    package let reason: Reason

    /// Names the field that failed and why.
    package init(field: String, reason: Reason) {
        self.field = field
        self.reason = reason
    }

    package var description: String { field + " " + reasonDescription }

    /// What a device missing the user's key should do.
    static let receiveAdvice = "receive the user's key from a device that has it instead of making a new one"

    /// What went wrong, without the field's name, so failures alike can share one sentence.
    var reasonDescription: String {
        switch reason {
        case .typeMismatch(let expected, let found):
            return "holds \(found) but the schema declares type \"\(expected.rawValue)\""
        case .missingType(let found):
            return "holds \(found.article) but the schema gives it no type, so decryption could not "
                + "restore it: add \"type\": \"\(found.rawValue)\" to the field in the schema"
        case .notEncrypted(let found):
            return "holds \(found), not a ciphertext"
        case .undecryptable(.notBound):
            return "holds a v1 value, which names no field, but the field is v2, so it is not bound to this place "
                + "and may have been moved from another field: if the profile predates v2, migrate it once by rotating "
                + "it from v1 to v2"
        case .undecryptable(let error):
            return "cannot be decrypted with the user's keys (\(error))"
        case .decryptedTypeMismatch(let expected):
            return "decrypts to text that is not \(expected.article), as the schema's type requires"
        case .sealedUnderUnknownKey(let tag?):
            return "holds a ciphertext sealed under key \(tag), which this keystore does not have: " + Self.receiveAdvice
        case .sealedUnderUnknownKey(nil):
            return "holds a ciphertext that none of the user's keys opens, most likely sealed under a key this keystore "
                + "does not have (or damaged): " + Self.receiveAdvice
        case .outOfGuardedMemory:
            return "cannot be encrypted: guarded memory for the key is not available"
        }
    }
}

extension ProfileSchema.FieldType {
    /// "a number", "an object": for messages.
    var article: String {
        switch self {
        case .string: return "a string"
        case .number: return "a number"
        case .boolean: return "a boolean"
        case .object: return "an object"
        case .array: return "an array"
        case .image: return "an image reference (a string)"
        case .document: return "a document reference (a string)"
        case .any: return "JSON text"
        case .null: return "null"
        }
    }
}
