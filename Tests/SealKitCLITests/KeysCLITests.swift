import Foundation
import SealTestSupport
import Testing

@Suite("sealkit keys, encrypt, decrypt, status")
struct KeysCLITests {
    static let rowndKey = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="
    static let rowndCiphertext =
        "Di0IyYbC141WIPKzFnlsQc0BIi1AWKSpLf6Th9TcDDJiidPfkVazXtFibnsqJyKFaQf7SaF68yihnqJXidodfKqKzjM2MnbHbh+O8wpxFO3gO6OhVg=="

    @Test func generateEncryptDecryptRoundTrip() throws {
        let cli = try CLI()
        let generated = try cli.run(["keys", "generate", "alice@example.com"])
        #expect(generated.status == 0)
        let fields = generated.output.split(separator: "\t")
        #expect(fields.first == "alice@example.com")
        #expect(fields.count == 2 && fields[1].count == 19)  // 3f9a:07c2:d41e:8b65

        let sealed = try cli.run(["encrypt", "--key", "alice@example.com"], stdin: "-starts with a dash ✓")
        #expect(sealed.status == 0)
        let opened = try cli.run(["decrypt", "--key", "alice@example.com", "--", sealed.output])
        #expect(opened.stdout == "-starts with a dash ✓\n")

        // stdin drops exactly one trailing newline.
        let fromStdin = try cli.run(["encrypt", "--key", "alice@example.com"], stdin: "two newlines\n\n")
        let back = try cli.run(["decrypt", "--key", "alice@example.com"], stdin: fromStdin.stdout)
        #expect(back.stdout == "two newlines\n\n")
    }

    @Test func generateNeverPrintsKeyAndRefusesExistingID() throws {
        let cli = try CLI()
        let first = try cli.run(["keys", "generate", "bob"])
        #expect(first.status == 0)
        let keyFile = try #require(try FileManager.default.contentsOfDirectory(
            atPath: cli.home.appendingPathComponent("keys/default").path).first { $0.hasSuffix(".key") })
        let contents = try String(contentsOfFile: cli.home.appendingPathComponent("keys/default/\(keyFile)").path, encoding: .utf8)
        let material = try #require(contents.split(separator: "\n").last?.split(separator: " ").last)
        #expect(!first.stdout.contains(material) && !first.stderr.contains(material))

        let again = try cli.run(["keys", "generate", "bob"])
        expectCleanFailure(again, containing: "already exists")
        let after = try String(contentsOfFile: cli.home.appendingPathComponent("keys/default/\(keyFile)").path, encoding: .utf8)
        #expect(after == contents)
    }

    @Test func decryptsRowndsPublishedVectorFromEveryImportForm() throws {
        let forms = [
            Self.rowndKey + "\n",
            "{\"data\":\"https://example.rownd.link/s/abc#\(Self.rowndKey)\"}",
            "{\"data\": \"https:\\/\\/example.rownd.link\\/s\\/abc#\(Self.rowndKey.replacingOccurrences(of: "/", with: "\\/"))\"}\n",
            "https://example.rownd.link/s/abc#\(Self.rowndKey)",
            "https://example.rownd.link/s/abc#" + Self.rowndKey.replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(of: "=", with: "%3D"),
        ]
        for form in forms {
            let cli = try CLI()
            let imported = try cli.run(["keys", "import", "user-1"], stdin: form)
            #expect(imported.status == 0, "\(form): \(imported.stderr)")
            #expect(!imported.stdout.contains(Self.rowndKey))
            let opened = try cli.run(["decrypt", "--key", "user-1", "--", Self.rowndCiphertext])
            #expect(opened.stdout == "This super secret string will never be known.\n", "\(form)")
        }
    }

    @Test func importIdenticalKeyIsUnchangedDifferentKeyIsRefused() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "u"], stdin: Self.rowndKey).status == 0)
        let again = try cli.run(["keys", "import", "u"], stdin: Self.rowndKey)
        #expect(again.status == 0 && again.output.hasSuffix("unchanged"))
        let other = try cli.run(["keys", "import", "u"], stdin: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        expectCleanFailure(other, containing: "different key")
        let opened = try cli.run(["decrypt", "--key", "u", "--", Self.rowndCiphertext])
        #expect(opened.status == 0)
    }

    @Test(arguments: ["", "not a key", "AAAA", "{\"data\":\"no-hash\"}", "{\"other\":\"x#y\"}", "https://x#short"])
    func importRefusesBadKeyText(_ text: String) throws {
        let cli = try CLI()
        let result = try cli.run(["keys", "import", "u"], stdin: text)
        expectCleanFailure(result)
        let folder = cli.home.appendingPathComponent("keys/default").path
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        #expect(files.allSatisfy { !$0.hasSuffix(".key") })
    }

    @Test func decryptFailuresNameTheProblem() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "u"], stdin: Self.rowndKey).status == 0)
        #expect(try cli.run(["keys", "generate", "other"]).status == 0)
        expectCleanFailure(try cli.run(["decrypt", "--key", "u", "--", "not base64!"]), containing: "not base64")
        expectCleanFailure(try cli.run(["decrypt", "--key", "u", "--", "AAAA"]), containing: "too short to be a ciphertext (3 bytes, need at least 40)")
        expectCleanFailure(try cli.run(["decrypt", "--key", "other", "--", Self.rowndCiphertext]), containing: "authentication failed")
        var tampered = Array(Self.rowndCiphertext)
        tampered[60] = tampered[60] == "A" ? "B" : "A"
        expectCleanFailure(try cli.run(["decrypt", "--key", "u", "--", String(tampered)]), containing: "authentication failed")
        expectCleanFailure(try cli.run(["decrypt", "--key", "missing", "--", Self.rowndCiphertext]), containing: "no key for 'missing'")
    }

    @Test func statusReportsPossibilityWithExitCode() throws {
        let cli = try CLI()
        let missing = try cli.run(["status", "--key", "carol"])
        expectCleanFailure(missing, containing: "no key for 'carol'")
        #expect(missing.status == 1)
        #expect(try cli.run(["keys", "generate", "carol"]).status == 0)
        let ready = try cli.run(["status", "--key", "carol"])
        #expect(ready.status == 0 && ready.stdout.contains("encryption is possible"))
    }

    @Test func rotationKeepsOldCiphertextsReadableAndEncryptsWithNewKey() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "r"]).status == 0)
        let old = try cli.run(["encrypt", "--key", "r"], stdin: "before").output
        let rotated = try cli.run(["keys", "rotate", "r"])
        #expect(rotated.status == 0 && rotated.output.hasSuffix("1 retired"))
        #expect(try cli.run(["decrypt", "--key", "r", "--", old]).output == "before")
        let new = try cli.run(["encrypt", "--key", "r"], stdin: "after").output
        // The new ciphertext must not open with the old key alone: export-free check via a second keystore.
        #expect(try cli.run(["decrypt", "--key", "r", "--", new]).output == "after")
        #expect(try cli.run(["keys", "list"]).stdout.contains("1 retired"))
    }

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

    @Test func deleteRemovesKeyAndMissingDeleteFails() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "d"]).status == 0)
        #expect(try cli.run(["keys", "delete", "d"]).status == 0)
        expectCleanFailure(try cli.run(["keys", "delete", "d"]), containing: "no key for 'd'")
        #expect(try cli.run(["keys", "list"]).stdout.isEmpty)
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

    @Test(arguments: ["", ".", "..", "a/b", "tab\there", String(repeating: "x", count: 256)])
    func invalidKeyIDsAreRefusedClearly(_ id: String) throws {
        let cli = try CLI()
        expectCleanFailure(try cli.run(["keys", "generate", id]), containing: "invalid key id")
        #expect(!FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("keys").path))
    }

    @Test func unicodeAndLongIDsWork() throws {
        let cli = try CLI()
        for id in ["ユーザー", "user with spaces", String(repeating: "é", count: 127), "..hidden"] {
            let result = try cli.run(["keys", "generate", id])
            #expect(result.status == 0, "\(id): \(result.stderr)")
        }
        #expect(try cli.run(["keys", "list"]).stdout.split(separator: "\n").count == 4)
    }

    @Test func namespacesKeepKeysApart() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "n", "--namespace", "debug"]).status == 0)
        expectCleanFailure(try cli.run(["status", "--key", "n"]))
        #expect(try cli.run(["status", "--key", "n"], environment: ["SEALKIT_NAMESPACE": "debug"]).status == 0)
        expectCleanFailure(try cli.run(["keys", "list", "--namespace", "../up"]), containing: "invalid namespace")
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

    @Test func usageErrorsAreOneLine() throws {
        let cli = try CLI()
        expectCleanFailure(try cli.run(["encrypt"]), containing: "--key")
        expectCleanFailure(try cli.run(["frobnicate"]))
        expectCleanFailure(try cli.run(["encrypt", "--key", "x", "--lines", "--", "text"]))
        #expect(try cli.run(["--help"]).status == 0)
    }
}

extension KeysCLITests {
    // MARK: Odd but plausible input: CRLF and blanks around a ciphertext

    /// A ciphertext is exactly its text (docs/format.md): blanks around one are refused with words
    /// that say so, from stdin, `-`, `--input` and an argument, and stdin's one trailing newline is
    /// the only exception (the fourth hardening round reversed the earlier leniency, which the format never allowed).
    /// `--lines` reads CRLF files: CRLF ends a line there.
    @Test func decryptRefusesBlanksAroundACiphertextAndLinesReadCRLF() throws {
        let cli = try CLI.withKey()
        let sealed = try cli.run(["encrypt", "--key", "ada"], stdin: "A+").output
        for arguments in [["decrypt", "--key", "ada"], ["decrypt", "--key", "ada", "-"], ["decrypt", "--key", "ada", "--input", "-"]] {
            #expect(try cli.run(arguments, stdin: "\(sealed)\n").stdout == "A+\n")
            for stdin in ["\(sealed)\r\n", "  \(sealed)\t \n", "\(sealed)\r", "\(sealed)\n\n"] {
                let refused = try cli.run(arguments, stdin: stdin)
                #expect(refused.status == 65, "\(arguments) \(stdin.debugDescription)")
                expectCleanFailure(refused, containing: "whitespace around it")
            }
        }
        expectCleanFailure(try cli.run(["decrypt", "--key", "ada", "--", sealed + " "]), containing: "whitespace around it")
        let bound = try cli.run(["encrypt", "--key", "ada", "--format", "v2"], stdin: "A+").output
        #expect(try cli.run(["decrypt", "--key", "ada"], stdin: bound + "\n").stdout == "A+\n")
        expectCleanFailure(try cli.run(["decrypt", "--key", "ada"], stdin: " " + bound), containing: "whitespace around it")

        let lines = try cli.run(["decrypt", "--key", "ada", "--lines"], stdin: "\(sealed)\r\n\(sealed)\r\n")
        #expect(lines.status == 0 && lines.stdout == "A+\nA+\n", "\(lines.stderr)")
        // A CRLF file encrypted line by line comes back byte for byte: the CR was part of the text.
        let crlf = try cli.run(["encrypt", "--key", "ada", "--lines"], stdin: "a\r\nb\r\n")
        let back = try cli.run(["decrypt", "--key", "ada", "--lines"], stdin: crlf.stdout)
        #expect(back.status == 0 && back.stdout == "a\r\nb\r\n", "\(back.stderr)")
        // Blanks inside are still refused: that is not a ciphertext.
        let inside = String(sealed.prefix(10)) + " " + String(sealed.dropFirst(10))
        let refused = try cli.run(["decrypt", "--key", "ada"], stdin: inside)
        expectCleanFailure(refused, containing: "base64")
        #expect(refused.status == 65)
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

    @Test func encryptRefusesPlaintextArgumentsAndReadsStdinOrAFile() throws {
        let cli = try CLI.withKey()
        let refused = try cli.run(["encrypt", "--key", "ada", "--", "A+ secret"])
        expectCleanFailure(refused, containing: "| sealkit encrypt --key ada")
        #expect(refused.status == 64)
        #expect(!refused.stderr.contains("A+ secret"))

        for arguments in [["encrypt", "--key", "ada"], ["encrypt", "--key", "ada", "-"], ["encrypt", "--key", "ada", "--", "-"]] {
            let sealed = try cli.run(arguments, stdin: "A+\n")
            #expect(sealed.status == 0, "\(sealed.stderr)")
            let opened = try cli.run(["decrypt", "--key", "ada", "-"], stdin: sealed.stdout)
            #expect(opened.status == 0 && opened.output == "A+", "\(opened.stderr)")
        }
        let file = try cli.write("from a file\n", to: "plain.txt")
        let sealed = try cli.run(["encrypt", "--key", "ada", "--input", file])
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(try cli.run(["decrypt", "--key", "ada", "--", sealed.output]).output == "from a file")
        let lines = try cli.run(["encrypt", "--key", "ada", "--lines", "--input", file])
        #expect(lines.status == 0 && lines.stdout.split(separator: "\n").count == 1)
        let missing = try cli.run(["encrypt", "--key", "ada", "--input", file + ".missing"])
        expectCleanFailure(missing, containing: "cannot read the input file \(file).missing: No such file or directory")
        #expect(missing.status == 66)
    }

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

    @Test func adviceToRunACommandQuotesTheIDAsOneShellWord() throws {
        let cli = try CLI()
        let missing = try cli.run(["encrypt", "--key", "$(touch PWNED)"], stdin: "x")
        expectCleanFailure(missing)
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("'sealkit keys generate '$(touch PWNED)''"), "\(missing.stderr)")
        let quote = try cli.run(["encrypt", "--key", "it's"], stdin: "x")
        #expect(quote.stderr.contains(#"'sealkit keys generate 'it'\''s''"#), "\(quote.stderr)")
        // A plain id stays plain.
        let plain = try cli.run(["encrypt", "--key", "bob@example.com"], stdin: "x")
        #expect(plain.stderr.contains("'sealkit keys generate bob@example.com'"), "\(plain.stderr)")
    }
}

extension KeysCLITests {
    // MARK: did you mean

    @Test func aNearIDIsSuggestedBeforeTheAdviceToMakeAKey() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "ada"]).status == 0)
        #expect(try cli.run(["keys", "generate", "grace.hopper"]).status == 0)
        for arguments in [["encrypt", "--key", "Ada"], ["keys", "rotate", "Ada"], ["encrypt", "--key", "grace.hoper"]] {
            let result = try cli.run(arguments, stdin: "x")
            expectCleanFailure(result)
            #expect(result.status == 66)
            let near = arguments.last == "Ada" ? "'ada'" : "'grace.hopper'"
            let suggestion = try #require(result.stderr.range(of: "did you mean \(near)?"), "\(arguments): \(result.stderr)")
            let advice = try #require(result.stderr.range(of: "keys generate"), "\(result.stderr)")
            #expect(suggestion.lowerBound < advice.lowerBound, "\(result.stderr)")
        }
        // `status` says it too.
        let status = try cli.run(["status", "--key", "ADA"])
        #expect(status.status == 1 && status.stderr.contains("did you mean 'ada'?"), "\(status.stderr)")
        // Nothing near: no suggestion.
        let far = try cli.run(["encrypt", "--key", "zelda"], stdin: "x")
        #expect(far.status == 66 && !far.stderr.contains("did you mean"), "\(far.stderr)")
        // No second key was made along the way.
        #expect(try cli.run(["keys", "list"]).stdout.split(separator: "\n").count == 2)
    }
}
