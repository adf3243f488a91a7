import Foundation
import SealTestSupport
import Testing

/// Recovery and code entry that forgive what people do, typed through a pty as a person types.
@Suite("recovery that forgives what people do")
struct RecoveryCLITests {
    /// A paper backup of a new key `alice` with the passphrase SealKit made, its words as printed.
    static func paperBackup(_ cli: CLI) throws -> (line: String, words: [String], fingerprint: String) {
        let generated = try cli.run(["keys", "generate", "alice"])
        #expect(generated.status == 0)
        let made = try cli.run(["keys", "backup", "alice", "--format", "text"])
        #expect(made.status == 0, "\(made.stderr)")
        let printed = try #require(made.stderr.split(separator: "\n").first { $0.hasPrefix("    ") })
        return (made.output, printed.split(separator: " ").map(String.init), try field(1, of: generated.output))
    }

    @Test func aMadePassphraseWrittenInCapitalsOpensAfterAMisspeltWordIsNamed() throws {
        let sender = try CLI()
        let (line, words, fingerprint) = try Self.paperBackup(sender)
        try #require(words.count == 6, "\(words.count) words")
        var misspelt = words.map { $0.capitalized }
        misspelt[2] = words[2] + "x"
        let written = words.map { $0.uppercased() }.joined(separator: "-") + " "
        let receiving = try CLI()
        let (status, output) = try CodeEntryCLITests.onTerminal(
            receiving, ["keys", "restore", "--all"],
            steps: [("then press Enter:", line + "\n"), ("Backup passphrase: ", misspelt.joined(separator: "  ") + "\n"),
                    ("Backup passphrase: ", written + "\n")])
        #expect(status == 0, "\(output)")
        #expect(output.contains("Word 3 is not on SealKit's word list; the closest list words: "), "\(output)")
        #expect(output.contains("Wrong passphrase, try again"), "\(output)")
        #expect(output.contains("alice\t\(fingerprint)\timported") || output.contains("alice \(fingerprint)"), "\(output)")
        #expect(try receiving.run(["keys", "list"]).output.hasPrefix("alice\t\(fingerprint)\t"))

        // Three wrong tries end it (77) and store nothing.
        let other = try CLI()
        let refused = try CodeEntryCLITests.onTerminal(
            other, ["keys", "restore", "--all"],
            steps: [("then press Enter:", line + "\n")] + Array(repeating: ("Backup passphrase: ", "wrong words typed here\n"), count: 3))
        #expect(refused.status == 77, "\(refused.output)")
        #expect(refused.output.components(separatedBy: "Wrong passphrase, try again").count == 3, "\(refused.output)")
        #expect(try other.run(["keys", "list"]).status == 66)
    }

    struct PreviousRelease: Decodable {
        let lines: [String]
        let passphrase: String
        let id: String
        let fingerprint: String
    }

    @Test func scriptsGetNormalizationAndAChosenPassphraseStaysExact() throws {
        // A backup made by the previous release, opened with its words written as people write them.
        let data = try Data(contentsOf: Repository.fixture("backup/previous-release.json"))
        let fixture = try JSONDecoder().decode(PreviousRelease.self, from: data)
        let cli = try CLI()
        let written = " " + fixture.passphrase.uppercased().replacing(" ", with: "-") + ". "
        let opened = try cli.run(["keys", "restore", "--all"], stdin: fixture.lines.joined(separator: "\n") + "\n",
                                 environment: ["SEALKIT_PASSPHRASE": written])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.output == "\(fixture.id)\t\(fixture.fingerprint)\timported")

        // A misspelt word is named by its position only, on stderr.
        var words = fixture.passphrase.split(separator: " ").map(String.init)
        words[3] = "envoius"
        let file = cli.home.appendingPathComponent("passphrase.txt")
        try (words.joined(separator: " ") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let misspelt = try CLI().run(["keys", "restore", "--all", "--passphrase-file", file.path], stdin: fixture.lines[0] + "\n")
        expectCleanFailure(misspelt, containing: "word 4 of the passphrase is not on SealKit's word list")
        #expect(misspelt.status == 77 && !misspelt.stderr.contains("envoius") && !misspelt.stderr.contains("envious"))

        // A chosen passphrase of list words in capitals: exact, and only exact.
        let chosen = "Limit Overhear Denial Envious Maybe Astride"
        #expect(try cli.run(["keys", "generate", "bob"]).status == 0)
        let made = try cli.run(["keys", "backup", "bob", "--format", "text"], environment: ["SEALKIT_PASSPHRASE": chosen])
        #expect(made.status == 0, "\(made.stderr)")
        for (typed, status) in [(chosen.lowercased(), Int32(77)), (chosen.replacing(" ", with: "-"), 77), (chosen, 0)] {
            let restored = try CLI().run(["keys", "restore", "--all"], stdin: made.stdout, environment: ["SEALKIT_PASSPHRASE": typed])
            #expect(restored.status == status, "\(typed): \(restored.stderr)")
        }
        let help = try cli.run(["keys", "restore", "--help"]).stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        #expect(help.contains("A passphrase you chose must be typed exactly, byte for byte."), "\(help)")
    }

    @Test func aShareBundleWithoutSharesSaysAddSharesBeforeAskingAnything() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let made = try ShareBackupCLITests.backup(sender, ["alice", "--shares", "3", "--threshold", "2"])
        let result = try CLI().run(["keys", "restore", "--all"], stdin: made.bundle + "\n")
        expectCleanFailure(result, containing: "add --shares")
        #expect(result.status == 65 && !result.stderr.contains("passphrase"))
        // Zero shares: what to paste, no talk of groups.
        let none = try CLI().run(["keys", "restore", "--shares", "--all"], stdin: made.bundle + "\n")
        expectCleanFailure(none, containing: "paste the shares after the bundle")
        #expect(!none.stderr.contains("group"))
    }

    /// One typo in each of three shares of a 3-of-5 backup: the restore goes on to the end.
    @Test func aThreeOfFiveRestoreWithATypoInEachShareNeverStartsOver() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let fingerprint = try field(1, of: try sender.run(["keys", "list"]).output)
        let made = try ShareBackupCLITests.backup(sender, ["alice", "--shares", "5", "--threshold", "3"])
        try #require(made.shares.count == 5 && made.shares.allSatisfy { $0.split(separator: " ").count == 33 }, "\(made.shares.count) shares")
        var first = made.shares[0].split(separator: " ").map(String.init)
        let original = first[11]
        first[11] = first[11] == "academic" ? "acid" : "academic"
        var second = made.shares[3].split(separator: " ").map(String.init)
        second[4] = "qqqq"
        let secondAbbreviated = made.shares[3].split(separator: " ").map { $0.prefix(4) }.joined(separator: " ")
        var third = made.shares[2].split(separator: " ").map(String.init)
        third[20] = String(third[20].dropLast()) + "z"
        let receiving = try CLI()
        let (status, output) = try CodeEntryCLITests.onTerminal(
            receiving, ["keys", "restore", "--shares", "--all"],
            steps: [
                ("bundle> ", "not the bundle\n"), ("bundle> ", made.bundle + "\n"),
                ("share> ", first.joined(separator: " ") + "\n"), ("[Y/n] ", "\n"),
                ("share> ", second.joined(separator: " ") + "\n"), ("[Y/n] ", "n\n"),
                ("share> ", secondAbbreviated + "\n"),
                ("share> ", third.joined(separator: " ") + "\n"), ("[Y/n] ", "y\n"),
                ("(Enter for none): ", "\n"),
            ])
        #expect(status == 0, "\(output)")
        #expect(output.contains("the first line must be the sealed bundle"), "\(output)")
        #expect(output.contains("did you mean \"\(original)\" for word 12? [Y/n]"), "\(output)")
        #expect(output.contains("1 of 3 shares (need 2 more)"), "\(output)")
        #expect(output.contains("did you mean \"\(made.shares[3].split(separator: " ")[4])\" for word 5? [Y/n]"), "\(output)")
        #expect(output.contains("that share was not taken"), "\(output)")
        #expect(output.contains("the 1 share taken stays"), "\(output)")
        #expect(output.contains("2 of 3 shares (need 1 more)"), "\(output)")
        #expect(output.contains("3 of 3 shares; that is enough"), "\(output)")
        // One group: no group in the progress ("group" is also a SLIP-39 word, which a share echoed may hold).
        #expect(!output.contains("for group") && !output.contains("group complete"), "\(output)")
        #expect(try receiving.run(["keys", "list"]).output.hasPrefix("alice\t\(fingerprint)\t"))
    }

    @Test func sharesShownLeaveNoScrollbackAndTheKeeperTypesTwoWordsBack() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let (status, output) = try CodeEntryCLITests.onTerminal(
            cli, ["keys", "backup", "alice", "--shares", "2", "--threshold", "2"],
            steps: [
                ("(Enter for none): ", "\n"),
                ("Press Enter to show share 1", "\n"), ("then press Enter.", "\n"),
                ("word ", "wrong\n"), ("show share 1 of 2 (any 2 restore) again", "\n"), ("then press Enter.", "\n"),
                ("word ", "<word>\n"), ("word ", "<word>\n"),
                ("Press Enter to show share 2", "\n"), ("then press Enter.", "\n"), ("word ", "<word>\n"), ("word ", "<word>\n"),
            ])
        #expect(status == 0, "\(output)")
        #expect(output.contains("\u{1B}[?1049h") && output.contains("\u{1B}[?1049l"), "\(output)")
        #expect(output.components(separatedBy: "\u{1B}[3J").count >= 5, "\(output)")
        #expect(output.contains("That does not match the share."), "\(output)")
        #expect(output.contains("Every share was shown."), "\(output)")
        // --no-check asks for no word.
        let unchecked = try CodeEntryCLITests.onTerminal(
            cli, ["keys", "backup", "alice", "--shares", "2", "--threshold", "2", "--no-check"],
            steps: [
                ("(Enter for none): ", "\n"),
                ("Press Enter to show share 1", "\n"), ("then press Enter.", "\n"),
                ("Press Enter to show share 2", "\n"), ("then press Enter.", "\n"),
            ])
        #expect(unchecked.status == 0 && !unchecked.output.contains("Check the copy"), "\(unchecked.output)")
    }

    @Test func codesCompleteWithHyphensAndAreAskedAgainOrCorrected() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let send = ["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--timeout", "2"]
        let prompt = "such as 7-guitarist-revenge): "
        // Tab after the number's word adds the hyphen, after the last word nothing.
        let tabbed = try CodeEntryCLITests.onTerminal(cli, send, steps: [(prompt, "7-guitarist\treven\t\n")])
        #expect(tabbed.output.contains("7-guitarist-revenge"), "\(tabbed.output)")
        #expect(tabbed.status == 69, "\(tabbed.output)")
        // A malformed code is asked again; then a word of the other half of the list is offered its place.
        let other = try CodeEntryCLITests.onTerminal(
            cli, send, steps: [(prompt, "7-guitaristrevenge\n"), (prompt, "3-aardvark-absurd\n"), ("[Y/n] ", "\n")])
        #expect(other.output.contains("type the code again"), "\(other.output)")
        #expect(other.output.contains("did you mean 3-adroitness-absurd? [Y/n]"), "\(other.output)")
        #expect(other.status == 69 && other.output.contains("cannot reach the mailbox relay"), "\(other.output)")
        // Two swapped words: put back in order.
        let swapped = try CodeEntryCLITests.onTerminal(cli, send, steps: [(prompt, "7-revenge-guitarist\n"), ("[Y/n] ", "y\n")])
        #expect(swapped.output.contains("did you mean 7-guitarist-revenge? [Y/n]"), "\(swapped.output)")
        #expect(swapped.status == 69, "\(swapped.output)")
    }

    @Test func theSmallerOnesNameWhatToDo() throws {
        let cli = try CLI()
        let home = try #require(cli.environment["SEALKIT_HOME"])
        let listed = try cli.run(["keys", "list"])
        expectCleanFailure(listed, containing: "no keystore at \(home)/default")
        #expect(listed.status == 66)
        let missing = try cli.run(["encrypt", "--key", "nobody"], stdin: "x")
        expectCleanFailure(missing, containing: "no key for 'nobody'")
        #expect(missing.stderr.contains("sealkit keys generate nobody") && missing.stderr.contains("sealkit transfer receive"))
        #expect(missing.stderr.contains("(keystore: \(home)/default)"), "\(missing.stderr)")
        #expect(missing.status == 66)
        // An existing, empty keystore lists nothing, as before.
        #expect(try cli.run(["keys", "generate", "a"]).status == 0)
        #expect(try cli.run(["keys", "delete", "--force", "a"]).status == 0)
        let empty = try cli.run(["keys", "list"])
        #expect(empty.status == 0 && empty.stdout.isEmpty, "\(empty.stderr)")
        // A missing option's value points to the subcommand's help.
        let option = try cli.run(["keys", "restore", "--qr"])
        expectCleanFailure(option, containing: "(see 'sealkit keys restore --help')")
        // scan with nothing to read on a terminal: a usage error, not a silent wait.
        let scan = try CodeEntryCLITests.onTerminal(cli, ["scan"], steps: [])
        #expect(scan.status == 64, "\(scan.output)")
        #expect(scan.output.contains("name an image file") && scan.output.contains("sealkit scan --help"), "\(scan.output)")
    }
}

/// Shares shown one at a time wait for Enter on the terminal; when the terminal closes under them
/// (a closed window, a killed tmux), the command ends instead of asking forever. Two such processes
/// once spun at 40% of a core each for an hour after their terminals were gone.
@Suite("share display when the terminal goes away")
struct ShareDisplayHangupTests {
    @Test func closingTheTerminalEndsTheShareDisplay() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        var environment = cli.environment
        environment["SEALKIT_PASSPHRASE"] = "correct horse battery staple"
        environment["TERM"] = "xterm"
        let terminal = try ChildProcess(
            CLI.executable.path, ["keys", "backup", "alice", "--shares", "2", "--threshold", "2"], environment: environment,
            terminal: 0, killAfter: nil)
        let prompted = terminal.wait(for: "Press Enter to show", timeout: 60)
        #expect(prompted, "no prompt: \(String(decoding: terminal.outputSoFar.suffix(200), as: UTF8.self))")
        terminal.hangUp()
        #expect(terminal.waitForExit(timeout: 20), "still running 20 s after its terminal closed")
        _ = terminal.finish(timeout: 5)
    }
}
