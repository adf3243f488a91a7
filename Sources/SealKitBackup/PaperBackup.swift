#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

/// Keys sealed under a passphrase, to print or write down and restore later:
/// `sealkit-backup-v1:<base64url>`, split into parts when long.
///
/// ```swift
/// let passphrase = PaperBackup.makePassphrase()          // six words to write down
/// let lines = try PaperBackup.make(keys, passphrase: passphrase)
/// // ... later, on another device:
/// let restored = try PaperBackup.restore(lines.joined(separator: "\n"), passphrase: passphrase)
/// ```
///
/// The passphrase goes through Argon2id (libsodium's moderate limits: 3 passes,
/// 256 MiB) with a random salt; the keys are sealed with XSalsa20-Poly1305 under the
/// result. The limits and salt travel in the backup, so it opens wherever SealKit runs.
public enum PaperBackup {
    /// What an opened backup holds.
    public struct Contents: Sendable {
        /// When the backup was made.
        public let created: Date
        /// Each id's keys, current first, in the order backed up.
        public let keys: [KeyHistory]

        /// The keys stored under `id`.
        /// - Parameter id: the key id asked for.
        /// - Returns: the id's keys, current first.
        /// - Throws: `SealKitError` with reason `.keyNotInBackup`, naming the ids the backup does hold.
        public func history(for id: KeyID) throws(SealKitError) -> KeyHistory {
            guard let found = keys.first(where: { $0.id == id }) else { throw BackupError(.notInBackup(id, holds: keys.map(\.id))) }
            return found
        }
    }

    /// Words in a passphrase SealKit makes: 6 × log2(7,776) ≈ 77.5 bits.
    public static let generatedWordCount = 6
    /// The fewest characters (Unicode scalars) of a passphrase the user chooses for a backup.
    public static let minimumChosenLength = 12

    /// Makes a backup passphrase: words of the EFF large word list chosen with libsodium's
    /// generator, separated by spaces. Each word adds log2(7,776) ≈ 12.9 bits, so the default six
    /// give 77.5 bits; at Argon2id's moderate cost per guess that is out of reach of offline guessing.
    /// - Parameter wordCount: how many words; at least `generatedWordCount`.
    /// - Returns: the passphrase, in guarded memory.
    public static func makePassphrase(wordCount: Int = generatedWordCount) -> Passphrase {
        precondition(wordCount >= generatedWordCount, "a backup passphrase has at least \(generatedWordCount) words")
        let words = EFFWordList.words
        var bytes: [UInt8] = []
        bytes.reserveCapacity(wordCount * 10)
        defer { ConstantTime.wipe(&bytes) }
        for index in 0..<wordCount {
            if index > 0 { bytes.append(UInt8(ascii: " ")) }
            bytes.append(contentsOf: words[Int(SecureRandom.uniform(below: UInt32(words.count)))].utf8)
        }
        // Never empty: six words.
        return try! Passphrase(bytes: bytes)
    }

    /// Checks a passphrase the user chose for a new backup: at least `minimumChosenLength`
    /// characters, so a stolen printout is not opened by a short guess.
    /// - Parameter passphrase: the passphrase the user chose.
    /// - Throws: `SealKitError` with reason `.passphraseTooShort`, saying the length found.
    @_spi(CLI) public static func checkChosen(_ passphrase: Passphrase) throws(SealKitError) {
        let length = chosenLength(of: passphrase)
        guard length >= minimumChosenLength else {
            throw BackupError(
                .passphraseTooShort,
                "a backup passphrase you choose needs at least \(minimumChosenLength) characters "
                    + "(this one has \(length)); choose a longer one, or give none and SealKit makes one of "
                    + "\(generatedWordCount) words")
        }
    }

    /// The characters (Unicode scalars) of a passphrase, counted from its bytes so that it is
    /// never copied into a String.
    package static func chosenLength(of passphrase: Passphrase) -> Int {
        passphrase.storage.withUnsafeBytes { bytes in bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }
    }

    static let formatVersion: UInt8 = 1
    static let headerByteCount = 8 + 8 + PassphraseKDF.saltByteCount

    /// Seals keys under a passphrase.
    /// - Parameters:
    ///   - keys: the ids and keys to back up, each id once.
    ///   - passphrase: the backup passphrase; it alone opens the backup.
    ///   - now: the time the backup counts as made.
    /// - Returns: the backup's lines: one, or numbered parts when it is too long for one QR code.
    /// - Throws: `SealKitError` for no keys (`.noKeys`), too many keys (`.tooManyKeys`), or when
    ///   Argon2id cannot run (`.passphraseKDFFailed`).
    public static func make(_ keys: [KeyHistory], passphrase: Passphrase, now: Date = Date()) throws(SealKitError) -> [String] {
        try make(keys, passphrase: passphrase, kdf: .moderate, now: now)
    }

    /// `make` with other Argon2id limits: tests and format vectors use `.interactive` to stay fast.
    package static func make(
        _ keys: [KeyHistory], passphrase: Passphrase, kdf: PassphraseKDF, now: Date
    ) throws(SealKitError) -> [String] {
        try BackupError.converting { () throws(CodeError) in try seal(keys, passphrase: passphrase, kdf: kdf, now: now) }
    }

    private static func seal(
        _ keys: [KeyHistory], passphrase: Passphrase, kdf: PassphraseKDF, now: Date
    ) throws(CodeError) -> [String] {
        try KeyBundle.validate(keys)
        let salt = PassphraseKDF.makeSalt()
        let key: SymmetricKey
        do {
            key = try kdf.deriveKey(from: passphrase, salt: salt)
        } catch {
            throw .passphraseKDF(error)
        }
        let plaintext = SecureBytes(count: 1 + 8 + KeyBundle.byteCount(of: keys)) { buffer in
            var writer = ByteWriter(buffer)
            writer.write(formatVersion)
            writer.write(unixTime(now))
            KeyBundle.write(keys, into: &writer)
        }
        var header = [UInt8]()
        header.reserveCapacity(headerByteCount)
        for value in [kdf.opsLimit, kdf.memLimit] { header += (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
        header += salt
        let sealed = SecretWrap.seal(plaintext, using: key)
        return try CodeParts.split(CodeKind.backup.prefix + CodeText.encode(header + sealed))
    }

    /// Opens a backup.
    ///
    /// The passphrase is tried as typed first, so every passphrase that ever opened a backup still
    /// does, and a passphrase the user chose is byte-exact. When that fails and the passphrase reads
    /// as at least `generatedWordCount` words of SealKit's word list (see `listForm(of:)`), its
    /// list form is tried too: a generated passphrase opens however it was written down.
    /// - Parameters:
    ///   - text: the backup: its one line, or its parts one per line in any order (blank lines skipped).
    ///   - passphrase: the backup passphrase.
    /// - Returns: the backup's keys.
    /// - Throws: `SealKitError` with reason `.wrongPassphrase` when the passphrase is wrong or the
    ///   backup was altered (the two cannot be told apart); else for text that is not a backup,
    ///   is damaged or incomplete, or when Argon2id cannot run.
    public static func restore(_ text: String, passphrase: Passphrase) throws(SealKitError) -> Contents {
        try BackupError.converting { () throws(CodeError) in try open(text, passphrase: passphrase) }
    }

    package static func open(_ text: String, passphrase: Passphrase) throws(CodeError) -> Contents {
        let body = try body(of: text)
        let field = { (offset: Int) in body[offset..<(offset + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        let kdf = PassphraseKDF(opsLimit: field(0), memLimit: field(8))
        guard kdf.isAcceptable else { throw .unsupportedKDF }
        let salt = Array(body[16..<headerByteCount])
        let sealed = Array(body[headerByteCount...])
        func attempt(_ passphrase: Passphrase) throws(CodeError) -> SecureBytes? {
            let key: SymmetricKey
            do {
                key = try kdf.deriveKey(from: passphrase, salt: salt)
            } catch {
                throw .passphraseKDF(error)
            }
            return try? SecretWrap.open(sealed, using: key)
        }
        var opened = try attempt(passphrase)
        if opened == nil, let listed = listForm(of: passphrase), !listed.storage.withUnsafeBytes({ a in
            passphrase.storage.withUnsafeBytes { ConstantTime.equals(a, $0) }
        }) {
            opened = try attempt(listed)
        }
        guard let plaintext = opened else { throw .wrongPassphrase }
        return try plaintext.reading { (raw) throws(CodeError) -> Contents in
            var reader = ByteReader(raw, kind: .backup)
            let version = try reader.byte()
            guard version == formatVersion else {
                throw .malformed(.backup, reason: "inner format \(version) does not match its prefix")
            }
            let created = try reader.int64()
            guard KeyTime.admits(created) else { throw .malformed(.backup, reason: "its time is out of range") }
            let keys = try KeyBundle.read(from: &reader, as: .backup)
            try reader.finish()
            return Contents(created: Date(timeIntervalSince1970: TimeInterval(created)), keys: keys)
        }
    }

    /// Checks that `text` is a paper backup whole enough to ask for its passphrase.
    /// - Parameter text: the backup, as `restore(_:passphrase:)` takes it.
    /// - Throws: what `restore(_:passphrase:)` throws for text that is not a backup, or is damaged
    ///   or incomplete.
    public static func check(_ text: String) throws(SealKitError) {
        _ = try BackupError.converting { () throws(CodeError) in try body(of: text) }
    }

    private static func body(of text: String) throws(CodeError) -> [UInt8] {
        let body = try CodeText.body(of: CodeText.trimmed(try whole(text)), as: .backup)
        guard body.count > headerByteCount + FieldCipher.minimumByteCount else {
            throw .malformed(.backup, reason: "truncated")
        }
        return body
    }

    /// The whole backup: `text` itself when it holds one line, else its parts joined.
    private static func whole(_ text: String) throws(CodeError) -> String {
        let lines = text.split(whereSeparator: \.isNewline).filter { !CodeText.trimmed($0).isEmpty }
        guard lines.count > 1 else { return text }
        var assembler = CodeAssembler()
        for line in lines {
            if let whole = try assembler.add(String(line)) { return whole }
        }
        throw assembler.incompleteError(expecting: .backup)
    }

    /// A passphrase read as words of SealKit's word list, the way people write them down: letters in
    /// any case, words separated by any run of spaces, tabs, no-break spaces, hyphens, dots or commas,
    /// blanks before and after. The list holds only lower-case ASCII words (and `yo-yo`), so every
    /// Unicode normalization form of such a passphrase is these same bytes.
    /// - Parameter passphrase: the passphrase as typed.
    /// - Returns: the words in lower case joined by single spaces, which is how `makePassphrase`
    ///   writes them, when there are at least `generatedWordCount` and each is on the list; else nil.
    @_spi(CLI) public static func listForm(of passphrase: Passphrase) -> Passphrase? {
        guard var words = passphrase.storage.withUnsafeBytes({ splitWords($0) }) else { return nil }
        defer { wipe(&words) }
        guard words.count >= generatedWordCount, words.allSatisfy({ EFFWordList.set.contains($0) }) else { return nil }
        var joined = Array(words.joined(separator: [UInt8(ascii: " ")]))
        defer { ConstantTime.wipe(&joined) }
        return try? Passphrase(bytes: joined)
    }

    /// The words of a passphrase that reads as a list passphrase but for some words not on the list:
    /// at least `generatedWordCount` words of letters, most of them on the list. Only for telling the
    /// person at the terminal which word to check.
    /// - Parameter passphrase: the passphrase as typed.
    /// - Returns: each word not on the list, by its position (1 is the first) and in lower case, with up to
    ///   three list words within two edits of it, nearest first; empty when the passphrase does not read as list words.
    @_spi(CLI) public static func unlistedWords(in passphrase: Passphrase) -> [(position: Int, word: String, closest: [String])] {
        guard var words = passphrase.storage.withUnsafeBytes({ splitWords($0) }) else { return [] }
        defer { wipe(&words) }
        guard words.count >= generatedWordCount else { return [] }
        let unlisted = words.indices.filter { !EFFWordList.set.contains(words[$0]) }
        guard !unlisted.isEmpty, unlisted.count * 2 < words.count else { return [] }
        let list = EFFWordList.words.map(String.init)
        return unlisted.map { index in
            let word = String(decoding: words[index], as: UTF8.self)
            let near = list.map { ($0, TextSafety.editDistance(word, $0, limit: 2)) }.filter { $0.1 <= 2 }
            return (index + 1, word, near.sorted { $0.1 < $1.1 }.prefix(3).map(\.0))
        }
    }

    /// The words of `bytes` in lower case, split at separators, with `yo yo` joined back into the
    /// list's `yo-yo`; nil when a byte is neither an ASCII letter nor a separator.
    private static func splitWords(_ bytes: UnsafeRawBufferPointer) -> [[UInt8]]? {
        var words: [[UInt8]] = []
        var current: [UInt8] = []
        defer { ConstantTime.wipe(&current) }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") {
                current.append(byte)
            } else if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                current.append(byte | 0x20)
            } else if Array(" \t\r\n-.,".utf8).contains(byte) || (byte == 0xC2 && index < bytes.count && bytes[index] == 0xA0) {
                if byte == 0xC2 { index += 1 }  // U+00A0, the no-break space
                if !current.isEmpty { words.append(current) }
                ConstantTime.wipe(&current)
                current = []
            } else {
                wipe(&words)
                return nil
            }
        }
        if !current.isEmpty { words.append(current) }
        var joined: [[UInt8]] = []
        var position = 0
        while position < words.count {
            if !EFFWordList.set.contains(words[position]), position + 1 < words.count {
                let hyphenated = words[position] + [UInt8(ascii: "-")] + words[position + 1]
                if EFFWordList.set.contains(hyphenated) {
                    joined.append(hyphenated)
                    position += 2
                    continue
                }
            }
            joined.append(words[position])
            position += 1
        }
        wipe(&words)
        return joined
    }

    private static func wipe(_ words: inout [[UInt8]]) {
        for index in words.indices { ConstantTime.wipe(&words[index]) }
    }
}

extension PaperBackup {
    /// Puts a backup that comes in numbered parts (one per QR code or printed line, any order) back together.
    ///
    /// ```swift
    /// var assembler = PaperBackup.Assembler()
    /// for line in scannedLines {
    ///     if let whole = try assembler.add(line) { return try PaperBackup.restore(whole, passphrase: passphrase) }
    /// }
    /// throw assembler.incompleteError
    /// ```
    public struct Assembler: Sendable {
        private var assembler = CodeAssembler()

        /// Makes an empty assembler.
        public init() {}

        /// Adds one line.
        /// - Parameter line: a whole backup, a part, or a blank line (skipped).
        /// - Returns: the whole backup's text once it is complete, else nil.
        /// - Throws: `SealKitError` (`.damagedBackup`, `.notABackup`) for a damaged, repeated or foreign part,
        ///   or a whole backup mixed with parts.
        public mutating func add(_ line: String) throws(SealKitError) -> String? {
            try SealKitError.converting { () throws(CodeError) in try assembler.add(line) }
        }

        /// The error for input that ends before a whole backup arrived: nothing at all, or missing parts
        /// (`.incompleteBackup`, naming them).
        public var incompleteError: SealKitError { SealKitError(assembler.incompleteError(expecting: .backup)) }
    }
}

extension ShareBackup {
    /// The text every sealed bundle of a share backup starts with: the bundle comes first, before the shares.
    public static let bundlePrefix = CodeKind.shares.prefix
}

extension PaperBackup {
    /// The text a paper backup given whole starts with.
    public static let prefix = CodeKind.backup.prefix
    /// The text each numbered part of a paper backup too long for one QR code starts with.
    public static let partPrefix = CodeKind.part.prefix
}
