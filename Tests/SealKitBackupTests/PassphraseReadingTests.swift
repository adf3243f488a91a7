import Foundation
import SealKit
import SealTestSupport
import Testing

@_spi(CLI) import SealKitBackup

/// A passphrase SealKit made opens its backup however a person writes it down; a passphrase
/// the user chose stays byte-exact; a backup made before this change still opens.
@Suite("Backup passphrases as people write them")
struct PassphraseReadingTests {
    /// The words of a passphrase SealKit made, as printed.
    static func printed(_ passphrase: Passphrase) -> String {
        passphrase.storage.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Twenty ways to write the same words down.
    static func writtenForms(of printed: String) -> [String] {
        let words = printed.split(separator: " ").map(String.init)
        let capitalized = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }
        return [
            printed,
            printed.uppercased(),
            capitalized.joined(separator: " "),
            (capitalized.prefix(1) + words.dropFirst()).joined(separator: " "),
            words.joined(separator: "-"),
            capitalized.joined(separator: "-"),
            words.joined(separator: "  "),
            words.joined(separator: " - "),
            printed + " ",
            "  " + printed + "\t",
            words.joined(separator: "."),
            words.joined(separator: ", "),
            words.joined(separator: ",") + ".",
            words.joined(separator: "\u{00A0}"),
            words.joined(separator: "\n"),
            capitalized.joined(separator: "\t"),
            words.enumerated().map { $0.offset.isMultiple(of: 2) ? $0.element.uppercased() : $0.element }.joined(separator: " "),
            words.joined(separator: " -- "),
            "-" + words.joined(separator: "-") + "-",
            words.map { $0.enumerated().map { $0.offset == 1 ? $0.element.uppercased() : String($0.element) }.joined() }
                .joined(separator: ".  "),
        ]
    }

    @Test func aGeneratedPassphraseOpensInTwentyWrittenForms() throws {
        let keys = [try history("alice")]
        let passphrase = PaperBackup.makePassphrase()
        let lines = try PaperBackup.make(keys, passphrase: passphrase, kdf: .interactive, now: Date())
        try #require(lines.count == 1)
        let forms = Self.writtenForms(of: Self.printed(passphrase))
        #expect(Set(forms).count == 20)
        // The list is lower-case ASCII: a passphrase's NFD and NFC forms are the same bytes.
        let printed = Self.printed(passphrase)
        #expect(Array(printed.decomposedStringWithCanonicalMapping.utf8) == Array(printed.utf8))
        #expect(Array(printed.uppercased().decomposedStringWithCanonicalMapping.utf8) == Array(printed.uppercased().utf8))
        for form in forms {
            let opened = try PaperBackup.restore(lines[0], passphrase: Passphrase(form))
            expectSameKeys(opened.keys, keys)
        }
        // A wrong word is still wrong, in any form.
        var words = Self.printed(passphrase).split(separator: " ").map(String.init)
        try #require(words.count == 6, "\(words.count) words")
        words[2] = words[2] == "ablaze" ? "abacus" : "ablaze"
        #expect(throws: BackupError(CodeError.wrongPassphrase)) {
            try PaperBackup.restore(lines[0], passphrase: Passphrase(words.joined(separator: "-")))
        }
    }

    @Test func aChosenPassphraseStaysByteExact() throws {
        let keys = [try history("alice")]
        // List words typed with capitals by the person who chose them: as typed, it opens.
        let chosen = "Limit Overhear Denial Envious Maybe Astride"
        let lines = try PaperBackup.make(keys, passphrase: Passphrase(chosen), kdf: .interactive, now: Date())
        try #require(lines.count == 1)
        expectSameKeys(try PaperBackup.restore(lines[0], passphrase: Passphrase(chosen)).keys, keys)
        for other in ["limit overhear denial envious maybe astride", "Limit-Overhear-Denial-Envious-Maybe-Astride", chosen + " "] {
            #expect(throws: BackupError(CodeError.wrongPassphrase)) { try PaperBackup.restore(lines[0], passphrase: Passphrase(other)) }
        }
        // Not list words: never rewritten.
        let sentence = "My dog, Rex - born 2019."
        let sealed = try PaperBackup.make(keys, passphrase: Passphrase(sentence), kdf: .interactive, now: Date())
        try #require(sealed.count == 1)
        expectSameKeys(try PaperBackup.restore(sealed[0], passphrase: Passphrase(sentence)).keys, keys)
        for other in ["my dog, rex - born 2019.", "My dog, Rex - born 2019", "My dog Rex born 2019."] {
            #expect(throws: BackupError(CodeError.wrongPassphrase)) { try PaperBackup.restore(sealed[0], passphrase: Passphrase(other)) }
        }
    }

    @Test func theListFormIsHowMakePassphraseWritesWords() throws {
        #expect(try PaperBackup.listForm(of: Passphrase("Yo-Yo ablaze ABACUS-zoom, zone. zoning")).map(Self.printed)
            == "yo-yo ablaze abacus zoom zone zoning")
        #expect(try PaperBackup.listForm(of: Passphrase("ablaze abacus zoom zone zoning")) == nil, "five words are not a made passphrase")
        #expect(try PaperBackup.listForm(of: Passphrase("ablaze abacus zoom zone zoning zooom")) == nil)
        #expect(try PaperBackup.listForm(of: Passphrase("ablaze abacus zoom zone zoning zoom!")) == nil)
        #expect(try PaperBackup.listForm(of: Passphrase("ablaze abacus zoom zone zoning zoöm")) == nil)
        let passphrase = PaperBackup.makePassphrase()
        #expect(PaperBackup.listForm(of: passphrase).map(Self.printed) == Self.printed(passphrase))
    }

    @Test func aWordNotOnTheListIsNamedByItsPosition() throws {
        let unlisted = PaperBackup.unlistedWords(in: try Passphrase("limit overhear denail envious Maybe astride"))
        try #require(unlisted.map(\.position) == [3])
        #expect(unlisted.map(\.word) == ["denail"])
        // The nearest list words first, at most three, all within two edits: a swap of neighbours is one.
        #expect(unlisted[0].closest.first == "denial" && (1...3).contains(unlisted[0].closest.count))
        #expect(PaperBackup.unlistedWords(in: try Passphrase("my own secret sentence that is long")).isEmpty)
        #expect(PaperBackup.unlistedWords(in: try Passphrase("limit overhear denial envious maybe astride")).isEmpty)
    }

    struct PreviousRelease: Decodable {
        let lines: [String]
        let passphrase: String
        let id: String
        let fingerprint: String
    }

    /// A backup made by `sealkit keys backup` before this change, with the passphrase it printed.
    @Test func aBackupMadeByThePreviousReleaseStillOpens() throws {
        let fixture = try #require(FormatVectorKeys.load("backup/previous-release.json", as: PreviousRelease.self))
        for form in [fixture.passphrase, "Limit-Overhear-Denial-Envious-Maybe-Astride "] {
            let opened = try PaperBackup.restore(fixture.lines.joined(), passphrase: Passphrase(form))
            #expect(opened.keys.map(\.id.description) == [fixture.id])
            #expect(opened.keys.first?.current.fingerprint.description == fixture.fingerprint)
        }
    }
}
