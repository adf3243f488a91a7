@_spi(CLI) import SealKit
import Testing


/// A field name misspelt in the schema (or in the profile) must not leave the
/// value in plaintext with no error.
@Suite struct UndeclaredMemberTests {
    static func schema(_ fields: String, settings: String = "") throws -> ProfileSchema {
        try ProfileSchema(parsing: #"{"schema": {"# + fields + "}" + (settings.isEmpty ? "" : ", " + settings) + "}")
    }

    /// The refusal when the schema flags `salery` and the profile holds `salary`: the facts, then both remedies,
    /// as either name may be the misspelt one.
    static let salaryNearSalery = "`salary` is not in the schema, and its name is near the encrypted field `salery`: "
        + "declare `salary` in the schema if it is another field, or correct whichever of the two names is misspelt, "
        + "in the schema or in the profile"

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
            #expect(TextSafety.nearMiss(of: member, among: ["zzzzzzzz", field]) == field, "\(member) is refused beside \(field)")
        }
        for (member, field) in [("user_id", "ssn"), ("favorite_color", "salary"), ("id", "salary"), ("nickname", "name")] {
            #expect(TextSafety.nearestName(to: member, among: [field]) == nil, "\(member) is not near \(field)")
            #expect(TextSafety.nearMiss(of: member, among: [field]) == nil, "\(member) passes beside \(field)")
        }
        // Nearest first: an exact fold beats two edits.
        #expect(TextSafety.nearestName(to: "SSN", among: ["sin", "ssn"]) == "ssn")
        #expect(TextSafety.nearMiss(of: "salary", among: ["salery", "Salary"]) == "Salary")
    }

    /// Two edits on a three-letter name make another name. Short names are near only
    /// once folded (case, separators, width) or by one swap of neighbours; the edits allowed grow with the length.
    @Test func theNearRuleGrowsWithTheNamesLength() throws {
        for (member, field) in [
            ("sex", "ssn"), ("job", "dob"), ("sin", "ssn"), ("age", "ago"), ("pin", "tin"), ("zip", "dob"), ("id", "ip"),
            ("ssn", "sn"), ("name", "nickname"), ("city", "county"), ("email", "mail_id"),
        ] {
            #expect(!TextSafety.isNearMiss(member, field), "\(member) beside \(field) is another field")
        }
        for (member, field) in [
            ("ssn", "SSN"), ("ｓｓｎ", "ssn"), ("ＳＳＮ", "ssn"), ("ssn", "sns"), ("dob", "dbo"), ("ssn", "sssn"),
            ("salary", "salery"), ("email", "emial"), ("emai", "email"), ("home_address", "homeAdress"),
            ("date_of_birth", "date_of_brith"), ("credit_score", "creditscroe"), ("social_security", "socal_secuirty"),
            ("ｄａｔｅ＿ｏｆ＿ｂｉｒｔｈ", "DateOfBirth"), ("ｻﾗﾘｰ", "サラリー"), ("ｶﾞｽ", "ガス"),
        ] {
            #expect(TextSafety.isNearMiss(member, field), "\(member) beside \(field) is a misspelling")
            #expect(TextSafety.isNearMiss(field, member), "whichever side is misspelt")
        }
        // Through the encryptor: `sex` and `job` pass beside flagged `ssn` and `dob`; `ｓｓｎ` and `dbo` are refused.
        let schema = try Self.schema(
            #""ssn": {"type": "string", "encryption": {"state": "enabled"}}, "dob": {"type": "string", "encryption": {"state": "enabled"}}"#)
        let sealed = try ProfileEncryptor(schema: schema).encrypt(["ssn": "1", "dob": "2", "sex": "f", "job": "pilot"], with: keys)
        #expect(sealed["sex"] == "f" && sealed["job"] == "pilot")
        let (tree, text) = encrypt(["ｓｓｎ": "078-05-1120", "dbo": "1990-01-01", "sex": "f"], schema)
        #expect(tree == .undeclaredMembers([
            UndeclaredMember(name: "ｓｓｎ", nearEncryptedField: "ssn"), UndeclaredMember(name: "dbo", nearEncryptedField: "dob"),
        ]))
        #expect(text == tree)
    }

    /// The refusal gives both ways out, and never asks for a correct profile field to be
    /// renamed to the schema's typo.
    @Test func theRefusalSaysToDeclareTheFieldOrCorrectTheMisspeltName() {
        let member = UndeclaredMember(name: "salary", nearEncryptedField: "salery")
        #expect(member.description.contains("declare `salary` in the schema if it is another field"))
        #expect(member.description.contains("correct whichever of the two names is misspelt, in the schema or in the profile"))
        #expect(!member.description.contains("did you mean"), "the schema's `salery` may be the typo")
        #expect(UndeclaredMember.nearFact(member: "salary", field: "salery")
            == "`salary` is not in the schema, and its name is near the encrypted field `salery`")
    }

    @Test func aMisspeltFieldIsRefusedNamingBothWhicheverSideIsMisspelt() throws {
        let profile: JSONValue = ["name": "Ada", "salary": .number("85000.50"), "user_id": "u1"]
        let (tree, text) = encrypt(profile, Self.salery)
        let expected = ProfileError.undeclaredMembers([UndeclaredMember(name: "salary", nearEncryptedField: "salery")])
        #expect(tree == expected)
        #expect(text == expected)
        #expect(expected.description == Self.salaryNearSalery)

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
        // The profile seal SealKit itself writes (`sealkit_seal`) need not be declared.
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
            "data.salary left in plaintext: " + Self.salaryNearSalery + " (Rownd's SDKs send it as it is)"
        ])
        #expect(try rownd.rotate(["salary": "1"], with: keys).notes.map(\.path) == ["salary"])
        #expect(try rownd.decrypt(["salary": "1"], with: keys).notes.isEmpty)
    }

    @Test func namesAreQuotedSafely() {
        let member = UndeclaredMember(name: "sa\u{1B}[2Jlary", nearEncryptedField: "salary")
        #expect(!member.description.contains("\u{1B}"))
    }
}
