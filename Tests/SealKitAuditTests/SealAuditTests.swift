import Foundation
import SealKitAudit
import SealKit
import Testing

/// Profile seals in the audit: with a schema that asks for them, a profile without one
/// is `seal-missing`; with keys, a seal that does not verify is `seal-mismatch`. Versions are not
/// checked: an audit remembers none.
@Suite("Auditor: profile seals")
struct SealAuditTests {
    static let schemaText = """
        {"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}},
                    "notes": {"type": "string", "encryption": {"state": "enabled"}}},
         "sealkit": {"seal": true}}
        """

    /// An NDJSON export planted with one of each seal problem, audited with the schema and, if
    /// `withKey`, the user's keys: each finding's kind and line.
    static func plantedRun(withKey: Bool, schemaText: String = schemaText) throws -> [(kind: FindingKind, line: Int)] {
        let ring = KeyRing(current: try fixtureKey("current"), retired: [try fixtureKey("retired")], id: "audit-user")
        let schema = try ProfileSchema(parsing: schemaText)
        let encryptor = ProfileEncryptor(schema: schema)
        func sealed(_ text: String, version: UInt64) throws -> JSONValue {
            try encryptor.sealing(try encryptor.encrypt(try JSONValue.parse(text), with: ring), with: ring, version: version).profile
        }
        func replacing(_ profile: JSONValue, _ name: String, _ value: JSONValue?) -> JSONValue {
            guard case .object(var members) = profile else { return profile }
            members.removeAll { $0.key == name }
            if let value { members.append((name, value)) }
            return .object(members)
        }
        let v1 = try sealed(#"{"ssn": "078-05-1120", "notes": "a"}"#, version: 1)
        let v2 = try sealed(#"{"ssn": "111-22-3333", "notes": "a"}"#, version: 2)
        let lines = [
            v2,  // 1: fine
            replacing(v2, "sealkit_seal", nil),  // 2: seal removed
            replacing(v2, "ssn", v1["ssn"]),  // 3: ssn rolled back
            replacing(v2, "notes", nil),  // 4: notes dropped
            replacing(v2, "sealkit_seal", "sks1:nope"),  // 5: not a seal
            v1,  // 6: an older profile, whole: an audit cannot tell
        ]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealaudit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("profiles.ndjson").path
        try Data(lines.map { $0.serialized() + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: path))
        let schemaPath = folder.appendingPathComponent("schema.json").path
        try Data(schemaText.utf8).write(to: URL(fileURLWithPath: schemaPath))
        let auditor = Auditor(schema: try AuditSchema.load(path: schemaPath), keys: withKey ? [ring] : [])
        // The planted lines are copies of one another, so they also share ciphertexts: only seal findings count here.
        return try auditor.audit(paths: [path]).findings.filter { $0.kind == .sealMissing || $0.kind == .sealMismatch }
            .compactMap { finding in finding.places.first.map { (finding.kind, $0.line) } }
    }

    @Test func withoutKeysOnlyAMissingOrUnreadableSealIsFound() throws {
        let found = try Self.plantedRun(withKey: false)
        #expect(found.map(\.kind) == [.sealMissing, .sealMismatch])
        #expect(found.map(\.line) == [2, 5])
    }

    @Test func withTheKeyEveryMismatchIsFound() throws {
        let found = try Self.plantedRun(withKey: true)
        #expect(found.map(\.kind) == [.sealMissing, .sealMismatch, .sealMismatch, .sealMismatch])
        #expect(found.map(\.line) == [2, 3, 4, 5])
        #expect(FindingKind.sealMissing.severity == .error && FindingKind.sealMismatch.severity == .error)
    }

    @Test func aSchemaThatDoesNotAskFindsNothingAboutSeals() throws {
        let found = try Self.plantedRun(withKey: true, schemaText: Self.schemaText.replacingOccurrences(of: "true}", with: "false}"))
        #expect(!found.contains { $0.kind == .sealMissing || $0.kind == .sealMismatch })
    }
}
