
extension ProfileSchema {
    /// Reads an app schema from its JSON text: Rownd's shape, a map from field name to
    /// `{"type", "encryption": {"state": "enabled" | "disabled"}, ...}`, given bare, under `"schema"`,
    /// or under `"app": {"schema": ...}`. A field's `"encryption": {"state": "enabled", "sealkit": {"format": 2}}`
    /// writes its values as v2, bound to the user and the field. Beside `"schema"`, `"sealkit": {"undeclared": "error"}`
    /// sets ``undeclaredMembers`` to refuse every profile field the schema does not declare.
    /// - Throws: `SealKitError.Reason.invalidSchema` naming the JSON path of the first problem, or
    ///   `SealKitError.Reason.invalidJSON`.
    public init(json: String) throws(SealKitError) {
        do {
            try self.init(parsing: json)
        } catch {
            throw SealKitError(error)
        }
    }

    /// Reads an app schema from its UTF-8 JSON bytes (a schema file's contents), as `init(json:)` reads text.
    /// - Throws: as `init(json:)`; bytes that are not UTF-8 are `SealKitError.Reason.invalidJSON`.
    public init(json bytes: some Collection<UInt8>) throws(SealKitError) {
        do {
            try self.init(parsing: bytes)
        } catch {
            throw SealKitError(error)
        }
    }

    /// The names of the fields the schema encrypts, in schema order.
    public var encryptedFieldNames: [String] { encryptedFields.map(\.name) }

    /// Whether the schema asks for profile seals, with `"sealkit": {"seal": true}` beside `"schema"`:
    /// then a `ProfileProcessor` writes a seal over the encrypted fields and a version, and refuses
    /// a profile whose seal is missing, does not match, or is older than one this device has seen.
    public var asksForSeal: Bool { requiresSeal }
}

extension SealKitError {
    /// A profile that would not encrypt, decrypt or rotate for `keyID`, with its message unchanged.
    package init(_ error: ProfileError, keyID: KeyID? = nil) {
        switch error {
        case .invalidJSON, .notAnObject:
            self.init(.invalidJSON, keyID: keyID, String(describing: error))
        case .fieldsFailed(let failures):
            self.init(.profileFields, keyID: keyID, fields: failures.map(\.field), String(describing: error))
        case .fieldsBesideData(let fields):
            self.init(.profileFields, keyID: keyID, fields: fields, String(describing: error))
        case .undeclaredMembers(let members):
            self.init(.profileFields, keyID: keyID, fields: members.map(\.name), String(describing: error))
        case .seal(let problem):
            let reason: Reason
            var cause: SealKitError?
            switch problem {
            case .missing, .removed: reason = .sealMissing
            case .mismatch, .unverifiable: reason = .sealMismatch
            case .older: reason = .sealRolledBack
            case .conflicting: reason = .sealConflict
            case .unrecorded(_, let beneath, let kind): reason = kind; cause = beneath
            }
            self.init(reason, keyID: keyID, String(describing: error), underlying: cause)
        }
    }

    /// A schema that cannot be used, with its message unchanged.
    package init(_ error: SchemaError) {
        switch error {
        case .invalidJSON: self.init(.invalidJSON, String(describing: error))
        default: self.init(.invalidSchema, String(describing: error))
        }
    }

    /// Text that is not strict JSON; `what` names it (`the profile is ...`).
    package init(_ error: JSONError, what: String) {
        self.init(.invalidJSON, "\(what) is \(error)")
    }
}
