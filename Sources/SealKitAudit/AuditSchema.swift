import SealKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What an audit needs from a profile schema: which fields must hold ciphertexts.
///
/// Unlike `ProfileSchema`, which refuses a schema that flags `email` or `phone_number`
/// for encryption, an audit reads such a schema, reports each as `identifier-encrypted`,
/// and audits the other fields.
public struct AuditSchema: Sendable {
    /// The schema file, as given.
    public let path: String
    /// The fields flagged `encryption.state == "enabled"`, apart from identifying ones.
    public let encryptedFields: Set<String>
    /// The encrypted fields written as v2, which open only v2 values.
    public let boundFields: Set<String>
    /// Whether the schema defines a field called `data`, in which case no profile is taken
    /// for Rownd's user-state shape.
    let definesDataField: Bool
    /// `identifier-encrypted` findings about the schema itself.
    let findings: [Finding]
    /// The schema, for the rule on undeclared members.
    private var profileSchema: ProfileSchema

    /// Which profile fields that the schema does not declare are errors: those near an encrypted
    /// field's name (the default; the others are warnings), or, with `.refused`, every one. Read from
    /// the schema's `"sealkit": {"undeclared": ...}`; set it for `--complete-schema`.
    public var undeclaredMembers: ProfileSchema.UndeclaredMembers {
        get { profileSchema.undeclaredMembers }
        set { profileSchema.undeclaredMembers = newValue }
    }

    /// What is wrong with a profile field called `name`: nil when the schema declares it; else
    /// whether it is an error, and the encrypted field its name is near, if one is.
    func undeclaredField(named name: String) -> (isError: Bool, nearEncryptedField: String?)? {
        guard !profileSchema.declares(name) else { return nil }
        guard let member = profileSchema.undeclaredMember(named: name) else { return (false, nil) }
        return (true, member.nearEncryptedField)
    }
    /// The schema, when it asks for profile seals: every profile must hold one.
    let sealing: ProfileSchema?

    /// Uses a parsed schema.
    /// - Parameters:
    ///   - schema: the schema.
    ///   - path: the file it came from, for findings.
    public init(_ schema: ProfileSchema, path: String) {
        self.init(schema, path: path, findings: [])
    }

    private init(_ schema: ProfileSchema, path: String, findings: [Finding]) {
        self.path = path
        encryptedFields = Set(schema.encryptedFields.map(\.name))
        boundFields = Set(schema.encryptedFields.filter { $0.format == .v2 }.map(\.name))
        definesDataField = schema.field(named: "data") != nil
        self.findings = findings
        profileSchema = schema
        sealing = schema.requiresSeal ? schema : nil
    }

    /// Reads a schema file in Rownd's app-config shape (bare, under `"schema"`, or under `"app": {"schema": ...}`).
    /// - Parameter path: the schema file.
    /// - Returns: the schema, with an `identifier-encrypted` finding for each identifying field flagged encrypted.
    /// - Throws: `SealKitError`: `.invalidArgument` for a missing file, `.fileSystem` for one that cannot be read,
    ///   `.invalidSchema` when it is not a valid schema.
    public static func load(path: String) throws(SealKitError) -> AuditSchema {
        do {
            return try reading(path: path)
        } catch {
            throw SealKitError(error)
        }
    }

    private static func reading(path: String) throws(AuditError) -> AuditSchema {
        let bytes = try readFile(path)
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch {
            throw .invalidSchema(path: path, reason: "the schema is \(error)")
        }
        // An encrypted identifying field is a finding here, not a reason to stop.
        let inspected: (schema: ProfileSchema, encryptedIdentifiers: [(field: String, route: [String])])
        do {
            inspected = try ProfileSchema.inspecting(json)
            // A schema flagging only identifiers still flags something: those are findings.
            if inspected.encryptedIdentifiers.isEmpty { try SchemaLint.requireEncryptedField(inspected.schema) }
        } catch {
            throw .invalidSchema(path: path, reason: error.description)
        }
        let findings = inspected.encryptedIdentifiers.enumerated().map { order, flagged in
            Finding(
                kind: .identifierEncrypted,
                places: [Place(
                    file: path, location: .pointer(JSONPointer.make(flagged.route + ["encryption", "state"])),
                    field: flagged.field, line: 1, order: order)],
                message: "the schema flags \(flagged.field) for encryption, but Rownd looks users up by it; "
                    + "its values were not audited as ciphertexts")
        }
        return AuditSchema(inspected.schema, path: path, findings: findings)
    }

    private static func readFile(_ path: String) throws(AuditError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .missingPath(path) }
            throw .unreadable(path: path, reason: lastError())
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = block.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(path: path, reason: lastError()) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: block[0..<count])
            // Schemas are small; a huge file is a wrong argument, not a schema.
            guard bytes.count <= 16 << 20 else { throw .invalidSchema(path: path, reason: "larger than 16 MiB: not a schema") }
        }
    }
}

/// RFC 6901 JSON pointers.
enum JSONPointer {
    /// Escapes one reference token: `~` as `~0`, `/` as `~1`.
    static func escape(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        var escaped = ""
        for character in token.unicodeScalars {
            switch character {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// The pointer for a path of tokens.
    static func make(_ tokens: [String]) -> String {
        tokens.map { "/" + escape($0) }.joined()
    }
}
