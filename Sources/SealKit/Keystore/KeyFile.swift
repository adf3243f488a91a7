#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The on-disk form of one id's keys: a small line-based text format, parsed straight
/// from a byte buffer so key material never passes through unwipeable Swift strings.
///
/// Unprotected keys (version 1):
/// ```
/// sealkit-keyfile 1
/// id <base64 of the id's UTF-8>
/// protection none
/// key <fingerprint hex> <created unix time> <retired unix time or -> <key base64>
/// ```
/// Protected keys (version 2): the whole record is one AEAD (XChaCha20-Poly1305) under the
/// passphrase-derived key, with every line before `sealed` as associated data, so no line
/// can be changed, swapped, added or dropped without the passphrase:
/// ```
/// sealkit-keyfile 2
/// id <base64 of the id's UTF-8>
/// protection argon2id <opslimit> <memlimit> <salt base64>
/// check <base64 of 16 bytes>
/// key <fingerprint hex> <created unix time> <retired unix time or ->
/// sealed <base64 of nonce ‖ the keys, 32 bytes each, in key-line order, encrypted ‖ tag>
/// ```
/// One `key` line per key, the current key first (the only one without a retired time),
/// then retired keys, newest first. Version 1 files with `protection argon2id` (each key
/// sealed on its own) are still read, and written as version 2 on their next write.
/// See docs/format.md.
///
/// Encoding and decoding are pure (bytes in, bytes out), so any keystore backend can
/// store the same text: `encode(_:sealing:)`, `parse(_:)`, `unlock(passphrase:source:)`.
package struct KeyFile: Sendable {
    package struct Entry: Sendable {
        package var fingerprint: [UInt8]
        package var created: Int64
        package var retired: Int64?
        /// Version 1 only: the base64 characters of the material; secret when the file is
        /// unprotected. A view into one guarded buffer shared by every entry.
        package var material: SecureBytes?
    }

    package struct Protection: Sendable, Equatable {
        package var kdf: PassphraseKDF
        package var salt: [UInt8]

        /// Fresh parameters for a newly protected record: interactive limits, random salt.
        package static func fresh() -> Protection { Protection(kdf: .interactive, salt: PassphraseKDF.makeSalt()) }
    }

    /// The key that seals a record at rest, with the parameters that made it: a passphrase's
    /// Argon2id parameters, or the TPM object it is sealed in.
    package struct Sealing: Sendable {
        /// Argon2id parameters when the key comes from a passphrase; nil when it is sealed to a TPM.
        package let protection: Protection?
        /// The TPM object holding the key, when it is sealed to a TPM.
        package let tpm: TPMSealedKey?
        package let key: SymmetricKey

        /// Derives the sealing key from `passphrase`.
        /// - Parameter source: names the file or item in a damage error.
        package init(protection: Protection, passphrase: Passphrase, source: String) throws(KeystoreError) {
            self.protection = protection
            tpm = nil
            do {
                key = try protection.kdf.deriveKey(from: passphrase, salt: protection.salt)
            } catch {
                throw .damagedKeyFile(path: source, reason: error.description)
            }
        }

        /// A fresh random sealing key, sealed to the TPM under `pin`.
        package init(sealingTo sealer: any TPMKeySealer, pin: Passphrase?) throws(KeystoreError) {
            key = SymmetricKey.generate()
            tpm = try sealer.seal(key, pin: pin)
            protection = nil
        }

        /// The sealing key the TPM unseals.
        package init(unsealing sealed: TPMSealedKey, with sealer: any TPMKeySealer, pin: Passphrase?, id: KeyID) throws(KeystoreError) {
            key = try sealer.unseal(sealed, pin: pin, id: id)
            tpm = sealed
            protection = nil
        }
    }

    package var id: KeyID
    package var protection: Protection?
    /// Version 2 only: the TPM object the sealing key is sealed in (`protection tpm`).
    package var tpm: TPMSealedKey?
    package var entries: [Entry]
    /// 1 or 2.
    package var version: Int
    /// Version 2: the passphrase check value, the sealed keys, and the bytes the AEAD authenticates.
    package var check: [UInt8]?
    package var sealed: [UInt8]?
    package var authenticated: [UInt8]?

    static let magicV1 = "sealkit-keyfile 1"
    static let magicV2 = "sealkit-keyfile 2"

    /// The most keys one id may hold: years of daily rotation. More is refused, so no file
    /// or reply can make a ring of unbounded size.
    package static let maximumKeyCount = 4096

    /// Parses a key file's bytes; opens nothing.
    /// - Throws: a one-line reason (for `KeystoreError.damagedKeyFile`).
    /// - Parameter allowingUnnormalizedID: read a file an earlier SealKit wrote under a non-NFC form
    ///   of its id (for `keys migrate --normalize`); everything else refuses it.
    package static func parse(_ bytes: [UInt8], allowingUnnormalizedID: Bool = false) throws(KeyFileError) -> KeyFile {
        guard bytes.last == UInt8(ascii: "\n") else { throw .init("truncated: no final newline") }
        let lines = bytes.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let magic = lines.first.map { String(decoding: $0, as: UTF8.self) }
        guard lines.count >= 4, magic == magicV1 || magic == magicV2 else {
            throw .init("not a SealKit key file, or a version this SealKit does not know")
        }
        let version = magic == magicV2 ? 2 : 1
        let idFields = fields(lines[1])
        guard idFields.count == 2, idFields[0] == "id", let idBytes = Base64.decode(idFields[1]),
            let idText = String(validating: idBytes, as: UTF8.self), let id = try? KeyID(idText)
        else { throw .init("bad id line") }
        // Ids are NFC since the third hardening round; a file an earlier SealKit wrote under another form of the
        // same name is reported, never used beside its twin.
        guard allowingUnnormalizedID || KeyID.isNormalized(idText) else {
            throw .init(
                "its id '\(id)' is stored in a form other than Unicode NFC, by a SealKit from before ids were "
                    + "normalized; import its keys under the id again (keys backup and restore with that SealKit)")
        }

        let protectionFields = fields(lines[2])
        var protection: Protection?
        var tpm: TPMSealedKey?
        switch protectionFields.first {
        case "protection" where protectionFields.count == 2 && protectionFields[1] == "none" && version == 1:
            protection = nil
        case "protection" where protectionFields.count == 5 && protectionFields[1] == "argon2id":
            guard let ops = decimal(protectionFields[2]), let mem = decimal(protectionFields[3]),
                let salt = Base64.decode(protectionFields[4]), salt.count == PassphraseKDF.saltByteCount
            else { throw .init("bad protection line") }
            let kdf = PassphraseKDF(opsLimit: ops, memLimit: mem)
            guard kdf.isAcceptable else { throw .init("unsupported Argon2id limits") }
            protection = Protection(kdf: kdf, salt: salt)
        case "protection" where protectionFields.count == 5 && protectionFields[1] == "tpm" && version == 2:
            guard protectionFields[2] == "pin" || protectionFields[2] == "nopin", let name = Base64.decode(protectionFields[3]),
                (1...68).contains(name.count), let blob = Base64.decode(protectionFields[4]), (1...1024).contains(blob.count)
            else { throw .init("bad protection line") }
            tpm = TPMSealedKey(hasPIN: protectionFields[2] == "pin", primaryName: name, blob: blob)
        default:
            throw .init("bad protection line")
        }

        var keyLines = lines[3...]
        var check: [UInt8]?, sealed: [UInt8]?, authenticated: [UInt8]?
        if version == 2 {
            let checkFields = fields(lines[3])
            guard checkFields.count == 2, checkFields[0] == "check", let value = Base64.decode(checkFields[1]), value.count == 16
            else { throw .init("bad check line") }
            check = value
            let sealedFields = fields(lines[lines.count - 1])
            guard lines.count >= 6, sealedFields.count == 2, sealedFields[0] == "sealed", let box = Base64.decode(sealedFields[1])
            else { throw .init("bad sealed line") }
            sealed = box
            authenticated = Array(bytes[..<lines[lines.count - 1].startIndex])
            keyLines = lines[4..<(lines.count - 1)]
        }
        guard keyLines.count <= maximumKeyCount else {
            throw .init("it holds \(keyLines.count) keys, more than the \(maximumKeyCount) one id may have")
        }

        // Version 1 material (the only part that may be secret) is copied once into one
        // guarded buffer; each entry holds a view of its part of it.
        let material: SecureBytes?
        do {
            material = version == 1 ? try SecureBytes.copying(bytes) : nil
        } catch {
            throw .init(error.description)
        }
        var entries: [Entry] = []
        entries.reserveCapacity(keyLines.count)
        for line in keyLines {
            let parts = line.split(
                separator: UInt8(ascii: " "), maxSplits: version == 1 ? 4 : 3, omittingEmptySubsequences: false)
            guard parts.count == (version == 1 ? 5 : 4), String(decoding: parts[0], as: UTF8.self) == "key",
                let fingerprint = hexBytes(parts[1]), fingerprint.count == 8,
                let created = decimal(String(decoding: parts[2], as: UTF8.self)).flatMap(Int64.init(exactly:))
            else { throw .init("bad key line") }
            let retiredText = String(decoding: parts[3], as: UTF8.self)
            let retired: Int64?
            if retiredText == "-" {
                retired = nil
            } else if let value = decimal(retiredText).flatMap(Int64.init(exactly:)) {
                retired = value
            } else {
                throw .init("bad key line")
            }
            guard KeyTime.admits(created), retired.map(KeyTime.admits) ?? true else {
                throw .init("a key's created or retired time is outside \(KeyTime.rangeDescription)")
            }
            var slice: SecureBytes?
            if version == 1 {
                guard !parts[4].isEmpty, !parts[4].contains(UInt8(ascii: " ")) else { throw .init("bad key line") }
                slice = material?.slice(parts[4].startIndex..<parts[4].endIndex)
            }
            entries.append(Entry(fingerprint: fingerprint, created: created, retired: retired, material: slice))
        }
        guard let first = entries.first, first.retired == nil, entries.dropFirst().allSatisfy({ $0.retired != nil })
        else { throw .init("it must hold exactly one current key, listed first") }
        return KeyFile(
            id: id, protection: protection, tpm: tpm, entries: entries, version: version, check: check, sealed: sealed,
            authenticated: authenticated)
    }

    /// Public facts, readable without the passphrase. In a protected file they are
    /// authenticated only when the keys are unlocked.
    package var entry: KeyEntry {
        KeyEntry(
            id: id, isProtected: protection != nil || tpm?.hasPIN == true, isSealedToTPM: tpm != nil,
            versions: entries.map {
                KeyEntry.Version(
                    fingerprint: KeyFingerprint(bytes: $0.fingerprint),
                    created: Date(timeIntervalSince1970: TimeInterval($0.created)),
                    retired: $0.retired.map { Date(timeIntervalSince1970: TimeInterval($0)) })
            })
    }

    // MARK: Encoding

    /// Encodes an id's keys: version 1 without `sealing`, else version 2, sealed as one AEAD.
    /// - Returns: the bytes, in guarded memory (they hold key material when unprotected).
    /// - Throws: `.tooManyKeys`, or `SecureMemoryError` wrapped as a file problem.
    package static func encode(_ record: KeyRecord, sealing: Sealing?) throws(KeystoreError) -> SecureBytes {
        guard record.versions.count <= maximumKeyCount else { throw .tooManyKeys(record.id, limit: maximumKeyCount) }
        var header = (sealing == nil ? magicV1 : magicV2) + "\n"
        header += "id " + Base64.encode(Array(record.id.rawValue.utf8)) + "\n"
        if let sealing {
            header += protectionLine(sealing.protection, sealing.tpm)
            header += "check " + Base64.encode(RecordSeal.passphraseCheck(for: sealing.key)) + "\n"
        } else {
            header += "protection none\n"
        }
        func prefix(_ version: KeyRecord.Version) -> String {
            "key \(Hex.encode(version.key.fingerprint.bytes)) \(version.created) \(version.retired.map(String.init) ?? "-")"
        }
        do {
            if let sealing {
                for version in record.versions { header += prefix(version) + "\n" }
                let keys = try SecureBytes.allocate(count: record.versions.count * SymmetricKey.byteCount) { out in
                    for (index, version) in record.versions.enumerated() {
                        version.key.storage.withUnsafeBytes { key in
                            (out.baseAddress! + index * SymmetricKey.byteCount).copyMemory(from: key.baseAddress!, byteCount: key.count)
                        }
                    }
                }
                let associated = Array(header.utf8)
                let box = RecordSeal.seal(keys, authenticating: associated, using: sealing.key)
                return try SecureBytes.copying(Array((header + "sealed " + Base64.encode(box) + "\n").utf8))
            }
            let materials = record.versions.map { $0.key.base64EncodedBytes() }
            let linePrefixes = record.versions.map { prefix($0) + " " }
            let total = header.utf8.count + zip(linePrefixes, materials).reduce(0) { $0 + $1.0.utf8.count + $1.1.count + 1 }
            return try SecureBytes.allocate(count: total) { out in
                var offset = 0
                func append(_ bytes: UnsafeRawBufferPointer) {
                    UnsafeMutableRawBufferPointer(rebasing: out[offset..<(offset + bytes.count)]).copyMemory(from: bytes)
                    offset += bytes.count
                }
                Array(header.utf8).withUnsafeBytes(append)
                for (linePrefix, material) in zip(linePrefixes, materials) {
                    Array(linePrefix.utf8).withUnsafeBytes(append)
                    material.withUnsafeBytes(append)
                    [UInt8(ascii: "\n")].withUnsafeBytes(append)
                }
            }
        } catch {
            throw .outOfMemory(String(describing: error))
        }
    }

    /// The `protection` line, with its newline.
    private static func protectionLine(_ protection: Protection?, _ tpm: TPMSealedKey?) -> String {
        if let tpm {
            return "protection tpm \(tpm.hasPIN ? "pin" : "nopin") \(Base64.encode(tpm.primaryName)) \(Base64.encode(tpm.blob))\n"
        }
        if let protection {
            return "protection argon2id \(protection.kdf.opsLimit) \(protection.kdf.memLimit) \(Base64.encode(protection.salt))\n"
        }
        return "protection none\n"
    }

    private func protectionLine(_ protection: Protection?, _ tpm: TPMSealedKey?) -> String { Self.protectionLine(protection, tpm) }

    /// The parsed file written back in its own version: what a round-trip check compares.
    /// Guarded memory, since a version 1 file may hold keys.
    package func serialized() -> SecureBytes {
        var header = (version == 2 ? Self.magicV2 : Self.magicV1) + "\n"
        header += "id " + Base64.encode(Array(id.rawValue.utf8)) + "\n"
        header += protectionLine(protection, tpm)
        if let check { header += "check " + Base64.encode(check) + "\n" }
        var parts: [SecureBytes] = [SecureBytes(copying: Array(header.utf8))]
        for entry in entries {
            let line = "key \(Hex.encode(entry.fingerprint)) \(entry.created) \(entry.retired.map(String.init) ?? "-")"
            if let material = entry.material {
                parts.append(SecureBytes(copying: Array((line + " ").utf8)))
                parts.append(material)
                parts.append(SecureBytes(copying: [UInt8(ascii: "\n")]))
            } else {
                parts.append(SecureBytes(copying: Array((line + "\n").utf8)))
            }
        }
        if let sealed { parts.append(SecureBytes(copying: Array(("sealed " + Base64.encode(sealed) + "\n").utf8))) }
        return SecureBytes(count: parts.reduce(0) { $0 + $1.count }) { out in
            var offset = 0
            for part in parts {
                part.withUnsafeBytes { bytes in
                    guard bytes.count > 0 else { return }
                    (out.baseAddress! + offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                    offset += bytes.count
                }
            }
        }
    }

    // MARK: Decoding

    /// Opens the keys: with the passphrase when the file is protected, through the TPM when sealed to one.
    /// - Parameters:
    ///   - passphrase: needed for a protected file (the PIN of one sealed to the TPM under a PIN); ignored otherwise.
    ///   - source: names the file (or item) in errors.
    ///   - tpm: unseals a file sealed to the TPM.
    /// - Returns: the keys, all in one guarded allocation, and the sealing to write them back with.
    /// - Throws: `.locked`, `.wrongPassphrase`, `.damagedKeyFile` (also for tampering); for a TPM, `.pinRequired`,
    ///   `.wrongPIN`, `.tpmLockout`, `.sealedToAnotherTPM`, `.tpmUnavailable`.
    package func unlock(
        passphrase: Passphrase?, source: String, tpm sealer: (any TPMKeySealer)? = nil
    ) throws(KeystoreError) -> (record: KeyRecord, sealing: Sealing?) {
        var sealing: Sealing?
        if let tpm {
            guard let sealer else {
                throw .tpmUnavailable(tcti: "-", detail: "key '\(id)' is sealed to a TPM, and this program opened its keystore without one")
            }
            if tpm.hasPIN && passphrase == nil { throw .pinRequired(id) }
            sealing = try Sealing(unsealing: tpm, with: sealer, pin: tpm.hasPIN ? passphrase : nil, id: id)
        } else if let protection {
            guard let passphrase else { throw .locked(id) }
            sealing = try Sealing(protection: protection, passphrase: passphrase, source: source)
        }
        let keys: [SymmetricKey]
        if version == 2, let sealing, let sealed, let check, let authenticated {
            guard ConstantTime.equals(RecordSeal.passphraseCheck(for: sealing.key), check) else {
                // What a TPM unseals is the key the file was sealed with, or the file was changed.
                if tpm != nil { throw .damagedKeyFile(path: source, reason: "the key the TPM unsealed does not match the file") }
                throw .wrongPassphrase(id)
            }
            let opened: SecureBytes
            do {
                opened = try RecordSeal.open(sealed, authenticating: authenticated, using: sealing.key)
            } catch {
                throw .damagedKeyFile(
                    path: source, reason: "it was changed without the \(tpm == nil ? "passphrase" : "TPM") (authentication failed)")
            }
            guard opened.count == entries.count * SymmetricKey.byteCount else {
                throw .damagedKeyFile(path: source, reason: "the sealed keys do not match the key lines")
            }
            keys = SymmetricKey.keys(slicing: opened)
        } else {
            keys = try openVersion1(sealing: sealing, source: source)
        }
        var versions: [KeyRecord.Version] = []
        versions.reserveCapacity(keys.count)
        for (key, entry) in zip(keys, entries) {
            guard key.fingerprint.bytes == entry.fingerprint else {
                throw .damagedKeyFile(path: source, reason: "a key does not match its fingerprint")
            }
            versions.append(KeyRecord.Version(key: key, created: entry.created, retired: entry.retired))
        }
        return (KeyRecord(id: id, versions: versions), sealing)
    }

    /// Version 1: each key on its own line, plain base64 or sealed one by one (secretbox).
    private func openVersion1(sealing: Sealing?, source: String) throws(KeystoreError) -> [SymmetricKey] {
        enum Failure: Error { case badKey, wrongPassphrase, tampered }
        do {
            return try SymmetricKey.batch(count: entries.count) { index, out in
                guard let material = entries[index].material else { throw Failure.badKey }
                if let sealing {
                    let text = material.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                    guard let box = Base64.decode(text) else { throw Failure.badKey }
                    guard let opened = try? SecretWrap.open(box, using: sealing.key) else {
                        // The first key failing means the passphrase is wrong; a later one, tampering.
                        throw index == 0 ? Failure.wrongPassphrase : Failure.tampered
                    }
                    guard opened.count == SymmetricKey.byteCount else { throw Failure.badKey }
                    opened.withUnsafeBytes { out.copyMemory(from: $0) }
                } else {
                    let key = try SymmetricKey(base64Encoded: material)
                    key.storage.withUnsafeBytes { out.copyMemory(from: $0) }
                }
            }
        } catch Failure.wrongPassphrase {
            throw .wrongPassphrase(id)
        } catch Failure.tampered {
            throw .damagedKeyFile(path: source, reason: "a retired key does not open with the passphrase")
        } catch let error as SecureMemoryError {
            throw .outOfMemory(error.description)
        } catch {
            throw .damagedKeyFile(path: source, reason: "bad key")
        }
    }

    private static func fields(_ line: ArraySlice<UInt8>) -> [String] {
        line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A number as `encode` writes it: decimal digits, no sign, no leading zero (but `0` itself), so every
    /// value has one text. `Int64("+7")` and `Int64("007")` would pass, and `-0` would be zero.
    private static func decimal(_ text: String) -> UInt64? {
        let digits = text.utf8
        guard let first = digits.first, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            first != UInt8(ascii: "0") || digits.count == 1
        else { return nil }
        return UInt64(text)
    }

    /// Lower-case hex only, as `serialize` writes it: a fingerprint written any other way is damage.
    private static func hexBytes(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard let bytes = Hex.decode(text), !text.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) })
        else { return nil }
        return bytes
    }
}

/// Why key file bytes could not be parsed.
package struct KeyFileError: Error, Equatable, Sendable {
    package let reason: String
    init(_ reason: String) { self.reason = reason }
}
