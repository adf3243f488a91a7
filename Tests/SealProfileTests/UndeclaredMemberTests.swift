@_spi(CLI) import SealCore
import SealJSON
import Testing

@testable import SealProfile

/// Issue 36, finding 3: a field name misspelt in the schema (or in the profile) must not leave the
/// value in plaintext with no error.
@Suite struct UndeclaredMemberTests {
    static func schema(_ fields: String, settings: String = "") throws -> ProfileSchema {
        try ProfileSchema(parsing: #"{"schema": {"# + fields + "}" + (settings.isEmpty ? "" : ", " + settings) + "}")
    }

    static let salery = try! schema(
        #""salery": {"type": "number", "encryption": {"state": "enabled"}}, "name": {"type": "string"}"#)
    let keys = KeyRing(current: .generate())

    /// Encrypts both ways (the value tree and the text fast path), which must agree.
    func encrypt(_ profile: JSONValue, _ schema: ProfileSchema) -> (tree: ProfileError?, text: ProfileError?) {
        let encryptor = ProfileEncryptor(schema: schema)
        let tree = profileError { _ = try encryptor.encrypt(profile, with: keys) }
        let text = profileError { _ = try encryptor.encrypt(jsonText: Array(profile.serialized().utf8), with: keys) }
        return (tree, text)
    }

    @Test func theNearRuleIsTwoEditsOrEqualButForCaseAndSeparators() {
        for (member, field) in [
            ("salary", "salery"), ("salery", "salary"), ("ssn", "SSN"), ("SSN", "ssn"), ("homeAddress", "home_address"),
            ("Home-Address", "home_address"), ("date_of_birth", "DateOfBirth"), ("ssn", "sssn"), ("creditscore", "credit_score"),
        ] {
            #expect(TextSafety.nearestName(to: member, among: ["zzzzzzzz", field]) == field, "\(member) near \(field)")
            #expect(SealKitError.nearest(to: member, among: [field]) == field, "the CLI's did-you-mean follows the same rule")
        }
        for (member, field) in [("user_id", "ssn"), ("favorite_color", "salary"), ("id", "salary"), ("nickname", "name")] {
            #expect(TextSafety.nearestName(to: member, among: [field]) == nil, "\(member) is not near \(field)")
        }
        // Nearest first: an exact fold beats two edits.
        #expect(TextSafety.nearestName(to: "SSN", among: ["sin", "ssn"]) == "ssn")
    }

    @Test func aMisspeltFieldIsRefusedNamingBothWhicheverSideIsMisspelt() throws {
        let profile: JSONValue = ["name": "Ada", "salary": .number("85000.50"), "user_id": "u1"]
        let (tree, text) = encrypt(profile, Self.salery)
        let expected = ProfileError.undeclaredMembers([UndeclaredMember(name: "salary", nearEncryptedField: "salery")])
        #expect(tree == expected)
        #expect(text == expected)
        #expect(expected.description == "`salary` is not in the schema; did you mean the encrypted field `salery`?")

        // The reverse: the schema is right and the profile is misspelt.
        let salary = try Self.schema(#""salary": {"type": "number", "encryption": {"state": "enabled"}}"#)
        let reversed = encrypt(["salery": .number("85000.50")], salary)
        #expect(reversed.tree == .undeclaredMembers([UndeclaredMember(name: "salery", nearEncryptedField: "salary")]))
        #expect(reversed.text == reversed.tree)

        // Case and separators, in Rownd's user-state shape (the fields are data's members).
        let cased = try Self.schema(
            #""SSN": {"type": "string", "encryption": {"state": "enabled"}}, "home_address": {"type": "object", "encryption": {"state": "enabled"}}"#)
        let userState: JSONValue = ["id": "u1", "data": ["ssn": "078-05-1120", "homeAddress": ["city": "London"]]]
        let both = encrypt(userState, cased)
        #expect(both.tree == .undeclaredMembers([
            UndeclaredMember(name: "ssn", nearEncryptedField: "SSN"),
            UndeclaredMember(name: "homeAddress", nearEncryptedField: "home_address"),
        ]))
        #expect(both.text == both.tree)
    }

    @Test func otherUndeclaredMembersPassAndADeclaredNearNamePasses() throws {
        let encryptor = ProfileEncryptor(schema: Self.salery)
        let profile: JSONValue = ["user_id": "u1", "salery": .number("1.5"), "favorite_color": "green"]
        let sealed = try encryptor.encrypt(profile, with: keys)
        #expect(sealed["user_id"] == "u1" && sealed["favorite_color"] == "green")
        #expect(try encryptor.encrypt(jsonText: Array(profile.serialized().utf8), with: keys).count > 0)
        // A name near by chance passes once the schema declares it, in plaintext.
        let declared = try Self.schema(
            #""salery": {"type": "number", "encryption": {"state": "enabled"}}, "salary": {"type": "number"}"#)
        let both = try ProfileEncryptor(schema: declared).encrypt(["salary": 1, "salery": 2], with: keys)
        #expect(both["salary"] == 1)
    }

    @Test func rotateRefusesAndDecryptReads() throws {
        let encryptor = ProfileEncryptor(schema: Self.salery)
        let old = KeyRing(current: .generate())
        let stored = try encryptor.encrypt(["salery": 1], with: old)
        var members = stored.objectValue!
        members.append((key: "salary", value: .number("85000.50")))
        let profile = JSONValue.object(members)
        let ring = KeyRing(current: keys.current, retired: [old.current])
        #expect(profileError { _ = try encryptor.rotate(profile, with: ring) }
            == .undeclaredMembers([UndeclaredMember(name: "salary", nearEncryptedField: "salery")]))
        // Reading changes nothing that leaves: decrypt does not look.
        #expect(try encryptor.decrypt(profile, with: ring).profile["salary"] == .number("85000.50"))
    }

    @Test func theSchemaSettingMakesEveryUndeclaredMemberAnError() throws {
        let fields = #""ssn": {"type": "string", "encryption": {"state": "enabled"}}, "name": {"type": "string"}"#
        let complete = try Self.schema(fields, settings: #""sealkit": {"undeclared": "error"}"#)
        #expect(complete.undeclaredMembers == .refused)
        let (tree, text) = encrypt(["name": "Ada", "ssn": "1", "user_id": "u1"], complete)
        #expect(tree == .undeclaredMembers([UndeclaredMember(name: "user_id", nearEncryptedField: nil)]))
        #expect(text == tree)
        #expect(try ProfileEncryptor(schema: complete).encrypt(["name": "Ada", "ssn": "1"], with: keys)["name"] == "Ada")
        // The profile seal SealKit itself writes (issue 38's `sealkit_seal`) need not be declared.
        #expect(complete.undeclaredMember(named: "sealkit_seal") == nil)

        // In `app`, beside its schema; "near" is the default; set from code.
        let inApp = try ProfileSchema(parsing: #"{"app": {"schema": {"# + fields + #"}, "sealkit": {"undeclared": "error"}}}"#)
        #expect(inApp.undeclaredMembers == .refused)
        #expect(try Self.schema(fields, settings: #""sealkit": {"undeclared": "near"}"#).undeclaredMembers == .refusedNearEncrypted)
        var set = try Self.schema(fields)
        #expect(set.undeclaredMembers == .refusedNearEncrypted)
        set.undeclaredMembers = .refused
        #expect(set == complete)

        // A setting that would be ignored is refused: misspelt, unknown value, or in a bare schema.
        #expect(schemaError(#"{"schema": {"# + fields + #"}, "sealkit": {"undeclard": "error"}}"#) != nil)
        #expect(schemaError(#"{"schema": {"# + fields + #"}, "sealkit": {"undeclared": "errors"}}"#) != nil)
        #expect(schemaError(#"{"schema": {"# + fields + #"}, "sealkit": "error"}"#) != nil)
        #expect(schemaError(#"{"# + fields + #", "sealkit": {"undeclared": "error"}}"#) != nil)
    }

    @Test func rowndModePassesNearMissesWithANoteNamingTheMember() throws {
        let rownd = RowndProfileEncryptor(schema: Self.salery)
        let result = try rownd.encrypt(["data": ["salary": "85000.50", "user_id": "u1"]], with: keys)
        #expect(result.profile["data"]?["salary"] == "85000.50", "as Rownd's SDK would have sent it")
        #expect(result.notes.map(\.description) == [
            "data.salary left in plaintext: `salary` is not in the schema; did you mean the encrypted field `salery`? "
                + "(Rownd's SDKs send it as it is)"
        ])
        #expect(try rownd.rotate(["salary": "1"], with: keys).notes.map(\.path) == ["salary"])
        #expect(try rownd.decrypt(["salary": "1"], with: keys).notes.isEmpty)
    }

    @Test func namesAreQuotedSafely() {
        let member = UndeclaredMember(name: "sa\u{1B}[2Jlary", nearEncryptedField: "salary")
        #expect(!member.description.contains("\u{1B}"))
    }
}
