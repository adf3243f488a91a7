import Foundation
import SealCore
@testable import SealKeystore
import Testing

/// TPM protection in the keystore rules and the key-file parser, with a stand-in sealer (no TPM: the real one,
/// against swtpm, is `Tests/SealKitCLITests/TPMCLITests.swift`). The stand-in "seals" by keeping the key in the
/// blob, which only a test may do; it refuses a wrong PIN and another "TPM" as the real one does.
@Suite("TPM protection in the file keystore")
struct TPMKeyFileTests {
    struct StandInTPM: TPMKeySealer {
        let name: [UInt8]

        func seal(_ key: SymmetricKey, pin: Passphrase?) throws(KeystoreError) -> TPMSealedKey {
            let pinBytes = pin?.storage.withUnsafeBytes { Array($0) } ?? []
            let keyBytes = key.storage.withUnsafeBytes { Array($0) }
            return TPMSealedKey(hasPIN: pin != nil, primaryName: name, blob: [UInt8(pinBytes.count)] + pinBytes + keyBytes)
        }

        func unseal(_ sealed: TPMSealedKey, pin: Passphrase?, id: KeyID) throws(KeystoreError) -> SymmetricKey {
            guard sealed.primaryName == name else { throw .sealedToAnotherTPM(id) }
            let count = Int(sealed.blob[0])
            let pinBytes = pin?.storage.withUnsafeBytes { Array($0) } ?? []
            guard Array(sealed.blob[1..<(1 + count)]) == pinBytes else { throw .wrongPIN(id) }
            do {
                return try SymmetricKey(bytes: Array(sealed.blob[(1 + count)...]))
            } catch {
                throw .damagedKeyFile(path: "", reason: "bad key")
            }
        }
    }

    let root = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-tpm-\(UUID().uuidString)").path

    func store(name: [UInt8] = [0, 11, 1], sealing: Bool = false) -> FileKeystore {
        var store = FileKeystore(root: root)
        store.tpm = StandInTPM(name: name)
        store.sealsNewKeysToTPM = sealing
        return store
    }

    @Test func newKeysAreSealedAndRotationKeepsThemSealed() throws {
        let id = try KeyID("alice")
        let key = SymmetricKey.generate()
        #expect(try store(sealing: true).store(key, as: id, mode: .create, passphrase: nil) == .stored)
        let plain = store()
        let entry = try #require(try plain.entry(for: id))
        #expect(entry.isSealedToTPM && !entry.isProtected)
        #expect(try plain.keyRing(for: id, passphrase: nil).current == key)
        let rotated = try plain.rotate(id, to: SymmetricKey.generate(), passphrase: nil)
        #expect(rotated.isSealedToTPM)
        let text = try String(contentsOfFile: plain.folder + "/" + id.fileName, encoding: .utf8)
        #expect(text.contains("\nprotection tpm nopin "))
        // Without a sealer, or with another TPM, nothing opens.
        #expect(throws: KeystoreError.sealedToAnotherTPM(id)) { try store(name: [9]).keyRing(for: id, passphrase: nil) }
        #expect {
            try FileKeystore(root: root).keyRing(for: id, passphrase: nil)
        } throws: { error in
            if case .tpmUnavailable = error as? KeystoreError { return true }
            return false
        }
    }

    @Test func aPINIsNeededAndWrongPINsChangeNothing() throws {
        let id = try KeyID("bob")
        let pin = try Passphrase("2468")
        try store(sealing: true).store(SymmetricKey.generate(), as: id, mode: .create, passphrase: pin)
        let plain = store()
        #expect(try plain.entry(for: id)?.isProtected == true)
        let path = plain.folder + "/" + id.fileName
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: KeystoreError.pinRequired(id)) { try plain.keyRing(for: id, passphrase: nil) }
        #expect(throws: KeystoreError.wrongPIN(id)) { try plain.rotate(id, to: SymmetricKey.generate(), passphrase: Passphrase("1357")) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func protectionChangesMoveBetweenNonePassphraseAndTPM() throws {
        let id = try KeyID("carol")
        let key = SymmetricKey.generate()
        let plain = store()
        try plain.store(key, as: id, mode: .create, passphrase: nil)
        #expect(try plain.changeProtection(of: id, from: nil, to: .tpm(pin: nil)).isSealedToTPM)
        let passphrase = try Passphrase("a passphrase")
        let protected = try plain.changeProtection(of: id, from: nil, to: .passphrase(passphrase))
        #expect(protected.isProtected && !protected.isSealedToTPM)
        #expect(try plain.changeProtection(of: id, from: passphrase, to: .tpm(pin: try Passphrase("99"))).isSealedToTPM)
        let none = try plain.changePassphrase(of: id, from: try Passphrase("99"), to: nil)
        #expect(!none.isProtected && !none.isSealedToTPM)
        #expect(try plain.keyRing(for: id, passphrase: nil).current == key)
    }

    @Test func theParserTakesOnlyWellFormedTPMLines() throws {
        let name = Data([0, 11] + [UInt8](repeating: 7, count: 32)).base64EncodedString()
        let blob = Data([1, 2, 3]).base64EncodedString()
        func file(_ protection: String, version: Int = 2) -> [UInt8] {
            let id = Data("x".utf8).base64EncodedString()
            let check = Data(count: 16).base64EncodedString()
            let sealed = Data(count: 72).base64EncodedString()
            return Array("sealkit-keyfile \(version)\nid \(id)\n\(protection)\ncheck \(check)\nkey 0123456789abcdef 1700000000 -\nsealed \(sealed)\n".utf8)
        }
        let parsed = try KeyFile.parse(file("protection tpm pin \(name) \(blob)"))
        #expect(parsed.tpm == TPMSealedKey(hasPIN: true, primaryName: [0, 11] + [UInt8](repeating: 7, count: 32), blob: [1, 2, 3]))
        #expect(parsed.entry.isSealedToTPM && parsed.entry.isProtected)
        let reserialized = parsed.serialized().withUnsafeBytes { Array($0) }
        #expect(reserialized == file("protection tpm pin \(name) \(blob)"))
        for bad in [
            "protection tpm maybe \(name) \(blob)", "protection tpm pin \(name)", "protection tpm pin  \(blob)",
            "protection tpm nopin \(Data(count: 69).base64EncodedString()) \(blob)",
            "protection tpm nopin \(name) \(Data(count: 1025).base64EncodedString())", "protection tpm nopin \(name) \(blob) extra",
        ] {
            #expect(throws: KeyFileError.self, "\(bad)") { try KeyFile.parse(file(bad)) }
        }
        #expect(throws: KeyFileError.self) { try KeyFile.parse(file("protection tpm nopin \(name) \(blob)", version: 1)) }
    }
}
