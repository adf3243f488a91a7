import Foundation
import SealAudit
import SealCore
import SealJSON
import SealKeystore
import SealProfile
import SealTransfer

/// One parser or decoder under fuzzing. Each target feeds the input to the code that reads
/// untrusted bytes and traps when a property that must hold for every input fails, so
/// libFuzzer reports wrong answers as well as crashes.
enum FuzzTarget: String, CaseIterable {
    /// `FieldCipher.decode`, `decrypt` and `KeyRing.decrypt` on arbitrary ciphertext text.
    case ciphertext
    /// `Base64.decode`: strict and canonical, so every accepted text re-encodes to itself.
    case base64
    /// `KeyText.parseKey`: what `keys import` reads from stdin.
    case keytext
    /// `KeyFile.parse`: key files on disk; what parses must serialize and parse back the same.
    case keyfile
    /// `JSONValue.parse`: strict JSON; what parses must serialize and parse back equal, and
    /// `JSONOutline` (the profile fast path's reader) must accept, refuse and write the same.
    case json
    /// `ProfileSchema(parsing:)`: Rownd app schemas.
    case schema
    /// `ProfileEncryptor` decrypt, rotate and encrypt over an arbitrary profile with a fixed schema;
    /// encrypting from text (the fast path) must fail and succeed exactly as the value tree does.
    case profile
    /// `TransferOffer(_:)`: offers pasted into `transfer send --to`.
    case offer
    /// `TransferReceiver.accept`: replies (and parts) typed into `transfer receive`.
    case reply
    /// `PartAssembler`: numbered parts, one per line, in any order.
    case parts
    /// `PaperBackup.open`: paper backups typed into `keys restore`.
    case backup
    /// `Auditor`: an exported file, read as JSON and as NDJSON, with a schema and keys.
    case audit
    /// `NonceBatch` driven by the input as a script of operations (take, discard, new batch with
    /// or without a count): no nonce repeats or is zero, every ciphertext opens, and whatever a
    /// batch drew and did not hand out is zero after a discard and after the batch ends (issue 13).
    case nonces
    /// `PaperBackup.checkChosen` on arbitrary bytes: the length it counts is the text's number of
    /// Unicode scalars, and exactly passphrases of 12 or more pass (issue 13).
    case passphrase

    nonisolated(unsafe) static var selected: FuzzTarget = .ciphertext

    static func runSelected(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        selected.run(bytes)
        return 0
    }

    /// Two fixed keys, so authentication can succeed for inputs libFuzzer learns to build.
    static let keys: [SymmetricKey] = [
        "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=", "+RCiJFwwS1QhC87mwjLZVopVCPERtT2rcjVAZm7MYno=",
    ].compactMap { try? SymmetricKey(base64Encoded: $0) }

    func run(_ bytes: [UInt8]) {
        switch self {
        case .ciphertext: Self.ciphertext(bytes)
        case .base64: Self.base64(bytes)
        case .keytext: _ = try? KeyText.parseKey(bytes)
        case .keyfile: Self.keyFile(bytes)
        case .json: Self.json(bytes)
        case .schema: _ = try? ProfileSchema(parsing: bytes)
        case .profile: Self.profile(bytes)
        case .offer: _ = try? TransferOffer(String(decoding: bytes, as: UTF8.self))
        case .reply: _ = try? TransferReceiver().accept(String(decoding: bytes, as: UTF8.self))
        case .parts: Self.parts(bytes)
        case .backup: Self.backup(bytes)
        case .audit: Self.audit(bytes)
        case .nonces: Self.nonces(bytes)
        case .passphrase: Self.passphrase(bytes)
        }
    }

    private static func ciphertext(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            let sealed = try FieldCipher.decode(text)
            check(sealed.count >= FieldCipher.minimumByteCount, "decode accepted \(sealed.count) bytes")
            check(Base64.encode(sealed) == text, "decode accepted non-canonical text")
        } catch {
            check(error != .authenticationFailed && error != .notUTF8, "decode judged more than the shape")
        }
        if let opened = try? FieldCipher.decrypt(text, usingAnyOf: keys) {
            // Whatever opens must be what encrypting that plaintext under that key gives back.
            let again = FieldCipher.encrypt(opened.plaintext, using: keys[opened.keyIndex])
            check((try? FieldCipher.decrypt(again, using: keys[opened.keyIndex])) == opened.plaintext, "round trip")
        }
        let ring = KeyRing(current: keys[0], retired: [keys[1]])
        if let (plaintext, needsRotation) = try? ring.decrypt(text) {
            check(needsRotation == ((try? FieldCipher.decrypt(text, using: keys[0])) == nil), "needsRotation for \(plaintext.utf8.count) bytes")
        }
    }

    private static func base64(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let decoded = Base64.decode(text)
        if let decoded { check(Base64.encode(decoded) == text, "accepted a non-canonical encoding") }
        // The buffer API agrees with the String one on the same bytes.
        let viaBuffer: [UInt8]? = bytes.withUnsafeBytes { raw in
            guard let length = Base64.decodedLength(of: raw) else { return nil }
            var output = [UInt8](repeating: 0, count: length)
            let ok = output.withUnsafeMutableBytes { Base64.decode(raw, into: $0) }
            return ok ? output : nil
        }
        if Array(text.utf8) == bytes { check(viaBuffer == decoded, "the two decode entry points disagree") }
    }

    private static func keyFile(_ bytes: [UInt8]) {
        guard let file = try? KeyFile.parse(bytes) else { return }
        let serialized = file.serialized()
        let reparsed = serialized.withUnsafeBytes { try? KeyFile.parse(Array($0)) }
        check(reparsed != nil, "a parsed key file does not parse after serializing")
        guard let reparsed else { return }
        check(reparsed.id == file.id && reparsed.protection == file.protection, "id or protection changed")
        check(reparsed.entries.count == file.entries.count, "entries changed")
        for (a, b) in zip(reparsed.entries, file.entries) {
            check(a.fingerprint == b.fingerprint && a.created == b.created && a.retired == b.retired, "an entry changed")
        }
    }

    private static func json(_ bytes: [UInt8]) {
        let parsed = Result { () throws(JSONError) in try JSONValue.parse(bytes) }
        let outlined = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONError) in try JSONOutline(compacting: buffer) }
        }
        switch (parsed, outlined) {
        case (.failure(let a), .failure(let b)): check(a == b, "outline and parse fail differently")
        case (.success(let value), .success(let outline)):
            check(outline.text == Array(value.serialized().utf8), "outline text is not the serialized value")
        default: check(false, "outline and parse disagree on whether the text is JSON")
        }
        guard let value = try? JSONValue.parse(bytes) else { return }
        let text = value.serialized()
        let again = try? JSONValue.parse(text)
        check(again == value, "a parsed value does not survive serializing")
        check(again?.serialized() == text, "serializing is not stable")
    }

    /// A schema with an encrypted field of each kind the profile code treats differently.
    static let fixedSchema: ProfileSchema? = try? ProfileSchema(parsing: """
        {"app": {"schema": {
          "email": {"type": "string", "encryption": {"state": "disabled"}},
          "ssn": {"type": "string", "encryption": {"state": "enabled"}},
          "age": {"type": "number", "encryption": {"state": "enabled"}},
          "tags": {"type": "object", "encryption": {"state": "enabled"}}
        }}}
        """)

    private static func profile(_ bytes: [UInt8]) {
        guard let schema = fixedSchema else { return }
        let encryptor = ProfileEncryptor(schema: schema)
        let ring = KeyRing(current: keys[0], retired: [keys[1]])
        let fromText = Result { () throws(ProfileError) in try encryptor.encrypt(jsonText: bytes, with: ring) }
        let fromTree = Result { () throws(ProfileError) in
            let value: JSONValue
            do throws(JSONError) { value = try JSONValue.parse(bytes) } catch { throw .invalidJSON(error) }
            return try encryptor.encrypt(value, with: ring)
        }
        switch (fromText, fromTree) {
        case (.failure(let a), .failure(let b)): check(a == b, "text and tree paths fail differently")
        case (.success(let text), .success(let tree)):
            // Fresh ciphertexts differ by nonce; what they open to, and everything else, must not.
            let opened = (try? JSONValue.parse(text)).flatMap { try? encryptor.decrypt($0, with: ring).profile }
            check(opened != nil && opened == (try? encryptor.decrypt(tree, with: ring).profile), "text and tree paths differ")
            check(text.count == tree.serialized().utf8.count, "text and tree outputs differ in length")
        default: check(false, "text and tree paths disagree on success")
        }
        guard let value = try? JSONValue.parse(bytes) else { return }
        _ = try? encryptor.decrypt(value, with: ring)
        _ = try? encryptor.rotate(value, with: ring)
        if let sealed = try? encryptor.encrypt(value, with: ring) {
            // What encrypts must decrypt with the same ring.
            check((try? encryptor.decrypt(sealed, with: ring)) != nil, "an encrypted profile does not decrypt")
        }
    }

    private static func parts(_ bytes: [UInt8]) {
        var assembler = PartAssembler()
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            guard (try? assembler.add(String(line))) != nil else { return }
        }
        _ = assembler.incompleteError(expecting: .reply)
    }

    static let backupPassphrase = try? Passphrase("fuzz")

    private static func backup(_ bytes: [UInt8]) {
        guard let backupPassphrase else { return }
        _ = try? PaperBackup.open(String(decoding: bytes, as: UTF8.self), passphrase: backupPassphrase)
    }

    /// Files the audit target rewrites for each input; the auditor reads paths.
    static let auditFolder: String = {
        let folder = (FileManager.default.temporaryDirectory.path) + "/sealkit-fuzz-audit-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }()

    private static func audit(_ bytes: [UInt8]) {
        let ring = KeyRing(current: keys[0], retired: [keys[1]])
        let auditSchema = fixedSchema.map { AuditSchema($0, path: auditFolder + "/schema.json") }
        for name in ["export.json", "export.ndjson"] {
            let path = auditFolder + "/" + name
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { return }
            _ = try? Auditor(schema: auditSchema, keys: [ring]).audit(paths: [path])
            _ = try? Auditor().audit(paths: [path])
        }
    }

    private static func nonces(_ bytes: [UInt8]) {
        let size = FieldCipher.nonceByteCount
        let capacity = NonceBatch.maximumDraw
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity * size, alignment: 16)
        defer { storage.deallocate() }
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        var seen = Set<[UInt8]>()
        var input = bytes[...]
        while let first = input.popFirst() {
            // The high bits choose how many the operation says it needs (0: unknown), the low bits how it goes.
            let expecting = Int(first >> 4)
            var batch = NonceBatch(storage: storage, expecting: expecting == 0 ? nil : expecting)
            while let step = input.popFirst(), step != 0xFF {
                if step & 0x0F == 0 {
                    batch.discard()
                    check(storage.allSatisfy { $0 == 0 }, "unused nonces outlived discard()")
                    continue
                }
                var nonce = [UInt8](repeating: 0, count: size)
                nonce.withUnsafeMutableBytes { batch.take(into: $0.baseAddress!) }
                check(nonce != [UInt8](repeating: 0, count: size), "a zero nonce")
                check(seen.insert(nonce).inserted, "a nonce repeated")
                check(batch.unusedCount >= 0 && batch.unusedCount < capacity, "unused count \(batch.unusedCount)")
                if step & 0x10 != 0 {
                    let value = Array(input.prefix(Int(step >> 5)))
                    let length = FieldCipher.ciphertextLength(forPlaintextByteCount: value.count)
                    let text = String(unsafeUninitializedCapacity: length) { output in
                        value.withUnsafeBytes {
                            FieldCipher.encrypt(
                                bytes: $0, using: keys[0], nonces: &batch, into: UnsafeMutableRawBufferPointer(output))
                        }
                        return length
                    }
                    let opened = try? FieldCipher.decryptBytes(text, usingAnyOf: keys)
                    check(opened?.bytes == value && opened?.keyIndex == 0, "a ciphertext did not open")
                    check(seen.insert(Array(Base64.decode(text)!.prefix(size))).inserted, "a nonce repeated")
                }
            }
            _ = consume batch
            check(storage.allSatisfy { $0 == 0 }, "unused nonces outlived the batch")
        }
    }

    private static func passphrase(_ bytes: [UInt8]) {
        guard let passphrase = try? Passphrase(bytes: bytes) else {
            check(bytes.isEmpty, "a non-empty passphrase was refused")
            return
        }
        let accepted = (try? PaperBackup.checkChosen(passphrase)) != nil
        if let text = String(validating: bytes, as: UTF8.self) {
            let scalars = text.unicodeScalars.count
            check(accepted == (scalars >= PaperBackup.minimumChosenLength), "\(scalars) scalars, accepted: \(accepted)")
            do {
                try PaperBackup.checkChosen(passphrase)
            } catch {
                guard case .tooShort(let length) = error else { return }
                check(length == scalars, "counted \(length), the text has \(scalars)")
            }
        }
    }

    /// Traps when a property fails, which libFuzzer reports as a crash with the input.
    private static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("fuzz property failed: \(message())") }
    }
}
