import Foundation
import SealKit
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Key material, passphrases and plaintexts stay out of every output, message, command line
/// and loose file.
@Suite("Secret hygiene")
struct SecretHygieneTests {
    static let key = "vK3mWq0t2yTn1mJ8yV6sQ0pP4cA7eH9dL2fR5gU8xZ0="
    static let passphrase = "hygiene passphrase 4b1e"
    static let plaintext = "the plaintext of a sealed field 93c2"

    /// Every way the key could be written: base64, URL-safe base64, hex.
    static var keyForms: [String] {
        let bytes = Base64.decode(key)!
        return [
            key, key.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"),
            String(key.dropLast()), bytes.map { String(format: "%02x", $0) }.joined(),
        ]
    }

    @Test func keysPassphrasesAndPlaintextsNeverReachOutputOrMessages() throws {
        let store = try TimedStore()
        let passphraseFile = store.home + "/passphrase"
        try Data((Self.passphrase + "\n").utf8).write(to: URL(fileURLWithPath: passphraseFile))
        let protected = ["--passphrase-file", passphraseFile]
        let wrongPassphrase = ["SEALKIT_PASSPHRASE": "not " + Self.passphrase]

        var outcomes: [(String, ProcessResult)] = []
        func run(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) throws -> ProcessResult {
            let outcome = try store.run(arguments, stdin: stdin, environment: environment)
            outcomes.append((arguments.joined(separator: " "), outcome))
            return outcome
        }
        #expect(try run(["keys", "import", "plain"], stdin: Self.key).status == 0)
        #expect(try run(["keys", "import", "guarded"] + protected + ["--protect"], stdin: Self.key).status == 0)
        _ = try run(["keys", "import", "plain"], stdin: Self.key)
        _ = try run(["keys", "import", "plain"], stdin: "{\"data\":\"https://x.rownd.link/s/a#\(Self.key)\"}")
        _ = try run(["keys", "import", "plain"], stdin: String(Self.key.dropLast()) + "A")
        _ = try run(["keys", "import", "plain"], stdin: Self.key + Self.key)
        _ = try run(["keys", "import", "plain"], stdin: "{\"data\":\"\(Self.key)\"}")
        _ = try run(["keys", "import", "guarded"], stdin: SymmetricKey.generate().fingerprint.description, environment: wrongPassphrase)
        _ = try run(["keys", "list"])
        _ = try run(["status", "--key", "guarded"] + protected)
        let sealed = try run(["encrypt", "--key", "plain"], stdin: Self.plaintext)
        let ciphertext = sealed.stdoutText.trimmingCharacters(in: .newlines)
        #expect(try run(["decrypt", "--key", "guarded"] + protected + ["--", ciphertext]).stdoutText == Self.plaintext + "\n")
        _ = try run(["decrypt", "--key", "guarded", "--", ciphertext], environment: wrongPassphrase)
        _ = try run(["decrypt", "--key", "plain", "--lines"], stdin: ciphertext + "\nAAAA\n")
        _ = try run(["decrypt", "--key", "plain", "--", String(ciphertext.dropLast(4))])
        _ = try run(["keys", "rotate", "guarded"], environment: wrongPassphrase)
        _ = try run(["keys", "rotate", "plain"])
        _ = try run(["encrypt", "--key", "plain", "--lines"], stdin: Self.plaintext + "\n\u{FF}")

        for (command, outcome) in outcomes {
            for secret in Self.keyForms + [Self.passphrase] {
                #expect(!outcome.stdoutText.contains(secret), "\(command): a secret on stdout")
                #expect(!outcome.stderrText.contains(secret), "\(command): a secret on stderr")
            }
            // Plaintext reaches stdout only from a successful decrypt, never a message.
            #expect(!outcome.stderrText.contains(Self.plaintext), "\(command): plaintext in a message")
        }

        // At rest, the protected key file holds neither the key nor the passphrase.
        let folder = store.home + "/keys/default"
        let guardedFile = try HostileCorpus.keyFile(for: "guarded", in: folder)
        let stored = try String(contentsOfFile: guardedFile, encoding: .utf8)
        for secret in Self.keyForms + [Self.passphrase] { #expect(!stored.contains(secret)) }
        #expect(stored.contains("protection argon2id"))
    }

    @Test func secretsNeverAppearOnAnyCommandLine() throws {
        let store = try TimedStore()
        let passphraseFile = store.home + "/passphrase"
        try Data((Self.passphrase + "\n").utf8).write(to: URL(fileURLWithPath: passphraseFile))
        #expect(try store.run(["keys", "import", "k", "--protect", "--passphrase-file", passphraseFile], stdin: Self.key).status == 0)

        // A long-running encrypt --lines with the protected key, and an import waiting on stdin:
        // sample every process's command line while they run.
        let encrypt = try ChildProcess(
            CLI.executable.path, ["encrypt", "--key", "k", "--lines", "--passphrase-file", passphraseFile],
            environment: store.environment, killAfter: nil)
        let importer = try ChildProcess(CLI.executable.path, ["keys", "import", "k2"], environment: store.environment, killAfter: nil)
        var sightings = 0
        var exposed: [String] = []
        for _ in 0..<20 {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
                guard let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
                let commandLine = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
                if Int32(entry) == encrypt.pid || Int32(entry) == importer.pid { sightings += 1 }
                for secret in Self.keyForms + [Self.passphrase] where commandLine.contains(secret) {
                    exposed.append("pid \(entry): \(commandLine.prefix(80))")
                }
            }
            usleep(20_000)
        }
        importer.write(Array(Self.key.utf8))
        importer.closeInput()
        let imported = importer.finish(stdin: [], timeout: 10)
        let input = String(repeating: Self.plaintext + "\n", count: 1000)
        let sealed = encrypt.finish(stdin: Array(input.utf8), timeout: 30)
        #expect(imported.status == 0 && sealed.status == 0)
        #expect(sightings >= 20, "the running sealkit processes were not sampled")
        #expect(exposed.isEmpty, "secrets on command lines: \(exposed)")
    }

    @Test func keyFilesAre0600InFolders0700EvenUnderAPermissiveUmask() throws {
        let store = try TimedStore()
        // A shell sets umask 000 and execs sealkit, which must not rely on the umask.
        func permissive(_ command: String, stdin: String = "") throws -> ProcessResult {
            try ChildProcess.run(
                "/bin/sh", ["-c", "umask 000; exec \"$SEALKIT\" " + command], stdin: Array(stdin.utf8),
                environment: store.environment.merging(["SEALKIT": CLI.executable.path]) { $1 }, timeout: 10)
        }
        #expect(try permissive("keys generate g").status == 0)
        #expect(try permissive("keys import i", stdin: Self.key).status == 0)
        #expect(try permissive("keys rotate g").status == 0)
        #expect(try permissive("keys generate n --namespace other").status == 0)
        for folder in ["/keys", "/keys/default", "/keys/other"] {
            var info = stat()
            #expect(stat(store.home + folder, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700, "\(folder) is \(String(info.st_mode & 0o777, radix: 8))")
            for name in try FileManager.default.contentsOfDirectory(atPath: store.home + folder) {
                let path = store.home + folder + "/" + name
                #expect(lstat(path, &info) == 0)
                if info.st_mode & S_IFMT == S_IFREG {
                    #expect(info.st_mode & 0o777 == 0o600, "\(folder)/\(name) is \(String(info.st_mode & 0o777, radix: 8))")
                }
            }
        }
    }
}
