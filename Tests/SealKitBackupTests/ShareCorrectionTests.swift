import Foundation
import SealKit
import Testing

@_spi(CLI) import SealKitBackup

/// A share typed with one wrong word is corrected, never thrown away.
@Suite("SLIP-39 share correction")
struct ShareCorrectionTests {
    /// One backup's shares for every test; nil when the split failed, which `share()` reports as an issue.
    static let groups: [[String]]? = {
        let secret = SecureRandom.bytes(count: 32)
        return try? SLIP39.split(
            secret: SecureBytes(copying: secret), groupThreshold: 1, groups: [(3, 5)], passphrase: [], iterationExponent: 0).0
    }()

    /// The second share of the backup: a split that failed or made other counts fails the test, not the test process.
    static func share() throws -> String {
        let groups = try #require(Self.groups, "SLIP39.split failed")
        try #require(groups.map(\.count) == [5], "\(groups.map(\.count)) shares")
        return groups[0][1]
    }

    /// Every position, each with a sample of wrong list words (neighbours in the list, far ones, random
    /// ones) and a word off the list: the one correction found is the share itself.
    @Test func everySingleWordTypoIsCorrectedUniquely() throws {
        let share = try Self.share()
        let words = share.split(separator: " ").map(String.init)
        #expect(words.count == 33)
        var tried = 0
        for position in words.indices {
            let index = try #require(SLIP39Words.index[words[position]])
            let samples = Set([(index + 1) % 1024, (index + 1023) % 1024, (index + 512) % 1024,
                               Int(SecureRandom.uniform(below: 1024)), Int(SecureRandom.uniform(below: 1024))])
                .subtracting([index])
            for sample in samples {
                var typo = words
                typo[position] = SLIP39Words.all[sample]
                let text = typo.joined(separator: " ")
                #expect(throws: SLIP39Error.self) { try SLIP39.parse(text) }
                let fix = try #require(SLIP39.correction(of: text), "position \(position + 1)")
                #expect(fix.share == share && fix.position == position + 1 && fix.word == words[position])
                tried += 1
            }
            // Off the list (a misspelling): the same.
            var misspelt = words
            misspelt[position] = String(words[position].dropLast()) + "q"
            let fix = try #require(SLIP39.correction(of: misspelt.joined(separator: " ")))
            #expect(fix.share == share && fix.position == position + 1)
            tried += 1
        }
        #expect(tried >= 33 * 4)
    }

    @Test func twoWrongWordsHaveNoSingleCorrection() throws {
        let share = try Self.share()
        var words = share.split(separator: " ").map(String.init)
        try #require(words.count == 33, "\(words.count) words")
        words[5] = words[5] == "academic" ? "acid" : "academic"
        words[20] = words[20] == "academic" ? "acid" : "academic"
        #expect(SLIP39.correction(of: words.joined(separator: " ")) == nil)
    }

    @Test func fourLetterPrefixesAreTheirWords() throws {
        let share = try Self.share()
        let abbreviated = share.split(separator: " ").map { $0.prefix(4).uppercased() }.joined(separator: "  ")
        #expect(SLIP39.completingPrefixes(abbreviated) == share)
        #expect(try SLIP39.parse(SLIP39.completingPrefixes(abbreviated)).prefix == (try SLIP39.parse(share)).prefix)
        // Three letters are not enough; an unknown start stays as typed.
        #expect(SLIP39.completingPrefixes("aca zzzz academic") == "aca zzzz academic")
    }

    @Test func noShareSaysWhatToPaste() {
        #expect(throws: SLIP39Error.noShares) { try SLIP39.recover([]) }
        #expect("\(SLIP39Error.noShares)".contains("paste the shares after the bundle"))
        #expect(!"\(SLIP39Error.noShares)".contains("group"))
    }
}
