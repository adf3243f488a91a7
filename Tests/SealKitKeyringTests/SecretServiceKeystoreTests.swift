import Foundation
import KeystoreConformance
@_spi(CLI) import SealKit
import SealKitKeyring
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The keyring every in-process test shares: libsecret keeps one connection to the
/// session bus per process, so this process's DBUS_SESSION_BUS_ADDRESS is pointed at a
/// private test keyring once, before the first call. Tests keep apart by namespace.
enum SharedKeyring {
    static let session: Result<KeyringSession, KeyringSession.Failure> = {
        do {
            let session = try KeyringSession()
            setenv("DBUS_SESSION_BUS_ADDRESS", session.environment["DBUS_SESSION_BUS_ADDRESS"]!, 1)
            return .success(session)
        } catch let failure as KeyringSession.Failure {
            return .failure(failure)
        } catch {
            return .failure(KeyringSession.Failure(description: "\(error)"))
        }
    }()

    /// A keystore on the shared test keyring.
    static func keystore(_ namespace: Namespace) throws -> SecretServiceKeystore {
        let session = try session.get()
        return SecretServiceKeystore(namespace: namespace, timeout: .seconds(10), environment: session.environment)
    }

    /// `secret-tool`, the independent Secret Service client, on the shared test keyring.
    static func secretTool(_ arguments: [String], stdin: String = "") throws -> ProcessResult {
        try ChildProcess.run("secret-tool", arguments, stdin: Array(stdin.utf8), environment: session.get().environment)
    }
}

@Suite("Secret Service keystore", .requiresKeyring)
struct SecretServiceKeystoreTests {
    @Test(arguments: KeystoreConformance.Check.allCases)
    func followsTheKeystoreContract(_ check: KeystoreConformance.Check) throws {
        try KeystoreConformance.run(check, on: .init(protectsAtRest: true) { try SharedKeyring.keystore($0) })
    }

    /// secret-tool finds the item by the documented attributes, and reads back exactly the
    /// key-file text form; neither the label nor any attribute holds key material.
    @Test func anIndependentClientFindsAndReadsEachItem() throws {
        let namespace = try Namespace("tool-\(UUID().uuidString.prefix(8).lowercased())")
        let store = try SharedKeyring.keystore(namespace)
        let material = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="
        let key = try SymmetricKey(base64Encoded: material)
        let id = try KeyID("alice@example.com")
        try store.store(key, as: id, mode: .create, passphrase: nil)
        let query = ["application", "sealkit", "namespace", namespace.name, "id", id.rawValue, "version", "1"]

        let lookup = try SharedKeyring.secretTool(["lookup"] + query)
        #expect(lookup.status == 0, "\(lookup.stderrText)")
        let lines = lookup.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "sealkit-keyfile 1")
        #expect(lines.contains("protection none"))
        let keyLine = try #require(lines.first { $0.hasPrefix("key ") })
        #expect(keyLine.split(separator: " ").last.map(String.init) == material)
        let keyFields = keyLine.split(separator: " ")
        try #require(keyFields.count > 1, "a key line of \(keyFields.count) fields")
        #expect(keyFields[1] == key.fingerprint.description.replacingOccurrences(of: ":", with: ""))

        let search = try SharedKeyring.secretTool(["search", "--all"] + query)
        #expect(search.status == 0, "\(search.stderrText)")
        // secret-tool prints the item's attributes and label on stderr or stdout by version; read both.
        let described = (search.stdoutText + search.stderrText).split(separator: "\n")
        let label = try #require(described.first { $0.hasPrefix("label = ") })
        #expect(label == "label = SealKit key 'alice@example.com' (\(namespace.name)) \(key.fingerprint)")
        let attributes = described.filter { $0.hasPrefix("attribute.") }
        #expect(Set(attributes) == [
            "attribute.application = sealkit", "attribute.namespace = \(namespace.name)",
            "attribute.id = alice@example.com", "attribute.version = 1",
        ])
        let fragments = [material, String(material.prefix(12)), hex(material)]
        for line in attributes + [label] {
            #expect(!fragments.contains { line.contains($0) }, "\(line)")
        }

        // A rotation rewrites the one item (no second one appears) and its label follows the current key.
        let next = SymmetricKey.generate()
        try store.rotate(id, to: next, passphrase: nil)
        let after = try SharedKeyring.secretTool(["search", "--all"] + query)
        let items = (after.stdoutText + after.stderrText).split(separator: "\n")
        #expect(items.filter { $0.hasPrefix("[/") }.count == 1)
        #expect(items.contains { $0 == "label = SealKit key 'alice@example.com' (\(namespace.name)) \(next.fingerprint)" })
        #expect(items.filter { $0.hasPrefix("key ") }.count == 2)
    }

    /// With a passphrase the item holds the sealed form: the key appears nowhere in it.
    @Test func aProtectedItemHoldsOnlyTheSealedForm() throws {
        let namespace = try Namespace("sealed-\(UUID().uuidString.prefix(8).lowercased())")
        let store = try SharedKeyring.keystore(namespace)
        let material = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="
        let id = try KeyID("bob")
        try store.store(SymmetricKey(base64Encoded: material), as: id, mode: .create, passphrase: Passphrase("correct horse"))
        let lookup = try SharedKeyring.secretTool(["lookup", "application", "sealkit", "namespace", namespace.name, "id", "bob"])
        #expect(lookup.status == 0)
        #expect(lookup.stdoutText.contains("\nprotection argon2id "))
        #expect(!lookup.stdoutText.contains(material) && !lookup.stdoutText.contains(String(material.prefix(16))))
        #expect(try store.keyRing(for: id, passphrase: Passphrase("correct horse")).current == SymmetricKey(base64Encoded: material))
    }

    /// An item someone else rewrote into something that does not parse: one clear error
    /// naming the id and the fix, no crash; and it can still be deleted.
    @Test(arguments: ["garbage", "sealkit-keyfile 1\nid Ym9i\nprotection none\n", "sealkit-keyfile 1\nid b3RoZXI=\nprotection none\nkey 0011223344556677 0 - 4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=\n"])
    func anItemChangedBySomeoneElseIsReportedWithTheFix(_ contents: String) throws {
        let namespace = try Namespace("damaged-\(UUID().uuidString.prefix(8).lowercased())")
        let store = try SharedKeyring.keystore(namespace)
        let id = try KeyID("bob")
        try store.store(SymmetricKey.generate(), as: id, mode: .create, passphrase: nil)
        // secret-tool replaces the item that has exactly these attributes (libsecret adds xdg:schema to SealKit's).
        let overwrite = try SharedKeyring.secretTool(
            ["store", "--label=tampered", "xdg:schema", "org.sealkit.Key", "application", "sealkit",
             "namespace", namespace.name, "id", "bob", "version", "1"], stdin: contents)
        #expect(overwrite.status == 0, "\(overwrite.stderrText)")
        do {
            _ = try store.keyRing(for: id, passphrase: nil)
            Issue.record("a damaged item was accepted")
        } catch {
            guard case .keyring(.damagedItem(let reported, let reportedNamespace, _)) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(reported == id && reportedNamespace == namespace.name)
            // The library names the item; the command words the fix (`AdviceTests` pins its line).
            #expect(error.description.contains("no longer parses") && error.description.contains("someone else changed it"))
            #expect(SealKitError(error).detail == .damagedKeyringItem && SealKitError(error).namespace == namespace.name)
            #expect(!error.description.contains("4f4a6IInDuSga0wy") && !error.description.contains("\n"))
        }
        #expect(throws: KeystoreError.self) { try store.entries() }
        try store.delete(id)
        #expect(try store.entries().isEmpty)
    }

    private func hex(_ base64: String) -> String {
        (Data(base64Encoded: base64) ?? Data()).map { String(format: "%02x", $0) }.joined()
    }
}
