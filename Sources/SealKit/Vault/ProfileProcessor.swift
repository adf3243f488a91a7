
/// Encrypts, decrypts or rotates the fields of user profiles that an app schema flags: the one way
/// SealKit works on profiles, one at a time or many.
///
/// A processor is one operation with its ``Options``, prepared once, then applied to each profile with
/// a ``Vault`` for the user's keys. Every call returns a ``ProfileOutcome``. ``process(_:with:)`` takes
/// and gives JSON text, for an app's profile; ``process(_:with:line:appendingTo:)`` takes UTF-8 bytes
/// and appends to a buffer of yours, for many profiles (an export, a file of newline-delimited JSON),
/// from as many threads at once as you like: strict encryption of plain values copies the text with
/// each flagged value replaced, without building a value tree or a `String` per profile.
///
/// The schema decides each field's format, not the vault: a flagged field is written as v1 (Rownd's)
/// unless its definition says `"sealkit": {"format": 2}`, and a field written as v2 opens only v2 values.
/// ``Vault/format`` is for single values (``Vault/encrypt(plaintext:context:)``) and plays no part here.
///
/// ```swift
/// let encrypting = try ProfileProcessor(.encrypt, schema: schema)
/// let upload = try encrypting.process(profileJSON, with: vault).json
///
/// let decrypting = try ProfileProcessor(.decrypt, schema: schema)
/// var output: [UInt8] = []
/// for (index, line) in lines.enumerated() {
///     let outcome = try line.withUnsafeBufferPointer {
///         try decrypting.process($0, with: vault, line: index + 1, appendingTo: &output)
///     }
///     if outcome != nil { output.append(UInt8(ascii: "\n")) }
/// }
/// ```
///
/// With ``Options/asRownd`` it does what Rownd's SDKs did, for profiles that Rownd apps wrote or will read.
public struct ProfileProcessor: Sendable {
    /// What a processor does to each profile.
    public enum Operation: Sendable, Equatable {
        /// Encrypt the flagged fields under the current key; values already sealed under the user's keys stay.
        case encrypt
        /// Decrypt the flagged fields with the current or a retired key, restoring each value's JSON type.
        case decrypt
        /// Re-encrypt under the current key the fields only a retired key opens.
        case rotate
    }

    /// How a processor treats each profile. Every option is off by default: strict, compact, and refusing
    /// what does not fit.
    public struct Options: Sendable, Equatable {
        /// Do exactly what Rownd's SDKs did: only strings are encrypted, decrypted values are strings, a
        /// flagged value that does not open is left as it is and noted in ``ProfileOutcome/notes`` (by path
        /// and reason, never by value), and `meta`'s flagged fields are decrypted, never encrypted. Writes v1
        /// only, so a schema that makes a field v2 or asks for seals is refused.
        public var asRownd: Bool
        /// Write each profile indented, for people to read; compact otherwise.
        public var pretty: Bool
        /// On ``Operation/rotate``: read v1 values in fields the schema writes as v2 (which otherwise refuse
        /// them: a v1 value names no field, so it may have been moved from another) and rewrite them as v2
        /// bound to their field. Migrate data you trust, then rotate the user's key, so no earlier v1 value
        /// opens under the new one.
        public var migratingFromV1: Bool
        /// On ``Operation/decrypt`` of one profile, with a schema that asks for seals: also accept a seal of
        /// the version this device wrote or verified but with another MAC (`SealKitError.Reason.sealConflict`:
        /// two devices wrote at once), and remember it. Both are genuine writes of the user's; reading the other
        /// one on purpose is how an app merges: decrypt it this way, merge in its own changes, and encrypt the
        /// result (with the read profile's `sealkit_seal` in it), which takes a version higher than both. An
        /// older seal, or one that does not verify, is still refused.
        public var acceptingConflict: Bool
        /// On ``Operation/encrypt``, with a schema that asks for seals: seal a stored profile that holds ciphertexts
        /// but no seal, although this device has seen the user's profiles sealed. Without it such a profile is
        /// refused (`SealKitError.Reason.sealMissing`): its seal may have been removed to roll a field back. A new
        /// seal vouches for every field as it stands, so set it only for a profile you know is the user's latest,
        /// one written before the schema asked for seals. A device without a record of the user's seals seals such
        /// profiles without it.
        public var resealing: Bool

        /// Options for a processor.
        /// - Parameters:
        ///   - asRownd: do what Rownd's SDKs did (``asRownd``).
        ///   - pretty: write profiles indented (``pretty``).
        ///   - migratingFromV1: on rotation, rewrite v1 values of v2 fields as v2 (``migratingFromV1``).
        ///   - acceptingConflict: on decryption, accept a conflicting write to merge it (``acceptingConflict``).
        public init(asRownd: Bool = false, pretty: Bool = false, migratingFromV1: Bool = false, acceptingConflict: Bool = false) {
            self.init(asRownd: asRownd, pretty: pretty, migratingFromV1: migratingFromV1, acceptingConflict: acceptingConflict, resealing: false)
        }

        /// Options for a processor, with sealing a stored profile anew.
        /// - Parameters:
        ///   - asRownd: do what Rownd's SDKs did (``asRownd``).
        ///   - pretty: write profiles indented (``pretty``).
        ///   - migratingFromV1: on rotation, rewrite v1 values of v2 fields as v2 (``migratingFromV1``).
        ///   - acceptingConflict: on decryption, accept a conflicting write to merge it (``acceptingConflict``).
        ///   - resealing: on encryption, seal a stored profile without a seal anew (``resealing``).
        public init(asRownd: Bool = false, pretty: Bool = false, migratingFromV1: Bool = false, acceptingConflict: Bool = false, resealing: Bool) {
            self.asRownd = asRownd
            self.pretty = pretty
            self.migratingFromV1 = migratingFromV1
            self.acceptingConflict = acceptingConflict
            self.resealing = resealing
        }
    }

    private let operation: Operation
    private let options: Options
    private let encryptor: ProfileEncryptor
    /// Set in Rownd's mode.
    private let rownd: RowndProfileEncryptor?

    /// Prepares an operation.
    /// - Parameters:
    ///   - operation: what to do to each profile.
    ///   - schema: the app schema saying which fields are encrypted, and in which format; it must flag one at least.
    ///   - options: how to treat each profile; the defaults are strict and compact.
    /// - Throws: `SealKitError.Reason.invalidSchema` for a schema that flags no field, or, with
    ///   ``Options/asRownd``, one that makes a field v2; `SealKitError.Reason.invalidArgument` for an option
    ///   the operation does not take (``Options/migratingFromV1`` but to rotate, ``Options/acceptingConflict``
    ///   but to decrypt, ``Options/resealing`` but to encrypt), for Rownd's mode with a migration to v2 or a schema
    ///   that asks for seals.
    public init(_ operation: Operation, schema: ProfileSchema, options: Options = Options()) throws(SealKitError) {
        do {
            try SchemaLint.requireEncryptedField(schema)
        } catch {
            throw SealKitError(error)
        }
        if options.migratingFromV1 && operation != .rotate {
            throw SealKitError(.invalidArgument, "migratingFromV1 rewrites values as they are rotated: it goes with .rotate only")
        }
        if options.acceptingConflict && operation != .decrypt {
            throw SealKitError(.invalidArgument, "acceptingConflict reads a conflicting write to merge it: it goes with .decrypt only")
        }
        if options.resealing && operation != .encrypt {
            throw SealKitError(.invalidArgument, "resealing seals a stored profile anew as it is encrypted: it goes with .encrypt only")
        }
        if options.asRownd && schema.requiresSeal {
            throw SealKitError(
                .invalidArgument,
                "the schema asks for profile seals (\"sealkit\": {\"seal\": true}), which Rownd's SDKs would not understand",
                detail: .rowndWithSeals)
        }
        if options.asRownd {
            if options.migratingFromV1 {
                throw SealKitError(.invalidArgument, "Rownd's SDKs read and write v1 only, so Rownd's mode neither writes v2 nor migrates to it")
            }
            if let field = schema.encryptedFields.first(where: { $0.format == .v2 }) {
                throw SealKitError(
                    .invalidSchema,
                    "field \(field.name) asks for v2 ciphertexts, which Rownd's SDKs cannot read", detail: .rowndWithV2Field)
            }
        }
        self.operation = operation
        self.options = options
        encryptor = ProfileEncryptor(schema: schema)
        rownd = options.asRownd ? RowndProfileEncryptor(schema: schema) : nil
    }

    /// Processes one profile given as JSON text, as an app holds it.
    ///
    /// With a schema that asks for seals, the profile's seal is also checked against, and recorded as, the
    /// highest seal version this device has seen for the user (rollback detection).
    /// - Parameters:
    ///   - profile: JSON text: an object of fields, or Rownd's user-state shape (`{"data": {...}}`).
    ///   - vault: the user whose keys to use. A failed encryption or decryption is told to its ``Vault/events()``.
    /// - Returns: the resulting profile in ``ProfileOutcome/json`` (compact, members in their order, unless
    ///   ``Options/pretty``), and what to tell about it.
    /// - Throws: `SealKitError` naming every failing field in `SealKitError.fields`, never a value: in strict
    ///   mode any field that fails; in Rownd's mode only a profile that is not a JSON object.
    public func process(_ profile: String, with vault: Vault) throws(SealKitError) -> ProfileOutcome {
        var text = profile
        var output: [UInt8] = []
        let result = text.withUTF8 { bytes in
            Result { () throws(SealKitError) in try apply(bytes, with: vault, line: nil, appendingTo: &output) }
        }
        var outcome = try result.get()
        outcome.json = String(decoding: output, as: UTF8.self)
        return outcome
    }

    /// Processes one profile given as UTF-8 bytes, appending the resulting profile's JSON text (without a
    /// newline) to `output`: for many profiles, without a `String` per profile.
    /// - Parameters:
    ///   - profile: the profile's UTF-8 JSON text: an object of fields, or Rownd's user-state shape.
    ///   - vault: the user whose keys to use. A failed encryption or decryption is told to its ``Vault/events()``.
    ///   - line: the profile's line in newline-delimited JSON, which errors name; a blank line there
    ///     (spaces, tabs and carriage returns only) holds no profile and gives nil. Nil for a profile alone,
    ///     which is then read as ``process(_:with:)`` reads one. With a schema that asks for seals, lines of
    ///     many profiles under one key id have their seals written and checked, but no version is remembered
    ///     for them, since which of them is newest cannot be told. A write (encrypt, rotate) still holds each
    ///     line to the version this device has recorded for the user, refusing an older or conflicting one, and
    ///     keeps the seal of a line whose encrypted fields it leaves unchanged rather than minting a version.
    ///   - output: where the result goes; on failure it is as it was.
    /// - Returns: what to tell about the profile, with ``ProfileOutcome/json`` empty (the JSON is in
    ///   `output`), or nil for a blank line.
    /// - Throws: `SealKitError` naming every failing field, never a value, and the line when given: in strict
    ///   mode any field that fails; in Rownd's mode only a profile that is not a JSON object.
    public func process(
        _ profile: UnsafeBufferPointer<UInt8>, with vault: Vault, line: Int? = nil, appendingTo output: inout [UInt8]
    ) throws(SealKitError) -> ProfileOutcome? {
        if line != nil && NDJSON.isBlank(UnsafeRawBufferPointer(profile)) { return nil }
        return try apply(profile, with: vault, line: line, appendingTo: &output)
    }

    /// Both entry points' one engine: the operation on one profile's text, its errors in SealKit's words,
    /// a failure told to the vault's subscribers.
    private func apply(
        _ profile: UnsafeBufferPointer<UInt8>, with vault: Vault, line: Int?, appendingTo output: inout [UInt8]
    ) throws(SealKitError) -> ProfileOutcome {
        do throws(SealKitError) {
            let keys = try vault.keyRing()
            let prefix = line.map { "line \($0): " } ?? ""
            do {
                if rownd == nil && encryptor.schema.requiresSeal {
                    return try runSealed(profile, with: keys, vault: vault, tracking: line == nil, appendingTo: &output)
                }
                var outcome = try run(profile, with: keys, appendingTo: &output)
                if let seen = vault.recordedSealVersion(for: keys) {
                    outcome.warnings.append(Self.sealNotAskedWarning(user: vault.user, seen: seen))
                }
                return outcome
            } catch .seal(let problem) {
                throw SealKitError(ProfileError.seal(problem), keyID: vault.user).prefixed(prefix)
            } catch .fieldsFailed(let failures) where rownd == nil {
                throw SealKitError(
                    .profileFields, keyID: vault.user, fields: failures.map(\.field),
                    prefix + ProfileError.fieldsFailed(failures).description, detail: Self.detail(of: failures))
            } catch .invalidJSON(let error) {
                // Within one line the parser's line is always 1; name the input's line instead.
                let located = line.map { JSONError(reason: error.reason, line: $0, column: error.column, byteOffset: error.byteOffset) }
                throw SealKitError(.invalidJSON, keyID: vault.user, "the profile is \(located ?? error)")
            } catch {
                throw SealKitError(error, keyID: vault.user).prefixed(prefix)
            }
        } catch {
            switch operation {
            case .encrypt: vault.report(.encryptionFailed(vault.user))
            case .decrypt: vault.report(.decryptionFailed(vault.user))
            case .rotate: break
            }
            throw error
        }
    }

    private func run(
        _ text: UnsafeBufferPointer<UInt8>, with keys: KeyRing, appendingTo output: inout [UInt8]
    ) throws(ProfileError) -> ProfileOutcome {
        if rownd == nil && operation == .encrypt && !options.pretty {
            // Compact output comes straight from the text, without a value tree.
            try encryptor.encrypt(jsonText: text, with: keys, appendingTo: &output)
            return ProfileOutcome()
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
            // After a rotation, Rownd's encryptor names the fields it re-encrypted.
            outcome = ProfileOutcome(
                fieldsUnderRetiredKeys: operation == .rotate ? [] : done.fieldsUnderRetiredKeys,
                rotatedFields: operation == .rotate ? done.fieldsUnderRetiredKeys : [],
                notes: done.notes.map(\.description), rowndNotes: done.notes)
        } else {
            switch operation {
            case .encrypt:
                result = try encryptor.encrypt(profile, with: keys)
                outcome = ProfileOutcome()
            case .decrypt:
                let decrypted = try encryptor.decrypt(profile, with: keys)
                result = decrypted.profile
                outcome = ProfileOutcome(fieldsUnderRetiredKeys: decrypted.fieldsUnderRetiredKeys)
            case .rotate:
                let rotation = try encryptor.rotate(profile, with: keys, migratingFromV1: options.migratingFromV1)
                result = rotation.profile
                outcome = ProfileOutcome(rotatedFields: rotation.rotatedFields)
            }
        }
        output.append(contentsOf: result.serialized(pretty: options.pretty).utf8)
        return outcome
    }

    /// A profile whose schema asks for a seal: reads check the seal before anything is
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
        // The record counts only while it is about these keys' history: a new key for the id starts its own.
        // A write holds a line of many profiles to it too (none older or conflicting, a new version above it), or a
        // batch fed an older profile would seal it anew at a newer version; only one profile is recorded.
        let record = tracking || operation != .decrypt
            ? try vault.rememberedSeal(fresh: tracking && operation != .decrypt).flatMap { $0.belongs(to: keys) ? $0 : nil } : nil
        let mark = tracking ? record : nil
        let result: JSONValue
        var retired: [String] = []
        var rotatedFields: [String] = []
        let seal: ProfileSeal
        // The version of the input's seal a write is made over: verified here, or this device's own.
        var base: UInt64?
        // A write that left the flagged fields as they were hands back the input's seal, verified by then.
        var keptInput = false
        switch operation {
        case .encrypt:
            let encrypted = try encryptor.encrypt(profile, with: keys)
            base = try encryptor.sealBeforeWriting(profile, encrypted: encrypted, with: keys, against: record, resealing: options.resealing)
            if let kept = try keptSeal(of: profile, as: encrypted) {
                (result, seal, keptInput) = (encrypted, kept, true)
            } else {
                let version = try ProfileEncryptor.nextSealVersion(after: record, over: base)
                (result, seal) = try encryptor.sealing(encrypted, with: keys, version: version)
            }
        case .decrypt:
            seal = try encryptor.verifySeal(of: profile, with: keys, against: mark, acceptingConflict: options.acceptingConflict)
            let decrypted = try encryptor.decrypt(profile, with: keys)
            result = decrypted.profile
            retired = decrypted.fieldsUnderRetiredKeys
        case .rotate:
            base = try encryptor.verifySeal(of: profile, with: keys, against: record).version
            let rotation = try encryptor.rotate(profile, with: keys, migratingFromV1: options.migratingFromV1)
            rotatedFields = rotation.rotatedFields
            if let kept = try keptSeal(of: profile, as: rotation.profile) {
                (result, seal, keptInput) = (rotation.profile, kept, true)
            } else {
                let version = try ProfileEncryptor.nextSealVersion(after: record, over: base)
                (result, seal) = try encryptor.sealing(rotation.profile, with: keys, version: version)
            }
        }
        if tracking {
            var recorded = seal.mark
            if operation != .decrypt && !keptInput {
                // The version this write was made over: its input's seal. An input without one (a new profile,
                // whose retry needs no window) keeps the floor the device had, so the record never accepts an
                // edit older than it did before this write (a review found 0 here accepting every older one).
                recorded = recorded.written(over: base ?? mark?.lowestVersionToEdit ?? 0)
            }
            try vault.rememberSeal(recorded, keys: keys.all.map(\.fingerprint), acceptingConflict: options.acceptingConflict)
        }
        output.append(contentsOf: result.serialized(pretty: options.pretty).utf8)
        return ProfileOutcome(fieldsUnderRetiredKeys: retired, rotatedFields: rotatedFields, sealVersion: seal.version)
    }

    /// The seal a write keeps: its input's (verified by then, under any of the user's keys), when the write left
    /// every flagged field as it was. Minting a version for unchanged fields would let a device fed the same profile
    /// again and again (one profile or lines of many, before or after a key rotation) raise an old profile's version
    /// past a newer one written on another device. Nil for any other write, which is sealed at a new version.
    private func keptSeal(of input: JSONValue, as output: JSONValue) throws(ProfileError) -> ProfileSeal? {
        guard let seal = try ProfileEncryptor.seal(of: input), encryptor.keepsFlaggedFields(of: input, in: output)
        else { return nil }
        return seal
    }

    /// What an operation on a profile whose schema does not ask for seals says when this device has seen the user's
    /// profiles sealed: a schema served without its seal setting would otherwise turn rollback detection off unseen.
    static func sealNotAskedWarning(user: KeyID, seen: UInt64) -> String {
        "the schema does not ask for profile seals, but this device has seen the profiles of '\(user)' sealed (version "
            + "\(seen)): this profile's seal was not checked, so a rolled-back profile would pass; if the schema was served "
            + "without its \"sealkit\": {\"seal\": true}, use the one that asks"
    }

    /// What most likely explains a strict failure: a missing key, then a v1 value where v2 is required; anything
    /// else may be a profile that a Rownd app wrote, which Rownd's mode reads.
    private static func detail(of failures: [FieldFailure]) -> SealKitError.Detail {
        if failures.contains(where: { if case .sealedUnderUnknownKey = $0.reason { true } else { false } }) {
            return .fieldsUnderUnknownKey
        }
        if failures.contains(where: { $0.reason == .undecryptable(.notBound) }) { return .v1InV2Field }
        return .fieldsFailedStrictly
    }
}

/// What processing one profile gave: the same shape from every operation and both entry points.
public struct ProfileOutcome: Sendable, Equatable {
    /// The resulting profile as JSON text, from ``ProfileProcessor/process(_:with:)``: compact, members in their
    /// order (indented with ``ProfileProcessor/Options/pretty``). Empty from
    /// ``ProfileProcessor/process(_:with:line:appendingTo:)``, which appends it to your buffer instead.
    public internal(set) var json: String
    /// Fields that only a retired key opened, in profile order (on decryption): rotate the profile
    /// to move them to the current key.
    public let fieldsUnderRetiredKeys: [String]
    /// The fields that were re-encrypted under the current key, in profile order (on rotation).
    public let rotatedFields: [String]
    /// In Rownd's mode, each flagged value left as it was, by path and reason (never by value).
    public let notes: [String]
    /// With a schema that asks for seals: the version of the profile's seal, verified on decryption,
    /// written on encryption and rotation; nil otherwise.
    public let sealVersion: UInt64?
    /// What the app should tell someone about the profile, never a value: with a schema that does not ask for seals,
    /// that this device has seen the user's profiles sealed, so the schema may have lost its seal setting and
    /// the profile's seal went unchecked.
    public internal(set) var warnings: [String]
    /// The facts behind ``notes``, one for each, for a tool that words its own remedies beside them.
    package let rowndNotes: [RowndFieldNote]

    /// ``notes`` with `receiveHint` after "receive that key" where a key is missing: the command names its own
    /// command there, which the library's text does not.
    @_spi(CLI) public func notes(receiveHint: String) -> [String] {
        rowndNotes.count == notes.count ? rowndNotes.map { $0.description(receiveHint: receiveHint) } : notes
    }

    init(
        json: String = "", fieldsUnderRetiredKeys: [String] = [], rotatedFields: [String] = [], notes: [String] = [],
        rowndNotes: [RowndFieldNote] = [], sealVersion: UInt64? = nil, warnings: [String] = []
    ) {
        self.warnings = warnings
        self.rowndNotes = rowndNotes
        self.json = json
        self.fieldsUnderRetiredKeys = fieldsUnderRetiredKeys
        self.rotatedFields = rotatedFields
        self.notes = notes
        self.sealVersion = sealVersion
    }
}
