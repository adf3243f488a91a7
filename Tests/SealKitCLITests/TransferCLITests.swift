import Foundation
import SealTestSupport
import Testing

/// A `sealkit` process kept running, for driving `transfer receive` through its pipes:
/// SealTestSupport's `ChildProcess` on the built binary with a test keystore's environment,
/// taking whole lines and answering in `CLI.Result`.
final class RunningCLI {
    private let program: ChildProcess

    init(_ cli: CLI, _ arguments: [String], environment extra: [String: String] = [:]) throws {
        // A receiver that hangs must not hang the test run.
        program = try ChildProcess(
            CLI.executable.path, arguments, environment: cli.environment.merging(extra) { $1 }, killAfter: 30)
    }

    /// The next stdout line, without its newline; nil at the end of output.
    func readLine() -> String? { program.readLine() }

    /// Writes each line, with its newline, to stdin.
    func write(_ lines: [String]) { program.write(lines.map { $0 + "\n" }.joined()) }

    /// Closes stdin, waits for the end, and returns the rest of stdout and all of stderr.
    func finish() -> CLI.Result { CLI.Result(program.finish()) }
}

@Suite("sealkit transfer, keys backup/restore: two keystores, separate processes")
struct TransferCLITests {
    /// Every key's base64 material in a keystore's (unprotected) key files.
    static func keyMaterial(_ cli: CLI) throws -> [String] {
        let folder = cli.home.appendingPathComponent("keys/default")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".key") }.flatMap {
            try String(contentsOfFile: folder.appendingPathComponent($0).path, encoding: .utf8)
                .split(separator: "\n").filter { $0.hasPrefix("key ") }.compactMap { $0.split(separator: " ").last.map(String.init) }
        }
    }

    static func ids(_ cli: CLI) throws -> [String] {
        try cli.run(["keys", "list"]).output.split(separator: "\n").compactMap { $0.split(separator: "\t").first.map(String.init) }
    }

    /// Runs an offline receiver in `receiving`, lets `reply` make the lines to give it from the
    /// offer and the code, and returns its result.
    static func receive(
        in receiving: CLI, arguments: [String] = [], reply: (_ offer: String, _ code: String) throws -> [String]
    ) throws -> (offer: String, code: String, result: CLI.Result) {
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text"] + arguments)
        let offer = try #require(receiver.readLine())
        let code = try #require(receiver.readLine())
        receiver.write(try reply(offer, code))
        return (offer, code, receiver.finish())
    }

    /// The reply `sender` prints for `ids` to an offer with a code.
    static func send(_ sender: CLI, _ ids: [String], to offer: String, code: String) throws -> [String] {
        let result = try sender.run(["transfer", "send"] + ids + ["--to", offer, "--code", code, "--format", "text"])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// Every encoding a key could leak in: base64, base64url (unpadded), hex.
    static func encodings(of base64Key: String) throws -> [String] {
        let bytes = try #require(Data(base64Encoded: base64Key))
        return [
            base64Key, String(base64Key.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").dropLast()),
            bytes.map { String(format: "%02x", $0) }.joined(), bytes.map { String(format: "%02X", $0) }.joined(),
        ]
    }

    @Test func offlineTransferMovesTheWholeRing() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "alice@example.com"]).status == 0)
        let old = try sender.run(["encrypt", "--key", "alice@example.com"], stdin: "before rotation").output
        #expect(try sender.run(["keys", "rotate", "alice@example.com"]).status == 0)
        let new = try sender.run(["encrypt", "--key", "alice@example.com"], stdin: "after rotation").output

        var sent: CLI.Result?
        let (offer, code, received) = try Self.receive(in: receiving) { offer, code in
            #expect(offer.hasPrefix("sealkit-offer-v2:"))
            #expect(code.wholeMatch(of: /[1-9][0-9]?-[a-z]+-[a-z]+/) != nil, "code: \(code)")
            let result = try sender.run(["transfer", "send", "alice@example.com", "--to", offer, "--code", code, "--format", "text"])
            sent = result
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("sealkit-reply-v2:") })
            return result.stdout.split(separator: "\n").map(String.init)
        }
        let sendResult = try #require(sent)
        #expect(received.status == 0, "\(received.stderr)")
        let stored = received.output.split(separator: "\t")
        #expect(stored.first == "alice@example.com" && stored.last == "imported")
        #expect(try receiving.run(["decrypt", "--key", "alice@example.com", "--", old]).stdout == "before rotation\n")
        #expect(try receiving.run(["decrypt", "--key", "alice@example.com", "--", new]).stdout == "after rotation\n")

        // Both sides show the fingerprint; the code travels in neither the offer nor the reply, and
        // no output holds key material in any encoding.
        try #require(stored.count == 3, "\(received.output)")
        #expect(received.stderr.contains(String(stored[1])) && sendResult.stderr.contains(String(stored[1])))
        let words = code.split(separator: "-").dropFirst()
        for text in [offer, sendResult.stdout, sendResult.stderr, received.stderr] {
            #expect(!words.contains { text.contains($0) }, "the code's words appear in \(text.prefix(100))")
        }
        let material = try Self.keyMaterial(sender)
        #expect(material.count == 2)
        for key in material {
            for encoded in try Self.encodings(of: key) {
                for text in [sendResult.stdout, sendResult.stderr, received.stdout, received.stderr, offer] {
                    #expect(!text.contains(encoded))
                }
            }
        }
    }

    @Test func manyKeysTravelAsPartsInAnyOrder() throws {
        let sender = try CLI(), receiving = try CLI()
        let names = (0..<14).map { "a-rather-long-user-identifier-number-\($0)@customers.example.com" }
        for name in names { #expect(try sender.run(["keys", "generate", name]).status == 0) }
        let (_, _, received) = try Self.receive(in: receiving) { offer, code in
            let lines = try Self.send(sender, ["--all"], to: offer, code: code)
            #expect(lines.count >= 2 && lines.allSatisfy { $0.hasPrefix("sealkit-part-v1:") && $0.count <= 1200 })
            return lines.reversed()
        }
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try Self.ids(receiving) == names.sorted())
    }

    @Test func offerOnStdinWrappedAndTypedCodeWithCapitalsWork() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let (_, _, received) = try Self.receive(in: receiving) { offer, code in
            let wrapped = stride(from: 0, to: offer.count, by: 20).map { start in
                String(offer.dropFirst(start).prefix(20))
            }.joined(separator: "\n")
            let typed = code.replacingOccurrences(of: "-", with: " ").uppercased()
            let result = try sender.run(["transfer", "send", "u", "--to", "-", "--code", typed, "--format", "text"], stdin: wrapped + "\n")
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(received.status == 0 && received.stdout.hasSuffix("\timported\n"), "\(received.stderr)")
    }

    @Test func wrongCodeOtherOfferDamagedAndRetiredRepliesStoreNothing() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let other = try CLI()
        let elsewhere = try RunningCLI(other, ["transfer", "receive", "--offline", "--format", "text"])
        let otherOffer = try #require(elsewhere.readLine())
        let otherCode = try #require(elsewhere.readLine())
        let foreignReply = try Self.send(sender, ["u"], to: otherOffer, code: otherCode)
        _ = elsewhere.finish()

        let cases: [(String, (String, String) throws -> [String])] = [
            ("wrong code", { offer, code in
                // The right nameplate and first word, another second word: one online guess, wrong.
                let parts = code.split(separator: "-")
                try #require(parts.count == 3, "the code has \(parts.count) parts")
                let guess = "\(parts[0])-\(parts[1])-\(parts[2] == "aardvark" ? "absurd" : "aardvark")"
                return try Self.send(sender, ["u"], to: offer, code: guess)
            }),
            ("wrong code", { _, _ in foreignReply }),
            ("check does not match", { offer, code in
                let reply = try #require(try Self.send(sender, ["u"], to: offer, code: code).first)
                let index = reply.index(reply.startIndex, offsetBy: 60)
                return [reply.replacingCharacters(in: index...index, with: reply[index] == "A" ? "B" : "A")]
            }),
            ("retired because a man in the middle", { _, _ in ["sealkit-reply-v1:" + String(repeating: "A", count: 300)] }),
            ("this is a transfer offer, not a reply", { offer, _ in [offer] }),
            ("not a SealKit transfer reply", { _, code in [code] }),
            ("no transfer reply on stdin", { _, _ in [] }),
        ]
        for (message, reply) in cases {
            let receiving = try CLI()
            let (_, code, result) = try Self.receive(in: receiving, reply: reply)
            // A well-formed code that is not the receiver's is 77; damaged or missing input 65 or 66.
            if message == "wrong code" {
                #expect(result.status == 77, "\(message): \(result.status)")
            } else {
                #expect(result.status == 65 || result.status == 66, "\(message): \(result.status)")
            }
            #expect(result.stderr.hasPrefix("sealkit: ") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(!result.stderr.contains(code), "the code reached stderr")
            #expect(result.stdout.isEmpty, "nothing on stdout after the offer and code: \(result.stdout)")
            #expect(!FileManager.default.fileExists(atPath: receiving.home.appendingPathComponent("keys").path))
        }
    }

    /// The offer-swapping attack, as a regression test: an attacker who can swap the offer runs a
    /// receiver of its own and hands ITS offer to the sender, with the real receiver's code.
    /// Nothing comes of it: the attacker's receiver cannot open the reply, the real receiver
    /// refuses it, and the key appears in no output in any encoding.
    @Test func swappedOfferGivesTheAttackerNothing() throws {
        let sender = try CLI(), real = try CLI(), attacker = try CLI()
        #expect(try sender.run(["keys", "generate", "victim@example.com"]).status == 0)
        let key = try #require(try Self.keyMaterial(sender).first)

        let realReceiver = try RunningCLI(real, ["transfer", "receive", "--offline", "--format", "text"])
        let realOffer = try #require(realReceiver.readLine())
        let realCode = try #require(realReceiver.readLine())
        let attackerReceiver = try RunningCLI(attacker, ["transfer", "receive", "--offline", "--format", "text"])
        let attackerOffer = try #require(attackerReceiver.readLine())
        let attackerCode = try #require(attackerReceiver.readLine())
        #expect(attackerOffer != realOffer)

        // The sender is fooled about the offer, not about the code (people read it to each other).
        let sent = try sender.run(["transfer", "send", "victim@example.com", "--to", attackerOffer, "--code", realCode, "--format", "text"])
        #expect(sent.status == 0)
        let reply = sent.stdout.split(separator: "\n").map(String.init)
        attackerReceiver.write(reply)
        let attackerResult = attackerReceiver.finish()
        realReceiver.write(reply)
        let realResult = realReceiver.finish()

        #expect(attackerResult.status == 77 && attackerResult.stderr.contains("wrong code"), "\(attackerResult.stderr)")
        #expect(realResult.status == 77 && realResult.stderr.contains("wrong code"), "\(realResult.stderr)")
        #expect(try Self.ids(attacker).isEmpty && Self.ids(real).isEmpty)
        // The attacker cannot make a reply the real receiver takes either: without the code
        // it can only guess, and the guess ends that receiver's transfer (as above).
        for encoded in try Self.encodings(of: key) {
            for text in [sent.stdout, sent.stderr, attackerResult.stdout, attackerResult.stderr, realResult.stdout,
                         realResult.stderr, realOffer, attackerOffer, realCode, attackerCode] {
                #expect(!text.contains(encoded), "the key leaked")
            }
        }
    }

    /// On a terminal the offline receiver survives a damaged paste: it says what is wrong and asks
    /// again, then joins the real reply wrapped over several lines. Driven through a pseudo-terminal
    /// (ChildProcess's), as a person at a terminal would.
    @Test func receiverOnATerminalAsksAgainAndJoinsAWrappedReply() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        var environment = receiving.environment
        environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
        let terminal = try ChildProcess(
            CLI.executable.path, ["transfer", "receive", "--offline", "--format", "text"], environment: environment, terminal: 0,
            killAfter: nil)
        // A #require that fails below must not leave it waiting for input forever: killed on every path (after `finish`, a no-op).
        defer { terminal.kill() }
        terminal.wait(for: "Paste the reply", timeout: 20)
        let screen = String(decoding: terminal.outputSoFar, as: UTF8.self).replacingOccurrences(of: "\r", with: "")
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let offer = try #require(lines.first { $0.hasPrefix("sealkit-offer-v2:") }, "no offer on the terminal: \(screen)")
        let offerLine = try #require(lines.firstIndex(of: offer))
        try #require(offerLine + 1 < lines.count, "no code after the offer: \(screen)")
        let code = lines[offerLine + 1].trimmingCharacters(in: .whitespaces)
        let reply = Array(try sender.run(["transfer", "send", "u", "--to", offer, "--code", code, "--format", "text"])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        try #require(reply.count > 40, "reply of \(reply.count) characters")
        var damaged = reply
        damaged[40] = damaged[40] != "A" ? "A" : "B"
        terminal.write(String(damaged) + "\n\n")
        terminal.wait(for: "Paste it again", timeout: 20)
        terminal.write(offer + "\n")
        terminal.wait(for: "not a reply", timeout: 20)
        for start in stride(from: 0, to: reply.count, by: 50) {
            terminal.write(String(reply[start..<min(start + 50, reply.count)]) + "\n")
            usleep(50_000)
        }
        // On a terminal it asks before storing, with --format text too.
        terminal.wait(for: "Store these keys? [y/N]", timeout: 20)
        terminal.write("y\n")
        terminal.wait(for: "imported", timeout: 20)
        let result = terminal.finish(timeout: 60)
        let outcome = (status: result.status, output: result.stdoutText)
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.output.contains("check does not match"), "\(outcome.output)")
        #expect(outcome.output.contains("this is a transfer offer, not a reply"), "\(outcome.output)")
        #expect(outcome.output.components(separatedBy: "Paste it again").count == 3, "\(outcome.output)")
        #expect(outcome.output.contains("Store these keys? [y/N]"), "\(outcome.output)")
        #expect(outcome.output.contains("u\t") && outcome.output.contains("\timported"), "\(outcome.output)")
        #expect(try Self.ids(receiving) == ["u"])
    }

    /// --code shows in the process list; --code-file keeps the code out of it.
    @Test func theCodeCanComeFromAFileOrStdin() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let (_, _, received) = try Self.receive(in: receiving) { offer, code in
            let result = try sender.run(["transfer", "send", "u", "--to", offer, "--code-file", "-", "--format", "text"], stdin: code + "\n")
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(received.status == 0, "\(received.stderr)")
        let other = try CLI()
        let (_, _, again) = try Self.receive(in: other) { offer, code in
            let file = sender.home.appendingPathComponent("code").path
            try (code + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            let result = try sender.run(["transfer", "send", "u", "--to", offer, "--code-file", file, "--format", "text"])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sender.run(["transfer", "send", "u", "--to", "-", "--code-file", "-"]).status == 64)
        #expect(try sender.run(["transfer", "send", "u", "--code", "5-a-b", "--code-file", "-"]).status == 64)
        #expect(try sender.run(["transfer", "send", "--help"]).stdout.contains("process list"))
    }

    /// Without --code on a terminal, the sender asks for the code there (the offer may come on stdin).
    @Test func senderAsksForTheCodeOnATerminal() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let (_, code, received) = try Self.receive(in: receiving) { offer, code in
            var environment = sender.environment
            environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
            let terminal = try ChildProcess(
                CLI.executable.path, ["transfer", "send", "u", "--to", offer, "--format", "text"], environment: environment,
                terminal: 0, killAfter: nil)
            if terminal.wait(for: "Code the receiver shows", timeout: 20) { terminal.write(code.uppercased() + "\n") }
            let result = terminal.finish(timeout: 60)
            let outcome = (status: result.status, output: result.stdoutText)
            #expect(outcome.status == 0, "\(outcome.output)")
            #expect(outcome.output.contains("Code the receiver shows"))
            return outcome.output.replacingOccurrences(of: "\r", with: "").split(separator: "\n")
                .filter { $0.hasPrefix("sealkit-reply-v2:") }.map(String.init)
        }
        #expect(received.status == 0 && received.stdout.hasSuffix("\timported\n"), "\(received.stderr)")
        #expect(!received.stderr.contains(code))
    }

    @Test func replyWorksOnceAndConflictsStoreNothing() throws {
        let sender = try CLI(), receiving = try CLI()
        for id in ["a", "b"] { #expect(try sender.run(["keys", "generate", id]).status == 0) }
        var reply: [String] = []
        let (_, _, first) = try Self.receive(in: receiving) { offer, code in
            reply = try Self.send(sender, ["a", "b"], to: offer, code: code)
            return reply + reply  // The same reply twice: taken once, the copy never read.
        }
        #expect(first.status == 0)
        #expect(first.output.split(separator: "\n").map { $0.split(separator: "\t").last } == ["imported", "imported"])
        // Replayed to a new receiver, it is refused: it was made for another offer and code.
        let (_, _, replayed) = try Self.receive(in: receiving) { _, _ in reply }
        #expect(replayed.status == 77 && replayed.stderr.contains("wrong code"))

        // A different key under one id refuses the whole transfer.
        let fresh = try CLI()
        #expect(try fresh.run(["keys", "generate", "b"]).status == 0)
        let (_, _, conflict) = try Self.receive(in: fresh) { offer, code in try Self.send(sender, ["a", "b"], to: offer, code: code) }
        #expect(conflict.status == 73 && conflict.stderr.contains("a different key is already stored under 'b'"))
        #expect(try Self.ids(fresh) == ["b"])
        // The identical key is fine.
        let (_, _, again) = try Self.receive(in: receiving) { offer, code in try Self.send(sender, ["a"], to: offer, code: code) }
        #expect(again.status == 0 && again.stdout.hasSuffix("\tunchanged\n"))
    }

    /// The refusals that need a live offer; those that need none are in scripts/transfer-offline.txt.
    @Test func sendRefusesBadArgumentsAboutALiveOffer() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let receiver = try RunningCLI(cli, ["transfer", "receive", "--offline", "--format", "text"])
        defer { _ = receiver.finish() }
        let offer = try #require(receiver.readLine())
        expectCleanFailure(try cli.run(["transfer", "send", "u", "--to", offer]), containing: "--code")
        expectCleanFailure(try cli.run(["transfer", "send", "u", "--to", offer, "--code", "7-guitarist"]), containing: "1 word after the number")
    }

    /// By default the backup passphrase is made, six words of the EFF large list
    /// (77 bits), shown on stderr apart from the backup on stdout, and it opens the backup.
    @Test func backupMakesAPassphraseOfSixWords() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let ciphertext = try sender.run(["encrypt", "--key", "alice"], stdin: "paper").output
        var made: [String] = []
        for _ in 0..<2 {
            let backup = try sender.run(["keys", "backup", "alice", "--format", "text"])
            #expect(backup.status == 0, "\(backup.stderr)")
            #expect(backup.stdout.hasPrefix("sealkit-backup-v1:") && backup.stdout.split(separator: "\n").count == 1)
            let lines = backup.stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let words = try #require(lines.last).split(separator: " ").map(String.init)
            try #require(words.count == 6, "\(backup.stderr)")
            #expect(words.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "-" } })
            #expect(!backup.stdout.contains(words[0] + " " + words[1]), "the passphrase is on stdout with the backup")
            let phrase = words.joined(separator: " ")
            made.append(phrase)
            let restored = try receiving.run(
                ["keys", "restore", "alice"], stdin: backup.stdout, environment: ["SEALKIT_PASSPHRASE": phrase])
            #expect(restored.status == 0, "\(restored.stderr)")
        }
        #expect(made[0] != made[1], "two backups made the same passphrase")
        #expect(try receiving.run(["decrypt", "--key", "alice", "--", ciphertext]).stdout == "paper\n")
    }

}

extension TransferCLITests {
    // MARK: a closed stdout ends every command quietly

    /// `transfer send --rownd --format text` writes its one line straight from guarded memory; a
    /// reader that has gone must end it as `| head -1` ends the others: no "Broken pipe", no 74.
    @Test func rowndTextIntoAClosedPipeEndsQuietly() throws {
        let cli = try CLI.withKey("u")
        // The reader (head -c 0) is gone well before sealkit writes.
        let result = try CLI.bash(
            """
            { sleep 0.5; "$SEALKIT" transfer send u --rownd --link '\(KeyFixtures.rowndLink)' --format text; } | head -c 0
            echo "${PIPESTATUS[0]}"
            """, in: cli)
        let status = result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(status == "0" || status == "141", "exit status \(status): \(result.stderrText)")
        #expect(!result.stderrText.contains("cannot write"), "\(result.stderrText)")
        // Only the warning that the text holds the raw key, which is written before the text.
        #expect(result.stderrText.split(separator: "\n").allSatisfy { $0.hasPrefix("sealkit: warning: ") }, "\(result.stderrText)")
    }
}

extension TransferCLITests {
    // MARK: Offline transfer: the contract for scripts

    /// `receive --offline --format text` prints the offer, the code, and then exactly one
    /// `ID<TAB>FINGERPRINT<TAB>imported` line per id, the fingerprint as `keys list` shows it; the
    /// reply's parts may come back in any order with CRLF line ends and blank lines between.
    @Test func offlineReceiveOutputIsExactlyTheContract() throws {
        let sender = try CLI()
        let names = (0..<14).map { "a-rather-long-user-identifier-number-\($0)@customers.example.com" }
        for name in names { #expect(try sender.run(["keys", "generate", name]).status == 0) }
        #expect(try sender.run(["keys", "rotate", names[0]]).status == 0)
        let listed = try sender.run(["keys", "list"]).output.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t")
            try #require(fields.count > 1, "\(line)")
            return "\(fields[0])\t\(fields[1])\timported"
        }

        let receiving = try CLI()
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text"])
        let offer = try #require(receiver.readLine())
        let code = try #require(receiver.readLine())
        #expect(offer.hasPrefix("sealkit-offer-v2:") && code.wholeMatch(of: /[0-9]+-[a-z]+-[a-z]+/) != nil, "\(offer) \(code)")
        let reply = try sender.run(["transfer", "send", "--all", "--to", offer, "--code", code, "--format", "text"])
        #expect(reply.status == 0, "\(reply.stderr)")
        let parts = reply.output.split(separator: "\n").map(String.init)
        #expect(parts.count >= 2, "\(parts.count) parts")
        receiver.write(parts.reversed().flatMap { [$0 + "\r", "\r"] })
        let received = receiver.finish()
        #expect(received.status == 0, "\(received.stderr)")
        #expect(received.output.split(separator: "\n").map(String.init) == listed, "\(received.output)")
        // The rotated id arrived with its retired key.
        #expect(try receiving.run(["keys", "list"]).output.contains("\t1 retired"))
    }
}
