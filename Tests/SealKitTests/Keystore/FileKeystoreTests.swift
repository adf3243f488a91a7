import Foundation
import SealKit
import Testing

@Suite("File keystore")
struct FileKeystoreTests {
    let root: String
    let store: FileKeystore

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-ks-\(UUID().uuidString)/nested/root").path
        store = FileKeystore(root: root)
    }

    func files() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: store.folder)) ?? [] }

    @Test func readingNeverCreatesAnything() throws {
        #expect(try store.entries().isEmpty)
        #expect(try store.entry(for: KeyID("x")) == nil)
        #expect(throws: KeystoreError.notFound(try KeyID("x"), namespace: "default")) {
            try store.keyRing(for: KeyID("x"), passphrase: nil)
        }
        #expect(!FileManager.default.fileExists(atPath: root))
    }

    @Test func storeRulesIdenticalIsUnchangedDifferentIsRefused() throws {
        let id = try KeyID("user-1")
        let key = SymmetricKey.generate()
        #expect(try store.store(key, as: id, mode: .import, passphrase: nil) == .stored)
        let before = try Data(contentsOf: URL(fileURLWithPath: store.folder + "/" + id.fileName))
        #expect(try store.store(key, as: id, mode: .import, passphrase: nil) == .unchanged)
        #expect(throws: KeystoreError.conflictingKey(id)) {
            try store.store(SymmetricKey.generate(), as: id, mode: .import, passphrase: nil)
        }
        #expect(throws: KeystoreError.alreadyExists(id)) { try store.store(key, as: id, mode: .create, passphrase: nil) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.folder + "/" + id.fileName)) == before)
        #expect(try store.keyRing(for: id, passphrase: nil).current == key)
    }

    @Test func protectedKeysNeedTheRightPassphraseAndWrongOnesChangeNothing() throws {
        let id = try KeyID("p")
        let key = SymmetricKey.generate()
        let passphrase = try Passphrase("open sesame")
        try store.store(key, as: id, mode: .create, passphrase: passphrase)
        let path = store.folder + "/" + id.fileName
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(!String(decoding: before, as: UTF8.self).contains(String(decoding: key.base64EncodedBytes().withUnsafeBytes { Array($0) }, as: UTF8.self)))
        #expect(try store.entry(for: id)?.isProtected == true)
        #expect(try store.entry(for: id)?.current.fingerprint == key.fingerprint)
        #expect(throws: KeystoreError.locked(id)) { try store.keyRing(for: id, passphrase: nil) }
        #expect(throws: KeystoreError.wrongPassphrase(id)) { try store.keyRing(for: id, passphrase: Passphrase("nope")) }
        #expect(throws: KeystoreError.wrongPassphrase(id)) { try store.rotate(id, to: SymmetricKey.generate(), passphrase: Passphrase("nope")) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try store.keyRing(for: id, passphrase: passphrase).current == key)
        let rotated = try store.rotate(id, to: SymmetricKey.generate(), passphrase: passphrase)
        #expect(rotated.isProtected)
        #expect(try store.keyRing(for: id, passphrase: passphrase).retired == [key])
    }

    @Test func permissionsAreTightAndLooseKeyFilesAreRefused() throws {
        let id = try KeyID("perm")
        try store.store(SymmetricKey.generate(), as: id, mode: .create, passphrase: nil)
        for folder in [root, store.folder, (root as NSString).deletingLastPathComponent] {
            #expect(try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int == 0o700, "\(folder)")
        }
        for name in files() {
            #expect(try FileManager.default.attributesOfItem(atPath: store.folder + "/" + name)[.posixPermissions] as? Int == 0o600)
        }
        let path = store.folder + "/" + id.fileName
        chmod(path, 0o640)
        #expect(throws: KeystoreError.insecurePermissions(path: path, mode: 0o100640)) { try store.keyRing(for: id, passphrase: nil) }
    }

    @Test func abandonedTemporaryFilesAreIgnoredAndCleanedUp() throws {
        try store.store(SymmetricKey.generate(), as: KeyID("a"), mode: .create, passphrase: nil)
        let stale = store.folder + "/.tmp-deadbeef"
        _ = FileManager.default.createFile(atPath: stale, contents: Data("half a key".utf8), attributes: [.posixPermissions: 0o600])
        #expect(try store.entries().count == 1)
        try store.store(SymmetricKey.generate(), as: KeyID("b"), mode: .create, passphrase: nil)
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(files().filter { $0.hasSuffix(".key") }.count == 2)
    }

    /// The key files' hex is written lower-case, so an upper-case fingerprint is damage, not the same key.
    @Test func anUpperCaseFingerprintIsADamagedKeyFile() throws {
        let id = try KeyID("A")
        var key = SymmetricKey.generate()
        while !Hex.encode(key.fingerprint.bytes).contains(where: \.isLetter) { key = .generate() }
        try store.store(key, as: id, mode: .create, passphrase: nil)
        let path = store.folder + "/" + id.fileName
        let contents = try String(contentsOfFile: path, encoding: .utf8)
        let fingerprint = Hex.encode(key.fingerprint.bytes)
        #expect(contents.contains("key " + fingerprint + " "))
        try contents.replacingOccurrences(of: "key " + fingerprint, with: "key " + fingerprint.uppercased())
            .write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: KeystoreError.damagedKeyFile(path: path, reason: "bad key line")) {
            try store.keyRing(for: id, passphrase: nil)
        }
    }

    @Test(arguments: [
        "", "sealkit-keyfile 2\n", "garbage", "sealkit-keyfile 1\nid QQ==\nprotection none\n",
        "sealkit-keyfile 1\nid QQ==\nprotection none\nkey 0011223344556677 0 - AAAA\n",
        "sealkit-keyfile 1\nid QQ==\nprotection none\nkey 0011223344556677 0 5 4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=\n",
        "sealkit-keyfile 1\nid QQ==\nprotection rot13\nkey 0011223344556677 0 - 4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=\n",
        "sealkit-keyfile 1\nid QQ==\nprotection argon2id 1 99999999999999 AAAAAAAAAAAAAAAAAAAAAA==\nkey 0011223344556677 0 - AAAA\n",
        "sealkit-keyfile 1\nid QQ==\nprotection none\nkey 0011223344556677 0 - 4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=",
    ])
    func damagedKeyFilesAreReportedNotCrashed(_ contents: String) throws {
        let id = try KeyID("A")
        try FileManager.default.createDirectory(atPath: store.folder, withIntermediateDirectories: true)
        let path = store.folder + "/" + id.fileName
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
        do {
            _ = try store.keyRing(for: id, passphrase: nil)
            Issue.record("a damaged key file was accepted")
        } catch {
            guard case .damagedKeyFile(let reportedPath, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(reportedPath == path)
            #expect(!error.description.contains("4f4a6IInDuSga0wy"))
        }
    }

    @Test func keyThatDoesNotMatchItsFingerprintIsDamaged() throws {
        let id = try KeyID("A")
        try FileManager.default.createDirectory(atPath: store.folder, withIntermediateDirectories: true)
        let contents = "sealkit-keyfile 1\nid QQ==\nprotection none\nkey 0011223344556677 0 - 4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=\n"
        _ = FileManager.default.createFile(atPath: store.folder + "/" + id.fileName, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
        #expect(throws: KeystoreError.self) { try store.keyRing(for: id, passphrase: nil) }
    }

    @Test func unwritableRootFailsCleanly() throws {
        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-file-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: blocker, contents: Data())
        let broken = FileKeystore(root: blocker + "/keys")
        #expect(throws: KeystoreError.self) { try broken.store(SymmetricKey.generate(), as: KeyID("x"), mode: .create, passphrase: nil) }
        do {
            try broken.store(SymmetricKey.generate(), as: KeyID("x"), mode: .create, passphrase: nil)
        } catch {
            #expect((error as? KeystoreError)?.description.hasPrefix("cannot create folder") == true)
        }
    }

    @Test func deleteRemovesDamagedAndTooOpenKeyFiles() throws {
        let damaged = try KeyID("damaged"), open = try KeyID("open")
        try store.store(SymmetricKey.generate(), as: open, mode: .create, passphrase: nil)
        chmod(store.folder + "/" + open.fileName, 0o644)
        _ = FileManager.default.createFile(
            atPath: store.folder + "/" + damaged.fileName, contents: Data("garbage".utf8), attributes: [.posixPermissions: 0o600])
        #expect(throws: KeystoreError.self) { try store.keyRing(for: damaged, passphrase: nil) }
        try store.delete(damaged)
        try store.delete(open)
        #expect(files().filter { $0.hasSuffix(".key") }.isEmpty)
    }

    @Test func deleteRemovesOnlyThatID() throws {
        try store.store(SymmetricKey.generate(), as: KeyID("a"), mode: .create, passphrase: nil)
        try store.store(SymmetricKey.generate(), as: KeyID("b"), mode: .create, passphrase: nil)
        try store.delete(KeyID("a"))
        #expect(try store.entries().map(\.id.rawValue) == ["b"])
        #expect(throws: KeystoreError.notFound(try KeyID("a"), namespace: "default")) { try store.delete(KeyID("a")) }
    }

    @Test func concurrentWritersFromManyThreadsLoseNothing() async throws {
        let store = self.store
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<10 { _ = try? store.store(SymmetricKey.generate(), as: KeyID("t\(worker)-\(i)"), mode: .create, passphrase: nil) }
                }
            }
        }
        #expect(try store.entries().count == 80)
    }
}

@Suite("Key ids and namespaces")
struct KeyIDTests {
    @Test func acceptsAnyReasonableID() throws {
        for id in ["alice", "alice@example.com", "ユーザー", "with space", "..x", String(repeating: "a", count: 255)] {
            let parsed = try KeyID(id)
            #expect(parsed.fileName.count == 44 && parsed.fileName.hasSuffix(".key"))
        }
        #expect(try KeyID("A").fileName != KeyID("a").fileName)
    }

    @Test func refusesUnsafeIDs() {
        #expect(throws: KeyIDError.empty) { try KeyID(validating: "") }
        #expect(throws: KeyIDError.dotName) { try KeyID(validating: ".") }
        #expect(throws: KeyIDError.dotName) { try KeyID(validating: "..") }
        #expect(throws: KeyIDError.containsSlash) { try KeyID(validating: "a/b") }
        #expect(throws: KeyIDError.containsControlCharacter) { try KeyID(validating: "a\u{1B}[2J") }
        #expect(throws: KeyIDError.containsControlCharacter) { try KeyID(validating: "a\u{85}") }
        #expect(throws: KeyIDError.tooLong(byteCount: 256)) { try KeyID(validating: String(repeating: "a", count: 256)) }
        #expect(throws: KeyIDError.tooLong(byteCount: 256)) { try KeyID(validating: String(repeating: "é", count: 128)) }
    }

    @Test func namespaces() throws {
        #expect(try Namespace("prod-1.eu_west").name == "prod-1.eu_west")
        for bad in ["", ".hidden", "a/b", "..", "ü", String(repeating: "n", count: 65)] {
            #expect(throws: NamespaceError.invalid) { try Namespace(bad) }
        }
    }
}

@Suite("In-memory keystore")
struct InMemoryKeystoreTests {
    @Test func followsTheSameRules() throws {
        let store = InMemoryKeystore()
        let id = try KeyID("m")
        let key = SymmetricKey.generate()
        #expect(try store.store(key, as: id, mode: .create, passphrase: nil) == .stored)
        #expect(try store.store(key, as: id, mode: .import, passphrase: nil) == .unchanged)
        #expect(throws: KeystoreError.conflictingKey(id)) { try store.store(SymmetricKey.generate(), as: id, mode: .import, passphrase: nil) }
        #expect(throws: KeystoreError.alreadyExists(id)) { try store.store(key, as: id, mode: .create, passphrase: nil) }
        let next = SymmetricKey.generate()
        try store.rotate(id, to: next, passphrase: nil)
        #expect(try store.keyRing(for: id, passphrase: nil).retired == [key])
        try store.delete(id)
        #expect(try store.entries().isEmpty)
    }
}
