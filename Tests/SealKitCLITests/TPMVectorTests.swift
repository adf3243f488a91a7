import Foundation
import SealKit
import SealTestSupport
import Testing

/// The TPM key-file vectors (docs/format.md, "Sealed to the TPM"): key files sealed to the fixed swtpm state in
/// Fixtures/tpm/state, each with its expected outcome, checked by `sealkit` against swtpm running on a copy of that
/// state (the state itself is never changed: a wrong PIN counts in the copy).
@Suite("TPM key-file vectors (swtpm on Fixtures/tpm/state)", .requires(.swtpm))
struct TPMVectorTests {
    struct Vector: Decodable {
        let name: String
        let id: String
        let file: String
        let pin: String?
        let expect: String
        let ciphertext: String?
        let plaintext: String?
    }

    @Test func everyVectorHasItsOutcome() throws {
        let fixtures = Repository.root.appendingPathComponent("Fixtures/tpm")
        let data = try Data(contentsOf: fixtures.appendingPathComponent("vectors.json"))
        struct File: Decodable { let vectors: [Vector] }
        let vectors = try JSONDecoder().decode(File.self, from: data).vectors
        #expect(Set(vectors.map(\.expect)) == ["ok", "wrong-pin", "another-tpm", "tampered"])
        let copy = try TemporaryFolder.make().appendingPathComponent("state")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("state"), to: copy)
        try SoftwareTPM.with(state: copy.path) { tpm in
            for vector in vectors {
                let cli = try CLI(environment: ["SEALKIT_TPM_TCTI": tpm.tcti])
                let folder = cli.home.appendingPathComponent("keys/default")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: cli.home.appendingPathComponent("keys").path)
                let path = folder.appendingPathComponent(try KeyID(vector.id).fileName).path
                #expect(FileManager.default.createFile(atPath: path, contents: Data(vector.file.utf8), attributes: [.posixPermissions: 0o600]))
                let environment = vector.pin.map { ["SEALKIT_PASSPHRASE": $0] } ?? [:]
                // An `ok` vector decrypts its ciphertext; the others are asked to encrypt, which needs the key as much.
                let result = try vector.ciphertext.map { try cli.run(["decrypt", "--key", vector.id, "--", $0], environment: environment) }
                    ?? cli.run(["encrypt", "--key", vector.id], stdin: "x", environment: environment)
                switch vector.expect {
                case "ok":
                    #expect(result.status == 0 && result.output == vector.plaintext, "\(vector.name): \(result.stderr)")
                case "wrong-pin":
                    expectCleanFailure(result, containing: "wrong TPM PIN")
                    #expect(result.status == 77, "\(vector.name)")
                case "another-tpm":
                    expectCleanFailure(result, containing: "sealed to another machine's TPM")
                    #expect(result.status == 77, "\(vector.name)")
                case "tampered":
                    expectCleanFailure(result, containing: "is damaged")
                    #expect(result.status == 65, "\(vector.name)")
                default:
                    Issue.record("unknown outcome \(vector.expect)")
                }
            }
        }
    }
}
