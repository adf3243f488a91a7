import Foundation
import SealTestSupport
import Testing

@Suite("sealkit keys, encrypt, decrypt, status")
struct KeysCLITests {
    static let rowndKey = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="
    static let rowndCiphertext =
        "Di0IyYbC141WIPKzFnlsQc0BIi1AWKSpLf6Th9TcDDJiidPfkVazXtFibnsqJyKFaQf7SaF68yihnqJXidodfKqKzjM2MnbHbh+O8wpxFO3gO6OhVg=="

    @Test func damagedKeyFileSaysToDeleteItAndDeleteWorks() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "d"]).status == 0)
        let folder = cli.home.appendingPathComponent("keys/default").path
        let keyFile = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".key") })
        try "not a key file\n".write(toFile: folder + "/" + keyFile, atomically: false, encoding: .utf8)
        expectCleanFailure(try cli.run(["encrypt", "--key", "d"], stdin: "x"), containing: "restore it from a backup or delete it")
        #expect(try cli.run(["keys", "delete", "d"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: folder + "/" + keyFile))
        #expect(try cli.run(["keys", "generate", "d"]).status == 0)
    }

    @Test func linesModeStreamsOneLinePerValue() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "l"]).status == 0)
        let input = (1...500).map { "value \($0) ✓" }.joined(separator: "\n") + "\n\nlast-without-newline"
        let sealed = try cli.run(["encrypt", "--key", "l", "--lines"], stdin: input)
        #expect(sealed.status == 0)
        #expect(sealed.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 503)
        let opened = try cli.run(["decrypt", "--key", "l", "--lines"], stdin: sealed.stdout)
        #expect(opened.stdout == input + "\n")
        let broken = try cli.run(["decrypt", "--key", "l", "--lines"], stdin: "AAAA\n")
        expectCleanFailure(broken, containing: "line 1: too short")
    }

    @Test func keyFilesAre0600InFolders0700AndLooseFilesAreRefused() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "p"]).status == 0)
        let folder = cli.home.appendingPathComponent("keys/default").path
        for path in [cli.home.appendingPathComponent("keys").path, folder] {
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(path)")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            let mode = try FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name)")
        }
        let keyFile = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".key") })
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder + "/" + keyFile)
        expectCleanFailure(try cli.run(["encrypt", "--key", "p"], stdin: "x"), containing: "chmod 600")
    }

    @Test func passphraseProtectedKeys() throws {
        let cli = try CLI()
        let secret = ["SEALKIT_PASSPHRASE": "correct horse battery staple"]
        #expect(try cli.run(["keys", "generate", "s"], environment: secret).status == 0)
        let folder = cli.home.appendingPathComponent("keys/default").path
        let keyFile = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".key") })
        let before = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + keyFile))
        #expect(String(decoding: before, as: UTF8.self).contains("protection argon2id"))

        let sealed = try cli.run(["encrypt", "--key", "s"], stdin: "guarded", environment: secret)
        #expect(sealed.status == 0)
        expectCleanFailure(try cli.run(["decrypt", "--key", "s", "--", sealed.output]), containing: "passphrase-protected")
        expectCleanFailure(
            try cli.run(["decrypt", "--key", "s", "--", sealed.output], environment: ["SEALKIT_PASSPHRASE": "wrong"]),
            containing: "wrong passphrase")
        expectCleanFailure(try cli.run(["keys", "rotate", "s"], environment: ["SEALKIT_PASSPHRASE": "wrong"]), containing: "wrong passphrase")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + keyFile)) == before)

        let passphraseFile = cli.home.appendingPathComponent("pass.txt")
        try "correct horse battery staple\n".write(to: passphraseFile, atomically: true, encoding: .utf8)
        let opened = try cli.run(["decrypt", "--key", "s", "--passphrase-file", passphraseFile.path, "--", sealed.output])
        #expect(opened.output == "guarded")
        expectCleanFailure(try cli.run(["status", "--key", "s"]), containing: "passphrase")
        #expect(try cli.run(["status", "--key", "s"], environment: secret).status == 0)
    }

    @Test(.requires(.python)) func eightProcessesImportingAtOnceLoseNothing() throws {
        let cli = try CLI()
        // Each process imports its own keys, and all race on one shared id too.
        let shared = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
        var processes: [ChildProcess] = []
        for worker in 0..<8 {
            let script = """
                set -e
                for i in $(seq 1 5); do
                  python3 -c 'import base64,os; print(base64.b64encode(os.urandom(32)).decode())' | "$SEALKIT" keys import w\(worker)-$i >/dev/null
                done
                echo '\(shared)' | "$SEALKIT" keys import shared >/dev/null
                """
            processes.append(try ChildProcess(
                "/bin/sh", ["-c", script], environment: cli.environment.merging(["SEALKIT": CLI.executable.path]) { $1 }))
        }
        let results = processes.map { $0.finish() }
        #expect(results.allSatisfy { $0.status == 0 })
        let listed = try cli.run(["keys", "list"]).stdout.split(separator: "\n")
        #expect(listed.count == 41)
        for worker in 0..<8 { for i in 1...5 { #expect(try cli.run(["status", "--key", "w\(worker)-\(i)"]).status == 0) } }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.home.appendingPathComponent("keys/default").path)
            .filter { $0.hasPrefix(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    @Test(.requires(.pyNaCl)) func pynaclDecryptsSealKitCiphertexts() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "py"], stdin: Self.rowndKey).status == 0)
        let plaintexts = ["", "a", "héllo wörld ✓", String(repeating: "x", count: 5000)]
        var ciphertexts: [String] = []
        for plaintext in plaintexts {
            let sealed = try cli.run(["encrypt", "--key", "py"], stdin: plaintext)
            #expect(sealed.status == 0)
            ciphertexts.append(sealed.output)
        }
        let script = """
            import sys, base64, json, nacl.secret
            data = json.load(sys.stdin)
            box = nacl.secret.SecretBox(base64.b64decode(data["key"]))
            print(json.dumps([box.decrypt(base64.b64decode(c)).decode("utf-8") for c in data["ciphertexts"]]))
            """
        let payload = try JSONSerialization.data(withJSONObject: ["key": Self.rowndKey, "ciphertexts": ciphertexts])
        let result = try python(script, stdin: String(decoding: payload, as: UTF8.self))
        #expect(result.status == 0, "\(result.stderr)")
        let decoded = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String]
        #expect(decoded == plaintexts)
    }

}

extension KeysCLITests {
    // MARK: Odd but plausible input: CRLF and blanks around a ciphertext

    /// A v2 ciphertext, as a v1 one, is exactly its text: stdin's one trailing newline is the only blank allowed around
    /// it. (The v1 cases, `--lines` and CRLF are in scripts/decrypt.txt and scripts/encrypt.txt.)
    @Test func decryptRefusesBlanksAroundAV2Ciphertext() throws {
        let cli = try CLI.withKey()
        let bound = try cli.run(["encrypt", "--key", "ada", "--format", "v2"], stdin: "A+").output
        #expect(try cli.run(["decrypt", "--key", "ada"], stdin: bound + "\n").stdout == "A+\n")
        expectCleanFailure(try cli.run(["decrypt", "--key", "ada"], stdin: " " + bound), containing: "whitespace around it")
    }
}

extension KeysCLITests {
    // MARK: --passphrase-file takes pipes, for new keys too

    /// A process substitution can be read once. Making a protected key read the passphrase file
    /// twice (once to see whether there was one), so `keys generate --passphrase-file <(...)` found
    /// it empty the second time; `status` with the same file then opens the key.
    @Test func aNewKeyTakesItsPassphraseFromAProcessSubstitution() throws {
        let cli = try CLI()
        for command in [
            #""$SEALKIT" keys generate p --passphrase-file <(printf '%s\n' 'correct horse battery')"#,
            #"printf '%s' "$KEY" | "$SEALKIT" keys import q --passphrase-file <(printf '%s\n' 'correct horse battery')"#,
        ] {
            var environment = cli.environment
            environment["SEALKIT"] = CLI.executable.path
            environment["KEY"] = KeyFixtures.rowndKey
            let made = try ChildProcess.run("/bin/bash", ["-c", command], stdin: [], environment: environment)
            #expect(made.status == 0, "\(command): \(made.stderrText)")
        }
        let listed = try cli.run(["keys", "list"])
        #expect(listed.stdout.contains("p\t") && listed.stdout.contains("q\t") && listed.stdout.contains("protected"), "\(listed.stdout)")
        for id in ["p", "q"] {
            let opened = try CLI.bash(
                #""$SEALKIT" status --key \#(id) --passphrase-file <(printf '%s\n' 'correct horse battery')"#, in: cli)
            #expect(opened.status == 0, "\(id): \(opened.stderrText)")
            let locked = try cli.run(["status", "--key", id])
            #expect(locked.status != 0, "\(id) is not protected")
        }
    }
}

extension KeysCLITests {
    // MARK: No plaintext on the command line; '-' is stdin

    /// `--to -` reads the offer from stdin, so it need not sit in shell history either; `qr -` too.
    @Test func dashIsStdinForTheOfferAndQRText() throws {
        let sender = try CLI.withKey("alice")
        let receiving = try CLI()
        let receiver = try RunningCLI(receiving, ["transfer", "receive", "--offline", "--format", "text"])
        let offer = try #require(receiver.readLine())
        let code = try #require(receiver.readLine())
        let reply = try sender.run(["transfer", "send", "alice", "--to", "-", "--code", code, "--format", "text"], stdin: offer + "\n")
        #expect(reply.status == 0, "\(reply.stderr)")
        receiver.write(reply.stdout.split(separator: "\n").map(String.init))
        let received = receiver.finish()
        #expect(received.status == 0 && received.output.hasPrefix("alice\t"), "\(received.stderr)")

        let fromArgument = try sender.run(["qr", "--format", "ascii", "--", "hello"])
        let fromDash = try sender.run(["qr", "--format", "ascii", "-"], stdin: "hello\n")
        #expect(fromDash.status == 0 && fromDash.stdout == fromArgument.stdout)
    }
}

extension KeysCLITests {
    // MARK: ids in prompts, messages and advice

    @Test func promptsAndMessagesShowAnIDsQuotesEscaped() throws {
        let cli = try CLI()
        let id = "alice' key 0000 and 'bob"
        #expect(try cli.run(["keys", "generate", id]).status == 0)
        // The delete question on a terminal.
        let asked = try Terminal.run(cli, ["keys", "delete", id], answers: ["n"])
        #expect(asked.status == 1)
        #expect(asked.output.contains(#"Delete every key of 'alice\' key 0000 and \'bob' ("#), "\(asked.output)")
        // What a backup (and a transfer) says it carries.
        let backup = try cli.run(["keys", "backup", id, "--format", "text"], environment: ["SEALKIT_PASSPHRASE": "twelve chars or more"])
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stderr.contains(#"Backed up 'alice\' key 0000 and \'bob' key "#), "\(backup.stderr)")
        // `status` names it the same way.
        let status = try cli.run(["status", "--key", id])
        #expect(status.output.hasPrefix(#"encryption is possible for 'alice\' key 0000 and \'bob' in namespace"#), "\(status.stdout)")
    }

}

