import SealKit
import Testing


@Suite struct SchemaTests {
    static let fields = #"""
        {"ssn": {"display_name": "SSN", "type": "string", "required": true, "owned_by": "user",
                 "encryption": {"state": "enabled"}, "future_key": [1, 2]},
         "age": {"type": "number", "encryption": {"state": "enabled"}},
         "email": {"type": "string", "encryption": {"state": "disabled"}},
         "nickname": {"type": "string"},
         "dob": {"type": "date", "encryption": null},
         "flags": {"encryption": {"state": "enabled"}}}
        """#

    @Test func readsAllThreeShapesAlike() throws {
        let bare = try ProfileSchema(parsing: Self.fields)
        let wrapped = try ProfileSchema(parsing: #"{"version": 3, "schema": \#(Self.fields)}"#)
        let app = try ProfileSchema(parsing: #"{"app": {"id": "a1", "schema": \#(Self.fields)}, "other": true}"#)
        #expect(bare == wrapped)
        #expect(bare == app)
        #expect(bare.fields.map(\.name) == ["ssn", "age", "email", "nickname", "dob", "flags"])
    }

    @Test func readsFieldDefinitions() throws {
        let schema = try ProfileSchema(parsing: Self.fields)
        #expect(schema.encryptedFields.map(\.name) == ["ssn", "age", "flags"])
        #expect(schema.encryptedFields.map(\.type) == [.string, .number, nil])
        #expect(
            schema.field(named: "ssn")
                == ProfileSchema.Field(
                    name: "ssn", type: .string, isEncrypted: true, displayName: "SSN", isRequired: true, ownedBy: "user"))
        #expect(schema.field(named: "email")?.isEncrypted == false)
        #expect(schema.field(named: "nickname") == ProfileSchema.Field(name: "nickname", type: .string, isEncrypted: false))
        // An unknown type on a field that is not encrypted does not matter, so it is not an error.
        #expect(schema.field(named: "dob")?.type == nil)
        #expect(schema.field(named: "missing") == nil)
    }

    @Test func readsTheFixture() throws {
        let schema = try ProfileSchema(parsing: try Fixture.json("schema.json"))
        #expect(
            schema.encryptedFields.map(\.name) == [
                "ssn", "date_of_birth", "middle_name", "credit_score", "account_balance", "is_verified",
                "home_address", "recovery_codes",
            ])
        #expect(Set(schema.encryptedFields.compactMap(\.type)) == [.string, .number, .boolean, .object, .array])
        #expect(schema.field(named: "email")?.isEncrypted == false)
    }

    @Test func refusesEncryptedIdentifyingFields() {
        for name in ["email", "phone_number"] {
            let definition = #"{"\#(name)": {"type": "string", "encryption": {"state": "enabled"}}}"#
            #expect(schemaError(definition) == .identifyingFieldEncrypted(field: name, path: name))
            #expect(
                schemaError(#"{"schema": \#(definition)}"#) == .identifyingFieldEncrypted(field: name, path: "schema.\(name)"))
            #expect(
                schemaError(#"{"app": {"schema": \#(definition)}}"#)
                    == .identifyingFieldEncrypted(field: name, path: "app.schema.\(name)"))
            #expect(
                throws: SchemaError.identifyingFieldEncrypted(field: name, path: name),
                performing: { try ProfileSchema(fields: [.init(name: name, type: .string, isEncrypted: true)]) })
        }
        let error = schemaError(#"{"schema": {"email": {"encryption": {"state": "enabled"}}}}"#)
        #expect(
            error?.description
                == #"invalid schema: schema.email: "email" is used to look users up and cannot be encrypted; set its encryption state to "disabled""#
        )
    }

    @Test(arguments: [
        (#"{"schema": {"ssn": {"encryption": {"state": "maybe"}}}}"#,
         SchemaError.malformed(path: "schema.ssn.encryption.state", expected: #""enabled" or "disabled""#, found: #""maybe""#)),
        (#"{"schema": {"ssn": {"encryption": {"state": true}}}}"#,
         .malformed(path: "schema.ssn.encryption.state", expected: #""enabled" or "disabled""#, found: "a boolean")),
        (#"{"ssn": {"encryption": "enabled"}}"#,
         .malformed(path: "ssn.encryption", expected: #"an object such as {"state": "enabled"}"#, found: "a string")),
        (#"{"app": {"schema": {"ssn": {"type": 5}}}}"#,
         .malformed(path: "app.schema.ssn.type", expected: "a string", found: "a number")),
        (#"{"ssn": {"type": "date", "encryption": {"state": "enabled"}}}"#,
         .malformed(
            path: "ssn.type", expected: #""string", "number", "boolean", "object", "image", "document", "any", "null", "array" for an encrypted field"#,
            found: #""date""#)),
        (#"{"ssn": {"required": "yes"}}"#, .malformed(path: "ssn.required", expected: "true or false", found: "a string")),
        (#"{"ssn": {"display_name": ["S"]}}"#, .malformed(path: "ssn.display_name", expected: "a string", found: "an array")),
        (#"{"ssn": {"owned_by": {}}}"#, .malformed(path: "ssn.owned_by", expected: "a string", found: "an object")),
        (#"{"ssn": "string"}"#, .malformed(path: "ssn", expected: "an object describing the field", found: "a string")),
        (#"{"schema": {"home address": {"encryption": {"state": 1}}}}"#,
         .malformed(path: #"schema["home address"].encryption.state"#, expected: #""enabled" or "disabled""#, found: "a number")),
        (#"[]"#, .malformed(path: "", expected: "an object of fields", found: "an array")),
        (#"{"schema": []}"#, .malformed(path: "schema", expected: "an object of fields", found: "an array")),
        (#"{"app": {"name": "x"}}"#, .malformed(path: "app", expected: #"an object holding "schema""#, found: #"an object without "schema""#)),
        (#"{"app": "x"}"#, .malformed(path: "app", expected: #"an object holding "schema""#, found: "a string")),
        (#"{"app": {"schema": null}}"#, .malformed(path: "app.schema", expected: "an object of fields", found: "null")),
    ])
    func namesTheMalformedPlace(text: String, expected: SchemaError) {
        let error = schemaError(text)
        #expect(error == expected)
        #expect(error?.description.contains("\n") == false)
    }

    @Test func describesMalformedPlaces() {
        #expect(
            schemaError(#"{"schema": {"ssn": {"encryption": {"state": "maybe"}}}}"#)?.description
                == #"invalid schema: schema.ssn.encryption.state: expected "enabled" or "disabled", found "maybe""#)
        #expect(
            schemaError("[]")?.description == "invalid schema: the top level: expected an object of fields, found an array")
    }

    @Test func reportsInvalidJSON() {
        guard case .invalidJSON(let error)? = schemaError(#"{"ssn": {"type": "string",}}"#) else {
            Issue.record("expected invalid JSON")
            return
        }
        #expect(error.line == 1 && error.column == 27)
        #expect(
            SchemaError.invalidJSON(error).description
                == "the schema is invalid JSON at line 1, column 27: found '}', expected a string key (no trailing commas)")
        #expect(throws: SchemaError.self) { try ProfileSchema(parsing: Array(#"{"a":{},"a":{}}"#.utf8)) }
    }

    @Test func acceptsNullsAndEmptySchemas() throws {
        #expect(try ProfileSchema(parsing: "{}").fields.isEmpty)
        #expect(try ProfileSchema(parsing: #"{"schema": {}}"#).fields.isEmpty)
        let schema = try ProfileSchema(
            parsing: #"{"a": {"display_name": null, "type": null, "required": null, "owned_by": null, "encryption": {"state": null}}}"#)
        #expect(schema.fields == [ProfileSchema.Field(name: "a", type: nil, isEncrypted: false)])
    }

    @Test func refusesDuplicateFieldsBuiltByHand() {
        #expect(throws: SchemaError.duplicateField("a")) {
            try ProfileSchema(fields: [
                .init(name: "a", type: .string, isEncrypted: true), .init(name: "a", type: nil, isEncrypted: false),
            ])
        }
    }
}

@Suite("Schema inspection")
struct SchemaInspectionTests {
    @Test func reportsEveryEncryptedIdentifierInsteadOfRefusing() throws {
        let json = try JSONValue.parse("""
            {"app": {"schema": {
              "email": {"type": "string", "encryption": {"state": "enabled"}},
              "ssn": {"type": "string", "encryption": {"state": "enabled"}},
              "phone_number": {"type": "string", "encryption": {"state": "enabled"}}
            }}}
            """)
        #expect(throws: SchemaError.self) { try ProfileSchema(parsing: json) }
        let inspected = try ProfileSchema.inspecting(json)
        #expect(inspected.encryptedIdentifiers.map(\.field) == ["email", "phone_number"])
        #expect(inspected.encryptedIdentifiers.first?.route == ["app", "schema", "email"])
        #expect(inspected.schema.encryptedFields.map(\.name) == ["ssn"])
    }

    @Test func otherProblemsStillThrow() throws {
        let json = try JSONValue.parse(#"{"schema": {"ssn": {"encryption": {"state": "maybe"}}}}"#)
        #expect(throws: SchemaError.self) { try ProfileSchema.inspecting(json) }
    }
}
