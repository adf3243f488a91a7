import Foundation
import SealTestSupport
import Testing

/// A `sealkit` process kept running, for driving `transfer receive` through its pipes.
final class RunningCLI {
    private let process = Process()
    private let input = Pipe(), output = Pipe(), errors = Pipe()
    private var pending: [UInt8] = []
    private let errorData = LockedData()

    init(_ cli: CLI, _ arguments: [String], environment extra: [String: String] = [:]) throws {
        process.executableURL = CLI.executable
        process.arguments = arguments
        process.environment = cli.environment.merging(extra) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let errors = errors
        let errorData = errorData
        Thread { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }.start()
        // A receiver that hangs must not hang the test run.
        let process = process
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { if process.isRunning { process.terminate() } }
    }

    /// The next stdout line, without its newline; nil at the end of output.
    func readLine() -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeFirst(newline + 1)
                return line
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { return nil }
            pending += data
        }
    }

    func write(_ lines: [String]) {
        try? input.fileHandleForWriting.write(contentsOf: Data(lines.map { $0 + "\n" }.joined().utf8))
    }

    /// Closes stdin, waits for the end, and returns the rest of stdout and all of stderr.
    func finish() -> CLI.Result {
        try? input.fileHandleForWriting.close()
        let rest = pending + output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { usleep(1000) }
        return CLI.Result(
            status: process.terminationStatus, stdout: String(decoding: rest, as: UTF8.self),
            stderr: String(decoding: errorData.get(), as: UTF8.self), stdoutBytes: Array(rest))
    }
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

    /// Runs a receiver in `receiving`, lets `reply` make the lines to give it, and returns its result.
    static func receive(
        in receiving: CLI, arguments: [String] = [], reply: (String) throws -> [String]
    ) throws -> (offer: String, result: CLI.Result) {
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--format", "text"] + arguments)
        let offer = try #require(receiver.readLine())
        receiver.write(try reply(offer))
        return (offer, receiver.finish())
    }

    @Test func sealedTransferMovesTheWholeRing() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "alice@example.com"]).status == 0)
        let old = try sender.run(["encrypt", "--key", "alice@example.com", "--", "before rotation"]).output
        #expect(try sender.run(["keys", "rotate", "alice@example.com"]).status == 0)
        let new = try sender.run(["encrypt", "--key", "alice@example.com", "--", "after rotation"]).output

        var sent: CLI.Result?
        let (offer, received) = try Self.receive(in: receiving) { offer in
            #expect(offer.hasPrefix("sealkit-offer-v1:"))
            let result = try sender.run(["transfer", "send", "alice@example.com", "--to", offer, "--format", "text"])
            sent = result
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("sealkit-reply-v1:") })
            return result.stdout.split(separator: "\n").map(String.init)
        }
        let sendResult = try #require(sent)
        #expect(received.status == 0, "\(received.stderr)")
        let stored = received.output.split(separator: "\t")
        #expect(stored.first == "alice@example.com" && stored.last == "imported")
        #expect(try receiving.run(["decrypt", "--key", "alice@example.com", "--", old]).stdout == "before rotation\n")
        #expect(try receiving.run(["decrypt", "--key", "alice@example.com", "--", new]).stdout == "after rotation\n")

        // Both sides show the same verification code and fingerprint, and no key material.
        let code = try #require(sendResult.stderr.firstMatch(of: /Verification code: ([0-9]{3}-[0-9]{3})/)?.1)
        #expect(received.stderr.contains("Verification code: \(code)"))
        #expect(received.stderr.contains(String(stored[1])) && sendResult.stderr.contains(String(stored[1])))
        let material = try Self.keyMaterial(sender)
        #expect(material.count == 2)
        for key in material {
            for text in [sendResult.stdout, sendResult.stderr, received.stdout, received.stderr, offer] {
                #expect(!text.contains(key))
                #expect(!text.contains(key.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").dropLast()))
            }
        }
    }

    @Test func manyKeysTravelAsPartsInAnyOrder() throws {
        let sender = try CLI(), receiving = try CLI()
        let names = (0..<14).map { "a-rather-long-user-identifier-number-\($0)@customers.example.com" }
        for name in names { #expect(try sender.run(["keys", "generate", name]).status == 0) }
        let (_, received) = try Self.receive(in: receiving) { offer in
            let lines = try sender.run(["transfer", "send", "--all", "--to", offer, "--format", "text"]).output
                .split(separator: "\n").map(String.init)
            #expect(lines.count >= 2 && lines.allSatisfy { $0.hasPrefix("sealkit-part-v1:") && $0.count <= 1200 })
            return lines.reversed()
        }
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try Self.ids(receiving) == names.sorted())
    }

    @Test func foreignTamperedAndGarbledRepliesStoreNothing() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "u"]).status == 0)
        let other = try CLI()
        let elsewhere = try RunningCLI(other, ["transfer", "receive", "--format", "text"])
        let otherOffer = try #require(elsewhere.readLine())
        let foreignReply = try sender.run(["transfer", "send", "u", "--to", otherOffer, "--format", "text"]).stdout
        _ = elsewhere.finish()

        let cases: [(String, (String) throws -> [String])] = [
            ("sealed for another receiver", { _ in [foreignReply] }),
            ("altered on the way", { offer in
                let reply = try sender.run(["transfer", "send", "u", "--to", offer, "--format", "text"]).output
                let index = reply.index(reply.startIndex, offsetBy: 60)
                return [reply.replacingCharacters(in: index...index, with: reply[index] == "A" ? "B" : "A")]
            }),
            ("this is a transfer offer, not a reply", { offer in [offer] }),
            ("not a SealKit transfer reply", { _ in ["hello"] }),
            ("no transfer reply on stdin", { _ in [] }),
        ]
        for (message, reply) in cases {
            let receiving = try CLI()
            let (_, result) = try Self.receive(in: receiving, reply: reply)
            #expect(result.status == 65 || result.status == 66, "\(message): \(result.status)")
            #expect(result.stderr.split(separator: "\n").last?.hasPrefix("sealkit: ") == true)
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stdout.isEmpty, "nothing on stdout after the offer: \(result.stdout)")
            #expect(try Self.ids(receiving).isEmpty)
        }
    }

    @Test func replyWorksOnceAndConflictsStoreNothing() throws {
        let sender = try CLI(), receiving = try CLI()
        for id in ["a", "b"] { #expect(try sender.run(["keys", "generate", id]).status == 0) }
        var reply: [String] = []
        let (_, first) = try Self.receive(in: receiving) { offer in
            reply = try sender.run(["transfer", "send", "a", "b", "--to", offer, "--format", "text"]).output
                .split(separator: "\n").map(String.init)
            return reply + reply  // The same reply twice: taken once, the copy never read.
        }
        #expect(first.status == 0)
        #expect(first.output.split(separator: "\n").map { $0.split(separator: "\t").last } == ["imported", "imported"])
        // Replayed to a new receiver, it is refused: the old offer's key is gone.
        let (_, replayed) = try Self.receive(in: receiving) { _ in reply }
        #expect(replayed.status == 65 && replayed.stderr.contains("another receiver"))

        // A different key under one id refuses the whole transfer.
        let fresh = try CLI()
        #expect(try fresh.run(["keys", "generate", "b"]).status == 0)
        let (_, conflict) = try Self.receive(in: fresh) { offer in
            try sender.run(["transfer", "send", "a", "b", "--to", offer, "--format", "text"]).output
                .split(separator: "\n").map(String.init)
        }
        #expect(conflict.status == 73 && conflict.stderr.contains("a different key is already stored under 'b'"))
        #expect(try Self.ids(fresh) == ["b"])
        // The identical key is fine.
        let (_, again) = try Self.receive(in: receiving) { offer in
            try sender.run(["transfer", "send", "a", "--to", offer, "--format", "text"]).output
                .split(separator: "\n").map(String.init)
        }
        #expect(again.status == 0 && again.stdout.hasSuffix("\tunchanged\n"))
    }

    @Test func sendRefusesBadArguments() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        expectCleanFailure(try cli.run(["transfer", "send", "u"]), containing: "--to OFFER")
        expectCleanFailure(try cli.run(["transfer", "send", "u", "--to", "sealkit-offer-v1:AAAA"]), containing: "offer is damaged")
        expectCleanFailure(try cli.run(["transfer", "send", "u", "--to", "x", "--expires-in", "0"]), containing: "1 to 86400")
        expectCleanFailure(try cli.run(["transfer", "send", "u", "v", "--rownd"]), containing: "exactly one id")
        expectCleanFailure(try cli.run(["transfer", "send", "nobody", "--rownd"]), containing: "no key for 'nobody'")
    }

    @Test func rowndTextImportsIntoAnotherKeystore() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "user-9"]).status == 0)
        let ciphertext = try sender.run(["encrypt", "--key", "user-9", "--", "for rownd"]).output
        let key = try #require(try Self.keyMaterial(sender).first)
        let link = "https://example.rownd.link/s/abc"
        let shown = try sender.run(["transfer", "send", "user-9", "--rownd", "--link", link, "--format", "text"])
        #expect(shown.status == 0)
        #expect(shown.stdout == "{\"data\":\"\(link)#\(key)\"}\n")
        #expect(shown.stderr.contains("warning: this code holds the raw key"))
        #expect(!shown.stderr.contains(key))
        #expect(try receiving.run(["keys", "import", "user-9"], stdin: shown.stdout).status == 0)
        #expect(try receiving.run(["decrypt", "--key", "user-9", "--", ciphertext]).stdout == "for rownd\n")

        let bare = try sender.run(["transfer", "send", "user-9", "--rownd", "--format", "text"])
        #expect(bare.stdout == "{\"data\":\"#\(key)\"}\n")
    }

    @Test func paperBackupRestoresOneIDAndRefusesWrongPassphrase() throws {
        let sender = try CLI(), receiving = try CLI()
        for id in ["alice", "bob"] { #expect(try sender.run(["keys", "generate", id]).status == 0) }
        let ciphertext = try sender.run(["encrypt", "--key", "bob", "--", "from paper"]).output
        let backup = try sender.run(["keys", "backup", "--all", "--format", "text"], environment: ["SEALKIT_PASSPHRASE": "paper pass phrase"])
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stdout.hasPrefix("sealkit-backup-v1:") && backup.stdout.split(separator: "\n").count == 1)
        for key in try Self.keyMaterial(sender) { #expect(!backup.stdout.contains(key) && !backup.stderr.contains(key)) }

        let wrong = try receiving.run(["keys", "restore", "bob"], stdin: backup.stdout, environment: ["SEALKIT_PASSPHRASE": "paper pass"])
        expectCleanFailure(wrong, containing: "wrong passphrase")
        #expect(wrong.status == 77)
        #expect(try Self.ids(receiving).isEmpty)

        let restored = try receiving.run(
            ["keys", "restore", "bob"], stdin: backup.stdout, environment: ["SEALKIT_PASSPHRASE": "paper pass phrase"])
        #expect(restored.status == 0 && restored.output.hasSuffix("\trestored"), "\(restored.stderr)")
        // The passphrase opened the backup; without --protect the restored key is usable as it was.
        #expect(restored.stderr.contains("without passphrase protection"))
        #expect(try receiving.run(["decrypt", "--key", "bob", "--", ciphertext]).stdout == "from paper\n")
        #expect(try Self.ids(receiving) == ["bob"])

        // With --protect, the same passphrase also protects it at rest.
        let protectedHome = try CLI()
        let protected = try protectedHome.run(
            ["keys", "restore", "bob", "--protect"], stdin: backup.stdout, environment: ["SEALKIT_PASSPHRASE": "paper pass phrase"])
        #expect(protected.status == 0, "\(protected.stderr)")
        #expect(try protectedHome.run(["keys", "list"]).stdout.contains("protected"))
        expectCleanFailure(try protectedHome.run(["decrypt", "--key", "bob", "--", ciphertext]), containing: "passphrase-protected")
        #expect(try protectedHome.run(["decrypt", "--key", "bob", "--", ciphertext], environment: ["SEALKIT_PASSPHRASE": "paper pass phrase"]).stdout == "from paper\n")

        let missing = try receiving.run(
            ["keys", "restore", "carol"], stdin: backup.stdout, environment: ["SEALKIT_PASSPHRASE": "paper pass phrase"])
        expectCleanFailure(missing, containing: "holds no key for 'carol' (it holds 'alice', 'bob')")
        expectCleanFailure(try receiving.run(["keys", "restore", "bob"], stdin: ""), containing: "no paper backup on stdin")
    }

    /// Issue 13, finding 6: by default the backup passphrase is made, six words of the EFF large list
    /// (77 bits), shown on stderr apart from the backup on stdout, and it opens the backup.
    @Test func backupMakesAPassphraseOfSixWords() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        let ciphertext = try sender.run(["encrypt", "--key", "alice", "--", "paper"]).output
        var made: [String] = []
        for _ in 0..<2 {
            let backup = try sender.run(["keys", "backup", "alice", "--format", "text"])
            #expect(backup.status == 0, "\(backup.stderr)")
            #expect(backup.stdout.hasPrefix("sealkit-backup-v1:") && backup.stdout.split(separator: "\n").count == 1)
            let lines = backup.stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let words = try #require(lines.last).split(separator: " ").map(String.init)
            #expect(words.count == 6, "\(backup.stderr)")
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

    /// Issue 13, finding 6: a chosen passphrase of fewer than 12 characters ("1") is refused, and no backup is printed.
    @Test func backupRefusesAShortChosenPassphrase() throws {
        let sender = try CLI()
        #expect(try sender.run(["keys", "generate", "alice"]).status == 0)
        for short in ["1", "eleven char"] {
            let refused = try sender.run(["keys", "backup", "--all", "--format", "text"], environment: ["SEALKIT_PASSPHRASE": short])
            expectCleanFailure(refused, containing: "at least 12 characters")
            #expect(refused.status == 64)
        }
        let file = sender.home.appendingPathComponent("pass").path
        try "tiny\n".write(toFile: file, atomically: true, encoding: .utf8)
        expectCleanFailure(
            try sender.run(["keys", "backup", "--all", "--format", "text", "--passphrase-file", file]), containing: "at least 12 characters")
        let twelve = try sender.run(["keys", "backup", "--all", "--format", "text"], environment: ["SEALKIT_PASSPHRASE": "twelve chars"])
        #expect(twelve.status == 0, "\(twelve.stderr)")
        #expect(!twelve.stderr.contains("Backup passphrase"), "a chosen passphrase is not shown")
    }
}
