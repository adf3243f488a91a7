import Foundation
import SealTestSupport
import Testing

/// Codes and shares typed at a terminal, through a pty: Tab
/// completion from the word lists (libedit), a one-word typo corrected after asking, a malformed code
/// refused before anything reaches the relay.
@Suite("code and share entry on a terminal")
struct CodeEntryCLITests {
    /// Runs sealkit on a pty with `arguments`, types each step's text (a character at a time) once
    /// its marker showed after the previous one, and returns the exit status and what the terminal showed.
    static func onTerminal(
        _ cli: CLI, _ arguments: [String], steps: [(waitFor: String, type: String)], environment: [String: String] = [:]
    ) throws -> (status: Int, output: String) {
        var environment = cli.environment.merging(["TERM": "xterm"]) { $1 }.merging(environment) { $1 }
        environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
        let child = try ChildProcess(CLI.executable.path, arguments, environment: environment, terminal: 0, killAfter: nil)
        // Each marker is waited for after the previous one, so a prompt shown twice is answered twice.
        var start = 0
        for (marker, typed) in steps {
            let expected = Array(marker.utf8)
            guard child.wait(for: expected, from: start, timeout: 15),
                  let found = child.outputSoFar[start...].firstRange(of: expected) else { break }
            start = found.upperBound
            var text = typed
            if typed == "<word>\n" {
                // The word the check asks for, read off the share last shown on the screen.
                let screen = child.outputSoFar.filter { $0 != UInt8(ascii: "\r") }
                let shown = String(decoding: screen, as: UTF8.self)
                let words = try #require(shown.matches(of: /\):\n\n    ([a-z ]+)\n/).last).output.1.split(separator: " ")
                let asked = try #require(shown.matches(of: #/word (\d+): /#).last.flatMap { Int($0.output.1) })
                text = words[asked - 1] + "\n"
            }
            for character in text.utf8 {
                child.write([character])
                usleep(20_000)
            }
        }
        // A sealkit still waiting for input after every step is killed, never waited on forever, and fails the
        // test: each script of steps must take the command to its end.
        let result = child.finish(timeout: 95)
        #expect(!result.timedOut, "sealkit still waited for input after every step: \(result.stdoutText)")
        return (Int(result.status), result.stdoutText)
    }

    @Test func tabCompletesTheCodesWordsFromTheirLists() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        // The relay is unreachable: reaching it shows the code was taken, completed.
        let (status, output) = try Self.onTerminal(
            cli, ["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--timeout", "2"],
            steps: [("such as 7-guitarist-revenge): ", "7-guitar\t-reven\t\n")])
        #expect(output.contains("7-guitarist-revenge"), "\(output)")
        #expect(output.contains("cannot reach the mailbox relay"), "\(output)")
        #expect(status == 69)
    }

    @Test func oneMistypedWordIsOfferedForCorrectionAndAnUnknownOneRefused() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let corrected = try Self.onTerminal(
            cli, ["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--timeout", "2"],
            steps: [("such as 7-guitarist-revenge): ", "7-guitarsit-revenge\n"), ("[Y/n] ", "\n")])
        #expect(corrected.output.contains("did you mean 7-guitarist-revenge?"), "\(corrected.output)")
        #expect(corrected.output.contains("cannot reach the mailbox relay"), "\(corrected.output)")
        // Nothing close: refused and asked again, three times in all; the relay is never contacted.
        let refused = try Self.onTerminal(
            cli, ["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--timeout", "2"],
            steps: Array(repeating: ("such as 7-guitarist-revenge): ", "7-qqqqqqqq-revenge\n"), count: 3))
        #expect(refused.status == 64, "a malformed code is what the person typed: \(refused.output)")
        #expect(refused.output.components(separatedBy: "type the code again").count == 3, "\(refused.output)")
        #expect(!refused.output.contains("cannot reach"), "\(refused.output)")
        // --code without a terminal: refused with the suggestion, never corrected silently.
        let given = try cli.run(["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--code", "7-guitarsit-revenge"])
        expectCleanFailure(given, containing: "did you mean 7-guitarist-revenge?")
        #expect(!given.stderr.contains("cannot reach"))
        // The same code in a link: the link's code is read as a typed one, suggestion included, exit 64.
        let linked = try cli.run([
            "transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--code",
            "sealkit-transfer:7-guitarsit-revenge?version=0&rendezvous=ws%3A%2F%2F127.0.0.1%3A9%2Fv1&role=leader",
        ])
        expectCleanFailure(linked, containing: "did you mean 7-guitarist-revenge?")
        #expect(linked.status == 64 && !linked.stderr.contains("cannot reach"), "\(linked.stderr)")
        // A link that is wrong elsewhere says what is wrong with it, not with its code.
        for (link, reason) in [
            ("sealkit-transfer:7-guitarsit-revenge?version=9", "version '9'"),
            ("sealkit-transfer:%37-guitarist-revenge?version=0&rendezvous=ftp%3A%2F%2Fx", "relay"),
            ("sealkit-transfer:7-guitarist-revenj%ZZ", "badly encoded"),
        ] {
            let refused = try cli.run(["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--code", link])
            expectCleanFailure(refused, containing: reason)
            #expect(refused.status == 64 && !refused.stderr.contains("did you mean"), "\(refused.stderr)")
        }
    }

    /// A code without its first hyphen is told the hyphen is missing, and a malformed code exits 64
    /// however it was given; a well-formed wrong code is 77 (`TransferCLITests`, `NetworkTransferCLITests`).
    @Test func aMissingHyphenIsNamedAndMalformedCodesExit64() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let relay = ["--relay", "ws://127.0.0.1:9/v1"]
        let missing = try cli.run(["transfer", "send", "u", "--code", "8vocalist-optic"] + relay)
        expectCleanFailure(missing, containing: "the hyphen after the code's number is missing")
        #expect(missing.status == 64)
        #expect(!missing.stderr.contains("must start with a number"), "\(missing.stderr)")
        // As for a mistyped word, --code is never corrected silently: the suggestion is named.
        #expect(missing.stderr.contains("(did you mean 8-vocalist-optic?)"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("cannot reach"), "refused before the relay")
        // Every way a code is malformed, network and offline alike, is 64.
        let offer = try RunningCLI(try CLI(), ["transfer", "receive", "--offline", "--format", "text"])
        let offerLine = try #require(offer.readLine())
        for code in ["8vocalist-optic", "7-guitarist", "7-qqqqqqqq-revenge", "guitarist-revenge", "7-revenge-guitarist"] {
            let network = try cli.run(["transfer", "send", "u", "--code", code] + relay)
            expectCleanFailure(network)
            #expect(network.status == 64, "\(code): \(network.status) \(network.stderr)")
            let offline = try cli.run(["transfer", "send", "u", "--to", offerLine, "--code", code, "--format", "text"])
            expectCleanFailure(offline)
            #expect(offline.status == 64, "\(code): \(offline.status) \(offline.stderr)")
        }
        _ = offer.finish()
        // At the prompt, the same words, and the correction is offered.
        let typed = try Self.onTerminal(
            cli, ["transfer", "send", "u", "--timeout", "2"] + relay,
            steps: [("such as 7-guitarist-revenge): ", "8vocalist-optic\n"), ("[Y/n] ", "\n")])
        #expect(typed.output.contains("did you mean 8-vocalist-optic?"), "\(typed.output)")
        // Taken, the corrected code goes to the relay (unreachable here), rather than the prompt waiting on.
        #expect(typed.output.contains("cannot reach the mailbox relay"), "\(typed.output)")
        #expect(typed.status == 69, "\(typed.output)")
    }

    /// Ctrl-C at the code prompt prints the line docs/transfer.md promises, exits 130, and gives the
    /// terminal back as it was.
    @Test func ctrlCAtTheCodePromptSaysTheTransferWasCancelled() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let (status, output) = try Self.onTerminal(
            cli, ["transfer", "send", "u", "--relay", "ws://127.0.0.1:9/v1", "--timeout", "2"],
            steps: [("such as 7-guitarist-revenge): ", "7-guit\u{03}")])
        #expect(status == 130, "\(output)")
        #expect(output.contains("sealkit: interrupted: the transfer was cancelled\r\n"), "\(output)")
        #expect(!output.contains("cannot reach"), "\(output)")
    }

    /// A share pasted twice is said to be a duplicate, and not counted.
    @Test func aSharePastedTwiceIsADuplicateAndNotCounted() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let made = try ShareBackupCLITests.backup(sender, ["alice", "--shares", "3", "--threshold", "2"])
        try #require(made.shares.count == 3, "\(made.shares.count) shares")
        let receiving = try CLI()
        let (status, output) = try Self.onTerminal(
            receiving, ["keys", "restore", "--shares", "--all"],
            steps: [("bundle> ", made.bundle + "\n"), ("share> ", made.shares[0] + "\n"), ("share> ", made.shares[0] + "\n"),
                    ("share> ", made.shares[1] + "\n"), ("(Enter for none): ", "\n")])
        #expect(status == 0, "\(output)")
        #expect(output.contains("a duplicate, not counted again; 1 of 2 shares (need 1 more)"), "\(output)")
        #expect(output.components(separatedBy: "accepted").count == 3, "accepted twice, not three times: \(output)")
        #expect(output.contains("2 of 2 shares; that is enough"), "\(output)")
        #expect(try TransferCLITests.ids(receiving) == ["alice"])

        // Piped, the same: a note, and the copy not counted.
        let piped = try receiving.run(["keys", "restore", "--shares", "--all"], stdin: [made.bundle, made.shares[0], made.shares[0]].joined(separator: "\n") + "\n")
        expectCleanFailure(piped, containing: "line 3: share \"")
        #expect(piped.stderr.contains("is a duplicate of one given before: not counted again") && piped.stderr.contains("1 more share needed"), "\(piped.stderr)")
    }

    @Test func shareWordsCompleteWithTab() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let made = try ShareBackupCLITests.backup(sender, ["alice", "--shares", "2", "--threshold", "2"])
        try #require(made.shares.count == 2, "\(made.shares.count) shares")
        // The second share typed with each word's first four letters and Tab (SLIP-39 words are
        // told apart by their first four letters).
        let abbreviated = made.shares[1].split(separator: " ").map { String($0.prefix(4)) + "\t" }.joined()
        let receiving = try CLI()
        let (status, output) = try Self.onTerminal(
            receiving, ["keys", "restore", "--shares", "--all"],
            steps: [("bundle> ", made.bundle + "\n"), ("share> ", made.shares[0] + "\n"), ("share> ", abbreviated + "\n"),
                    ("(Enter for none): ", "\n")])
        #expect(status == 0, "\(output)")
        #expect(output.contains("alice\t") || output.contains("alice "), "\(output)")
        #expect(try TransferCLITests.ids(receiving) == ["alice"])
    }
}
