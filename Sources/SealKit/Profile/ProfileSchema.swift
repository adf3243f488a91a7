
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which fields of a user profile are encrypted, and what type each holds.
///
/// Read from Rownd's app-config shape: a map from field name to
/// `{"display_name", "type", "required", "owned_by", "encryption": {"state": "enabled" | "disabled"}}`,
/// given bare, under `"schema"`, or under `"app": {"schema": ...}`. Unknown keys are ignored.
///
/// A bare schema cannot have fields named `schema` or `app`, since those keys select the
/// wrapped shapes; wrap such a schema under `"schema"`.
public struct ProfileSchema: Sendable, Equatable {
    /// One field's definition.
    package struct Field: Sendable, Equatable {
        /// The field's key in the profile.
        package let name: String
        /// The name people see, when the schema gives one.
        package let displayName: String?
        /// The JSON type of the value; decryption restores encrypted values to it.
        /// Nil when the schema gives none (or, for a field that is not encrypted, one SealKit does not know).
        package let type: FieldType?
        /// Whether the field is required.
        package let isRequired: Bool
        /// Who owns the field's data, such as `"user"`, when the schema says.
        package let ownedBy: String?
        /// Whether the field's encryption state is `enabled`.
        package let isEncrypted: Bool
        /// The ciphertext format new values of the field are written in: v1 unless the schema says
        /// `"encryption": {"state": "enabled", "sealkit": {"format": 2}}`. Rownd's SDKs ignore the
        /// `sealkit` member, so every device of the app reads the same schema the same way.
        package let format: CiphertextFormat

        /// Describes a field.
        package init(
            name: String, type: FieldType?, isEncrypted: Bool, format: CiphertextFormat = .v1,
            displayName: String? = nil, isRequired: Bool = false, ownedBy: String? = nil
        ) {
            self.name = name
            self.type = type
            self.isEncrypted = isEncrypted
            self.format = format
            self.displayName = displayName
            self.isRequired = isRequired
            self.ownedBy = ownedBy
        }
    }

    /// The types a field can declare: Rownd's (string, number, boolean, object, image, document,
    /// any, null, from its app-config API) and SealKit's own `array`.
    ///
    /// For encrypted fields in strict mode: `image` and `document` values are strings (a URL or
    /// file reference) and encrypt as strings; `any` values of every JSON type encrypt as their
    /// compact JSON text and come back as the same JSON value; a `null` field holds only null,
    /// which stays null. This enum also names the kinds of JSON values (`string` to `array`).
    package enum FieldType: String, Sendable, CaseIterable {
        /// A JSON string.
        case string
        /// A JSON number.
        case number
        /// `true` or `false`.
        case boolean
        /// A JSON object.
        case object
        /// An image, as Rownd's schemas name it: a string (a URL or data).
        case image
        /// A document, as Rownd's schemas name it: a string.
        case document
        /// Any JSON value.
        case any
        /// Only `null`: admits no value to encrypt.
        case null
        /// A JSON array.
        case array

        /// Whether this type allows a value of JSON kind `kind` (one of string, number, boolean, object, array).
        package func admits(_ kind: FieldType) -> Bool {
            switch self {
            case .any: return true
            case .image, .document: return kind == .string
            case .null: return false
            default: return self == kind
            }
        }

        /// Whether values are encrypted as their text (strings), rather than as their JSON text.
        var encryptsStringText: Bool {
            switch self {
            case .string, .image, .document: return true
            default: return false
            }
        }
    }

    /// Which profile members that the schema does not declare are refused when a profile is encrypted
    /// or rotated in strict mode. Set in the schema file with a `"sealkit"` member beside `"schema"`:
    /// `{"schema": {...}, "sealkit": {"undeclared": "error"}}` (Rownd's SDKs skip it).
    public enum UndeclaredMembers: String, Sendable, Equatable, CaseIterable {
        /// Refuse a member whose name is near an encrypted field's: equal but for case, separators and
        /// width (`SSN`, `ｓｓｎ` and `ssn`, `home_address` and `homeAddress`), or a few edits apart, as many as
        /// the names' length allows (`salary` and `salery`; a three-letter name only by a swap, so `sex` and
        /// `job` pass beside `ssn` and `dob`), as a misspelling on either side would leave the value in
        /// plaintext. Declaring the member in the schema lets it pass. Pass every other
        /// undeclared member, as profiles carry members an app schema does not list (`user_id`). The default;
        /// `"undeclared": "near"` in the schema file.
        case refusedNearEncrypted = "near"
        /// Refuse every member the schema does not declare, for apps whose schemas are complete;
        /// `"undeclared": "error"` in the schema file.
        case refused = "error"
    }

    /// Which undeclared profile members encrypting and rotating refuse (in strict mode; Rownd's mode
    /// notes them instead). Read from the schema file's `"sealkit": {"undeclared": ...}`; set it to
    /// `.refused` when the schema declares every field the app's profiles hold.
    public var undeclaredMembers: UndeclaredMembers = .refusedNearEncrypted

    /// Fields Rownd uses to look users up, which therefore can never be encrypted.
    package static let identifyingFields = ["email", "phone_number"]

    /// Every field, in schema order.
    package private(set) var fields: [Field]
    /// Whether profiles carry a seal: the schema says `"sealkit": {"seal": true}` beside
    /// `schema`. Then `encrypt` and `rotate` write one and `decrypt` requires it. See ProfileSealing.swift.
    package private(set) var requiresSeal = false
    private let indexByName: [String: Int]
    /// The encrypted fields' names as UTF-8, for paths that match keys as bytes; nil when a name is
    /// not ASCII, since only for ASCII is byte equality the same as `field(named:)`'s.
    let encryptedNames: EncryptedNames?
    /// Whether the schema has no field called `data`, so that a profile's `data` object can hold its
    /// fields (Rownd's user state).
    let fieldsMayBeInData: Bool

    /// Where a profile's fields are, in Rownd's user-state shape: the index of its `data` member when
    /// that is an object and the schema defines no field called `data`; nil when the profile's own
    /// members are its fields. The one rule every profile operation follows.
    package func dataIndex(in members: [(key: String, value: JSONValue)]) -> Int? {
        guard fieldsMayBeInData, let index = members.firstIndex(where: { $0.key == "data" }),
            members[index].value.objectValue != nil
        else { return nil }
        return index
    }

    /// The top-level members named like encrypted fields of a profile whose fields are in its
    /// `data` object (`dataIndex`): in Rownd's user-state shape nothing reads or encrypts them, so
    /// a profile holding both is ambiguous, and a member added beside `data` would otherwise turn
    /// every flagged field's encryption off without a word.
    package func encryptedFieldsBesideData(in members: [(key: String, value: JSONValue)]) -> [String] {
        guard dataIndex(in: members) != nil else { return [] }
        return members.compactMap { field(named: $0.key)?.isEncrypted == true ? $0.key : nil }
    }

    /// Encrypted field names packed for matching against bytes.
    struct EncryptedNames: Sendable, Equatable {
        /// Every name's UTF-8, one after another.
        let bytes: [UInt8]
        /// Per name: where it sits in `bytes`, and the field's index in `fields`.
        let entries: [Entry]

        struct Entry: Sendable, Equatable {
            let range: Range<Int>
            let field: Int
        }

        init(_ fields: [Field]) {
            var bytes: [UInt8] = []
            var entries: [Entry] = []
            for (index, field) in fields.enumerated() where field.isEncrypted {
                let start = bytes.count
                bytes.append(contentsOf: field.name.utf8)
                entries.append(Entry(range: start..<bytes.count, field: index))
            }
            self.bytes = bytes
            self.entries = entries
        }

        /// The index in `fields` of the encrypted field called `name`, if any.
        func field(named name: UnsafeBufferPointer<UInt8>) -> Int? {
            bytes.withUnsafeBufferPointer { bytes in
                for entry in entries where entry.range.count == name.count {
                    if name.isEmpty || memcmp(bytes.baseAddress! + entry.range.lowerBound, name.baseAddress!, name.count) == 0 {
                        return entry.field
                    }
                }
                return nil
            }
        }
    }

    /// The fields whose encryption state is `enabled`, in schema order.
    package var encryptedFields: [Field] { fields.filter(\.isEncrypted) }

    /// The encrypted fields' names, in schema order, for the near-name rule.
    private let encryptedNameList: [String]

    /// Members SealKit itself writes into a profile, which a schema need not declare: the profile seal
    /// `sealkit_seal`.
    static let membersSealKitWrites: Set<String> = ["sealkit_seal"]

    /// Whether a profile field called `name` counts as declared: the schema defines it, encrypted or not,
    /// or SealKit itself writes it (`membersSealKitWrites`).
    package func declares(_ name: String) -> Bool { indexByName[name] != nil || Self.membersSealKitWrites.contains(name) }

    /// The problem with a profile member called `name` (one of a profile's fields): nil when the schema
    /// declares it, or when it is far from every encrypted field's name and `undeclaredMembers` lets such
    /// members pass. The one rule every profile operation and the audit follow.
    package func undeclaredMember(named name: String) -> UndeclaredMember? {
        guard !declares(name) else { return nil }
        let near = TextSafety.nearMiss(of: name, among: encryptedNameList)
        if near == nil && undeclaredMembers == .refusedNearEncrypted { return nil }
        return UndeclaredMember(name: name, nearEncryptedField: near)
    }

    /// Every member of a profile's fields (`members`) that `undeclaredMember(named:)` has a problem with, in order.
    package func undeclared(in members: [(key: String, value: JSONValue)]) -> [UndeclaredMember] {
        members.compactMap { undeclaredMember(named: $0.key) }
    }

    /// The schema with every encrypted field written in `format`, whatever its definition says: the
    /// command's `--format`, which overrides the schema file for one run. A field written as v2 opens
    /// only v2 values, as one the schema makes v2 does. Apps give the format in the schema itself, which
    /// every device reads the same way.
    /// - Parameter format: the format of every encrypted field's new ciphertexts.
    /// - Returns: the schema, its fields and settings otherwise unchanged.
    @_spi(CLI) public func writing(_ format: CiphertextFormat) -> ProfileSchema {
        var schema = self
        schema.fields = fields.map { field in
            guard field.isEncrypted else { return field }
            return Field(
                name: field.name, type: field.type, isEncrypted: true, format: format,
                displayName: field.displayName, isRequired: field.isRequired, ownedBy: field.ownedBy)
        }
        return schema
    }

    /// The definition of the field called `name`, if the schema has one.
    package func field(named name: String) -> Field? {
        indexByName[name].map { fields[$0] }
    }

    /// Makes a schema from field definitions.
    /// - Parameter fields: the fields, in order.
    /// - Throws: `SchemaError.duplicateField` when a name repeats;
    ///   `SchemaError.identifyingFieldEncrypted` when `email` or `phone_number` is encrypted.
    package init(fields: [Field]) throws(SchemaError) {
        var indexByName: [String: Int] = [:]
        for (index, field) in fields.enumerated() {
            guard indexByName.updateValue(index, forKey: field.name) == nil else {
                throw .duplicateField(field.name)
            }
            if field.isEncrypted, Self.identifyingFields.contains(field.name) {
                throw .identifyingFieldEncrypted(field: field.name, path: field.name)
            }
        }
        self.fields = fields
        self.indexByName = indexByName
        encryptedNameList = fields.filter(\.isEncrypted).map(\.name)
        encryptedNames =
            fields.allSatisfy { !$0.isEncrypted || $0.name.utf8.allSatisfy { $0 < 0x80 } } ? EncryptedNames(fields) : nil
        fieldsMayBeInData = indexByName["data"] == nil
    }

    /// Reads a schema from parsed JSON.
    /// - Parameter json: the schema, bare, under `"schema"`, or under `"app": {"schema": ...}`.
    /// - Throws: `SchemaError` naming the JSON path of the first malformed place.
    package init(parsing json: JSONValue) throws(SchemaError) {
        let (fields, route, undeclared) = try Self.parseFields(json)
        // Parsed JSON has no duplicate keys, so only the identifying-field rule can fail here;
        // report it with the path as written.
        if let flagged = fields.first(where: { $0.isEncrypted && Self.identifyingFields.contains($0.name) }) {
            throw .identifyingFieldEncrypted(field: flagged.name, path: SchemaPath.join(route.joined(separator: "."), flagged.name))
        }
        try self.init(fields: fields)
        undeclaredMembers = undeclared
        requiresSeal = try Self.sealSetting(in: json, fields: fields, route: route)
    }

    /// Reads a schema to inspect it rather than use it: where `init(parsing:)` refuses a
    /// schema that flags `email` or `phone_number`, this reads it with those fields left
    /// unencrypted and says where each one is, so a linter can report every problem at once.
    /// - Parameter json: the schema, bare, under `"schema"`, or under `"app": {"schema": ...}`.
    /// - Returns: the schema, and each encrypted identifying field with the keys leading from
    ///   the root to the object that defines it (for a JSON pointer).
    /// - Throws: `SchemaError` for every other problem, as `init(parsing:)` does.
    package static func inspecting(
        _ json: JSONValue
    ) throws(SchemaError) -> (schema: ProfileSchema, encryptedIdentifiers: [(field: String, route: [String])]) {
        let (fields, route, undeclared) = try parseFields(json)
        var flagged: [(field: String, route: [String])] = []
        let usable = fields.map { field in
            guard field.isEncrypted, identifyingFields.contains(field.name) else { return field }
            flagged.append((field.name, route + [field.name]))
            return Field(
                name: field.name, type: field.type, isEncrypted: false,
                displayName: field.displayName, isRequired: field.isRequired, ownedBy: field.ownedBy)
        }
        var schema = try ProfileSchema(fields: usable)
        schema.undeclaredMembers = undeclared
        schema.requiresSeal = try sealSetting(in: json, fields: usable, route: route)
        return (schema, flagged)
    }

    private static func parseFields(
        _ json: JSONValue
    ) throws(SchemaError) -> (fields: [Field], route: [String], undeclared: UndeclaredMembers) {
        try SchemaLint.checkSpelling(json)
        let (definitions, route) = try locateFields(in: json)
        let undeclared = try parseSettings(json, route: route)
        let base = route.joined(separator: ".")
        var fields: [Field] = []
        fields.reserveCapacity(definitions.count)
        for (name, definition) in definitions {
            fields.append(try parseField(name: name, definition: definition, path: SchemaPath.join(base, name)))
        }
        return (fields, route, undeclared)
    }

    /// Where SealKit's own schema settings are: the `"sealkit"` object beside `"schema"` (at the top
    /// of `{"schema": ...}`, in `app` of `{"app": {"schema": ...}}`), with its path; nil when absent.
    /// A bare schema has no place for settings: its top-level members are fields.
    package static func settings(in json: JSONValue, route: [String]) -> (value: JSONValue, path: String)? {
        switch route {
        case ["schema"]: return json["sealkit"].map { ($0, "sealkit") }
        case ["app", "schema"]: return json["app"]?["sealkit"].map { ($0, "app.sealkit") }
        default: return nil
        }
    }

    /// Whether a key is most likely `sealkit` misspelt: within two edits as written, or once folded (case,
    /// separators, full-width forms: `SealKit`, `ｓｅａｌｋｉｔ`).
    private static func isNearSealKit(_ key: String) -> Bool {
        key != "sealkit" && TextSafety.nameDistance(key, "sealkit", limit: 2) <= 2
    }

    /// Reads `"sealkit": {"undeclared": "near" | "error"}`. Refuses a setting that would otherwise be
    /// ignored without a word: a misspelt key, an unknown value, or settings in a bare schema (read
    /// there as a field called `sealkit`).
    private static func parseSettings(_ json: JSONValue, route: [String]) throws(SchemaError) -> UndeclaredMembers {
        let values = UndeclaredMembers.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        if route.isEmpty {
            if let field = json["sealkit"], field["undeclared"] != nil || field["seal"] != nil {
                throw .malformed(
                    path: "sealkit", expected: #"a field definition (SealKit's settings go beside "schema": "#
                        + #"{"schema": {...}, "sealkit": {"undeclared": "error"}})"#,
                    found: "settings in a bare schema")
            }
            return .refusedNearEncrypted
        }
        // A misspelt "sealkit" beside "schema" would leave its settings (a seal the schema asks for) unread, and so
        // would settings beside "app" rather than in it, where Rownd's app config keeps the schema.
        let holder = route.count == 2 ? json["app"] : json
        if case .object(let siblings)? = holder {
            for (key, _) in siblings where key != "sealkit" && isNearSealKit(key) {
                throw .malformed(
                    path: SchemaPath.join(route.dropLast().joined(separator: "."), key),
                    expected: #"the key "sealkit" (a misspelling?)"#, found: JSONValue.string(key).briefDescription)
            }
        }
        if route.count == 2, case .object(let top) = json {
            for (key, _) in top where key == "sealkit" || isNearSealKit(key) {
                throw .malformed(
                    path: key, expected: #"SealKit's settings in "app", beside its "schema": {"app": {"schema": {...}, "sealkit": {"seal": true}}}"#,
                    found: "settings beside \"app\"")
            }
        }
        guard let (settings, path) = settings(in: json, route: route) else { return .refusedNearEncrypted }
        guard case .object(let members) = settings else {
            throw .malformed(path: path, expected: #"an object such as {"undeclared": "error"}"#, found: settings.kindName)
        }
        // Every setting is one SealKit acts on (a seal turned off by a typo would go unnoticed): an unknown
        // key is refused, not skipped.
        let known = ["undeclared", "seal"]
        for (key, _) in members where !known.contains(key) {
            let near = known.first { SchemaLint.isNear(key, $0) }
            throw .malformed(
                path: SchemaPath.join(path, key),
                expected: near.map { "the key \"\($0)\" (a misspelling?)" } ?? #"the keys "undeclared" and "seal" only"#,
                found: JSONValue.string(key).briefDescription)
        }
        switch settings["undeclared"] {
        case nil, .null?: return .refusedNearEncrypted
        case .string(let text)? where UndeclaredMembers(rawValue: text) != nil: return UndeclaredMembers(rawValue: text)!
        case let other?: throw .malformed(path: SchemaPath.join(path, "undeclared"), expected: values, found: other.briefDescription)
        }
    }

    /// Reads a schema from JSON text.
    /// - Throws: `SchemaError.invalidJSON`, or `SchemaError` naming the malformed place.
    package init(parsing text: String) throws(SchemaError) {
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch { throw .invalidJSON(error) }
        try self.init(parsing: json)
    }

    /// Reads a schema from UTF-8 JSON bytes.
    /// - Throws: `SchemaError.invalidJSON`, or `SchemaError` naming the malformed place.
    package init(parsing bytes: some Collection<UInt8>) throws(SchemaError) {
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch { throw .invalidJSON(error) }
        try self.init(parsing: json)
    }

    /// Finds the map of fields and the keys leading to it.
    private static func locateFields(
        in json: JSONValue
    ) throws(SchemaError) -> (fields: [(key: String, value: JSONValue)], route: [String]) {
        guard case .object(let root) = json else {
            throw .malformed(path: "", expected: "an object of fields", found: json.kindName)
        }
        if let app = json["app"] {
            guard let schema = app["schema"] else {
                let found = app.objectValue == nil ? app.kindName : #"an object without "schema""#
                throw .malformed(path: "app", expected: #"an object holding "schema""#, found: found)
            }
            guard case .object(let fields) = schema else {
                throw .malformed(path: "app.schema", expected: "an object of fields", found: schema.kindName)
            }
            return (fields, ["app", "schema"])
        }
        if let schema = json["schema"] {
            guard case .object(let fields) = schema else {
                throw .malformed(path: "schema", expected: "an object of fields", found: schema.kindName)
            }
            return (fields, ["schema"])
        }
        return (root, [])
    }

    private static func parseField(name: String, definition: JSONValue, path: String) throws(SchemaError) -> Field {
        guard case .object = definition else {
            throw .malformed(path: path, expected: "an object describing the field", found: definition.kindName)
        }
        let displayName = try optionalString(definition["display_name"], at: SchemaPath.join(path, "display_name"))
        let ownedBy = try optionalString(definition["owned_by"], at: SchemaPath.join(path, "owned_by"))
        let typeName = try optionalString(definition["type"], at: SchemaPath.join(path, "type"))

        var isRequired = false
        switch definition["required"] {
        case nil, .null?: break
        case .bool(let flag)?: isRequired = flag
        case let other?:
            throw .malformed(path: SchemaPath.join(path, "required"), expected: "true or false", found: other.kindName)
        }

        var isEncrypted = false
        var format = CiphertextFormat.v1
        let encryptionPath = SchemaPath.join(path, "encryption")
        switch definition["encryption"] {
        case nil, .null?: break
        case let encryption? where encryption.objectValue != nil:
            let statePath = SchemaPath.join(encryptionPath, "state")
            switch encryption["state"] {
            case nil, .null?: break
            case .string("enabled")?: isEncrypted = true
            case .string("disabled")?: break
            case let other?:
                throw .malformed(path: statePath, expected: #""enabled" or "disabled""#, found: other.briefDescription)
            }
            // SealKit's own settings live in a member of their own, which Rownd's SDKs skip.
            let formatPath = SchemaPath.join(SchemaPath.join(encryptionPath, "sealkit"), "format")
            switch encryption["sealkit"] {
            case nil, .null?: break
            case let sealkit? where sealkit.objectValue != nil:
                switch sealkit["format"] {
                case nil, .null?: break
                case .number("1")?: format = .v1
                case .number("2")?: format = .v2
                case let other?: throw .malformed(path: formatPath, expected: "1 or 2", found: other.briefDescription)
                }
            case let other?:
                throw .malformed(
                    path: SchemaPath.join(encryptionPath, "sealkit"), expected: #"an object such as {"format": 2}"#,
                    found: other.kindName)
            }
        case let other?:
            throw .malformed(path: encryptionPath, expected: #"an object such as {"state": "enabled"}"#, found: other.kindName)
        }

        // An unknown type matters only where decryption must restore it; Rownd's own types and
        // SealKit's `array` are all known.
        let type = typeName.flatMap(FieldType.init(rawValue:))
        if isEncrypted, let typeName, type == nil {
            throw .malformed(
                path: SchemaPath.join(path, "type"),
                expected: FieldType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                    + " for an encrypted field",
                found: JSONValue.string(typeName).briefDescription)
        }
        return Field(
            name: name, type: type, isEncrypted: isEncrypted, format: format,
            displayName: displayName, isRequired: isRequired, ownedBy: ownedBy)
    }

    private static func optionalString(_ value: JSONValue?, at path: String) throws(SchemaError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?: throw .malformed(path: path, expected: "a string", found: other.kindName)
        }
    }
}

/// JSON paths for error messages: `schema.ssn.encryption.state`, or `schema["a b"]` for keys
/// that are not plain identifiers.
enum SchemaPath {
    static func join(_ base: String, _ key: String) -> String {
        let plain = !key.isEmpty && key.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-")
        }
        if plain { return base.isEmpty ? key : base + "." + key }
        return base + "[" + JSONValue.string(key).serialized() + "]"
    }
}

extension JSONValue {
    /// A short quote of a schema value (schemas hold no secrets), or its kind.
    var briefDescription: String {
        guard case .string(let text) = self else { return kindName }
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return JSONValue.string(shown).serialized()
    }
}

extension ProfileSchema {
    /// The member a sealed profile keeps its seal in, at its top level (beside `data` in Rownd's
    /// user-state shape); the schema need not declare it.
    package static let sealMember = "sealkit_seal"

    /// Reads `"sealkit": {"seal": true}` beside `schema` (at the top level, or in `app` beside
    /// `app.schema`). A bare schema has no place for it: there `sealkit` would be a field.
    static func sealSetting(in json: JSONValue, fields: [Field], route: [String]) throws(SchemaError) -> Bool {
        guard route.last == "schema" else { return false }
        let holder = route.count == 2 ? json["app"] : json
        let base = route.count == 2 ? "app.sealkit" : "sealkit"
        let asks: Bool
        switch holder?["sealkit"] {
        case nil, .null?: return false
        case let sealkit? where sealkit.objectValue != nil:
            switch sealkit["seal"] {
            case nil, .null?: asks = false
            case .bool(let flag)?: asks = flag
            case let other?: throw .malformed(path: base + ".seal", expected: "true or false", found: other.briefDescription)
            }
        case let other?:
            throw .malformed(path: base, expected: #"an object such as {"seal": true}"#, found: other.kindName)
        }
        if asks, fields.contains(where: { $0.name == sealMember }) {
            throw .malformed(
                path: SchemaPath.join(route.joined(separator: "."), sealMember),
                expected: "no field of this name: a sealed profile keeps its seal there", found: "a field")
        }
        return asks
    }
}
