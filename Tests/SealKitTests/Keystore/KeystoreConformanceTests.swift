import Foundation
import KeystoreConformance
import SealKit
import Testing

/// The shared keystore contract, run against the file and in-memory keystores (the
/// Secret Service keystore runs the same checks in SealSecretServiceTests).
@Suite("Keystore contract: files and memory")
struct KeystoreConformanceTests {
    @Test(arguments: KeystoreConformance.Check.allCases)
    func fileKeystore(_ check: KeystoreConformance.Check) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-contract-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeystoreConformance.run(check, on: .init(protectsAtRest: true) { FileKeystore(root: root, namespace: $0) })
    }

    @Test(arguments: KeystoreConformance.Check.allCases)
    func inMemoryKeystore(_ check: KeystoreConformance.Check) throws {
        try KeystoreConformance.run(check, on: .init(protectsAtRest: false) { InMemoryKeystore(namespace: $0) })
    }
}
