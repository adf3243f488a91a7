@_spi(CLI) import SealCore
import SealJSON
import SealProfile

/// One profile operation with its options, prepared once and applied to many profiles (an export,
/// a file of newline-delimited JSON), from as many threads at once as you like.
///
/// It does what ``Vault/encryptProfile(_:schema:)``, ``Vault/decryptProfile(_:schema:)`` and
/// ``Vault/rotateProfile(_:schema:migratingFromV1:)`` do, on UTF-8 text in and out, without a
/// `String` per profile: strict encryption of plain values copies the text with each flagged value
/// replaced, without building a value tree. It also does what Rownd's SDKs did, for profiles that
/// Rownd apps wrote or will read.
///
/// ```swift
/// let decrypting = try ProfileProcessor(.decrypt, schema: schema)
/// var output: [UInt8] = []
/// for (index, line) in lines.enumerated() {
///     let outcome = try line.withUnsafeBufferPointer {
///         try decrypting.process($0, with: vault, line: index + 1, appendingTo: &output)
///     }
///     if outcome != nil { output.append(UInt8(ascii: "\n")) }
/// }
/// ```
public struct ProfileProcessor: Sendable {
    /// What a processor does to each profile.
    public enum Operation: Sendable, Equatable {
        /// Encrypt the flagged fields under the current key; values already sealed under the user's keys stay.
        case encrypt
        /// Decrypt the flagged fields with the current or a retired key.
        case decrypt
        /// Re-encrypt under the current key the fields only a retired key opens; `migratingFromV1` reads
        /// v1 values in fields written as v2 and rewrites them as v2.
        case rotate(migratingFromV1: Bool)
    }

    private let operation: Operation
    private let encryptor: ProfileEncryptor
    /// Set in Rownd's mode.
    private let rownd: RowndProfileEncryptor?
    private let pretty: Bool
    /// With a schema that asks for seals, on decryption of a profile alone: accept a seal of the version this
    /// device remembers with another MAC (a conflicting write: two devices wrote at once), to merge it, and
    /// remember it. An older seal, or one that does not verify, is still refused. See
    /// ``Vault/decryptProfile(_:schema:acceptingConflict:)``.
    public var acceptsConflictingWrite = false

    /// Prepares an operation.
    /// - Parameters:
    ///   - operation: what to do to each profile.
    ///   - schema: the app schema saying which fields are encrypted; it must flag one at least.
    ///   - format: the format of every new ciphertext, whatever each field's schema says; nil follows the schema.
    ///   - asRownd: do exactly what Rownd's SDKs did: only strings are encrypted, decrypted values are
    ///     strings, a flagged value that does not open is left as it is and noted (by path and reason,
    ///     never by value), and `meta`'s flagged fields are decrypted, never encrypted. Writes v1 only.
    ///   - pretty: write each profile indented, for people to read; compact otherwise.
    /// - Throws: `SealKitError.Reason.invalidSchema` for a schema that flags no field, or, with
    ///   `asRownd`, a field written as v2; `SealKitError.Reason.invalidArgument` for `asRownd` with `.v2`
    ///   or a migration from v1.
    public init(
        _ operation: Operation, schema: ProfileSchema, format: CiphertextFormat? = nil, asRownd: Bool = false,
        pretty: Bool = false
    ) throws(SealKitError) {
        do {
            try SchemaLint.requireEncryptedField(schema)
        } catch {
            throw SealKitError(error)
        }
        if asRownd && schema.requiresSeal {
            throw SealKitError(
                .invalidArgument,
                "the schema asks for profile seals (\"sealkit\": {\"seal\": true}), which Rownd's SDKs would not understand",
                advice: .dropRowndForSeals)
        }
        if asRownd {
            if format == .v2 || operation == .rotate(migratingFromV1: true) {
                throw SealKitError(.invalidArgument, "Rownd's SDKs read and write v1 only, so Rownd's mode neither writes v2 nor migrates to it")
            }
            if let field = schema.encryptedFields.first(where: { $0.format == .v2 }) {
                throw SealKitError(
                    .invalidSchema,
                    "field \(field.name) asks for v2 ciphertexts, which Rownd's SDKs cannot read", advice: .dropRowndForV2)
            }
        }
        self.operation = operation
        encryptor = ProfileEncryptor(schema: schema, format: format)
        rownd = asRownd ? RowndProfileEncryptor(schema: schema) : nil
        self.pretty = pretty
    }

    /// Processes one profile, appending the resulting profile's JSON text (without a newline) to `output`.
    /// - Parameters:
    ///   - profile: the profile's UTF-8 JSON text: an object of fields, or Rownd's user-state shape.
    ///   - vault: the user whose keys to use.
    ///   - line: the profile's line in newline-delimited JSON, which errors name; a blank line there
    ///     (spaces, tabs and carriage returns only) holds no profile and gives nil. Nil for a profile alone.
    ///     With a schema that asks for seals, a profile alone is also checked against, and recorded as, the
    ///     highest seal version this device has seen for the user (rollback detection); lines of many
    ///     profiles under one key id have their seals written and checked, but no version is remembered
    ///     for them, since which of them is newest cannot be told.
    ///   - output: where the result goes; on failure it is as it was.
    /// - Returns: what to tell about the profile besides its JSON, or nil for a blank line.
    /// - Throws: `SealKitError` naming every failing field, never a value: in strict mode any field
    ///   that fails; in Rownd's mode only a profile that is not a JSON object.
    public func process(
        _ profile: UnsafeBufferPointer<UInt8>, with vault: Vault, line: Int? = nil, appendingTo output: inout [UInt8]
    ) throws(SealKitError) -> ProfileOutcome? {
        if line != nil && NDJSON.isBlank(UnsafeRawBufferPointer(profile)) { return nil }
        let keys = try vault.keyRing()
        let prefix = line.map { "line \($0): " } ?? ""
        do {
            if rownd == nil && encryptor.schema.requiresSeal {
                return try runSealed(profile, with: keys, vault: vault, tracking: line == nil, appendingTo: &output)
            }
            return try run(profile, with: keys, appendingTo: &output)
        } catch .seal(let problem) {
            let plain = SealKitError(ProfileError.seal(problem), keyID: vault.user)
            throw SealKitError(plain.reason, keyID: plain.keyID, prefix + plain.description, advice: plain.advice)
        } catch .fieldsFailed(let failures) where rownd == nil {
            throw SealKitError(
                .profileFields, keyID: vault.user, fields: failures.map(\.field),
                prefix + ProfileError.fieldsFailed(failures).description, advice: Self.hint(for: failures))
        } catch .invalidJSON(let error) {
            // Within one line the parser's line is always 1; name the input's line instead.
            let located = line.map { JSONError(reason: error.reason, line: $0, column: error.column, byteOffset: error.byteOffset) }
            throw SealKitError(.invalidJSON, keyID: vault.user, "the profile is \(located ?? error)")
        } catch {
            let plain = SealKitError(error, keyID: vault.user)
            throw SealKitError(plain.reason, keyID: plain.keyID, fields: plain.fields, prefix + plain.description, advice: plain.advice)
        }
    }

    private func run(
        _ text: UnsafeBufferPointer<UInt8>, with keys: KeyRing, appendingTo output: inout [UInt8]
    ) throws(ProfileError) -> ProfileOutcome {
        if rownd == nil && operation == .encrypt && !pretty {
            // Compact output comes straight from the text, without a value tree.
            try encryptor.encrypt(jsonText: text, with: keys, appendingTo: &output)
            return ProfileOutcome(fieldsUnderRetiredKeys: [], notes: [])
        }
        let profile: JSONValue
        do throws(JSONError) {
            profile = try JSONValue.parse(text)
        } catch {
            throw .invalidJSON(error)
        }
        let result: JSONValue
        let outcome: ProfileOutcome
        if let rownd {
            let done: RowndProfileResult
            switch operation {
            case .encrypt: done = try rownd.encrypt(profile, with: keys)
            case .decrypt: done = try rownd.decrypt(profile, with: keys)
            case .rotate: done = try rownd.rotate(profile, with: keys)
            }
            result = done.profile
            outcome = ProfileOutcome(
                fieldsUnderRetiredKeys: operation == .decrypt || operation == .encrypt ? done.fieldsUnderRetiredKeys : [],
                notes: done.notes.map(\.description))
        } else {
            switch operation {
            case .encrypt:
                result = try encryptor.encrypt(profile, with: keys)
                outcome = ProfileOutcome(fieldsUnderRetiredKeys: [], notes: [])
            case .decrypt:
                let decrypted = try encryptor.decrypt(profile, with: keys)
                result = decrypted.profile
                outcome = ProfileOutcome(fieldsUnderRetiredKeys: decrypted.fieldsUnderRetiredKeys, notes: [])
            case .rotate(let migratingFromV1):
                result = try encryptor.rotate(profile, with: keys, migratingFromV1: migratingFromV1).profile
                outcome = ProfileOutcome(fieldsUnderRetiredKeys: [], notes: [])
            }
        }
        output.append(contentsOf: result.serialized(pretty: pretty).utf8)
        return outcome
    }

    /// A profile whose schema asks for a seal (issue 38): reads check the seal before anything is
    /// decrypted, writes seal the result. With `tracking` (one profile, not a line of many) the seal
    /// is also checked against the highest version this device has seen for the user, and the new
    /// one recorded before the result is handed back: record, then emit, so nothing this device
    /// handed out is ever unknown to it.
    private func runSealed(
        _ text: UnsafeBufferPointer<UInt8>, with keys: KeyRing, vault: Vault, tracking: Bool, appendingTo output: inout [UInt8]
    ) throws(ProfileError) -> ProfileOutcome {
        let profile: JSONValue
        do throws(JSONError) {
            profile = try JSONValue.parse(text)
        } catch {
            throw .invalidJSON(error)
        }
        let mark = tracking ? try vault.rememberedSeal(fresh: operation != .decrypt) : nil
        let result: JSONValue
        var retired: [String] = []
        var rotatedFields: [String] = []
        let seal: ProfileSeal
        switch operation {
        case .encrypt:
            let encrypted = try encryptor.encrypt(profile, with: keys)
            try encryptor.checkSealBeforeWriting(profile, encrypted: encrypted, with: keys, against: mark)
            let version = try ProfileEncryptor.nextSealVersion(after: mark, over: profile)
            (result, seal) = try encryptor.sealing(encrypted, with: keys, version: version)
        case .decrypt:
            seal = try encryptor.verifySeal(of: profile, with: keys, against: mark, acceptingConflict: acceptsConflictingWrite)
            let decrypted = try encryptor.decrypt(profile, with: keys)
            result = decrypted.profile
            retired = decrypted.fieldsUnderRetiredKeys
        case .rotate(let migratingFromV1):
            _ = try encryptor.verifySeal(of: profile, with: keys, against: mark)
            let rotation = try encryptor.rotate(profile, with: keys, migratingFromV1: migratingFromV1)
            rotatedFields = rotation.rotatedFields
            let version = try ProfileEncryptor.nextSealVersion(after: mark, over: profile)
            (result, seal) = try encryptor.sealing(rotation.profile, with: keys, version: version)
        }
        if tracking {
            var recorded = seal.mark
            if operation != .decrypt {
                // The version this write was made over: its input's seal. An input without one (a new profile,
                // whose retry needs no window) keeps the floor the device had, so the record never accepts an
                // edit older than it did before this write (a review found 0 here accepting every older one).
                let base = (try? ProfileEncryptor.seal(of: profile))??.version ?? mark?.lowestVersionToEdit ?? 0
                recorded = recorded.written(over: base)
            }
            try vault.rememberSeal(recorded, acceptingConflict: acceptsConflictingWrite && operation == .decrypt)
        }
        output.append(contentsOf: result.serialized(pretty: pretty).utf8)
        var outcome = ProfileOutcome(fieldsUnderRetiredKeys: retired, notes: [])
        outcome.rotatedFields = rotatedFields
        outcome.sealVersion = seal.version
        return outcome
    }

    /// What most likely explains a strict failure: a missing key, or a v1 value where v2 is required, says so in
    /// its own reason (and the command names the command that fixes it); anything else may be a profile that a
    /// Rownd app wrote, which Rownd's mode reads.
    private static func hint(for failures: [FieldFailure]) -> SealKitError.Advice? {
        if failures.contains(where: { if case .sealedUnderUnknownKey = $0.reason { true } else { false } }) {
            return .receiveTheUsersKeyForFields
        }
        if failures.contains(where: { $0.reason == .undecryptable(.notBound) }) { return .migrateFieldsToV2 }
        return .tryRownd
    }
}

/// What processing one profile tells besides the profile's JSON.
public struct ProfileOutcome: Sendable, Equatable {
    /// Fields that only a retired key opened, in profile order (on decryption): rotate the profile
    /// to move them to the current key.
    public let fieldsUnderRetiredKeys: [String]
    /// In Rownd's mode, each flagged value left as it was, by path and reason (never by value).
    public let notes: [String]
    /// With a schema that asks for seals: the version of the profile's seal, read or written (issue 38); nil otherwise.
    public internal(set) var sealVersion: UInt64?
    /// On rotation with a seal, the fields that were re-encrypted.
    var rotatedFields: [String] = []

    init(fieldsUnderRetiredKeys: [String], notes: [String]) {
        self.fieldsUnderRetiredKeys = fieldsUnderRetiredKeys
        self.notes = notes
    }
}
