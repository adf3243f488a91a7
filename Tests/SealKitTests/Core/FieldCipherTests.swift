import Foundation
import SealKit
import SealTestSupport
import Testing

@Suite("Field encryption")
struct FieldCipherTests {
    @Test func roundTripsTextOfEverySize() throws {
        let key = SymmetricKey.generate()
        for length in [0, 1, 2, 3, 15, 16, 17, 63, 64, 65, 1000, 70_000] {
            let text = String(repeating: "é", count: length / 2) + String(repeating: "a", count: length % 2)
            let sealed = FieldCipher.encrypt(text, using: key)
            #expect(sealed.utf8.count == Base64.encodedLength(of: 40 + text.utf8.count))
            #expect(try FieldCipher.decrypt(sealed, using: key) == text)
        }
    }

    @Test func layoutIsNonceThenTagThenBody() throws {
        let key = SymmetricKey.generate()
        let sealed = try #require(Base64.decode(FieldCipher.encrypt("abc", using: key)))
        #expect(sealed.count == 24 + 16 + 3)
    }

    @Test func freshNonceEveryTime() throws {
        let key = SymmetricKey.generate()
        let nonces = Set((0..<200).map { _ in Array(Base64.decode(FieldCipher.encrypt("same", using: key))!.prefix(24)) })
        #expect(nonces.count == 200)
    }

    @Test func errorsSayWhatIsWrong() throws {
        let key = SymmetricKey.generate()
        #expect(throws: CiphertextError.notBase64) { try FieldCipher.decrypt("@@@@", using: key) }
        #expect(throws: CiphertextError.tooShort(byteCount: 3)) { try FieldCipher.decrypt("AAAA", using: key) }
        #expect(CiphertextError.tooShort(byteCount: 3).description == "too short to be a ciphertext (3 bytes, need at least 40)")
        let other = FieldCipher.encrypt("x", using: SymmetricKey.generate())
        #expect(throws: CiphertextError.authenticationFailed) { try FieldCipher.decrypt(other, using: key) }
        #expect(CiphertextError.authenticationFailed.description == "authentication failed: wrong key or tampered data")
    }

    @Test func nonUTF8PlaintextIsAnError() throws {
        let key = SymmetricKey.generate()
        let sealed = [UInt8]([0xFF, 0xFE]).withUnsafeBytes { FieldCipher.encrypt(bytes: $0, using: key) }
        #expect(throws: CiphertextError.notUTF8) { try FieldCipher.decrypt(sealed, using: key) }
    }

    @Test func decryptTriesEveryKeyAndReportsWhich() throws {
        let old = SymmetricKey.generate(), new = SymmetricKey.generate()
        let ring = KeyRing(current: new, retired: [old])
        let underOld = FieldCipher.encrypt("legacy", using: old)
        let result = try ring.decrypt(underOld)
        #expect(result.plaintext == "legacy" && result.needsRotation)
        #expect(try ring.decrypt(ring.encrypt("fresh")).needsRotation == false)
    }

    @Test(.requires(.pyNaCl)) func pynaclDecryptsWhatWeEncrypt() throws {
        let key = SymmetricKey.generate()
        // The key reaches Python through stdin, never argv; export via the package-only path.
        let keyText = key.base64EncodedBytes().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let texts = ["", "a", "unicode ✓ 日本", String(repeating: "z", count: 100_000)]
        let sealed = texts.map { FieldCipher.encrypt($0, using: key) }
        let input = ([keyText] + sealed).joined(separator: "\n")
        let script = """
            import sys, base64, nacl.secret
            lines = sys.stdin.read().split("\\n")
            box = nacl.secret.SecretBox(base64.b64decode(lines[0]))
            for c in lines[1:]:
                print(base64.b64encode(box.decrypt(base64.b64decode(c))).decode())
            """
        let result = try Python.run(script, stdin: Array((input).utf8))
        #expect(result.status == 0, "\(result.stderrText)")
        let decoded = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .map { String(decoding: Base64.decode(String($0)) ?? [0xFF], as: UTF8.self) }
        #expect(decoded == texts)
    }
}
