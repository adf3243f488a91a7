
/// What is wrong with a profile schema. Schemas hold field names and settings, never user data.
package enum SchemaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The schema text is not valid JSON.
    case invalidJSON(JSONError)
    /// The value at `path` (such as `schema.ssn.encryption.state`) is not what a schema allows there.
    case malformed(path: String, expected: String, found: String)
    /// `email` or `phone_number` is marked encrypted; Rownd looks users up by them.
    case identifyingFieldEncrypted(field: String, path: String)
    /// Two field definitions share a name.
    case duplicateField(String)
    /// The schema would encrypt nothing: it flags no field, or a key is misspelt (see `SchemaLint`).
    case encryptsNothing(String)

    package var description: String {
        switch self {
        case .invalidJSON(let error):
            return "the schema is \(error)"
        case .malformed(let path, let expected, let found):
            let place = path.isEmpty ? "the top level" : path
            return "invalid schema: \(place): expected \(expected), found \(found)"
        case .identifyingFieldEncrypted(let field, let path):
            return "invalid schema: \(path): \"\(field)\" is used to look users up and cannot be encrypted; "
                + "set its encryption state to \"disabled\""
        case .duplicateField(let name):
            return "invalid schema: the field \"\(name)\" is defined twice"
        case .encryptsNothing(let problem):
            return "invalid schema: \(problem)"
        }
    }
}
