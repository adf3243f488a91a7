import FoundationEssentials
import SealCore

// The key-file text form's meaning, bytes in and bytes out, apart from where the bytes are
// kept: `FileKeystore` keeps them in a file per id, `SecretServiceKeystore` in a keyring
// item per id. Both read and write through these functions, so the two never disagree on
// the form (docs/format.md describes it once, for both).

/// The key that seals key material at rest, with the parameters that made it.
struct KeySealing: Sendable {
    let protection: KeyFile.Protection
    let key: SymmetricKey

    /// Derives a sealing key for a new entry under `passphrase`, with a fresh salt.
    /// - Parameter damaged: how to report a failure, naming where the keys are kept.
    static func new(passphrase: Passphrase, damaged: (String) -> KeystoreError) throws(KeystoreError) -> KeySealing {
        let protection = KeyFile.Protection(kdf: .interactive, salt: PassphraseKDF.makeSalt())
        return KeySealing(protection: protection, key: try derive(protection, passphrase, damaged: damaged))
    }

    static func derive(
        _ protection: KeyFile.Protection, _ passphrase: Passphrase, damaged: (String) -> KeystoreError
    ) throws(KeystoreError) -> SymmetricKey {
        do {
            return try protection.kdf.deriveKey(from: passphrase, salt: protection.salt)
        } catch {
            throw damaged(error.description)
        }
    }
}

extension KeyFile {
    /// Parses the key-file text form.
    /// - Parameter damaged: makes the error for bytes that do not parse, from a one-line reason.
    static func decode(_ bytes: [UInt8], damaged: (String) -> KeystoreError) throws(KeystoreError) -> KeyFile {
        do {
            return try parse(bytes)
        } catch {
            throw damaged(error.reason)
        }
    }

    /// The text form of `record`, sealed under `sealing` when given, in guarded memory.
    static func encode(_ record: KeyRecord, sealing: KeySealing?) -> SecureBytes {
        let entries = record.versions.map { version in
            let material: SecureBytes
            if let sealing {
                let sealed = SecretWrap.seal(version.key.storage, using: sealing.key)
                material = SecureBytes(copying: Array(Base64.encode(sealed).utf8))
            } else {
                material = version.key.base64EncodedBytes()
            }
            return KeyFile.Entry(
                fingerprint: version.key.fingerprint.bytes, created: version.created, retired: version.retired,
                material: material)
        }
        return KeyFile(id: record.id, protection: sealing?.protection, entries: entries).serialized()
    }

    /// The keys, opened: under the passphrase when the entry is protected.
    /// - Parameter damaged: makes the error for an entry that parses but does not open.
    /// - Throws: `.locked` without a passphrase for protected keys, `.wrongPassphrase`, or `damaged(...)`.
    func unlock(
        passphrase: Passphrase?, damaged: (String) -> KeystoreError
    ) throws(KeystoreError) -> (record: KeyRecord, sealing: KeySealing?) {
        var sealing: KeySealing?
        if let protection {
            guard let passphrase else { throw .locked(id) }
            sealing = KeySealing(
                protection: protection, key: try KeySealing.derive(protection, passphrase, damaged: damaged))
        }
        var versions: [KeyRecord.Version] = []
        for (index, entry) in entries.enumerated() {
            let key: SymmetricKey
            if let sealing {
                let sealed = entry.material.withUnsafeBytes { Base64.decode(String(decoding: $0, as: UTF8.self)) }
                guard let sealed else { throw damaged("bad sealed key") }
                do {
                    key = SymmetricKey(storage: try SecretWrap.open(sealed, using: sealing.key))
                } catch {
                    // The first key failing means the passphrase is wrong; a later one, tampering.
                    if index == 0 { throw .wrongPassphrase(id) }
                    throw damaged("a retired key does not open with the passphrase")
                }
            } else {
                do {
                    key = try SymmetricKey(base64Encoded: entry.material)
                } catch {
                    throw damaged("bad key")
                }
            }
            guard key.storage.count == SymmetricKey.byteCount, key.fingerprint.bytes == entry.fingerprint else {
                throw damaged("a key does not match its fingerprint")
            }
            versions.append(KeyRecord.Version(key: key, created: entry.created, retired: entry.retired))
        }
        return (KeyRecord(id: id, versions: versions), sealing)
    }

    /// Public facts about the keys, read without unlocking them.
    var entry: KeyEntry {
        KeyEntry(
            id: id, isProtected: protection != nil,
            versions: entries.map {
                KeyEntry.Version(
                    fingerprint: KeyFingerprint(bytes: $0.fingerprint),
                    created: Date(timeIntervalSince1970: TimeInterval($0.created)),
                    retired: $0.retired.map { Date(timeIntervalSince1970: TimeInterval($0)) })
            })
    }
}
