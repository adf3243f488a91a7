import Foundation
import SealKitAudit
import SealKit
import SealKitTransfer
import SealKitQR
@_spi(CLI) import SealKitBackup

/// One parser or decoder under fuzzing. Each target feeds the input to the code that reads
/// untrusted bytes and traps when a property that must hold for every input fails, so
/// libFuzzer reports wrong answers as well as crashes.
enum FuzzTarget: String, CaseIterable {
    /// `FieldCipher.decode`, `decrypt` and `KeyRing.decrypt` on arbitrary ciphertext text.
    case ciphertext
    /// v2 texts (`sk2:`): `CiphertextShape` and `KeyRing.decrypt` with places; whatever opens opens
    /// in its own place only.
    case v2
    /// SLIP-39 shares (`SLIP39.parse`) and share-backup bundles: whatever parses re-encodes to the
    /// same words, and combining parsed shares never traps.
    case shares
    /// Image files for `sealkit scan`: PNG, JPEG and netpbm headers and data; never a trap, and an
    /// image over the pixel bound is refused before its pixels are allocated.
    case image
    /// `Base64.decode`: strict and canonical, so every accepted text re-encodes to itself.
    case base64
    /// `KeyText.parseKey`: what `keys import` reads from stdin.
    case keytext
    /// `KeyFile.parse`: key files on disk; what parses must serialize and parse back the same.
    case keyfile
    /// `JSONValue.parse`: strict JSON; what parses must serialize and parse back equal, and
    /// `JSONOutline` (the profile fast path's reader) and a `JSONValueReader` used for every input before (the
    /// audit's) must accept, refuse and read the same.
    case json
    /// `ProfileSchema(parsing:)`: Rownd app schemas.
    case schema
    /// `ProfileEncryptor` decrypt, rotate and encrypt over an arbitrary profile with a fixed schema;
    /// encrypting from text (the fast path) must fail and succeed exactly as the value tree does.
    case profile
    /// `TransferOffer(_:)`: offers pasted into `transfer send --to`, and answering them.
    case offer
    /// `TransferReceiver.accept`: replies (and parts) typed into `transfer receive --offline`,
    /// for the receiver of Fixtures/transfer's vectors, so seeds made from them open.
    case reply
    /// `SPAKE2Symmetric.finish`: a peer's SPAKE2 message (offers, replies, mailbox `pake` phases).
    case spake2
    /// `WormholeCode(parsing:)`: codes people type.
    case code
    /// `ServerMessage(parsing:)`: whatever a mailbox relay sends over the WebSocket.
    case mailbox
    /// `NetworkTransfer.readKeysMessage` and `readAnswer`: a network peer's decrypted messages.
    case network
    /// `PartAssembler`: numbered parts, one per line, in any order.
    case parts
    /// `PaperBackup.restore`: paper backups typed into `keys restore`.
    case backup
    /// `Auditor`: an exported file, read as JSON and as NDJSON, with a schema and keys.
    case audit
    /// `NonceBatch` driven by the input as a script of operations (take, discard, new batch with
    /// or without a count): no nonce repeats or is zero, every ciphertext opens, and whatever a
    /// batch drew and did not hand out is zero after a discard and after the batch ends.
    case nonces
    /// `PaperBackup.checkChosen` on arbitrary bytes: the length it counts is the text's number of
    /// Unicode scalars, and exactly passphrases of 12 or more pass.
    case passphrase
    /// Profile seals: `ProfileSeal(parsing:)` on arbitrary text, whose accepted texts
    /// re-encode to themselves; and a profile read as JSON, its seal checked for a sealing schema,
    /// where only what the fixed ring sealed verifies, and re-sealing verifies.
    case seal
    /// The audit split around a shuffle: the input as the tagged lines `audit --facts` reads
    /// (`Auditor.writeFacts`), and as the merged facts `audit --from-facts` reads (`Auditor.report(fromFacts:)`),
    /// with and without a schema and keys; whatever `writeFacts` writes is whole NDJSON lines.
    case facts
    case sharing

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
        case .v2: Self.bound(bytes)
        case .shares: Self.shares(bytes)
        case .image:
            if let image = try? QRScanner.decode(bytes) {
                Self.check(image.width * image.height <= QRScanner.maximumPixelCount && image.pixels.count == image.width * image.height, "pixel bound")
                _ = QRScanner.scan(image)
            }
        case .base64: Self.base64(bytes)
        case .keytext: _ = try? KeyText.parseKey(bytes)
        case .keyfile: Self.keyFile(bytes)
        case .json: Self.json(bytes)
        case .schema: _ = try? ProfileSchema(parsing: bytes)
        case .profile: Self.profile(bytes)
        case .offer: Self.offer(bytes)
        case .reply: Self.reply(bytes)
        case .spake2: Self.spake2(bytes)
        case .code: Self.code(bytes)
        case .mailbox: Self.mailbox(bytes)
        case .network: Self.keysMessage(bytes)
        case .parts: Self.parts(bytes)
        case .backup: Self.backup(bytes)
        case .audit: Self.audit(bytes)
        case .nonces: Self.nonces(bytes)
        case .passphrase: Self.passphrase(bytes)
        case .seal: Self.seal(bytes)
        case .facts: Self.facts(bytes)
        case .sharing: Self.sharing(bytes)
        }
    }

    /// The receiver of Fixtures/transfer/vectors.json: code 7-guitarist-revenge and its fixed entropy.
    static let vectorCode = try! WormholeCode(parsing: "7-guitarist-revenge")
    static let vectorEntropy: [UInt8] = {
        // SHA-512 of "receiver entropy", as Fixtures/transfer/make_vectors.py makes it.
        Hex.decode("333ceba8cd47fd2f6d8b0de169bd0285473bd0fe0a2ac54e3a000856375b176c"
            + "4ae66883024a4be9f8ed40411a5ead26d4e1b1fcdfa2199f2531d227d742708a")!
    }()

    private static func offer(_ bytes: [UInt8]) {
        guard let offer = try? TransferOffer(String(decoding: bytes, as: UTF8.self)) else { return }
        check((try? TransferOffer(offer.text))?.message == offer.message, "an offer does not read back from its text")
        check(offer.message.count == SPAKE2Symmetric.messageByteCount, "an offer of \(offer.message.count) bytes")
        if let history = try? KeyHistory(id: KeyID("fuzz"), versions: [.init(key: keys[0], created: Date(), retired: nil)]) {
            // Answering any offer that reads either works or refuses it with a typed error.
            _ = try? offer.reply(sending: [history], code: vectorCode)
        }
    }

    private static func reply(_ bytes: [UInt8]) {
        let receiver = TransferReceiver(code: vectorCode, entropy: { Array(vectorEntropy.prefix($0)) })
        let text = String(decoding: bytes, as: UTF8.self)
        let checked = (try? receiver.check(text)) != nil
        let accepted = (try? receiver.accept(text, now: Date(timeIntervalSince1970: 1_750_000_100))) != nil
        check(!accepted || checked, "accepted a reply that check refuses")
    }

    private static func spake2(_ bytes: [UInt8]) {
        let spake = SPAKE2Symmetric(
            password: Array("7-guitarist-revenge".utf8), identity: Array(TransferOffer.appID.utf8),
            entropy: { [UInt8](repeating: 7, count: $0) })
        guard (try? spake.finish(peerMessage: bytes)) != nil else { return }
        check(bytes.count == SPAKE2Symmetric.messageByteCount && bytes[0] == UInt8(ascii: "S"), "accepted a malformed message")
        check(bytes != spake.message, "accepted its own message")
    }

    private static func mailbox(_ bytes: [UInt8]) {
        guard let message = try? ServerMessage(parsing: bytes) else { return }
        check(bytes.count <= ServerMessage.maximumBytes, "parsed a message over the bound")
        switch message {
        case .allocated(let nameplate): check(ServerMessage.isNameplate(nameplate), "accepted a nameplate that is not digits")
        case .error(let text), .unknown(let text):
            check(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value >= 0x7F }, "kept a control character for a one-line error")
        case .message(_, let phase, let body):
            check(phase.utf8.count <= 256 && body.count * 2 <= bytes.count, "a message part larger than its text")
        default: break
        }
    }

    private static func keysMessage(_ bytes: [UInt8]) {
        let message = bytes.isEmpty ? nil : SecureBytes(copying: bytes)
        if let part = try? NetworkTransfer.readKeysMessage(message) {
            check((1...part.parts).contains(part.part) && !part.keys.isEmpty, "accepted bad part numbers")
            check(Set(part.keys.map(\.id)).count == part.keys.count, "accepted an id twice")
            // What was read writes back to the same bytes.
            if part.parts == 1, let again = try? NetworkTransfer.keysMessages(part.keys), again.count == 1 {
                check(again[0].withUnsafeBytes { Array($0) } == bytes, "a keys message does not write back the same")
            }
        }
        _ = try? NetworkTransfer.readAnswer(message)
    }

    private static func code(_ bytes: [UInt8]) {
        guard let code = try? WormholeCode(parsing: String(decoding: bytes, as: UTF8.self)) else { return }
        let text = code.revealedText
        check(text.wholeMatch(of: /[1-9][0-9]*-[a-z]+-[a-z]+/) != nil, "a parsed code is not canonical")
        check((try? WormholeCode(parsing: text)) == code, "a code does not parse back from its text")
        check(!code.description.contains(text.split(separator: "-")[1]), "a code's description shows its words")
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

    /// The ring the v2 target opens with: the fuzz keys under the id the seed vectors use.
    static let boundRing = KeyRing(current: keys[0], retired: [keys[1]], id: "alice")

    private static func bound(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let shape = CiphertextShape(of: text)
        if case .v2 = shape { check(text.hasPrefix(BoundCipher.prefix), "v2 without its prefix") }
        for place in [CiphertextPlace.field("ssn"), .context(""), .context("billing")] {
            // Where only v2 opens, nothing without SealKit's prefix does.
            if (try? boundRing.decrypt(text, place: place, acceptsV1: false)) != nil {
                check(text.hasPrefix(BoundCipher.prefix), "a value without the v2 prefix opened where only v2 opens")
            }
            guard let (plaintext, _) = try? boundRing.decrypt(text, place: place) else { continue }
            check(shape != nil, "opened text that has no ciphertext shape")
            if case .v2 = shape {
                let elsewhere: CiphertextPlace = place == .field("ssn") ? .field("notes") : .field("ssn")
                check((try? boundRing.decrypt(text, place: elsewhere)) == nil, "a v2 value opened in another place")
                let again = try? boundRing.encrypt(plaintext, format: .v2, place: place)
                check(again.flatMap { try? boundRing.decrypt($0, place: place).plaintext } == plaintext, "v2 round trip")
            }
        }
    }

    /// Identities of the fixed keys, for opening shared values.
    static let identities = keys.map(ShareIdentity.init(deriving:))

    /// Shared values (sk3), group texts and identity texts: parsed, never trusted. A value that verifies for a place
    /// verifies for no other; one that opens re-seals and opens again; a group text read back is the same text.
    private static func sharing(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        for place in [CiphertextPlace.field("ssn"), .context("")] {
            guard let value = try? SharedValue(text: text, place: place) else { continue }
            let elsewhere: CiphertextPlace = place == .field("ssn") ? .field("notes") : .context("other")
            check((try? SharedValue(text: text, place: elsewhere)) == nil, "a shared value verified in another place")
            check(value.recipientCount >= 1, "a shared value with no recipient")
            if let plaintext = try? value.open(with: identities) {
                let again = try? SharedValue.seal(plaintext, from: identities[0], to: [value.sender], owner: value.owner, place: place)
                check(again.flatMap { try? SharedValue(text: $0, place: place).open(with: identities) } == plaintext, "sk3 round trip")
            }
        }
        if let group = try? GroupText(text: text) {
            check(group.hasMember(group.creator), "a group whose creator is not a member")
            check((try? GroupText(text: group.text)) == group, "a group text read back differs")
        }
        if let identity = try? PublicIdentity(text: text) {
            check((try? PublicIdentity(text: identity.text)) == identity, "an identity read back differs")
            check(SafetyNumber(text: identity.fingerprint.description) == identity.fingerprint, "a fingerprint read back differs")
        }
        _ = try? AgeEnvelope.parse(bytes)
    }

    private static func shares(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        var parsed: [SLIP39.Share] = []
        for line in text.split(separator: "\n") {
            guard let share = try? SLIP39.parse(String(line)) else { continue }
            let words = line.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).joined(separator: " ")
            check(
                SLIP39.words(
                    identifier: share.identifier, extendable: share.extendable, iterationExponent: share.iterationExponent,
                    groupIndex: share.groupIndex, groupThreshold: share.groupThreshold, groupCount: share.groupCount,
                    memberIndex: share.memberIndex, memberThreshold: share.memberThreshold, value: share.value) == words,
                "a parsed share does not re-encode to its words")
            parsed.append(share)
        }
        if !parsed.isEmpty { _ = try? SLIP39.recover(parsed) }
        _ = try? ShareBackup.sharesTag(of: text)
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
        check(reparsed.id == file.id && reparsed.protection == file.protection && reparsed.tpm == file.tpm, "id or protection changed")
        check(reparsed.entries.count == file.entries.count, "entries changed")
        for (a, b) in zip(reparsed.entries, file.entries) {
            check(a.fingerprint == b.fingerprint && a.created == b.created && a.retired == b.retired, "an entry changed")
        }
        check(reparsed.version == file.version && reparsed.sealed == file.sealed, "version or sealed record changed")
        // Unprotected keys open without Argon2id: opening must fail cleanly or give one key per line.
        if file.protection == nil, file.tpm == nil, let (record, _) = try? file.unlock(passphrase: nil, source: "fuzz") {
            check(record.versions.count == file.entries.count, "an unlocked record lost keys")
        }
    }

    /// One reader for the whole run, as the audit keeps one for a whole file.
    nonisolated(unsafe) private static var reader = JSONValueReader()

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
        // The audit's reader keeps its working memory from text to text (and here from input to input): each
        // line, and the whole input, must read exactly as a fresh parse reads it, whatever came before.
        for text in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) + [bytes[...]] {
            let fresh = Result { () throws(JSONError) in try JSONValue.parse(Array(text)) }
            let reused = Array(text).withUnsafeBufferPointer { buffer in
                Result { () throws(JSONError) in try reader.parse(buffer) }
            }
            switch (fresh, reused) {
            case (.failure(let a), .failure(let b)): check(a == b, "a reused reader fails differently")
            case (.success(let a), .success(let b)): check(a == b, "a reused reader reads another value")
            default: check(false, "a reused reader and a fresh parse disagree on whether the text is JSON")
            }
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

    static let sealingSchema = try? ProfileSchema(
        parsing: #"{"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled"}}, "n": {"type": "number", "encryption": {"state": "enabled"}}}, "sealkit": {"seal": true}}"#)

    private static func seal(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let seal = ProfileSeal(parsing: text) {
            check(seal.text == text, "an accepted seal does not re-encode to itself")
            check(seal.version > 0 && seal.mac.count == ProfileSeal.macByteCount, "an accepted seal has version 0 or a short MAC")
        }
        guard let schema = sealingSchema, let value = try? JSONValue.parse(bytes) else { return }
        let encryptor = ProfileEncryptor(schema: schema)
        let ring = KeyRing(current: keys[0], retired: [keys[1]], id: "alice")
        let mark = SealMark(version: 2, mac: [UInt8](repeating: 7, count: 32))
        if let seal = try? encryptor.verifySeal(of: value, with: ring, against: mark) {
            check(seal.version > 2, "a seal at or below the remembered version verified")
        }
        if let (sealed, seal) = try? encryptor.sealing(value, with: ring, version: 3) {
            let verified = try? encryptor.verifySeal(of: sealed, with: ring, against: mark)
            check(verified == seal, "a profile just sealed does not verify")
            let other = KeyRing(current: keys[0], id: "bob")
            check((try? encryptor.verifySeal(of: sealed, with: other, against: nil)) == nil, "a seal verified for another user")
        }
    }

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
            // Strict encryption leaves no flagged top-level member beside `data`.
            if case .object(let members) = sealed {
                check(schema.encryptedFieldsBesideData(in: members).isEmpty, "a flagged field beside data was left as it was")
                // Nor a field near a flagged one's name, which the schema does not declare.
                let fields = schema.dataIndex(in: members).flatMap { members[$0].value.objectValue } ?? members
                check(schema.undeclared(in: fields).isEmpty, "a field near a flagged one left in plaintext")
            }
        }
        // --rownd fails only on a profile that is not an object, and encrypting first changes nothing
        // that decrypting shows: a string is sealed, or already opened, either way.
        let rownd = RowndProfileEncryptor(schema: schema)
        let opened = try? rownd.decrypt(value, with: ring)
        _ = try? rownd.rotate(value, with: ring)
        check((opened != nil) == (value.objectValue != nil), "--rownd decrypt fails on an object, or not on another value")
        if let sealed = try? rownd.encrypt(value, with: ring) {
            check((try? rownd.decrypt(sealed.profile, with: ring))?.profile == opened?.profile, "--rownd encrypt changes what decrypt shows")
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
        _ = try? PaperBackup.restore(String(decoding: bytes, as: UTF8.self), passphrase: backupPassphrase)
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

    private static func facts(_ bytes: [UInt8]) {
        let ring = KeyRing(current: keys[0], retired: [keys[1]])
        let auditSchema = fixedSchema.map { AuditSchema($0, path: auditFolder + "/schema.json") }
        let path = auditFolder + "/facts.ndjson"
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { return }
        for auditor in [Auditor(schema: auditSchema, keys: [ring]), Auditor()] {
            var written = ""
            _ = try? auditor.writeFacts(path: path) { written += $0 }
            check(written.isEmpty || written.hasSuffix("\n"), "facts that are not whole lines")
            for line in written.split(separator: "\n") {
                check((try? JSONValue.parse(Array(line.utf8))) != nil, "a fact that is not JSON")
            }
            _ = try? auditor.report(fromFacts: path) { _ in }
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
            let length = PaperBackup.chosenLength(of: passphrase)
            check(length == scalars, "counted \(length), the text has \(scalars)")
        }
    }

    /// Traps when a property fails, which libFuzzer reports as a crash with the input.
    private static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("fuzz property failed: \(message())") }
    }
}
