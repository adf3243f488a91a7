import Foundation
import SealTestSupport
import Testing

/// `sealkit` with `--keystore secret-service`, each test against a keyring of its own
/// (a private bus and GNOME Keyring in a temporary HOME), driven as scripts drive it.
@Suite("sealkit with the Secret Service keystore", .requiresKeyring)
struct SecretServiceCLITests {
    static let rowndKey = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="

    /// The same key commands as with files, in the keyring chosen by flag or environment;
    /// nothing is written to the file keystore.
    @Test func keysLiveInTheKeyringChosenByFlagOrEnvironment() throws {
        let session = try KeyringSession()
        defer { session.stop() }
        let cli = try CLI(environment: session.environment)
        let keyring = ["SEALKIT_KEYSTORE": "secret-service"]

        let generated = try cli.run(["keys", "generate", "--keystore", "secret-service", "alice"])
        #expect(generated.status == 0, "\(generated.stderr)")
        let listed = try cli.run(["keys", "list"], environment: keyring)
        let fields = generated.output.split(separator: "\t")
        try #require(fields.count > 1, "\(generated.output)")
        #expect(listed.status == 0 && listed.output.hasPrefix("alice\t" + fields[1]))
        #expect(try cli.run(["keys", "list"]).stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("keys").path))

        #expect(try cli.run(["keys", "import", "u"], stdin: Self.rowndKey, environment: keyring).output.hasSuffix("imported"))
        #expect(try cli.run(["keys", "import", "u"], stdin: Self.rowndKey, environment: keyring).output.hasSuffix("unchanged"))
        let other = try cli.run(["keys", "import", "u"], stdin: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", environment: keyring)
        expectCleanFailure(other, containing: "different key")
        #expect(other.status == 73)
        let again = try cli.run(["keys", "generate", "alice"], environment: keyring)
        expectCleanFailure(again, containing: "already exists")

        let sealed = try cli.run(["encrypt", "--key", "alice"], stdin: "in the keyring", environment: keyring)
        #expect(try cli.run(["keys", "rotate", "alice"], environment: keyring).output.hasSuffix("1 retired"))
        #expect(try cli.run(["decrypt", "--key", "alice", "--", sealed.output], environment: keyring).output == "in the keyring")
        #expect(try cli.run(["keys", "list"], environment: keyring).stdout.contains("1 retired"))
        #expect(try cli.run(["keys", "delete", "alice"], environment: keyring).status == 0)
        expectCleanFailure(try cli.run(["keys", "delete", "alice"], environment: keyring), containing: "no key for 'alice'")
        expectCleanFailure(try cli.run(["keys", "list", "--keystore", "keyring"]), containing: "keyring")
        let badEnvironment = try cli.run(["keys", "list"], environment: ["SEALKIT_KEYSTORE": "wallet"])
        expectCleanFailure(badEnvironment, containing: "SEALKIT_KEYSTORE must be 'file' or 'secret-service'")
        #expect(badEnvironment.status == 64)
    }

    /// An item someone else rewrote: every command that reads it fails in one line saying so
    /// and how to fix it (exit 65), and the fix works.
    @Test func anItemChangedBySomeoneElseIsReportedWithTheFix() throws {
        let session = try KeyringSession()
        defer { session.stop() }
        let cli = try CLI(environment: session.environment.merging(["SEALKIT_KEYSTORE": "secret-service"]) { $1 })
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let tampered = try ChildProcess.run(
            "secret-tool",
            ["store", "--label=SealKit key 'alice'", "xdg:schema", "org.sealkit.Key", "application", "sealkit",
             "namespace", "default", "id", "alice", "version", "1"],
            stdin: Array("sealkit-keyfile 1\nid YWxpY2U=\nprotection none\nkey 00 0 - AAAA\n".utf8), environment: session.environment)
        #expect(tampered.status == 0, "\(tampered.stderrText)")
        for arguments in [["keys", "list"], ["encrypt", "--key", "alice"], ["keys", "rotate", "alice"]] {
            let result = try cli.run(arguments)
            expectCleanFailure(result, containing: "the keyring item for 'alice' in namespace 'default' no longer parses")
            #expect(result.stderr.contains("sealkit keys delete --keystore secret-service --namespace default -- alice"))
            #expect(result.status == 65)
        }
        #expect(try cli.run(["keys", "delete", "--keystore", "secret-service", "--namespace", "default", "--", "alice"]).status == 0)
        #expect(try cli.run(["keys", "list"]).stdout.isEmpty)
    }

    /// The daemon restarted and not unlocked: every command fails at once in one line saying
    /// to unlock the keyring (no prompt, no wait), and unlocking it shows nothing changed.
    @Test func aLockedKeyringFailsCleanlyAndFast() throws {
        let session = try KeyringSession()
        defer { session.stop() }
        let cli = try CLI(environment: session.environment.merging(["SEALKIT_KEYSTORE": "secret-service"]) { $1 })
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let sealed = try cli.run(["encrypt", "--key", "alice"], stdin: "locked away").output
        let before = try cli.run(["keys", "list"]).stdout

        try session.restartLocked()
        let commands: [([String], String)] = [
            (["keys", "list"], ""), (["keys", "generate", "bob"], ""), (["keys", "import", "carol"], Self.rowndKey),
            (["keys", "rotate", "alice"], ""), (["keys", "delete", "alice"], ""),
            (["encrypt", "--key", "alice"], ""), (["decrypt", "--key", "alice", "--", sealed], ""),
            (["keys", "migrate", "--to", "file", "--all"], ""),
        ]
        for (arguments, stdin) in commands {
            let started = Date()
            let result = try cli.run(arguments, stdin: stdin)
            expectCleanFailure(result, containing: "the keyring is locked: unlock it")
            #expect(result.status == 77, "\(arguments)")
            #expect(Date().timeIntervalSince(started) < 5, "\(arguments) took too long")
        }

        try session.restartUnlocked()
        #expect(try cli.run(["keys", "list"]).stdout == before)
        #expect(try cli.run(["decrypt", "--key", "alice", "--", sealed]).output == "locked away")
    }

    /// A keyring that stops answering (as one waiting on an unlock prompt does): the command
    /// gives up after SEALKIT_KEYRING_TIMEOUT seconds, in one line, instead of hanging.
    @Test func aKeyringThatDoesNotAnswerTimesOut() throws {
        let session = try KeyringSession()
        defer { session.stop() }
        let cli = try CLI(environment: session.environment.merging(["SEALKIT_KEYSTORE": "secret-service"]) { $1 })
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let daemon = try session.daemonProcessID()
        kill(daemon, SIGSTOP)
        defer { kill(daemon, SIGCONT) }
        for arguments in [["keys", "list"], ["keys", "generate", "bob"], ["encrypt", "--key", "alice"]] {
            let started = Date()
            let result = try cli.run(arguments, environment: ["SEALKIT_KEYRING_TIMEOUT": "2"])
            expectCleanFailure(result, containing: "did not answer within 2 s")
            #expect(result.status == 74)
            #expect(Date().timeIntervalSince(started) < 8, "\(arguments)")
        }
        kill(daemon, SIGCONT)
        #expect(try cli.run(["keys", "list"]).stdout.hasPrefix("alice\t"))
        expectCleanFailure(try cli.run(["keys", "list"], environment: ["SEALKIT_KEYRING_TIMEOUT": "soon"]), containing: "SEALKIT_KEYRING_TIMEOUT")
    }

    /// No session bus at all: say so and name the file keystore.
    @Test func noSessionBusSaysSoAndNamesTheFileKeystore() throws {
        let cli = try CLI(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/sealkit-bus"])
        let keyring = ["--keystore", "secret-service"]
        for arguments in [["keys", "list"] + keyring, ["keys", "generate"] + keyring + ["alice"], ["encrypt"] + keyring + ["--key", "alice"]] {
            let result = try cli.run(arguments)
            expectCleanFailure(result, containing: "is not available")
            #expect(result.stderr.contains("--keystore file"))
        }
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
    }

    /// A CLI on `session`'s keyring, and the arguments that give it the passphrase "correct horse" in a file.
    static func cliWithPassphraseFile(_ session: KeyringSession) throws -> (CLI, [String]) {
        let cli = try CLI(environment: session.environment)
        let passphraseFile = cli.home.appendingPathComponent("passphrase").path
        try "correct horse\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        return (cli, ["--passphrase-file", passphraseFile])
    }

    /// File → keyring → file, with rotated and protected keys: the source empties only as each
    /// id arrives, and every key still decrypts what it encrypted.
    @Test func migrateRoundTripsAndEveryKeyStillDecrypts() throws {
        let session = try KeyringSession()
        defer { session.stop() }
        let (cli, withPassphrase) = try Self.cliWithPassphraseFile(session)

        #expect(try cli.run(["keys", "generate", "plain"]).status == 0)
        let old = try cli.run(["encrypt", "--key", "plain"], stdin: "before rotation").output
        #expect(try cli.run(["keys", "rotate", "plain"]).status == 0)
        let new = try cli.run(["encrypt", "--key", "plain"], stdin: "after rotation").output
        #expect(try cli.run(["keys", "generate", "guarded"] + withPassphrase).status == 0)
        let guarded = try cli.run(["encrypt"] + withPassphrase + ["--key", "guarded"], stdin: "protected").output
        #expect(try cli.run(["keys", "import", "rownd"], stdin: Self.rowndKey).status == 0)
        let fileList = try cli.run(["keys", "list"]).stdout

        let there = try cli.run(["keys", "migrate", "--to", "secret-service", "--all"] + withPassphrase)
        #expect(there.status == 0, "\(there.stderr)")
        #expect(there.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) } == ["guarded", "plain", "rownd"])
        #expect(there.stdout.split(separator: "\n").allSatisfy { $0.hasSuffix("\tmoved to secret-service") })
        #expect(try cli.run(["keys", "list"]).stdout.isEmpty)
        #expect(try cli.run(["keys", "list", "--keystore", "secret-service"]).stdout == fileList)

        func expectEveryKeyDecrypts(_ keystore: [String]) throws {
            #expect(try cli.run(["decrypt"] + keystore + ["--key", "plain", "--", old]).output == "before rotation")
            #expect(try cli.run(["decrypt"] + keystore + ["--key", "plain", "--", new]).output == "after rotation")
            #expect(try cli.run(["decrypt"] + keystore + withPassphrase + ["--key", "guarded", "--", guarded]).output == "protected")
            #expect(try cli.run(["decrypt"] + keystore + ["--key", "rownd", "--", KeysCLITests.rowndCiphertext]).output
                == "This super secret string will never be known.")
        }
        try expectEveryKeyDecrypts(["--keystore", "secret-service"])
        // Still protected in the keyring: without the passphrase it is refused.
        expectCleanFailure(try cli.run(["decrypt", "--keystore", "secret-service", "--key", "guarded", "--", guarded]), containing: "passphrase")
        // secret-tool, an independent client, sees every item by its documented attributes.
        for id in ["plain", "guarded", "rownd"] {
            let found = try ChildProcess.run(
                "secret-tool", ["lookup", "application", "sealkit", "namespace", "default", "id", id],
                environment: session.environment)
            // A protected id's item is sealed as one record (version 2); the others are plain version 1.
            let version = id == "guarded" ? "sealkit-keyfile 2\n" : "sealkit-keyfile 1\n"
            #expect(found.status == 0 && found.stdoutText.hasPrefix(version), "\(id)")
        }

        let back = try cli.run(["keys", "migrate", "--to", "file", "plain", "guarded", "rownd"] + withPassphrase)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try cli.run(["keys", "list", "--keystore", "secret-service"]).stdout.isEmpty)
        #expect(try cli.run(["keys", "list"]).stdout == fileList)
        try expectEveryKeyDecrypts([])
    }

    /// Protected keys merged into an unprotected entry with the same current key leave it
    /// protected; the retired key is never written in plaintext.
    @Test func migrateNeverLowersProtection() throws {
        let session = try KeyringSession()
        defer { session.stop() }
        let (cli, withPassphrase) = try Self.cliWithPassphraseFile(session)
        #expect(try cli.run(["keys", "generate", "shared"]).status == 0)
        let old = try cli.run(["encrypt", "--key", "shared"], stdin: "under the retired key").output
        #expect(try cli.run(["keys", "rotate", "shared"]).status == 0)
        let material = try TransferCLITests.keyMaterial(cli)
        try #require(material.count == 2)
        let current = material[0]
        #expect(try cli.run(["keys", "import", "shared", "--keystore", "secret-service"], stdin: current).status == 0)
        #expect(try cli.run(["keys", "passwd", "shared", "--new-passphrase-file", withPassphrase[1]]).status == 0)

        let moved = try cli.run(["keys", "migrate", "--to", "secret-service", "shared"] + withPassphrase)
        #expect(moved.status == 0, "\(moved.stderr)")
        let found = try ChildProcess.run(
            "secret-tool", ["lookup", "application", "sealkit", "namespace", "default", "id", "shared"], environment: session.environment)
        #expect(found.stdoutText.hasPrefix("sealkit-keyfile 2\n"), "the merged entry is sealed as a protected record")
        for key in material { #expect(!found.stdoutText.contains(key), "a key in plaintext in the keyring") }
        expectCleanFailure(try cli.run(["decrypt", "--keystore", "secret-service", "--key", "shared", "--", old]), containing: "passphrase")
        #expect(try cli.run(["decrypt", "--keystore", "secret-service"] + withPassphrase + ["--key", "shared", "--", old]).output
            == "under the retired key")
    }

    /// An id the destination holds with a different key is refused and both keep their key;
    /// the identical key is fine (the source copy is then removed).
    @Test func migrateRefusesAnIDTheDestinationHoldsWithADifferentKey() throws {
        let session = try KeyringSession()
        defer { session.stop() }
        let cli = try CLI(environment: session.environment)
        #expect(try cli.run(["keys", "generate", "taken"]).status == 0)
        #expect(try cli.run(["keys", "generate", "taken", "--keystore", "secret-service"]).status == 0)
        let inFile = try cli.run(["encrypt", "--key", "taken"], stdin: "file").output
        let inKeyring = try cli.run(["encrypt", "--key", "taken", "--keystore", "secret-service"], stdin: "keyring").output

        #expect(try cli.run(["keys", "generate", "free"]).status == 0)
        let refused = try cli.run(["keys", "migrate", "--to", "secret-service", "free", "taken"])
        expectCleanFailure(refused, containing: "a different key is already stored under 'taken'")
        #expect(refused.status == 73)
        #expect(try cli.run(["decrypt", "--key", "taken", "--", inFile]).output == "file")
        #expect(try cli.run(["decrypt", "--key", "taken", "--keystore", "secret-service", "--", inKeyring]).output == "keyring")
        // Every id is checked before any moves: 'free', listed first, stayed where it was.
        #expect(try cli.run(["keys", "list"]).stdout.contains("free\t"))
        #expect(!(try cli.run(["keys", "list", "--keystore", "secret-service"]).stdout.contains("free")))

        #expect(try cli.run(["keys", "import", "same"], stdin: Self.rowndKey).status == 0)
        #expect(try cli.run(["keys", "import", "same", "--keystore", "secret-service"], stdin: Self.rowndKey).status == 0)
        #expect(try cli.run(["keys", "migrate", "--to", "secret-service", "same"]).status == 0)
        #expect(try cli.run(["keys", "list"]).stdout.contains("taken\t"))
        #expect(!(try cli.run(["keys", "list"]).stdout.contains("same")))

        expectCleanFailure(try cli.run(["keys", "migrate", "--to", "file"]), containing: "give the key ids to move, or --all")
        expectCleanFailure(try cli.run(["keys", "migrate", "--to", "file", "--keystore", "file", "x"]), containing: "--keystore and --to")
        expectCleanFailure(try cli.run(["keys", "migrate", "--to", "secret-service", "missing"]), containing: "no key for 'missing'")
    }
}
