import Foundation
import SealTestSupport
import Testing

/// At the command line: the strict keystore, `keys passwd`, confirmation
/// before deleting, `keys list` with bad entries, and passphrases from every source.
@Suite("sealkit keys: strict keystore and key lifecycle")
struct KeyLifecycleCLITests {
    static let passphrase = "correct horse battery staple"

    func keyFolder(_ cli: CLI) -> String { cli.home.appendingPathComponent("keys/default").path }

    func keyFile(_ cli: CLI, containing id: String) throws -> String {
        let encoded = Data(id.utf8).base64EncodedString()
        let folder = keyFolder(cli)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { name in
            name.hasSuffix(".key")
                && ((try? String(contentsOfFile: folder + "/" + name, encoding: .utf8))?.contains("\nid \(encoded)\n") ?? false)
        })
        return folder + "/" + name
    }

    func file(_ text: String, in cli: CLI, named name: String = UUID().uuidString) throws -> String {
        let path = cli.home.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    // MARK: keys passwd

    @Test func passwdAddsChangesAndRemovesThePassphraseOfEveryKey() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let old = try cli.run(["encrypt", "--key", "u"], stdin: "before").output
        #expect(try cli.run(["keys", "rotate", "u"]).status == 0)
        let first = try file("first passphrase\n", in: cli), second = try file("second passphrase\n", in: cli)

        let added = try cli.run(["keys", "passwd", "u", "--new-passphrase-file", first])
        #expect(added.status == 0 && added.output.hasSuffix("\tprotected"), "\(added.stderr)")
        #expect(try String(contentsOfFile: keyFile(cli, containing: "u"), encoding: .utf8).hasPrefix("sealkit-keyfile 2\n"))
        expectCleanFailure(try cli.run(["decrypt", "--key", "u", "--", old]), containing: "passphrase-protected")
        #expect(try cli.run(["decrypt", "--key", "u", "--passphrase-file", first, "--", old]).output == "before")

        // A wrong current passphrase changes nothing.
        let path = try keyFile(cli, containing: "u")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let wrong = try cli.run(
            ["keys", "passwd", "u", "--new-passphrase-file", second], environment: ["SEALKIT_PASSPHRASE": "not it"])
        expectCleanFailure(wrong, containing: "wrong passphrase")
        #expect(wrong.status == 77)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let changed = try cli.run(["keys", "passwd", "u", "--passphrase-file", first, "--new-passphrase-file", second])
        #expect(changed.status == 0 && changed.output.hasSuffix("\tpassphrase changed"), "\(changed.stderr)")
        expectCleanFailure(try cli.run(["decrypt", "--key", "u", "--passphrase-file", first, "--", old]), containing: "wrong passphrase")
        #expect(try cli.run(["decrypt", "--key", "u", "--passphrase-file", second, "--", old]).output == "before")

        let removed = try cli.run(["keys", "passwd", "u", "--remove", "--passphrase-file", second])
        #expect(removed.status == 0 && removed.output.hasSuffix("\tunprotected"), "\(removed.stderr)")
        #expect(try cli.run(["decrypt", "--key", "u", "--", old]).output == "before")
        #expect(try cli.run(["keys", "list"]).output.hasSuffix("\t1 retired"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: keyFolder(cli)).filter { $0.hasPrefix(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    @Test func restoreAndImportWithProtectNeverLeaveAnExistingKeyQuietlyUnprotected() throws {
        let cli = try CLI()
        let secret = ["SEALKIT_PASSPHRASE": Self.passphrase]
        #expect(try cli.run(["keys", "import", "u"], stdin: KeysCLITests.rowndKey).status == 0)
        let backup = try cli.run(["keys", "backup", "u", "--format", "text"], environment: secret)
        #expect(backup.status == 0, "\(backup.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: try keyFile(cli, containing: "u")))

        let restored = try cli.run(["keys", "restore", "u", "--protect"], stdin: backup.stdout, environment: secret)
        expectCleanFailure(restored, containing: "sealkit keys passwd u")
        #expect(restored.status == 64)
        let imported = try cli.run(["keys", "import", "u", "--protect"], stdin: KeysCLITests.rowndKey, environment: secret)
        expectCleanFailure(imported, containing: "sealkit keys passwd u")
        #expect(try Data(contentsOf: URL(fileURLWithPath: try keyFile(cli, containing: "u"))) == before)
        // Without --protect a restore onto the identical key is still fine.
        #expect(try cli.run(["keys", "restore", "u"], stdin: backup.stdout, environment: secret).output.hasSuffix("unchanged"))

        // --all --protect once said "unchanged", exit 0, and left u unprotected.
        // Paper and share backups alike refuse, before storing any id of the backup.
        #expect(try cli.run(["keys", "generate", "v"]).status == 0)
        let both = try cli.run(["keys", "backup", "u", "v", "--format", "text"], environment: secret)
        let shares = try cli.run(["keys", "backup", "u", "v", "--shares", "2", "--threshold", "2", "--format", "text"], environment: secret)
        #expect(both.status == 0 && shares.status == 0)
        let fresh = try CLI()
        #expect(try fresh.run(["keys", "import", "u"], stdin: KeysCLITests.rowndKey).status == 0)
        let freshBefore = try Data(contentsOf: URL(fileURLWithPath: try keyFile(fresh, containing: "u")))
        for (input, extra) in [(both.stdout, [String]()), (shares.stdout, ["--shares"])] {
            let all = try fresh.run(["keys", "restore", "--all", "--protect"] + extra, stdin: input, environment: secret)
            #expect(all.status == 64, "\(all.stdout) \(all.stderr)")
            expectCleanFailure(all, containing: "sealkit keys passwd u")
            #expect(try TransferCLITests.ids(fresh) == ["u"], "v was not stored either")
            #expect(try Data(contentsOf: URL(fileURLWithPath: try keyFile(fresh, containing: "u"))) == freshBefore)
        }
        // On a keystore without u, --all --protect protects both.
        let empty = try CLI()
        let protected = try empty.run(["keys", "restore", "--all", "--protect"], stdin: both.stdout, environment: secret)
        #expect(protected.status == 0, "\(protected.stderr)")
        #expect(try empty.run(["keys", "list"]).output.split(separator: "\n").allSatisfy { $0.hasSuffix("protected") })
    }

    /// `transfer receive --protect` refuses an id stored without a passphrase,
    /// as `keys restore ID --protect` does, and stores nothing.
    @Test func receiveWithProtectRefusesAnExistingUnprotectedID() throws {
        let sender = try CLI(), receiving = try CLI()
        #expect(try sender.run(["keys", "import", "u"], stdin: KeysCLITests.rowndKey).status == 0)
        #expect(try receiving.run(["keys", "import", "u"], stdin: KeysCLITests.rowndKey).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: try keyFile(receiving, containing: "u")))
        let passphraseFile = try file(Self.passphrase + "\n", in: receiving)
        let (_, _, received) = try TransferCLITests.receive(
            in: receiving, arguments: ["--protect", "--yes", "--passphrase-file", passphraseFile]
        ) { offer, code in
            try TransferCLITests.send(sender, ["u"], to: offer, code: code)
        }
        #expect(received.status == 64, "\(received.stderr)")
        #expect(received.stderr.contains("sealkit keys passwd u"), "\(received.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: try keyFile(receiving, containing: "u"))) == before)
        #expect(!(try receiving.run(["keys", "list"]).output.contains("protected")))
    }

    // MARK: keys delete

    @Test func deleteAsksOnATerminalAndScriptsAreNotAsked() throws {
        let cli = try CLI()
        for id in ["kept", "gone", "forced"] { #expect(try cli.run(["keys", "generate", id]).status == 0) }
        let no = try Terminal.run(cli, ["keys", "delete", "kept"], answers: ["n"])
        #expect(no.output.contains("[y/N]") && no.output.contains("nothing was deleted"), "\(no.output)")
        #expect(no.status == 1)
        let empty = try Terminal.run(cli, ["keys", "delete", "kept"], answers: [""])
        #expect(empty.status == 1)
        let yes = try Terminal.run(cli, ["keys", "delete", "gone"], answers: ["y"])
        #expect(yes.status == 0 && yes.output.contains("gone\tdeleted"), "\(yes.output)")
        let forced = try Terminal.run(cli, ["keys", "delete", "--force", "forced"], answers: [])
        #expect(forced.status == 0 && !forced.output.contains("[y/N]"), "\(forced.output)")
        #expect(try cli.run(["keys", "list"]).output.split(separator: "\n").map { $0.prefix { $0 != "\t" } } == ["kept"])
        // Not a terminal: deleted as before, without a question.
        let scripted = try cli.run(["keys", "delete", "kept"])
        #expect(scripted.status == 0 && scripted.stderr.isEmpty)
    }

    // MARK: keys list

    @Test func listShowsHealthyKeysThenOneLinePerBadEntry() throws {
        let cli = try CLI()
        for id in ["a", "broken", "open", "planted", "z"] { #expect(try cli.run(["keys", "generate", id]).status == 0) }
        let broken = try keyFile(cli, containing: "broken")
        let text = try String(contentsOfFile: broken, encoding: .utf8)
        try text.replacingOccurrences(of: "\nkey ", with: "\nkey zz").write(toFile: broken, atomically: false, encoding: .utf8)
        let open = try keyFile(cli, containing: "open")
        chmod(open, 0o644)

        let listed = try cli.run(["keys", "list"])
        #expect(listed.status == 65)
        #expect(listed.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) } == ["a", "planted", "z"])
        let problems = listed.stderr.split(separator: "\n").map(String.init)
        #expect(problems.count == 2, "\(listed.stderr)")
        #expect(problems.first?.hasPrefix("sealkit: key 'broken': ") == true && problems.first?.contains("delete it") == true)
        #expect(problems.last?.hasPrefix("sealkit: key 'open': ") == true && problems.last?.contains("chmod 600") == true)

        try cli.run(["keys", "delete", "broken"])
        // Only unsafe entries left: a planted file (another user's) and a too-open one.
        #expect(chown(try keyFile(cli, containing: "planted"), 65534, 65534) == 0)
        let unsafe = try cli.run(["keys", "list"])
        #expect(unsafe.status == 77)
        #expect(unsafe.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) } == ["a", "z"])
        #expect(unsafe.stderr.contains("sealkit: key 'planted': ") && unsafe.stderr.contains("chown"))
        chmod(open, 0o600)
        try cli.run(["keys", "delete", "planted"])
        #expect(try cli.run(["keys", "list"]).status == 0)
    }

    // MARK: Strict keystore

    @Test func aPlantedKeyFileIsNeverUsedToEncrypt() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "victim"], stdin: KeysCLITests.rowndKey).status == 0)
        // Another user (uid 65534) swaps in a file holding a key they know; we run as root.
        let path = try keyFile(cli, containing: "victim")
        #expect(chown(path, 65534, 65534) == 0)
        let result = try cli.run(["encrypt", "--key", "victim"], stdin: "secret")
        expectCleanFailure(result, containing: "owned by uid 65534")
        #expect(result.status == 77)
        #expect(result.stderr.contains("chown"))
    }

    @Test func aWorldWritableKeystoreFolderIsRefused() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "w"]).status == 0)
        let root = cli.home.appendingPathComponent("keys").path
        chmod(root, 0o1777)
        let result = try cli.run(["encrypt", "--key", "w"], stdin: "x")
        expectCleanFailure(result, containing: "chmod 700 \(root)")
        #expect(result.status == 77)
        expectCleanFailure(try cli.run(["keys", "generate", "v"]), containing: "mode 1777")
    }

    @Test func aHeldLockEndsInOneLineAfterTheTimeout() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "l"]).status == 0)
        let holder = try ChildProcess("/usr/bin/flock", [keyFolder(cli) + "/.lock", "sleep", "4"])
        defer { holder.send(signal: SIGTERM); _ = holder.finish() }
        // Until flock(1) holds the lock: a probe that takes it lets go at once, so the holder gets it next.
        let lockPath = keyFolder(cli) + "/.lock"
        let held = Waits.until(timeout: 3) {
            let probe = open(lockPath, O_RDONLY)
            guard probe >= 0 else { return false }
            defer { close(probe) }
            guard flock(probe, LOCK_EX | LOCK_NB) == 0 else { return true }
            flock(probe, LOCK_UN)
            return false
        }
        try #require(held, "flock(1) did not take the lock within 3 s")
        let started = Date()
        let result = try cli.run(["keys", "rotate", "l"], environment: ["SEALKIT_LOCK_TIMEOUT": "1"])
        let waited = Date().timeIntervalSince(started)
        expectCleanFailure(result, containing: "SEALKIT_LOCK_TIMEOUT")
        #expect(result.status == 75)
        #expect(waited >= 0.9 && waited < 3.5, "waited \(waited) s")
        expectCleanFailure(try cli.run(["keys", "rotate", "l"], environment: ["SEALKIT_LOCK_TIMEOUT": "soon"]), containing: "SEALKIT_LOCK_TIMEOUT")
    }

    // MARK: Passphrase sources

    @Test func passphraseFilesMayBePipesFIFOsAndProcessSubstitutions() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "f"], environment: ["SEALKIT_PASSPHRASE": Self.passphrase]).status == 0)
        let environment = cli.environment.merging(["SEALKIT": CLI.executable.path]) { $1 }
        // bash's <(...) hands sealkit a /dev/fd/N path to a pipe.
        let substituted = try ChildProcess.run(
            "/bin/bash", ["-c", "\"$SEALKIT\" status --key f --passphrase-file <(printf '%s\\n' '\(Self.passphrase)')"],
            environment: environment)
        #expect(substituted.status == 0, "\(substituted.stderrText)")
        let fifo = cli.home.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let viaFIFO = try ChildProcess.run(
            "/bin/bash", ["-c", "printf '%s' '\(Self.passphrase)' > \(fifo) & \"$SEALKIT\" status --key f --passphrase-file \(fifo)"],
            environment: environment)
        #expect(viaFIFO.status == 0, "\(viaFIFO.stderrText)")
        // An endless source is cut off, not read forever.
        let endless = try cli.run(["status", "--key", "f", "--passphrase-file", "/dev/zero"])
        expectCleanFailure(endless, containing: "longer than 4096 bytes")
    }

    @Test func thePromptAllowsThreeTries() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "t"], environment: ["SEALKIT_PASSPHRASE": Self.passphrase]).status == 0)
        let third = try Terminal.run(cli, ["status", "--key", "t"], answers: ["wrong", "", Self.passphrase])
        #expect(third.status == 0, "\(third.output)")
        #expect(third.output.contains("Wrong passphrase, try again.") && third.output.contains("empty, try again"))
        let never = try Terminal.run(cli, ["keys", "rotate", "t"], answers: ["a", "b", "c"])
        #expect(never.status == 77 && never.output.contains("wrong passphrase for key 't'"), "\(never.output)")
        // A new passphrase must be typed the same twice, within three tries.
        let typed = try Terminal.run(cli, ["keys", "generate", "n", "--protect"], answers: ["one one", "two two", "same same", "same same"])
        #expect(typed.status == 0 && typed.output.contains("do not match, try again"), "\(typed.output)")
        #expect(try cli.run(["status", "--key", "n"], environment: ["SEALKIT_PASSPHRASE": "same same"]).status == 0)
    }
}

/// Runs `sealkit` on a pseudo-terminal (SealTestSupport's `ChildProcess` with a terminal), answering
/// each prompt in turn.
enum Terminal {
    struct Result {
        let status: Int32
        /// Everything written to the terminal, prompts included.
        let output: String
    }

    static func run(_ cli: CLI, _ arguments: [String], answers: [String]) throws -> Result {
        let child = try ChildProcess(CLI.executable.path, arguments, environment: cli.environment, terminal: 80, killAfter: 30)
        let deadline = Date().addingTimeInterval(30)
        var answered = 0
        for answer in answers {
            // A prompt ends in ": " or "] " and waits; answer it.
            let prompted = child.wait(from: answered, timeout: deadline.timeIntervalSinceNow) { shown in
                shown.last == UInt8(ascii: " ") && [UInt8(ascii: ":"), UInt8(ascii: "]")].contains(shown.dropLast().last)
            }
            guard prompted else { break }
            answered = child.outputSoFar.count
            child.write(answer + "\n")
        }
        let result = child.finish(timeout: max(deadline.timeIntervalSinceNow, 0))
        return Result(status: result.status, output: result.stdoutText)
    }
}
