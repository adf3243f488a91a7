import Foundation
import SealKitBackup
import SealTestSupport
import Testing

/// A backup split into SLIP-39 shares, restored from any K of them.
@Suite("keys backup --shares, keys restore --shares")
struct ShareBackupCLITests {
    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    static func backup(_ cli: CLI, _ arguments: [String], environment: [String: String] = [:]) throws -> (bundle: String, shares: [String]) {
        let result = try cli.run(["keys", "backup"] + arguments + ["--format", "text"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Self.lines(result.stdout)
        return (try #require(lines.first), Array(lines.dropFirst()))
    }

    @Test func anyThreeOfFiveRestoreEveryIDAndTwoSayHowManyMore() throws {
        let sender = try CLI()
        for id in ["alice", "bob"] { #expect(try sender.run(["keys", "generate", id]).status == 0) }
        let ciphertext = try sender.run(["encrypt", "--key", "bob"], stdin: "from shares").output
        let made = try sender.run(["keys", "backup", "--all", "--shares", "5", "--threshold", "3", "--format", "text"])
        #expect(made.status == 0, "\(made.stderr)")
        let lines = Self.lines(made.stdout)
        try #require(lines.count == 6, "\(lines.count) lines")
        #expect(lines[0].hasPrefix("sealkit-shares-v1:"))
        #expect(lines.dropFirst().allSatisfy { $0.split(separator: " ", omittingEmptySubsequences: false).count == 33 })
        #expect(made.stderr.contains("share 2 of 5 (any 3 restore)"))
        for key in try TransferCLITests.keyMaterial(sender) { #expect(!made.stdout.contains(key) && !made.stderr.contains(key)) }
        let bundle = lines[0], shares = Array(lines.dropFirst())

        // Every 3-subset restores, in any order, with blank lines between.
        for a in 0..<5 {
            for b in (a + 1)..<5 {
                for c in (b + 1)..<5 where (a + b + c) % 3 == 0 {
                    let receiving = try CLI()
                    let input = [bundle, "", shares[c], shares[a], "", shares[b]].joined(separator: "\n") + "\n"
                    let restored = try receiving.run(["keys", "restore", "--shares", "--all", "--format", "text"], stdin: input)
                    #expect(restored.status == 0, "\(restored.stderr)")
                    #expect(Self.lines(restored.stdout).map { String($0.prefix { $0 != "\t" }) } == ["alice", "bob"])
                    #expect(Self.lines(restored.stdout).allSatisfy { $0.hasSuffix("\timported") })
                    #expect(try receiving.run(["decrypt", "--key", "bob", "--", ciphertext]).stdout == "from shares\n")
                }
            }
        }
        // Two shares (one of them repeated) are not enough: one more is needed, and nothing is stored.
        let short = try CLI()
        let two = try short.run(
            ["keys", "restore", "--shares", "--all"], stdin: [bundle, shares[0], shares[3], shares[0]].joined(separator: "\n"))
        #expect(two.status == 65)
        expectCleanFailure(two, containing: "1 more share needed")
        #expect(try TransferCLITests.ids(short).isEmpty)
        // With no id, the backup's ids are listed and nothing is stored.
        let listed = try short.run(["keys", "restore", "--shares"], stdin: [bundle, shares[1], shares[2], shares[4]].joined(separator: "\n"))
        #expect(listed.status == 0 && listed.stdout == "alice\nbob\n")
        #expect(try TransferCLITests.ids(short).isEmpty)
    }

    @Test func typosForeignSharesForeignBundlesAndWrongPassphrasesAreRefused() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let passphrase = ["SEALKIT_PASSPHRASE": "second factor"]
        let first = try Self.backup(sender, ["alice", "--shares", "5", "--threshold", "3"], environment: passphrase)
        let second = try Self.backup(sender, ["alice", "--shares", "5", "--threshold", "3"], environment: passphrase)
        let receiving = try CLI()
        func restore(_ lines: [String], _ environment: [String: String] = passphrase) throws -> CLI.Result {
            try receiving.run(["keys", "restore", "--shares", "--all"], stdin: lines.joined(separator: "\n") + "\n", environment: environment)
        }
        try #require(first.shares.count == 5 && second.shares.count == 5, "\(first.shares.count), \(second.shares.count) shares")
        // A one-word typo names the share's line and the word's position, and quotes none of its words.
        var words = first.shares[1].split(separator: " ").map(String.init)
        try #require(words.count == 33, "\(words.count) words")
        words[20] = words[20] == "academic" ? "acid" : "academic"
        let typo = try restore([first.bundle, first.shares[0], words.joined(separator: " "), first.shares[2]])
        #expect(typo.status == 65)
        expectCleanFailure(typo, containing: "line 3")
        #expect(!typo.stderr.contains(words.prefix(4).joined(separator: " ")) && typo.stderr.contains("word 21"), "\(typo.stderr)")
        #expect(!typo.stderr.contains(words[10]), "a share's value word in an error")
        // Shares of two backups.
        let mixed = try restore([first.bundle, first.shares[0], first.shares[1], second.shares[2]])
        #expect(mixed.status == 65)
        expectCleanFailure(mixed, containing: "belong to different backups")
        // Another backup's bundle.
        let foreign = try restore([second.bundle] + Array(first.shares.prefix(3)))
        #expect(foreign.status == 65)
        expectCleanFailure(foreign, containing: "belong to another backup")
        // The right shares under a wrong passphrase, and under none.
        for environment in [["SEALKIT_PASSPHRASE": "wrong"], [:]] {
            let wrong = try restore([first.bundle] + Array(first.shares.prefix(3)), environment)
            #expect(wrong.status == 77)
            expectCleanFailure(wrong, containing: "wrong passphrase")
        }
        #expect(try TransferCLITests.ids(receiving).isEmpty)
        #expect(try restore([first.bundle] + Array(first.shares.suffix(3))).status == 0)
    }

    @Test(.requires(.shamirMnemonic)) func groupsFollowGroupByGroupAndPythonSharesOfTheSameSecretOpenTheBundle() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let made = try Self.backup(sender, ["alice", "--group", "2/3", "--group", "3/5", "--group", "1/1", "--group-threshold", "2"])
        try #require(made.shares.count == 9, "\(made.shares.count) shares")
        // Group 1 (two of its three) and group 3 (its one share) restore.
        let receiving = try CLI()
        let restored = try receiving.run(
            ["keys", "restore", "--shares", "--all"], stdin: [made.bundle, made.shares[8], made.shares[0], made.shares[2]].joined(separator: "\n"))
        #expect(restored.status == 0, "\(restored.stderr)")
        // One group and part of another: which groups need how many more.
        let partial = try receiving.run(["keys", "restore", "--shares", "--all"], stdin: [made.bundle, made.shares[0], made.shares[1], made.shares[3]].joined(separator: "\n"))
        expectCleanFailure(partial, containing: "group 2 needs 2 more shares")

        // python-shamir-mnemonic recovers the secret from SealKit's shares and makes fresh shares of
        // it: those open the same bundle.
        let request = try JSONSerialization.data(withJSONObject: ["mnemonics": [made.shares[8], made.shares[1], made.shares[2]]])
        let fresh = try Python.output(of: """
            import json, sys
            from shamir_mnemonic import combine_mnemonics, generate_mnemonics
            secret = combine_mnemonics(json.load(sys.stdin)["mnemonics"], b"")
            print(json.dumps(generate_mnemonics(1, [(2, 3)], secret, b"")[0]))
            """, stdin: Array(request))
        let pythonShares = try #require(try JSONSerialization.jsonObject(with: Data(fresh)) as? [String])
        let other = try CLI()
        let viaPython = try other.run(["keys", "restore", "--shares", "--all"], stdin: ([made.bundle] + pythonShares.prefix(2)).joined(separator: "\n"))
        #expect(viaPython.status == 0, "\(viaPython.stderr)")
        #expect(viaPython.stdout.hasPrefix("alice\t"))
    }

    @Test(.requires(.zbarimg)) func sharesDirHoldsPrivateFilesAndQRCodesZbarReads() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let folder = sender.home.appendingPathComponent("keepers").path
        let made = try sender.run(["keys", "backup", "alice", "--shares", "3", "--threshold", "2", "--shares-dir", folder, "--format", "text"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(Self.lines(made.stdout).count == 1, "only the bundle on stdout")
        for index in 1...3 {
            let text = "\(folder)/share-\(index).txt", png = "\(folder)/share-\(index).png"
            let mode = try FileManager.default.attributesOfItem(atPath: text)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let share = try #require(Self.lines(try String(contentsOfFile: text, encoding: .utf8)).last)
            let scanned = try ChildProcess.run("zbarimg", ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", png])
            #expect(String(decoding: scanned.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == share)
        }
    }

    /// Hostile input a script cannot embed: a share cut to a length no share has, and a huge line. One line, 1 to
    /// 125, nothing stored, in bounded time. (Garbage, repeated shares, no bundle: scripts/backup-shares.txt.)
    @Test func hostileRestoreInputFailsCleanly() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let made = try Self.backup(sender, ["alice", "--shares", "3", "--threshold", "2"])
        try #require(made.shares.count == 3, "\(made.shares.count) shares")
        let inputs: [(String, String)] = [
            (made.bundle + "\n" + String(made.shares[0].split(separator: " ").prefix(21).joined(separator: " ")) + "\n", "a length no share has"),
            (made.bundle + "\n" + String(repeating: "academic ", count: 100_000) + "\n", "line 2"),
        ]
        let receiving = try CLI()
        for (input, expected) in inputs {
            let result = try receiving.run(["keys", "restore", "--shares", "--all"], stdin: input)
            expectCleanFailure(result, containing: expected)
        }
        #expect(try TransferCLITests.ids(receiving).isEmpty)
    }

    /// A crafted share's iteration exponent ran PBKDF2 for minutes before any
    /// check, and parse errors quoted a line's first four raw words (a passphrase pasted onto it).
    @Test func aCraftedExponentIsRefusedAtOnceAndNoRawWordIsQuoted() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let made = try Self.backup(sender, ["alice", "--shares", "3", "--threshold", "2"])
        try #require(made.shares.count == 3, "\(made.shares.count) shares")
        // Two shares of one backup with exponent 15, checksums right: about three minutes of PBKDF2.
        let crafted = (0..<2).map { member in
            SLIP39.words(
                identifier: 4242, extendable: true, iterationExponent: 15, groupIndex: 0, groupThreshold: 1, groupCount: 1,
                memberIndex: member, memberThreshold: 2, value: [UInt8](repeating: UInt8(member + 1), count: 32))
        }
        let receiving = try CLI()
        let started = ContinuousClock.now
        let result = try receiving.run(["keys", "restore", "--shares", "--all"], stdin: ([made.bundle] + crafted).joined(separator: "\n") + "\n")
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 65)
        expectCleanFailure(result, containing: "line 2: the share asks for PBKDF2 iteration exponent 15")
        #expect(elapsed < .seconds(5), "refused in \(elapsed)")
        // A line that is not a share: its position is named, none of its words.
        let pasted = "correct horse battery staple " + made.shares[0]
        let quoted = try receiving.run(["keys", "restore", "--shares", "--all"], stdin: made.bundle + "\n" + pasted + "\n")
        expectCleanFailure(quoted, containing: "line 2: the share has a word that is not in the SLIP-39 word list (word 1)")
        for word in ["correct", "horse", "battery", "staple"] { #expect(!quoted.stderr.contains(word), "\(quoted.stderr)") }
        let mistyped = made.shares[0].split(separator: " ").enumerated().map { $0.offset == 5 ? "academic" : String($0.element) }
        let checksum = try receiving.run(
            ["keys", "restore", "--shares", "--all"], stdin: made.bundle + "\n" + mistyped.joined(separator: " ") + "\n")
        expectCleanFailure(checksum, containing: "line 2: the share fails its checksum")
        for word in made.shares[0].split(separator: " ").prefix(4) { #expect(!checksum.stderr.contains(" \(word) "), "\(checksum.stderr)") }
        #expect(try TransferCLITests.ids(receiving).isEmpty)
    }

}

/// Fixtures/shares/vectors.json: share backups made from docs/transfer.md alone with PyNaCl, hashlib and
/// python-shamir-mnemonic (Scripts/make-share-vectors.py) restore here.
@Suite("share backup vectors")
struct ShareBackupVectorTests {
    struct File: Decodable {
        struct Vector: Decodable {
            let name: String
            let passphrase: String
            let bundle: String
            let group_threshold: Int
            let groups: [[Int]]
            let shares: [[String]]
            let ids: [[Fingerprinted]]
        }
        let vectors: [Vector]
    }

    /// An id's entry: name, fingerprint, number of keys.
    enum Fingerprinted: Decodable {
        case text(String), number(Int)
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) { self = .number(number) } else { self = .text(try container.decode(String.self)) }
        }
        var text: String { if case .text(let value) = self { return value } else { return "" } }
    }

    @Test func everyVectorRestores() throws {
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: Repository.fixture("shares/vectors.json")))
        #expect(file.vectors.count == 3)
        for vector in file.vectors {
            var chosen: [String] = []
            for (index, group) in vector.shares.enumerated().reversed() where chosen.count < 99 {
                if vector.shares.count > 1 && index == 1 { continue }  // groups 3 and 1 are enough
                chosen += group.prefix(vector.groups[index][0])
            }
            let cli = try CLI()
            let environment = vector.passphrase.isEmpty ? [:] : ["SEALKIT_PASSPHRASE": vector.passphrase]
            let result = try cli.run(
                ["keys", "restore", "--shares", "--all", "--format", "text"], stdin: ([vector.bundle] + chosen).joined(separator: "\n"),
                environment: environment)
            #expect(result.status == 0, "\(vector.name): \(result.stderr)")
            let expected = vector.ids.map { "\($0[0].text)\t\($0[1].text)\timported" }
            #expect(result.stdout.split(separator: "\n").map(String.init) == expected, "\(vector.name)")
        }
    }
}
