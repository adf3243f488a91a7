// An app that imports swift-crypto and every SealKit product, and names swift-crypto's types unqualified,
// as Vapor, JWT and most server apps do. It must build (nothing in SealKit shadows them) and run.
import Crypto
import SealKit
import SealKitAudit
import SealKitBackup
import SealKitKeyring
import SealKitQR
import SealKitTPM
import SealKitTransfer

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wraps a data key under a key-encryption key with AES-GCM, as an app's own key storage might.
func wrap(_ key: SymmetricKey, under kek: SymmetricKey) throws -> Data {
    let bytes = key.withUnsafeBytes { Data($0) }
    return try AES.GCM.seal(bytes, using: kek).combined!
}

/// Undoes `wrap(_:under:)`.
func unwrap(_ wrapped: Data, under kek: SymmetricKey) throws -> SymmetricKey {
    SymmetricKey(data: try AES.GCM.open(AES.GCM.SealedBox(combined: wrapped), using: kek))
}

/// A per-purpose key from a master key, with HKDF over SHA-256.
func derive(_ master: SymmetricKey, purpose: String) -> SymmetricKey {
    HKDF<SHA256>.deriveKey(
        inputKeyMaterial: master, salt: Data("coexistence".utf8), info: Data(purpose.utf8), outputByteCount: 32)
}

func check(_ condition: Bool, _ what: String) {
    if !condition {
        print("coexistence: \(what)")
        exit(1)
    }
}

do {
    // swift-crypto, unqualified.
    let master = SymmetricKey(size: .bits256)
    let kek = derive(master, purpose: "kek")
    let dataKey = SymmetricKey(size: .bits256)
    check(try unwrap(try wrap(dataKey, under: kek), under: kek) == dataKey, "AES.GCM round trip failed")
    let box = try ChaChaPoly.seal(Data("hello".utf8), using: derive(master, purpose: "chacha"))
    check(try ChaChaPoly.open(box, using: derive(master, purpose: "chacha")) == Data("hello".utf8), "ChaChaPoly round trip failed")
    check(SHA256.hash(data: Data("abc".utf8)).description.hasSuffix(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "SHA256 of abc is wrong")

    // SealKit's Vault beside it: a field encrypted and decrypted under a user's key in memory.
    let vault = Vault(keystore: try Keystore.inMemory(), user: try KeyID("user-1"), format: .v2)
    try vault.ensureKey(existing: "{}")
    let sealed = try vault.encrypt(plaintext: "555-0100", context: "phone")
    check(sealed != "555-0100", "the Vault returned the plaintext")
    check(try vault.decrypt(ciphertext: sealed, context: "phone") == "555-0100", "the Vault's round trip failed")
    // And a paper backup of the user's keys, restored into another keystore.
    let passphrase = PaperBackup.makePassphrase()
    let lines = try PaperBackup.make(try vault.keystore.exportKeys([vault.user], passphrase: nil), passphrase: passphrase)
    let restored = try Keystore.inMemory()
    try restored.importKeys(try PaperBackup.restore(lines.joined(separator: "\n"), passphrase: passphrase).keys, passphrase: nil)
    let copy = Vault(keystore: restored, user: vault.user, format: .v2)
    check(try copy.decrypt(ciphertext: sealed, context: "phone") == "555-0100", "the restored key does not open the field")
    // The QR scanner hosted in this app: PNG bytes to an image with the public API, read by
    // zbar here and by zxing-cpp in a helper started from this app's own executable.
    let png = try QRCode("sealkit-offer-v2:coexistence").rendered(as: .png)
    check(QRScanner.scan(try GrayImage(imageFile: png)) == [Array("sealkit-offer-v2:coexistence".utf8)], "the QR scanner did not read its own PNG")
    // The TPM product beside swift-crypto: which TPM, named without reaching one.
    check(TPM().tcti == "device:/dev/tpmrm0", "the default TPM is not device:/dev/tpmrm0")
    print("coexistence: swift-crypto and every SealKit product in one app: ok")
} catch {
    print("coexistence: \(error)")
    exit(1)
}
