import Foundation
import SealKit
import SealTestSupport
import Testing

@Suite("Keys, passphrases and sealed boxes")
struct KeyTests {
    @Test func keyTextRoundTripsThroughTheConstantTimeCodec() throws {
        let key = SymmetricKey.generate()
        let text = key.base64EncodedBytes().withUnsafeBytes { Array($0) }
        #expect(text.count == 44)
        #expect(try SymmetricKey(base64Encoded: text) == key)
    }

    @Test(arguments: ["", "AAAA", "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ", "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ==",
                      " 4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=", "4f4a6IInDuSga0wyQQQpMSrDHIZ_ryoc9w6s5xVF_VQ="])
    func malformedKeyTextIsRefused(_ text: String) {
        #expect(throws: KeyFormatError.notAKey) { try SymmetricKey(base64Encoded: text) }
    }

    @Test func descriptionsNeverShowKeyBytes() throws {
        let key = try SymmetricKey(base64Encoded: "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=")
        var dumped = ""
        dump(key, to: &dumped)
        for shown in [key.description, key.debugDescription, "\(key)", String(reflecting: key), dumped] {
            #expect(!shown.contains("4f4a6IInDuSga0wy"))
            #expect(shown.contains(key.fingerprint.description))
        }
        let passphrase = try Passphrase("hunter2-secret")
        var dumpedPassphrase = ""
        dump(passphrase, to: &dumpedPassphrase)
        for shown in [passphrase.description, String(reflecting: passphrase), dumpedPassphrase] {
            #expect(!shown.contains("hunter2"))
        }
    }

    @Test func fingerprintIsShortStableAndDistinct() throws {
        let key = try SymmetricKey(base64Encoded: "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=")
        let again = try SymmetricKey(base64Encoded: "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=")
        #expect(key.fingerprint == again.fingerprint)
        #expect(key.fingerprint.description.count == 19)
        #expect(key.fingerprint != SymmetricKey.generate().fingerprint)
    }

    /// The vectors docs/transfer.md gives (made with Python's hashlib): BLAKE2b with an 8-byte
    /// output, not the first 8 bytes of a longer digest.
    @Test func fingerprintVectorsFromTheSpec() throws {
        let vectors = [
            ("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "9739:7208:1af0:8e90"),
            ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "6470:5b2b:5d2c:f0d2"),
            ("//////////////////////////////////////////8=", "fcdb:421e:c153:e691"),
        ]
        for (key, fingerprint) in vectors {
            #expect(try SymmetricKey(base64Encoded: key).fingerprint.description == fingerprint)
        }
        #expect(try SymmetricKey(base64Encoded: vectors[0].0).fingerprint.description != "0288:e48f:99c6:92f9")
    }

    @Test func argon2idIsDeterministicPerSaltAndPassphrase() throws {
        let kdf = PassphraseKDF(opsLimit: 1, memLimit: 8192 * 1024)
        let salt = PassphraseKDF.makeSalt()
        let a = try kdf.deriveKey(from: Passphrase("pass"), salt: salt)
        let b = try kdf.deriveKey(from: Passphrase("pass"), salt: salt)
        let c = try kdf.deriveKey(from: Passphrase("Pass"), salt: salt)
        let d = try kdf.deriveKey(from: Passphrase("pass"), salt: PassphraseKDF.makeSalt())
        #expect(a == b && a != c && a != d)
        #expect(throws: PassphraseKDFError.badSalt) { try kdf.deriveKey(from: Passphrase("pass"), salt: [1, 2]) }
        #expect(throws: PassphraseKDFError.unsupportedLimits) {
            try PassphraseKDF(opsLimit: 1, memLimit: 1 << 40).deriveKey(from: Passphrase("pass"), salt: salt)
        }
        #expect(throws: PassphraseError.empty) { try Passphrase(bytes: [UInt8]()) }
    }

    @Test(.requires(.pyNaCl)) func argon2idMatchesPyNaCl() throws {
        let kdf = PassphraseKDF(opsLimit: 2, memLimit: 8192 * 1024)
        let salt = [UInt8](repeating: 7, count: 16)
        let ours = try kdf.deriveKey(from: Passphrase("correct horse"), salt: salt)
        // Compare through a fingerprint-free route: encrypt with ours, decrypt in PyNaCl with its own derivation.
        let sealed = FieldCipher.encrypt("kdf agrees", using: ours)
        let script = """
            import sys, base64, nacl.pwhash, nacl.secret
            key = nacl.pwhash.argon2id.kdf(32, b"correct horse", bytes([7]*16), opslimit=2, memlimit=8192*1024)
            print(nacl.secret.SecretBox(key).decrypt(base64.b64decode(sys.stdin.read())).decode())
            """
        let result = try Python.run(script, stdin: Array((sealed).utf8))
        #expect(result.stdoutText == "kdf agrees\n", "\(result.stderrText)")
    }

    @Test func secretWrapOpensOnlyWithTheRightKey() throws {
        let wrapping = SymmetricKey.generate()
        let secret = SymmetricKey.generate()
        let sealed = SecretWrap.seal(secret.storage, using: wrapping)
        let opened = try SecretWrap.open(sealed, using: wrapping)
        #expect(ConstantTime.equals(opened, secret.storage))
        #expect(throws: CiphertextError.authenticationFailed) { try SecretWrap.open(sealed, using: SymmetricKey.generate()) }
        var tampered = sealed
        try #require(tampered.count > 30)
        tampered[30] ^= 1
        #expect(throws: CiphertextError.authenticationFailed) { try SecretWrap.open(tampered, using: wrapping) }
    }

    @Test(.requires(.pyNaCl)) func sealedBoxOpensOnlyForItsRecipientAndPyNaClAgrees() throws {
        let recipient = BoxKeyPair.generate()
        let message = SecureBytes(copying: Array("for your eyes".utf8))
        let box = try SealedBox.seal(message, to: recipient.publicKey)
        let opened = try SealedBox.open(box, with: recipient)
        #expect(ConstantTime.equals(opened, message))
        #expect(throws: SealedBoxError.cannotOpen) { try SealedBox.open(box, with: BoxKeyPair.generate()) }
        #expect(throws: SealedBoxError.badPublicKey) { try SealedBox.seal(message, to: [1, 2, 3]) }

        // PyNaCl seals to our public key; we open it.
        let script = """
            import sys, base64, nacl.public
            pk = nacl.public.PublicKey(base64.b64decode(sys.stdin.read()))
            print(base64.b64encode(nacl.public.SealedBox(pk).encrypt(b"from python")).decode())
            """
        let result = try Python.run(script, stdin: Array(Base64.encode(recipient.publicKey).utf8))
        let fromPython = try #require(Base64.decode(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
        let plain = try SealedBox.open(fromPython, with: recipient)
        #expect(plain.withUnsafeBytes { Array($0) } == Array("from python".utf8))
    }

    @Test func constantTimeEquality() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
    }
}
