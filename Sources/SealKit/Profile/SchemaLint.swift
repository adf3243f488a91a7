
/// Checks that catch schemas which would parse but encrypt nothing: a misspelt `encryption`
/// key or wrapper leaves every field in plaintext with no error, which is the worst way for
/// an encryption tool to fail. A schema is configuration, never user data, so messages may
/// quote its keys.
package enum SchemaLint {
    /// Keys a field definition may hold; a key near `encryption` that is one of these is meant.
    static let definitionKeys: Set<String> = ["display_name", "type", "required", "owned_by", "encryption"]

    /// Refuses misspellings that would silently turn encryption off: a field-definition key
    /// within two edits of `encryption` (`Encryption`, `encrpytion`), and, in a bare schema, a
    /// top-level wrapper within two edits of `schema` or `app` (`schemas`, `ap`).
    /// - Parameter json: the whole schema document.
    /// - Throws: `SchemaError.encryptsNothing` naming the key and the likely fix.
    package static func checkSpelling(_ json: JSONValue) throws(SchemaError) {
        guard case .object(let root) = json else { return }
        var fieldMap: [(key: String, value: JSONValue)] = root
        var base = ""
        if let app = json["app"] {
            guard case .object(let appMembers) = app else { return }
            if let schema = app["schema"] {
                guard case .object(let fields) = schema else { return }
                fieldMap = fields
                base = "app.schema"
            } else {
                // `{"app": {"schemas": ...}}`: the parser would only say "schema" is missing.
                for (key, value) in appMembers where isNear(key, "schema") && looksLikeFieldMap(value) {
                    throw .encryptsNothing(
                        "app.\(quoted(key)) looks like a misspelling of \"schema\"; rename it to \"schema\"")
                }
                return
            }
        } else if let schema = json["schema"] {
            guard case .object(let fields) = schema else { return }
            fieldMap = fields
            base = "schema"
        } else {
            // A bare schema: a wrapper spelt wrong would be read as one field called `schemas`,
            // and every real field under it ignored. A field definition holds definition keys;
            // a wrapper holds fields (or, for `app`, a schema).
            for (key, value) in root {
                for wrapper in ["schema", "app"] where isNear(key, wrapper) && looksLikeFieldMap(value) {
                    throw .encryptsNothing(
                        "the top-level key \(quoted(key)) looks like a misspelling of \"\(wrapper)\", so its fields "
                            + "would not be read; rename it to \"\(wrapper)\"")
                }
            }
        }
        for (name, definition) in fieldMap {
            guard case .object(let members) = definition else { continue }
            for (key, _) in members where key != "encryption" && !definitionKeys.contains(key) && isNear(key, "encryption") {
                throw .encryptsNothing(
                    "\(SchemaPath.join(base, name)): the key \(quoted(key)) looks like a misspelling of \"encryption\", "
                        + "so the field would stay in plaintext; rename it to \"encryption\"")
            }
        }
    }

    /// Refuses a schema that flags no field for encryption: used to encrypt, decrypt or audit,
    /// it would change nothing and say nothing.
    /// - Throws: `SchemaError.encryptsNothing`.
    package static func requireEncryptedField(_ schema: ProfileSchema) throws(SchemaError) {
        guard schema.encryptedFields.isEmpty else { return }
        let fix = #"set "encryption": {"state": "enabled"} on each field to encrypt"#
        if schema.fields.isEmpty {
            throw .encryptsNothing("the schema defines no field, so nothing would be encrypted; \(fix)")
        }
        throw .encryptsNothing("the schema flags no field for encryption, so nothing would be encrypted; \(fix)")
    }

    /// Whether `key` is within two edits of `target` but not equal to it.
    static func isNear(_ key: String, _ target: String) -> Bool {
        key != target && editDistance(key, target, limit: 2) <= 2
    }

    /// A wrapper's value: an object that is not itself a field definition.
    private static func looksLikeFieldMap(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value, !members.isEmpty else { return false }
        return !members.contains { definitionKeys.contains($0.key) } && members.allSatisfy { $0.value.objectValue != nil }
    }

    private static func quoted(_ key: String) -> String { JSONValue.string(key).serialized() }

    /// `TextSafety.editDistance`, under the name the schema checks have always used.
    package static func editDistance(_ a: String, _ b: String, limit: Int) -> Int { TextSafety.editDistance(a, b, limit: limit) }
}
