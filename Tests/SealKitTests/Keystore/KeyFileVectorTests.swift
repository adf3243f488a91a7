import Foundation
@testable import SealKit
import Testing

/// `Fixtures/keyfile/vectors.json`, key files written from docs/format.md alone
/// (`Scripts/make-format-vectors.py`, PyNaCl), each with its expected outcome, failures included.
@Suite("Key file vectors in Fixtures/keyfile")
struct KeyFileVectorTests {
    struct File: Decodable {
        let vectors: [Vector]
    }
    struct Vector: Decodable {
        let name: String
        let file: String
        let passphrase: String?
        let expect: String
        let id: String?
        let file_name: String?
        let keys: [Key]?
    }
    struct Key: Decodable {
        let key: String
        let fingerprint: String
        let created: Int64
        let retired: Int64?
    }

    static let vectors: [Vector] = {
        var folder = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { folder.deleteLastPathComponent() }
        let url = folder.appendingPathComponent("Fixtures/keyfile/vectors.json")
        guard let data = try? Data(contentsOf: url) else { return [] }
        return (try? JSONDecoder().decode(File.self, from: data))?.vectors ?? []
    }()

    @Test func vectorsAreThere() {
        #expect(Self.vectors.count >= 20, "Fixtures/keyfile/vectors.json is missing or unreadable")
        #expect(Set(Self.vectors.map(\.expect)) == ["ok", "malformed", "wrong-passphrase", "tampered", "fingerprint-mismatch"])
    }

    /// What SealKit makes of a key file: `ok` with its keys, or the class of the failure.
    static func outcome(_ vector: Vector) -> (outcome: String, record: KeyRecord?) {
        let file: KeyFile
        do {
            file = try KeyFile.parse(Array(vector.file.utf8))
        } catch {
            return ("malformed", nil)
        }
        do {
            let passphrase = try vector.passphrase.map { try Passphrase($0) }
            let record = try file.unlock(passphrase: passphrase, source: "vector").record
            return ("ok", record)
        } catch KeystoreError.wrongPassphrase {
            return ("wrong-passphrase", nil)
        } catch KeystoreError.damagedKeyFile(_, let reason) {
            if reason.contains("fingerprint") { return ("fingerprint-mismatch", nil) }
            if reason.contains("authentication failed") || reason.contains("does not open") { return ("tampered", nil) }
            return ("malformed", nil)
        } catch {
            return ("other: \(error)", nil)
        }
    }

    @Test(arguments: vectors.map(\.name))
    func vector(_ name: String) throws {
        let vector = try #require(Self.vectors.first { $0.name == name })
        let (outcome, record) = Self.outcome(vector)
        #expect(outcome == vector.expect, "\(name)")
        guard let record, let keys = vector.keys else { return }
        #expect(record.id.rawValue == vector.id)
        #expect(record.id.fileName == vector.file_name)
        #expect(record.versions.count == keys.count)
        for (version, wanted) in zip(record.versions, keys) {
            #expect(version.key == (try SymmetricKey(base64Encoded: wanted.key)))
            #expect(version.key.fingerprint.description == wanted.fingerprint)
            #expect(version.created == wanted.created)
            #expect(version.retired == wanted.retired)
        }
        // An unprotected file is written back byte for byte as the vector has it.
        if vector.passphrase == nil {
            let written = try KeyFile.encode(record, sealing: nil).withUnsafeBytes { Array($0) }
            #expect(written == Array(vector.file.utf8), "\(name): SealKit writes it otherwise")
        }
    }
}
