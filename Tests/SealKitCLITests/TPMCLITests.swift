import Foundation
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Keys sealed to a TPM, against software TPMs (swtpm) each test starts and stops itself:
/// `SEALKIT_TPM_TCTI` points `sealkit` at them.
@Suite("Keys sealed to the TPM (swtpm)", .requires(.swtpm))
struct TPMCLITests {
    /// A keystore of its own whose `sealkit` uses `tpm`.
    static func cli(_ tpm: SoftwareTPM) throws -> CLI { try CLI(environment: ["SEALKIT_TPM_TCTI": tpm.tcti]) }

    /// The text of `id`'s key file in `cli`'s keystore.
    static func keyFile(_ cli: CLI, _ id: String) throws -> (path: String, text: String) {
        let folder = cli.home.appendingPathComponent("keys/default")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".key") {
            let path = folder.appendingPathComponent(name).path
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let idLine = "id " + Data(id.utf8).base64EncodedString() + "\n"
            if text.contains("\n" + idLine) { return (path, text) }
        }
        throw SoftwareTPM.Failure("no key file for \(id)")
    }

    /// The flags column of `keys list` for `id`.
    static func flags(_ cli: CLI, _ id: String) throws -> String? {
        let list = try cli.run(["keys", "list"])
        for line in list.stdout.split(separator: "\n") {
            let fields = line.split(separator: "\t").map(String.init)
            if fields.first == id { return fields.last }
        }
        return nil
    }

    @Test func sealedKeysRoundTripWithAndWithoutAPINAndListAsTPM() throws {
        try SoftwareTPM.with { tpm in
            let cli = try Self.cli(tpm)
            let made = try cli.run(["keys", "generate", "alice", "--tpm"])
            #expect(made.status == 0, "\(made.stderr)")
            #expect(try Self.flags(cli, "alice") == "tpm")
            let file = try Self.keyFile(cli, "alice")
            #expect(file.text.hasPrefix("sealkit-keyfile 2\n") && file.text.contains("\nprotection tpm nopin "), "\(file.text)")
            let sealed = try cli.run(["encrypt", "--key", "alice"], stdin: "secret ✓")
            #expect(sealed.status == 0, "\(sealed.stderr)")
            let opened = try cli.run(["decrypt", "--key", "alice", "--", sealed.output])
            #expect(opened.status == 0 && opened.output == "secret ✓", "\(opened.stderr)")

            let pinned = try cli.run(["keys", "generate", "bob", "--tpm", "--tpm-pin"], environment: ["SEALKIT_PASSPHRASE": "2468"])
            #expect(pinned.status == 0, "\(pinned.stderr)")
            #expect(try Self.flags(cli, "bob") == "tpm,pin")
            let value = try cli.run(["encrypt", "--key", "bob"], stdin: "pinned", environment: ["SEALKIT_PASSPHRASE": "2468"])
            #expect(value.status == 0, "\(value.stderr)")
            let back = try cli.run(["decrypt", "--key", "bob", "--", value.output], environment: ["SEALKIT_PASSPHRASE": "2468"])
            #expect(back.status == 0 && back.output == "pinned", "\(back.stderr)")
            let noPIN = try cli.run(["decrypt", "--key", "bob", "--", value.output])
            expectCleanFailure(noPIN, containing: "sealed to the TPM under a PIN")
            #expect(noPIN.status == 77)

            // A PIN longer than a TPM authorization value may be (32 bytes) is refused before anything is made.
            let long = try cli.run(
                ["keys", "generate", "carol", "--tpm", "--tpm-pin"], environment: ["SEALKIT_PASSPHRASE": String(repeating: "7", count: 33)])
            expectCleanFailure(long, containing: "at most 32 bytes")
            #expect(long.status == 64)
            // Only the file keystore holds keys sealed to the TPM: a migration refuses them and moves nothing.
            let migrate = try cli.run(["keys", "migrate", "--to", "secret-service", "alice"])
            expectCleanFailure(migrate, containing: "sealed to this machine's TPM")
            #expect(migrate.status == 64)
            #expect(try Self.flags(cli, "alice") == "tpm")
            // Argument rules.
            expectCleanFailure(try cli.run(["keys", "generate", "carol", "--tpm-pin"]), containing: "--tpm-pin goes with --tpm")
            expectCleanFailure(try cli.run(["keys", "generate", "carol", "--tpm", "--protect"]), containing: "not both")
        }
    }

    @Test func aCopiedKeystoreOpensNothingOnAnotherTPMAndNoTPMIs69() throws {
        let cli = try SoftwareTPM.with { tpm in
            let cli = try Self.cli(tpm)
            #expect(try cli.run(["keys", "generate", "alice", "--tpm"]).status == 0)
            #expect(try cli.run(["keys", "generate", "plain"]).status == 0)
            return cli
        }
        let sealed = try cli.run(["encrypt", "--key", "plain"], stdin: "x").output
        try SoftwareTPM.with { other in
            // The same files, another TPM: nothing of alice's opens.
            let copy = try cli.run(["encrypt", "--key", "alice"], stdin: "x", environment: ["SEALKIT_TPM_TCTI": other.tcti])
            expectCleanFailure(copy, containing: "sealed to another machine's TPM")
            #expect(copy.status == 77)
            // Keys not sealed to a TPM never ask for one.
            let plain = try cli.run(["decrypt", "--key", "plain", "--", sealed], environment: ["SEALKIT_TPM_TCTI": other.tcti])
            #expect(plain.status == 0 && plain.output == "x")
        }
        // No TPM answering: 69, one line saying so and what to do; and the default device where there is none.
        let port = try Loopback.freePort()
        let none = try cli.run(["encrypt", "--key", "alice"], stdin: "x", environment: ["SEALKIT_TPM_TCTI": "swtpm:host=127.0.0.1,port=\(port)"])
        expectCleanFailure(none, containing: "cannot reach the TPM at 'swtpm:host=127.0.0.1,port=\(port)'")
        #expect(none.status == 69)
        #expect(none.stderr.contains("SEALKIT_TPM_TCTI"))
        if !FileManager.default.fileExists(atPath: "/dev/tpmrm0") {
            var environment = cli.environment
            environment.removeValue(forKey: "SEALKIT_TPM_TCTI")
            let device = try ChildProcess.run(CLI.executable.path, ["encrypt", "--key", "alice"], stdin: Array("x".utf8), environment: environment)
            expectCleanFailure(CLI.Result(device), containing: "cannot reach the TPM at 'device:/dev/tpmrm0'")
            #expect(device.status == 69)
        }
        let plain = try cli.run(["decrypt", "--key", "plain", "--", sealed], environment: ["SEALKIT_TPM_TCTI": "swtpm:host=127.0.0.1,port=\(port)"])
        #expect(plain.status == 0)
    }

    @Test func wrongPINsThenTheTPMsLockout() throws {
        try SoftwareTPM.with { tpm in
            let cli = try Self.cli(tpm)
            #expect(try cli.run(["keys", "generate", "bob", "--tpm", "--tpm-pin"], environment: ["SEALKIT_PASSPHRASE": "right-pin"]).status == 0)
            let before = try Self.keyFile(cli, "bob").text
            // swtpm's default: three failures, then lockout.
            for _ in 0..<3 {
                let wrong = try cli.run(["encrypt", "--key", "bob"], stdin: "x", environment: ["SEALKIT_PASSPHRASE": "wrong-pin"])
                expectCleanFailure(wrong, containing: "wrong TPM PIN for key 'bob'")
                #expect(wrong.status == 77)
            }
            let locked = try cli.run(["encrypt", "--key", "bob"], stdin: "x", environment: ["SEALKIT_PASSPHRASE": "right-pin"])
            expectCleanFailure(locked, containing: "dictionary-attack lockout")
            #expect(locked.status == 77)
            #expect(try Self.keyFile(cli, "bob").text == before)
        }
    }

    @Test func tamperedKeyFilesAreDamagedNotOpened() throws {
        try SoftwareTPM.with { tpm in
            let cli = try Self.cli(tpm)
            #expect(try cli.run(["keys", "generate", "alice", "--tpm"]).status == 0)
            let file = try Self.keyFile(cli, "alice")
            var lines = file.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let original = lines
            // The lines this test changes, where the key-file format puts them (a file of another shape fails here,
            // never crashes the run and leaves swtpm behind).
            try #require(lines.count > 4 && lines[2].hasPrefix("protection tpm nopin ") && lines[4].hasPrefix("key "), "\(file.text)")
            // The sealed object's bytes changed: it does not load under this TPM's primary key.
            var protection = lines[2].split(separator: " ").map(String.init)
            try #require(protection.count == 5)
            var blob = [UInt8](try #require(Data(base64Encoded: protection[4])))
            try #require(blob.count > 3)
            blob[blob.count - 3] ^= 0x01
            protection[4] = Data(blob).base64EncodedString()
            lines[2] = protection.joined(separator: " ")
            try lines.joined(separator: "\n").write(toFile: file.path, atomically: false, encoding: .utf8)
            let broken = try cli.run(["encrypt", "--key", "alice"], stdin: "x")
            expectCleanFailure(broken, containing: "is damaged")
            #expect(broken.status == 65)
            // A key line changed (its created time): the TPM unseals, the record does not authenticate.
            lines = original
            var key = lines[4].split(separator: " ").map(String.init)
            try #require(key.count > 2)
            key[2] = String(try #require(Int(key[2])) - 1)
            lines[4] = key.joined(separator: " ")
            try lines.joined(separator: "\n").write(toFile: file.path, atomically: false, encoding: .utf8)
            let changed = try cli.run(["encrypt", "--key", "alice"], stdin: "x")
            expectCleanFailure(changed, containing: "changed without the TPM")
            #expect(changed.status == 65)
            // The PIN flag flipped: the TPM refuses the empty authorization as a wrong PIN.
            lines = original
            lines[2] = lines[2].replacingOccurrences(of: " nopin ", with: " pin ")
            try lines.joined(separator: "\n").write(toFile: file.path, atomically: false, encoding: .utf8)
            let flipped = try cli.run(["encrypt", "--key", "alice"], stdin: "x", environment: ["SEALKIT_PASSPHRASE": "guess"])
            expectCleanFailure(flipped)
            #expect(flipped.status == 77)
        }
    }

    @Test func rotationKeepsATPMIDSealed() throws {
        try SoftwareTPM.with { tpm in
            let cli = try Self.cli(tpm)
            #expect(try cli.run(["keys", "generate", "alice", "--tpm"]).status == 0)
            let old = try cli.run(["encrypt", "--key", "alice"], stdin: "before").output
            let rotated = try cli.run(["keys", "rotate", "alice"])
            #expect(rotated.status == 0, "\(rotated.stderr)")
            #expect(try Self.flags(cli, "alice") == "tpm,1 retired")
            let text = try Self.keyFile(cli, "alice").text
            #expect(text.contains("\nprotection tpm nopin ") && !text.contains("argon2id"))
            #expect(try cli.run(["decrypt", "--key", "alice", "--", old]).output == "before")
            let new = try cli.run(["encrypt", "--key", "alice"], stdin: "after").output
            #expect(try cli.run(["decrypt", "--key", "alice", "--", new]).output == "after")
            // The rotated file still opens on this TPM only.
            try SoftwareTPM.with { other in
                let elsewhere = try cli.run(["decrypt", "--key", "alice", "--", new], environment: ["SEALKIT_TPM_TCTI": other.tcti])
                #expect(elsewhere.status == 77)
            }
        }
    }

    @Test func passwdMovesAnIDToAndFromTheTPM() throws {
        try SoftwareTPM.with { tpm in
            let cli = try Self.cli(tpm)
            #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
            let sealed = try cli.run(["encrypt", "--key", "alice"], stdin: "kept").output
            let toTPM = try cli.run(["keys", "passwd", "alice", "--tpm"])
            #expect(toTPM.status == 0 && toTPM.output.hasSuffix("\tsealed to the TPM"), "\(toTPM.stderr)")
            #expect(try Self.flags(cli, "alice") == "tpm")
            // With a PIN: the PIN of a key that needs none comes from the passphrase sources.
            let withPIN = try cli.run(["keys", "passwd", "alice", "--tpm", "--tpm-pin"], environment: ["SEALKIT_PASSPHRASE": "1357"])
            #expect(withPIN.status == 0 && withPIN.output.hasSuffix("\tsealed to the TPM with a PIN"), "\(withPIN.stderr)")
            #expect(try Self.flags(cli, "alice") == "tpm,pin")
            #expect(try cli.run(["decrypt", "--key", "alice", "--", sealed], environment: ["SEALKIT_PASSPHRASE": "1357"]).output == "kept")
            // To a passphrase, as keys passwd always did: the current PIN unlocks, the new passphrase protects.
            let passphraseFile = cli.home.appendingPathComponent("new-passphrase").path
            try "a long new passphrase\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
            let toPassphrase = try cli.run(
                ["keys", "passwd", "alice", "--new-passphrase-file", passphraseFile], environment: ["SEALKIT_PASSPHRASE": "1357"])
            #expect(toPassphrase.status == 0 && toPassphrase.output.hasSuffix("\tprotected"), "\(toPassphrase.stderr)")
            #expect(try Self.flags(cli, "alice") == "protected")
            #expect(try Self.keyFile(cli, "alice").text.contains("\nprotection argon2id "))
            // Back to the TPM, then --remove takes off whatever protects it.
            let back = try cli.run(["keys", "passwd", "alice", "--tpm"], environment: ["SEALKIT_PASSPHRASE": "a long new passphrase"])
            #expect(back.status == 0, "\(back.stderr)")
            let removed = try cli.run(["keys", "passwd", "alice", "--remove"])
            #expect(removed.status == 0 && removed.output.hasSuffix("\tunprotected"), "\(removed.stderr)")
            #expect(try Self.flags(cli, "alice") == "-")
            #expect(try Self.keyFile(cli, "alice").text.contains("\nprotection none\n"))
            #expect(try cli.run(["decrypt", "--key", "alice", "--", sealed]).output == "kept")
            expectCleanFailure(try cli.run(["keys", "passwd", "alice", "--tpm", "--remove"]), containing: "not both")
        }
    }

    @Test func backupsAndTransfersCarryKeysOutOfAndIntoTPMIDs() throws {
        try SoftwareTPM.with { tpm in
            let sender = try Self.cli(tpm)
            #expect(try sender.run(["keys", "generate", "alice", "--tpm"]).status == 0)
            let sealed = try sender.run(["encrypt", "--key", "alice"], stdin: "carried").output
            // Out of a TPM id: the sender unseals through its TPM.
            let backup = try sender.run(["keys", "backup", "alice", "--format", "text"])
            #expect(backup.status == 0, "\(backup.stderr)")
            let words = try #require(backup.stderr.split(separator: "\n").first { $0.hasPrefix("    ") })
                .split(separator: " ").joined(separator: " ")
            try SoftwareTPM.with { other in
                // Into a TPM id on another machine: sealed to that machine's TPM.
                let receiver = try Self.cli(other)
                let restored = try receiver.run(
                    ["keys", "restore", "alice", "--tpm"], stdin: backup.output + "\n", environment: ["SEALKIT_PASSPHRASE": words])
                #expect(restored.status == 0 && restored.output.hasSuffix("\timported"), "\(restored.stderr)")
                #expect(try Self.flags(receiver, "alice") == "tpm")
                #expect(try receiver.run(["decrypt", "--key", "alice", "--", sealed]).output == "carried")
                // That copy opens with the receiver's TPM, not the sender's.
                #expect(try receiver.run(["decrypt", "--key", "alice", "--", sealed], environment: ["SEALKIT_TPM_TCTI": tpm.tcti]).status == 77)

                // A transfer from the TPM id into a TPM id with a PIN.
                let receiving = try Self.cli(other)
                let running = try RunningCLI(
                    receiving, ["transfer", "receive", "--offline", "--format", "text", "--tpm", "--tpm-pin"],
                    environment: ["SEALKIT_PASSPHRASE": "8642"])
                let offer = try #require(running.readLine())
                let code = try #require(running.readLine())
                let reply = try sender.run(["transfer", "send", "alice", "--to", offer, "--code", code, "--format", "text"])
                #expect(reply.status == 0, "\(reply.stderr)")
                running.write(reply.stdout.split(separator: "\n").map(String.init))
                let received = running.finish()
                #expect(received.status == 0 && received.output.hasPrefix("alice\t"), "\(received.stderr)")
                #expect(try Self.flags(receiving, "alice") == "tpm,pin")
                #expect(
                    try receiving.run(["decrypt", "--key", "alice", "--", sealed], environment: ["SEALKIT_PASSPHRASE": "8642"]).output
                        == "carried")
                // And back out of it, into a plain keystore, with the PIN.
                let plain = try CLI()
                let back = try RunningCLI(plain, ["transfer", "receive", "--offline", "--format", "text"])
                let offer2 = try #require(back.readLine())
                let code2 = try #require(back.readLine())
                let reply2 = try receiving.run(
                    ["transfer", "send", "alice", "--to", offer2, "--code", code2, "--format", "text"], environment: ["SEALKIT_PASSPHRASE": "8642"])
                #expect(reply2.status == 0, "\(reply2.stderr)")
                back.write(reply2.stdout.split(separator: "\n").map(String.init))
                #expect(back.finish().status == 0)
                #expect(try plain.run(["decrypt", "--key", "alice", "--", sealed]).output == "carried")
            }
        }
    }

    /// `keys passwd --tpm` killed at random moments: each time the id opens as it was (unprotected) or as it
    /// was to become (sealed), never neither.
    @Test func aKilledProtectionChangeLeavesTheOldOrTheNewState() throws {
        try SoftwareTPM.with { tpm in
            let cli = try Self.cli(tpm)
            // How long a change takes here, so the kills land across it, the final write included.
            #expect(try cli.run(["keys", "generate", "warm-up"]).status == 0)
            let begin = Date()
            #expect(try cli.run(["keys", "passwd", "warm-up", "--tpm"]).status == 0)
            let typical = Date().timeIntervalSince(begin)
            var generator = SystemRandomNumberGenerator()
            var kills = 0, attempt = 0
            while kills < 8 && attempt < 60 {
                attempt += 1
                let id = "id-\(attempt)"
                #expect(try cli.run(["keys", "generate", id]).status == 0)
                let value = try cli.run(["encrypt", "--key", id], stdin: "v\(attempt)").output
                let process = try ChildProcess(CLI.executable.path, ["keys", "passwd", id, "--tpm"], environment: cli.environment, killAfter: nil)
                usleep(UInt32(Double.random(in: 0...(typical * 1.2), using: &generator) * 1_000_000))
                process.kill()
                let outcome = process.finish(timeout: 10)
                if outcome.signal == SIGKILL { kills += 1 }
                // What the kernel's resource manager would do for a killed process on a real TPM.
                try tpm.flushLeftovers()
                let flags = try Self.flags(cli, id)
                #expect(flags == "-" || flags == "tpm", "after a kill, '\(id)' lists as \(flags ?? "missing")")
                let opened = try cli.run(["decrypt", "--key", id, "--", value])
                #expect(opened.status == 0 && opened.output == "v\(attempt)", "'\(id)' does not open after a kill: \(opened.stderr)")
            }
            #expect(kills >= 8, "only \(kills) of \(attempt) runs were killed mid-way")
        }
    }
}
