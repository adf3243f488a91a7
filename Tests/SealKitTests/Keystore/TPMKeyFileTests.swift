import Foundation
@_spi(CLI) import SealKit
import Testing

/// TPM protection in the keystore rules and the key-file parser, with a stand-in sealer (no TPM: the real one,
/// against swtpm, is `Tests/SealKitCLITests/TPMCLITests.swift`). The stand-in "seals" by keeping the key in the
/// blob, which only a test may do; it refuses a wrong PIN and another "TPM" as the real one does.
@Suite("TPM protection in the file keystore")
struct TPMKeyFileTests {
    /// A TPM's dictionary-attack counter as the TPM keeps it: each wrong PIN counts one failure, and at `maximum`
    /// every object with a PIN is refused (lockout), whatever PIN it is given. `reads` counts the reads of it.
    final class DictionaryAttack: @unchecked Sendable {
        private let lock = NSLock()
        private var failures = 0
        private var readCount = 0
        let maximum: Int
        let interval: Int

        init(maximum: Int = 3, interval: Int = 1000) {
            self.maximum = maximum
            self.interval = interval
        }

        var reads: Int { lock.withLock { readCount } }

        /// Whether the TPM is in lockout now.
        var isLockedOut: Bool { lock.withLock { failures >= maximum } }

        func fail() { lock.withLock { failures += 1 } }

        func state() -> TPMLockoutState {
            lock.withLock {
                readCount += 1
                return TPMLockoutState(failures: failures, maximum: maximum, interval: interval)
            }
        }
    }

    struct StandInTPM: TPMKeySealer {
        let name: [UInt8]
        var dictionaryAttack = DictionaryAttack()

        func lockoutState() throws(KeystoreError) -> TPMLockoutState { dictionaryAttack.state() }

        func seal(_ key: SymmetricKey, pin: Passphrase?) throws(KeystoreError) -> TPMSealedKey {
            let pinBytes = pin?.storage.withUnsafeBytes { Array($0) } ?? []
            let keyBytes = key.storage.withUnsafeBytes { Array($0) }
            return TPMSealedKey(hasPIN: pin != nil, primaryName: name, blob: [UInt8(pinBytes.count)] + pinBytes + keyBytes)
        }

        func unseal(_ sealed: TPMSealedKey, pin: Passphrase?, id: KeyID) throws(KeystoreError) -> SymmetricKey {
            guard sealed.primaryName == name else { throw .sealedToAnotherTPM(id) }
            // The blob comes back through the code under test: a wrong one is damage, never a crash.
            guard let first = sealed.blob.first, sealed.blob.count > Int(first) else { throw .damagedKeyFile(path: "", reason: "bad blob") }
            let count = Int(first)
            let pinBytes = pin?.storage.withUnsafeBytes { Array($0) } ?? []
            // Objects with a PIN are under the dictionary-attack protection; those without are sealed noDA.
            if sealed.hasPIN && dictionaryAttack.isLockedOut { throw .tpmLockout(id, hasPIN: true) }
            guard Array(sealed.blob[1..<(1 + count)]) == pinBytes else {
                dictionaryAttack.fail()
                throw .wrongPIN(id)
            }
            do {
                return try SymmetricKey(bytes: Array(sealed.blob[(1 + count)...]))
            } catch {
                throw .damagedKeyFile(path: "", reason: "bad key")
            }
        }
    }

    let root = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-tpm-\(UUID().uuidString)").path

    func store(name: [UInt8] = [0, 11, 1], sealing: Bool = false, dictionaryAttack: DictionaryAttack = DictionaryAttack()) -> FileKeystore {
        var store = FileKeystore(root: root)
        store.tpm = StandInTPM(name: name, dictionaryAttack: dictionaryAttack)
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

    @Test func promptTriesStayBelowWhatTheTPMHasLeft() throws {
        // remaining 3 -> 2 tries, 2 -> 1, 1 -> none, 0 -> none; never more than asked for.
        let offered = (0...4).map { TPMLockoutState(failures: $0, maximum: 3, interval: 1000).promptTries(atMost: 3) }
        #expect(offered == [2, 1, 0, 0, 0])
        #expect(TPMLockoutState(failures: 0, maximum: 32, interval: 600).promptTries(atMost: 3) == 3)
        #expect(TPMLockoutState(failures: 0, maximum: 0, interval: 600).promptTries(atMost: 3) == 0)
    }

    @Test func pinPromptTriesFollowTheTPMsCountOfWrongPINs() throws {
        let id = try KeyID("dave")
        let plainID = try KeyID("erin")
        let counter = DictionaryAttack(maximum: 3, interval: 1000)
        try store(sealing: true, dictionaryAttack: counter).store(SymmetricKey.generate(), as: id, mode: .create, passphrase: Passphrase("1234"))
        let plainKey = SymmetricKey.generate()
        try store(sealing: true, dictionaryAttack: counter).store(plainKey, as: plainID, mode: .create, passphrase: nil)
        let keystore = store(dictionaryAttack: counter)
        // A key without a PIN asks the TPM nothing.
        #expect(try keystore.pinPromptTries(for: plainID, atMost: 3) == 3)
        #expect(counter.reads == 0)
        #expect(try keystore.pinPromptTries(for: id, atMost: 3) == 2)
        #expect(throws: KeystoreError.wrongPIN(id)) { try keystore.keyRing(for: id, passphrase: Passphrase("0000")) }
        #expect(try keystore.pinPromptTries(for: id, atMost: 3) == 1)
        #expect(throws: KeystoreError.wrongPIN(id)) { try keystore.keyRing(for: id, passphrase: Passphrase("0000")) }
        // One more wrong PIN would lock the TPM out: the prompt asks for none and says how long to wait.
        #expect(throws: KeystoreError.lastPINTry(id, interval: 1000)) { try keystore.pinPromptTries(for: id, atMost: 3) }
        #expect(throws: KeystoreError.wrongPIN(id)) { try keystore.keyRing(for: id, passphrase: Passphrase("0000")) }
        #expect(throws: KeystoreError.tpmLockout(id, hasPIN: true)) { try keystore.pinPromptTries(for: id, atMost: 3) }
        #expect(throws: KeystoreError.tpmLockout(id, hasPIN: true)) { try keystore.keyRing(for: id, passphrase: Passphrase("1234")) }
        // The key without a PIN still opens.
        #expect(try keystore.keyRing(for: plainID, passphrase: nil).current == plainKey)
    }

    @Test func aLockoutOfAKeyWithoutAPINBlamesOtherKeysAndSaysHowToReseal() throws {
        let id = try KeyID("frank")
        let error = KeystoreError.tpmLockout(id, hasPIN: false)
        #expect(error.description.contains("key 'frank' has no PIN") && error.description.contains("wrong PINs for other keys"), "\(error)")
        #expect(!error.description.contains("too many wrong PINs"))
        #expect(SealKitError(error).reason == .tpmLockout)
        #expect(SealKitError(error).detail == .pinlessKeyInLockout && SealKitError(error).keyID == id)
        #expect(SealKitError(KeystoreError.tpmLockout(id, hasPIN: true)).detail == nil)
    }

    @Test func aKeySealedToAnotherTPMIsReplacedByTheSameKeyAndOnlyByIt() throws {
        let id = try KeyID("gina")
        let key = SymmetricKey.generate()
        // Sealed on another machine's TPM: this keystore's TPM has another primary key name.
        try store(name: [7, 7], sealing: true).store(key, as: id, mode: .create, passphrase: nil)
        let here = store()
        let path = here.folder + "/" + id.fileName
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: KeystoreError.sealedToAnotherTPM(id)) { try here.keyRing(for: id, passphrase: nil) }
        // Another key under the id: nothing changes, and the refusal is the one that says what to run.
        let other = try KeyHistory(id: id, versions: [.init(key: SymmetricKey.generate(), created: Date(timeIntervalSince1970: 1_700_000_000), retired: nil)])
        #expect(throws: KeystoreError.sealedToAnotherTPM(id)) { try here.store(other, passphrase: nil) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // The same key (from a backup or a transfer): stored in its place, sealed to this TPM.
        let same = try KeyHistory(id: id, versions: [.init(key: key, created: Date(timeIntervalSince1970: 1_700_000_000), retired: nil)])
        #expect(try here.store(same, passphrase: nil) == .stored)
        #expect(try here.keyRing(for: id, passphrase: nil).current == key)
        #expect(try #require(try here.entry(for: id)).isSealedToTPM)
    }
}
