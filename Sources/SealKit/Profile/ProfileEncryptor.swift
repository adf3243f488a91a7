
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Encrypts, decrypts and rotates the fields of user profiles that a schema marks encrypted.
///
/// A profile is a JSON object of fields, or Rownd's user-state shape
/// `{"id": ..., "data": {...}, "redacted": [...]}`, where only `data` holds fields and everything
/// else passes through unchanged. (A profile counts as user-state when it has a `data` object and
/// the schema defines no field called `data`.) Fields that are not encrypted, and fields the schema
/// does not know, pass through unchanged; member order is kept. Encrypting and rotating refuse a field
/// the schema does not know whose name is near an encrypted field's (`salary` beside a flagged
/// `salery`: one of the two is misspelt, and the value would leave in plaintext), or, when the schema's
/// `undeclaredMembers` says so, any field it does not know.
///
/// Values:
/// - A string encrypts exactly as `FieldCipher.encrypt(value, using: keys.current)` does, so
///   Rownd's SDKs decrypt it.
/// - A number, boolean, object or array encrypts as its compact JSON text (Rownd would leave it in
///   plaintext), and decryption restores it by the field's schema `type`; numbers keep their exact text.
/// - In a field of type `any`, every value (strings too) encrypts as its compact JSON text and
///   decrypts to the same JSON value; `image` and `document` values are strings.
/// - `null` stays `null`: there is nothing to protect.
///
/// This is SealKit's strict, typed mode. `RowndProfileEncryptor` does what Rownd's SDKs did
/// instead (only strings, and failures left in place), for profiles Rownd apps read or wrote.
package struct ProfileEncryptor: Sendable {
    /// The schema that says which fields are encrypted.
    package let schema: ProfileSchema
    /// Whether any encrypted field is written as v2, which the text fast path leaves to the value tree.
    private let writesV2: Bool

    /// Makes an encryptor for profiles described by `schema`.
    /// - Parameter schema: the app schema saying which fields are encrypted, and each one's format
    ///   (`ProfileSchema.writing(_:)` overrides them all, for the command's `--format`).
    package init(schema: ProfileSchema) {
        self.schema = schema
        writesV2 = schema.encryptedFields.contains { $0.format == .v2 }
    }

    /// Encrypts every encrypted field under the current key, in each field's format (v2 values
    /// are bound to the ring's id and the field's name).
    ///
    /// A value that is already a well-formed ciphertext, v1 or v2, is never encrypted again: when
    /// it opens under `keys` it is kept as it is, and when it does not the profile fails with
    /// `FieldFailure.Reason.sealedUnderUnknownKey`, because it was sealed under a key this keystore
    /// lacks (another device's, say) and sealing it again would hide the value for good. The cost
    /// of that rule: a plaintext that is itself padded standard base64 of 40 bytes or more cannot be
    /// encrypted in strict mode, as it cannot be told from a v1 ciphertext.
    /// - Parameters:
    ///   - profile: the profile, as fields or in Rownd's user-state shape.
    ///   - keys: the user's keys; new ciphertexts use `keys.current`. A v2 field needs a ring with an id.
    /// - Returns: the profile with every encrypted field as a ciphertext string.
    /// - Throws: `ProfileError.notAnObject`, or `ProfileError.fieldsFailed` listing every field that
    ///   does not match its schema type, holds a non-string value without one, or holds a
    ///   ciphertext that does not open. Nothing is returned when any field fails: encryption never
    ///   falls back to plaintext. `ProfileError.undeclaredMembers` for members the schema does not declare
    ///   and refuses (`ProfileSchema.undeclaredMembers`): a name near an encrypted field's, always.
    package func encrypt(_ profile: JSONValue, with keys: KeyRing) throws(ProfileError) -> JSONValue {
        return try mapEncryptedFields(of: profile, checkingUndeclared: true) { field, value -> FieldOutcome in
            switch value {
            case .null:
                return .value(value)
            case .string(let text):
                if let shape = CiphertextShape(of: text) {
                    switch Self.open(value, field: field, keys: keys, acceptsV1: field.format == .v1) {
                    case .opened, .null: return .value(value)
                    case .failed(.undecryptable(.unknownKey(let tag))): return .failed(.sealedUnderUnknownKey(tag))
                    case .failed(.undecryptable(.authenticationFailed)) where shape == .v1:
                        return .failed(.sealedUnderUnknownKey(nil))
                    case .failed(let reason): return .failed(reason)
                    }
                }
                guard let type = field.type, !type.encryptsStringText else {
                    return seal(text, field: field, keys: keys)
                }
                guard type == .any else { return .failed(.typeMismatch(expected: type, found: value.kindName)) }
                // `any` keeps the value's JSON type: a string travels as its JSON text, quotes and all.
                return seal(value.serialized(), field: field, keys: keys)
            default:
                // Only null has no type, and it was handled above.
                guard let valueType = ProfileSchema.FieldType(of: value) else { return .value(value) }
                guard let type = field.type else { return .failed(.missingType(found: valueType)) }
                guard type.admits(valueType) else { return .failed(.typeMismatch(expected: type, found: value.kindName)) }
                return seal(value.serialized(), field: field, keys: keys)
            }
        }.profile
    }

    /// Seals one field's plaintext in the field's format.
    private func seal(_ plaintext: String, field: ProfileSchema.Field, keys: KeyRing, as format: CiphertextFormat? = nil) -> FieldOutcome {
        do {
            return .value(.string(try keys.encrypt(plaintext, format: format ?? field.format, place: .field(field.name))))
        } catch {
            return .failed(.outOfGuardedMemory)
        }
    }

    /// Encrypts a profile given as JSON text, returning compact JSON text: byte for byte what
    /// `encrypt(JSONValue.parse(jsonText), with: keys).serialized()` returns, with the same rules
    /// and errors, but without building a value tree for a profile whose encrypted fields hold
    /// plain values, which is several times faster.
    /// - Parameters:
    ///   - jsonText: the profile's UTF-8 JSON text, as fields or in Rownd's user-state shape.
    ///   - keys: the user's keys; new ciphertexts use `keys.current`.
    /// - Returns: the encrypted profile's compact JSON text.
    /// - Throws: `ProfileError.invalidJSON` for text that is not strict JSON, else as `encrypt(_:with:)`.
    package func encrypt(jsonText: [UInt8], with keys: KeyRing) throws(ProfileError) -> [UInt8] {
        var output: [UInt8] = []
        try jsonText.withUnsafeBufferPointer { (text) throws(ProfileError) in
            try encrypt(jsonText: text, with: keys, appendingTo: &output)
        }
        return output
    }

    /// `encrypt(jsonText:with:)` for bulk paths (`--ndjson`), appending to one output buffer.
    /// On failure `output` is as it was.
    package func encrypt(
        jsonText: UnsafeBufferPointer<UInt8>, with keys: KeyRing, appendingTo output: inout [UInt8]
    ) throws(ProfileError) {
        let outline: JSONOutline
        do {
            outline = try JSONOutline(compacting: jsonText)
        } catch {
            throw .invalidJSON(error)
        }
        if appendEncrypted(outline, with: keys, to: &output) { return }
        // Everything the fast path leaves alone takes the value tree, with every rule and message.
        let profile: JSONValue
        do {
            profile = try JSONValue.parse(outline.text)
        } catch {
            throw .invalidJSON(error)
        }
        output.append(contentsOf: try encrypt(profile, with: keys).serialized().utf8)
    }

    /// The fast path: copies the outline's compact text, putting each encrypted field's ciphertext in
    /// place of its value, when every encrypted field holds a value to encrypt now. Anything else
    /// (a value already encrypted, one the schema refuses, a string with escapes, a key that is not
    /// plain ASCII) returns false with nothing written, for the value tree to handle.
    package func appendEncrypted(_ outline: JSONOutline, with keys: KeyRing, to output: inout [UInt8]) -> Bool {
        guard !writesV2, let fieldNames = schema.encryptedNames else { return false }
        return outline.text.withUnsafeBufferPointer { text in
            let members = outline.members
            guard text.first == UInt8(ascii: "{") else { return false }
            // Keys that are not plain ASCII could equal a field's name as Swift compares strings but not as bytes.
            for member in members where member.parent == nil {
                guard Self.isPlainASCII(UnsafeBufferPointer(rebasing: text[member.key])) else { return false }
            }
            var fieldLevel: Int?
            if schema.fieldsMayBeInData,
                let data = members.firstIndex(where: {
                    $0.parent == nil && text[$0.key].elementsEqual("data".utf8)
                }),
                text[members[data].value.lowerBound] == UInt8(ascii: "{")
            {
                fieldLevel = data
                // A flagged name beside `data` makes the profile ambiguous: the tree refuses it.
                for member in members where member.parent == nil && fieldNames.field(named: UnsafeBufferPointer(rebasing: text[member.key])) != nil {
                    return false
                }
            }

            // Each edit: the value's place in the text, and the bytes to encrypt (in the text too).
            var edits: [(value: Range<Int>, plaintext: Range<Int>)] = []
            edits.reserveCapacity(fieldNames.entries.count)
            for member in members where member.parent == fieldLevel {
                let key = UnsafeBufferPointer(rebasing: text[member.key])
                if fieldLevel != nil, !Self.isPlainASCII(key) { return false }
                guard let fieldIndex = fieldNames.field(named: key) else {
                    // A member the schema refuses as undeclared: the tree says which, and why.
                    if schema.undeclaredMember(named: String(decoding: key, as: UTF8.self)) != nil { return false }
                    continue
                }
                let fieldType = schema.fields[fieldIndex].type
                let value = member.value
                switch text[value.lowerBound] {
                case UInt8(ascii: "n"):
                    continue
                case UInt8(ascii: "\""):
                    let contents = (value.lowerBound + 1)..<(value.upperBound - 1)
                    // With no escapes the text's bytes are the string's, which is what gets encrypted.
                    guard fieldType?.encryptsStringText ?? true, !text[contents].contains(UInt8(ascii: "\\")) else {
                        return false
                    }
                    // A string that is a ciphertext is never sealed again: the tree keeps it or refuses it.
                    if CiphertextShape.classify(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(text)[contents])) != nil {
                        return false
                    }
                    edits.append((value, contents))
                case let first:
                    guard let fieldType, let kind = ProfileSchema.FieldType(compactTextStartingWith: first),
                        fieldType.admits(kind)
                    else {
                        return false
                    }
                    edits.append((value, value))
                }
            }

            // Each value gives way to its ciphertext in quotes.
            let total = edits.reduce(text.count) {
                $0 - $1.value.count + FieldCipher.ciphertextLength(forPlaintextByteCount: $1.plaintext.count) + 2
            }
            let start = output.count
            output.append(contentsOf: repeatElement(0, count: total))
            // One profile is one operation: its nonces are drawn together (one system call for up to
            // ten fields) and nothing drawn outlives it.
            NonceBatch.withBatch(expecting: edits.count) { nonces in
                output.withUnsafeMutableBytes { out in
                    var written = start
                    var copied = 0
                    func copy(upTo end: Int) {
                        let count = end - copied
                        (out.baseAddress! + written).copyMemory(from: text.baseAddress! + copied, byteCount: count)
                        written += count
                    }
                    for edit in edits {
                        copy(upTo: edit.value.lowerBound)
                        let length = FieldCipher.ciphertextLength(forPlaintextByteCount: edit.plaintext.count)
                        out[written] = UInt8(ascii: "\"")
                        FieldCipher.encrypt(
                            bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(text)[edit.plaintext]),
                            using: keys.current, nonces: &nonces,
                            into: UnsafeMutableRawBufferPointer(rebasing: out[(written + 1)..<(written + 1 + length)]))
                        out[written + 1 + length] = UInt8(ascii: "\"")
                        written += length + 2
                        copied = edit.value.upperBound
                    }
                    copy(upTo: text.count)
                    precondition(written == out.count)
                }
            }
            return true
        }
    }

    /// Whether a key is ASCII with no escapes: then comparing its bytes is comparing it as Swift
    /// compares strings.
    private static func isPlainASCII(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        !text.contains { $0 >= 0x80 || $0 == UInt8(ascii: "\\") }
    }

    /// Decrypts every encrypted field with the current or a retired key.
    /// - Parameters:
    ///   - profile: the profile, as fields or in Rownd's user-state shape.
    ///   - keys: the user's current and retired keys.
    /// - Returns: the plaintext profile, and the fields that only a retired key opened (`rotate` them).
    /// - Throws: `ProfileError.notAnObject`, or `ProfileError.fieldsFailed` listing every encrypted,
    ///   non-null field that is not a ciphertext, opens under none of the keys, or does not decrypt to
    ///   its schema type. Nothing is returned when any field fails.
    package func decrypt(_ profile: JSONValue, with keys: KeyRing) throws(ProfileError) -> ProfileDecryption {
        var openedCount = 0
        do {
            let (plain, retired) = try mapEncryptedFields(of: profile) { field, value -> FieldOutcome in
                switch Self.open(value, field: field, keys: keys, acceptsV1: field.format == .v1) {
                case .failed(let reason): return .failed(reason)
                case .null: return .value(value)
                case .opened(_, let restored, let needsRotation):
                    openedCount += 1
                    return .value(restored, noted: needsRotation)
                }
            }
            return ProfileDecryption(profile: plain, fieldsUnderRetiredKeys: retired)
        } catch .fieldsFailed(let failures) {
            throw .fieldsFailed(Self.namingMissingKeys(failures, noneOpened: openedCount == 0))
        }
    }

    /// Says "a key this keystore does not have" where that is what failures show: a v2 value whose
    /// header names a key the ring lacks, always; v1 values, which name no key, when not one
    /// flagged value opened and every failure is an authentication failure (a device holding
    /// another key than the user's data was sealed under fails exactly so).
    private static func namingMissingKeys(_ failures: [FieldFailure], noneOpened: Bool) -> [FieldFailure] {
        let allUnopened = noneOpened && failures.allSatisfy {
            switch $0.reason {
            case .undecryptable(.authenticationFailed), .undecryptable(.unknownKey): return true
            default: return false
            }
        }
        return failures.map { failure in
            switch failure.reason {
            case .undecryptable(.unknownKey(let tag)):
                return FieldFailure(field: failure.field, reason: .sealedUnderUnknownKey(tag))
            case .undecryptable(.authenticationFailed) where allUnopened:
                return FieldFailure(field: failure.field, reason: .sealedUnderUnknownKey(nil))
            default:
                return failure
            }
        }
    }

    /// Re-encrypts under the current key every field that only a retired key opens. A v2 value
    /// stays v2.
    ///
    /// A field the schema writes as v2 opens only v2 values: a v1 value
    /// there names no field, so it may have been moved from another one, and fails with
    /// `CiphertextError.notBound`. Migrating from v1 is one explicit step, `migratingFromV1`, which
    /// reads such values on purpose and rewrites them as v2 bound to the field they stand in; run
    /// it once, on data from before anyone could move values, then rotate the key so that no
    /// earlier v1 value opens as the current key's.
    ///
    /// Other fields are left untouched, so their ciphertexts do not change.
    /// - Parameters:
    ///   - profile: an encrypted profile, as fields or in Rownd's user-state shape.
    ///   - keys: the user's current key, which encrypts, and retired keys, which only decrypt.
    ///   - migratingFromV1: read v1 values in fields written as v2, and rewrite them as v2.
    /// - Returns: the profile, and the fields that were re-encrypted.
    /// - Throws: the same errors as `decrypt`, listing every failing field. Nothing is returned
    ///   when any field fails.
    package func rotate(_ profile: JSONValue, with keys: KeyRing, migratingFromV1: Bool = false) throws(ProfileError) -> ProfileRotation {
        let (rotated, fields) = try mapEncryptedFields(of: profile, checkingUndeclared: true) { field, value -> FieldOutcome in
            switch Self.open(value, field: field, keys: keys, acceptsV1: migratingFromV1 || field.format == .v1) {
            case .failed(let reason): return .failed(reason)
            case .opened(let plaintext, _, let needsRotation):
                let wasV2: Bool
                if case .string(let text) = value { wasV2 = text.hasPrefix(BoundCipher.prefix) } else { wasV2 = false }
                let target = wasV2 ? CiphertextFormat.v2 : field.format
                guard needsRotation || (target == .v2 && !wasV2) else { return .value(value) }
                switch seal(plaintext, field: field, keys: keys, as: target) {
                case .value(let sealed, _): return .value(sealed, noted: true)
                case let failed: return failed
                }
            case .null: return .value(value)
            }
        }
        return ProfileRotation(profile: rotated, rotatedFields: fields)
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
    /// A v1 value opens only where `acceptsV1`: in a field written as v1, or when migrating.
    private static func open(_ value: JSONValue, field: ProfileSchema.Field, keys: KeyRing, acceptsV1: Bool) -> OpenedField {
        switch value {
        case .null:
            return .null
        case .string(let ciphertext) where (try? SharedValue(text: ciphertext, place: .field(field.name))) != nil:
            // A shared value, signed for this field, opens with the sharing identities, not the ring: kept as it is here,
            // for the caller. Anything else with its prefix (a plaintext that starts `sk3:`) is refused below, never kept.
            return .null
        case .string(let ciphertext):
            let plaintext: String
            let needsRotation: Bool
            do {
                (plaintext, needsRotation) = try keys.decrypt(ciphertext, place: .field(field.name), acceptsV1: acceptsV1)
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
        guard let type, !type.encryptsStringText else { return .string(plaintext) }
        // JSONValue is ExpressibleByNilLiteral, so "not restorable" is spelled `.none`, never `nil`.
        guard let value = try? JSONValue.parse(plaintext) else { return .none }
        let fits: Bool
        switch type {
        case .any: fits = true
        case .null: fits = value.isNull
        default: fits = ProfileSchema.FieldType(of: value).map(type.admits) ?? false
        }
        return fits ? .some(value) : .none
    }

    /// Applies `transform` to every encrypted field of the profile's fields, keeping everything
    /// else. Collects every failure before throwing, so the caller hears about all of them at once.
    /// - Returns: the new profile and the names of fields for which `transform` said `noted`.
    private func mapEncryptedFields(
        of profile: JSONValue, checkingUndeclared: Bool = false,
        _ transform: (ProfileSchema.Field, JSONValue) -> FieldOutcome
    ) throws(ProfileError) -> (profile: JSONValue, noted: [String]) {
        guard case .object(var members) = profile else { throw .notAnObject(found: profile.kindName) }
        let beside = schema.encryptedFieldsBesideData(in: members)
        guard beside.isEmpty else { throw .fieldsBesideData(beside) }
        if let dataIndex = schema.dataIndex(in: members), case .object(let data) = members[dataIndex].value {
            let (fields, noted) = try mapFields(data, checkingUndeclared: checkingUndeclared, transform)
            members[dataIndex].value = .object(fields)
            return (.object(members), noted)
        }
        let (fields, noted) = try mapFields(members, checkingUndeclared: checkingUndeclared, transform)
        return (.object(fields), noted)
    }

    private func mapFields(
        _ members: [(key: String, value: JSONValue)], checkingUndeclared: Bool,
        _ transform: (ProfileSchema.Field, JSONValue) -> FieldOutcome
    ) throws(ProfileError) -> (fields: [(key: String, value: JSONValue)], noted: [String]) {
        // A member the schema refuses (near an encrypted field's name, or any, as the schema says) would
        // leave in plaintext: nothing is written.
        if checkingUndeclared {
            let undeclared = schema.undeclared(in: members)
            guard undeclared.isEmpty else { throw .undeclaredMembers(undeclared) }
        }
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
package struct ProfileDecryption: Sendable, Equatable {
    /// The profile with every encrypted field in plaintext.
    package let profile: JSONValue
    /// Fields that only a retired key opened, in profile order: `rotate` moves them to the current key.
    package let fieldsUnderRetiredKeys: [String]
}

/// A profile after rotation.
package struct ProfileRotation: Sendable, Equatable {
    /// The profile with every encrypted field under the current key.
    package let profile: JSONValue
    /// Fields that were re-encrypted, in profile order.
    package let rotatedFields: [String]

    package init(profile: JSONValue, rotatedFields: [String]) {
        self.profile = profile
        self.rotatedFields = rotatedFields
    }
}

extension ProfileSchema.FieldType {
    /// The type of a non-null value from the first byte of its compact JSON text.
    init?(compactTextStartingWith first: UInt8) {
        switch first {
        case UInt8(ascii: "{"): self = .object
        case UInt8(ascii: "["): self = .array
        case UInt8(ascii: "\""): self = .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): self = .boolean
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): self = .number
        default: return nil
        }
    }

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
