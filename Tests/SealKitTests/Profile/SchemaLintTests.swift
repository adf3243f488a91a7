import SealKit
import Testing


/// Schemas that would parse but encrypt nothing must be refused, naming the key and the fix.
@Suite struct SchemaLintTests {
    func message(_ text: String) -> String? {
        do {
            let schema = try ProfileSchema(parsing: text)
            try SchemaLint.requireEncryptedField(schema)
            return nil
        } catch {
            return error.description
        }
    }

    @Test(arguments: ["Encryption", "encrpytion", "encryptoin", "encription", "encryptions"])
    func refusesAMisspeltEncryptionKey(key: String) throws {
        let text = #"{"ssn": {"type": "string", "\#(key)": {"state": "enabled"}}, "age": {"type": "number", "encryption": {"state": "enabled"}}}"#
        let problem = try #require(message(text))
        #expect(problem.contains("\"\(key)\"") && problem.contains("ssn") && problem.contains(#"rename it to "encryption""#), "\(problem)")
    }

    @Test(arguments: [
        (#"{"schemas": {"ssn": {"type": "string", "encryption": {"state": "enabled"}}}}"#, "schemas", "schema"),
        (#"{"schema_": {"ssn": {"encryption": {"state": "enabled"}}}}"#, "schema_", "schema"),
        (#"{"apps": {"schema": {"ssn": {"encryption": {"state": "enabled"}}}}}"#, "apps", "app"),
        (#"{"app": {"shema": {"ssn": {"encryption": {"state": "enabled"}}}}}"#, "shema", "schema"),
    ])
    func refusesAMisspeltWrapper(text: String, key: String, fix: String) throws {
        let problem = try #require(message(text))
        #expect(problem.contains("\"\(key)\"") && problem.contains("rename it to \"\(fix)\""), "\(problem)")
    }

    @Test func refusesASchemaThatFlagsNothing() throws {
        let none = try #require(message(#"{"ssn": {"type": "string", "encryption": {"state": "disabled"}}}"#))
        #expect(none.contains("flags no field"), "\(none)")
        #expect(try #require(message("{}")).contains("defines no field"))
        #expect(try #require(message(#"{"schema": {}}"#)).contains("defines no field"))
    }

    /// Near names are fine where they are meant: fields called `age` or `zip` (two edits from
    /// `app`), and exact keys.
    @Test func acceptsFieldsThatOnlyLookLikeWrappers() throws {
        let text = #"""
            {"age": {"type": "number", "encryption": {"state": "enabled"}},
             "zip": {"type": "string"}, "apt": {"type": "string", "display_name": "Apt"},
             "ssn": {"type": "string", "encryption": {"state": "enabled"}}}
            """#
        #expect(message(text) == nil)
        #expect(message(#"{"schema": {"schemas": {"type": "string", "encryption": {"state": "enabled"}}}}"#) == nil)
    }

    @Test func editDistanceCountsSwapsAsOneEdit() {
        #expect(SchemaLint.editDistance("encrpytion", "encryption", limit: 2) == 1)
        #expect(SchemaLint.editDistance("Encryption", "encryption", limit: 2) == 1)
        #expect(SchemaLint.editDistance("schemas", "schema", limit: 2) == 1)
        #expect(SchemaLint.editDistance("", "app", limit: 2) == 3)
        #expect(SchemaLint.editDistance("display_name", "encryption", limit: 2) == 3)
        #expect(SchemaLint.editDistance("encrpyt", "encrypt", limit: 2) == 1)
    }
}
