import PropertyBased
import SealKit
import Testing


/// A generated schema and a profile that fits it.
struct SchemaAndProfile: Sendable, CustomTestStringConvertible {
    let schema: ProfileSchema
    let schemaJSON: JSONValue
    let profile: JSONValue
    var testDescription: String { "schema \(schemaJSON.serialized()) profile \(profile.serialized())" }
}

/// Random JSON made with the property checker's seeded generator, so failures reproduce.
struct RandomJSON<RNG: RandomNumberGenerator> {
    var rng: RNG

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }

    mutating func text() -> String {
        let pools: [ClosedRange<UInt32>] = [0...0x1F, 0x20...0x7E, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<int(0...10) {
            let pool = pools[int(0...(pools.count - 1))]
            if let scalar = Unicode.Scalar(UInt32.random(in: pool, using: &rng)) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// A valid JSON number lexeme, including forms a Double would change: big integers, -0, 1e400.
    mutating func number() -> String {
        var lexeme = chance(30) ? "-" : ""
        lexeme += chance(20) ? "0" : String(int(1...9)) + (0..<int(0...25)).map { _ in String(int(0...9)) }.joined()
        if chance(40) { lexeme += "." + (0..<int(1...8)).map { _ in String(int(0...9)) }.joined() }
        if chance(25) { lexeme += ["e", "E"][int(0...1)] + ["", "+", "-"][int(0...2)] + String(int(0...400)) }
        return lexeme
    }

    mutating func value(of type: ProfileSchema.FieldType, depth: Int = 0) -> JSONValue {
        switch type {
        case .string, .image, .document: return .string(text())
        case .any: return anyValue(depth: depth)
        case .null: return .null
        case .number: return .number(number())
        case .boolean: return .bool(chance(50))
        case .array: return .array((0..<int(0...3)).map { _ in anyValue(depth: depth + 1) })
        case .object:
            var members: [(key: String, value: JSONValue)] = []
            for index in 0..<int(0...3) { members.append((key: "k\(index)" + text(), value: anyValue(depth: depth + 1))) }
            return .object(members)
        }
    }

    mutating func anyValue(depth: Int) -> JSONValue {
        if chance(10) { return .null }
        let types: [ProfileSchema.FieldType] = depth < 3 ? [.string, .number, .boolean, .object, .array] : [.string, .number, .boolean]
        return value(of: types[int(0...(types.count - 1))], depth: depth)
    }

    /// Fields named f0, f1, ... with random types and flags, some with no type (strings only),
    /// plus fields missing from the schema; the profile is bare or in Rownd's user-state shape.
    mutating func schemaAndProfile() -> SchemaAndProfile {
        var definitions: [(key: String, value: JSONValue)] = []
        var fields: [(key: String, value: JSONValue)] = []
        for index in 0..<int(0...8) {
            let name = "f\(index)"
            let encrypted = chance(60)
            let type: ProfileSchema.FieldType? = chance(15) ? nil : ProfileSchema.FieldType.allCases[int(0...(ProfileSchema.FieldType.allCases.count - 1))]
            var definition: [(key: String, value: JSONValue)] = [(key: "display_name", value: .string("Field \(index)"))]
            if let type { definition.append((key: "type", value: .string(type.rawValue))) }
            if encrypted || chance(50) {
                definition.append((key: "encryption", value: ["state": encrypted ? "enabled" : "disabled"]))
            }
            definitions.append((key: name, value: .object(definition)))
            if chance(85) {
                fields.append((key: name, value: chance(10) ? .null : value(of: type ?? .string)))
            }
        }
        for index in 0..<int(0...2) { fields.append((key: "extra\(index)", value: anyValue(depth: 0))) }
        // Profile member order need not follow the schema.
        for index in fields.indices.reversed() where index > 0 {
            fields.swapAt(index, int(0...index))
        }
        let schemaJSON: JSONValue
        switch int(0...2) {
        case 0: schemaJSON = .object(definitions)
        case 1: schemaJSON = ["schema": .object(definitions)]
        default: schemaJSON = ["app": ["id": "app_1", "schema": .object(definitions)]]
        }
        let profile: JSONValue = chance(50) ? .object(fields) : ["id": "user_1", "data": .object(fields), "redacted": []]
        return SchemaAndProfile(
            schema: try! ProfileSchema(parsing: schemaJSON), schemaJSON: schemaJSON, profile: profile)
    }
}

/// Lends the checker's seeded generator to code that wants a concrete `RandomNumberGenerator`.
struct SeededSource: RandomNumberGenerator {
    var base: any SeededRandomNumberGenerator
    mutating func next() -> UInt64 { base.next() }
}

let schemasAndProfiles = Generator<SchemaAndProfile, Shrink.None<SchemaAndProfile>>(run: { rng in
    var random = RandomJSON(rng: SeededSource(base: rng))
    defer { rng = random.rng.base }
    return random.schemaAndProfile()
})

@Suite struct PropertyTests {
    @Test func decryptInvertsEncrypt() async {
        await propertyCheck(count: 200, input: schemasAndProfiles) { generated in
            let keys = KeyRing(current: .generate())
            let encryptor = ProfileEncryptor(schema: generated.schema)
            let encrypted = try encryptor.encrypt(generated.profile, with: keys)
            let decrypted = try encryptor.decrypt(encrypted, with: keys)
            #expect(decrypted.profile == generated.profile)
            #expect(decrypted.profile.serialized() == generated.profile.serialized())
            #expect(decrypted.fieldsUnderRetiredKeys.isEmpty)
        }
    }

    @Test func encryptedProfilesHideEveryFlaggedValueAndNothingElse() async {
        await propertyCheck(count: 200, input: schemasAndProfiles) { generated in
            let keys = KeyRing(current: .generate())
            let encryptor = ProfileEncryptor(schema: generated.schema)
            let encrypted = try encryptor.encrypt(generated.profile, with: keys)
            let isUserState = generated.profile["data"] != nil
            let before = (isUserState ? generated.profile["data"] : generated.profile)?.objectValue ?? []
            let after = (isUserState ? encrypted["data"] : encrypted)?.objectValue ?? []
            #expect(before.map(\.key) == after.map(\.key))
            for (original, result) in zip(before, after) {
                let flagged = generated.schema.field(named: original.key)?.isEncrypted == true
                if !flagged || original.value.isNull {
                    #expect(result.value == original.value)
                } else {
                    let ciphertext = try #require(result.value.stringValue)
                    let plaintext = try FieldCipher.decrypt(ciphertext, using: keys.current)
                    // Strings travel as their text, except under `any`, where every value is its JSON text.
                    let isAny = generated.schema.field(named: original.key)?.type == .any
                    let expected = isAny ? original.value.serialized() : (original.value.stringValue ?? original.value.serialized())
                    #expect(plaintext == expected)
                }
            }
            // Encrypting again changes nothing.
            #expect(try encryptor.encrypt(encrypted, with: keys) == encrypted)
        }
    }

    /// Rownd mode: encrypting first changes nothing that decrypting shows (each string is sealed, or
    /// was already a ciphertext and opens either way); non-strings, and `meta`, are never encrypted.
    @Test func rowndDecryptShowsTheSameWhetherOrNotEncryptRanFirst() async {
        await propertyCheck(count: 200, input: schemasAndProfiles) { generated in
            let keys = KeyRing(current: .generate())
            let rownd = RowndProfileEncryptor(schema: generated.schema)
            let encrypted = try rownd.encrypt(generated.profile, with: keys)
            #expect(try rownd.decrypt(encrypted.profile, with: keys).profile == generated.profile)
            let isUserState = generated.profile["data"] != nil
            let after = (isUserState ? encrypted.profile["data"] : encrypted.profile)?.objectValue ?? []
            for (key, value) in after where generated.schema.field(named: key)?.isEncrypted == true {
                let original = (isUserState ? generated.profile["data"] : generated.profile)?[key]
                if case .string? = original {
                    #expect(value != original, "\(key) was left in plaintext")
                } else {
                    #expect(value == original)
                }
            }
            // Notes name exactly the flagged non-string, non-null values.
            let expected = after.filter { key, _ in
                guard generated.schema.field(named: key)?.isEncrypted == true else { return false }
                let original = (isUserState ? generated.profile["data"] : generated.profile)?[key]
                return original?.stringValue == nil && original?.isNull == false
            }.map { isUserState ? "data.\($0.key)" : $0.key }
            #expect(encrypted.notes.map(\.path) == expected)
        }
    }

    @Test func rotationMovesEveryFieldToTheNewKey() async {
        await propertyCheck(count: 100, input: schemasAndProfiles) { generated in
            let old = KeyRing(current: .generate())
            let ring = KeyRing(current: .generate(), retired: [old.current])
            let encryptor = ProfileEncryptor(schema: generated.schema)
            let encrypted = try encryptor.encrypt(generated.profile, with: old)
            let fields = (generated.profile["data"] ?? generated.profile).objectValue ?? []
            let expectedRetired = fields.filter {
                generated.schema.field(named: $0.key)?.isEncrypted == true && !$0.value.isNull
            }.map(\.key)

            let decrypted = try encryptor.decrypt(encrypted, with: ring)
            #expect(decrypted.profile == generated.profile)
            #expect(decrypted.fieldsUnderRetiredKeys == expectedRetired)

            let rotated = try encryptor.rotate(encrypted, with: ring)
            #expect(rotated.rotatedFields == expectedRetired)
            let afterRotation = try encryptor.decrypt(rotated.profile, with: KeyRing(current: ring.current))
            #expect(afterRotation.profile == generated.profile)
            #expect(afterRotation.fieldsUnderRetiredKeys.isEmpty)
        }
    }
}
