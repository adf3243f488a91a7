import Foundation
import SealKit
import SealKitTPM
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The TPM's dictionary-attack lockout, its time bound, the TCTIs `sealkit` opens and resealing, against
/// software TPMs (swtpm: three wrong PINs, then lockout) each test starts and stops itself.
@Suite("TPM lockout, time bound and TCTI names (swtpm)", .requires(.swtpm))
struct TPMLockoutCLITests {
    /// The TPM's lockout counter and its threshold, read by tpm2-tools (an independent TSS client).
    static func counters(_ tpm: SoftwareTPM) throws -> (failures: Int, maximum: Int) {
        let result = try ChildProcess.run("tpm2_getcap", ["--tcti", tpm.tcti, "properties-variable"], timeout: 30)
        try #require(result.status == 0, "\(result.stderrText)")
        func value(_ name: String) throws -> Int {
            let lines = result.stdoutText.split(separator: "\n").map(String.init)
            let line = try #require(lines.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name + ":") }, "\(name) in \(result.stdoutText)")
            let text = try #require(line.split(separator: ":").last).trimmingCharacters(in: .whitespaces)
            return try #require(text.hasPrefix("0x") ? Int(text.dropFirst(2), radix: 16) : Int(text), "\(line)")
        }
        return (try value("TPM2_PT_LOCKOUT_COUNTER"), try value("TPM2_PT_MAX_AUTH_FAIL"))
    }

    /// The object attributes of the sealed object in a key file's `protection tpm` line (its TPM2B_PUBLIC: size,
    /// type, name algorithm, then the attributes, big-endian).
    static func sealedAttributes(_ keyFile: String) throws -> UInt32 {
        let line = try #require(keyFile.split(separator: "\n").first { $0.hasPrefix("protection tpm ") }, "\(keyFile)")
        let fields = line.split(separator: " ")
        try #require(fields.count == 5, "\(line)")
        let blob = [UInt8](try #require(Data(base64Encoded: String(fields[4]))))
        try #require(blob.count > 10)
        return blob[6..<10].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// TPMA_OBJECT_NODA: the object is outside the dictionary-attack protection.
    static let noDA: UInt32 = 0x400

    /// How many PIN prompts a terminal showed ("TPM PIN for key ...", not the error's "wrong TPM PIN for key").
    static func prompts(_ output: String) -> Int {
        output.components(separatedBy: "TPM PIN for key ").count - output.components(separatedBy: "wrong TPM PIN for key ").count
    }

    @Test func threeWrongPINsOnOneIDLeaveKeysWithoutAPINOpen() throws {
        try SoftwareTPM.with { tpm in
            let cli = try TPMCLITests.cli(tpm)
            #expect(try cli.run(["keys", "generate", "alice", "--tpm"]).status == 0)
            #expect(try cli.run(["keys", "generate", "bob", "--tpm", "--tpm-pin"], environment: ["SEALKIT_PASSPHRASE": "right-pin"]).status == 0)
            // As docs/format.md says: noDA without a PIN, the lockout's protection with one.
            #expect(try Self.sealedAttributes(TPMCLITests.keyFile(cli, "alice").text) & Self.noDA != 0)
            #expect(try Self.sealedAttributes(TPMCLITests.keyFile(cli, "bob").text) & Self.noDA == 0)
            let sealed = try cli.run(["encrypt", "--key", "alice"], stdin: "still mine")
            #expect(sealed.status == 0, "\(sealed.stderr)")
            for _ in 0..<3 {
                let wrong = try cli.run(["encrypt", "--key", "bob"], stdin: "x", environment: ["SEALKIT_PASSPHRASE": "wrong-pin"])
                expectCleanFailure(wrong, containing: "wrong TPM PIN for key 'bob'")
            }
            let counters = try Self.counters(tpm)
            #expect(counters.failures >= counters.maximum, "the TPM is not locked out: \(counters)")
            let locked = try cli.run(["encrypt", "--key", "bob"], stdin: "x", environment: ["SEALKIT_PASSPHRASE": "right-pin"])
            expectCleanFailure(locked, containing: "dictionary-attack lockout")
            // alice has no PIN: nothing to guess, and the lockout does not reach her.
            let opened = try cli.run(["decrypt", "--key", "alice", "--", sealed.output])
            #expect(opened.status == 0 && opened.output == "still mine", "\(opened.stderr)")
            let more = try cli.run(["encrypt", "--key", "alice"], stdin: "y")
            #expect(more.status == 0, "\(more.stderr)")
        }
    }

    @Test func thePINPromptOffersFewerTriesThanTheTPMHasLeft() throws {
        try SoftwareTPM.with { tpm in
            let cli = try TPMCLITests.cli(tpm)
            #expect(try cli.run(["keys", "generate", "bob", "--tpm", "--tpm-pin"], environment: ["SEALKIT_PASSPHRASE": "right-pin"]).status == 0)
            let fresh = try Self.counters(tpm)
            #expect(fresh.failures == 0 && fresh.maximum == 3, "\(fresh)")
            // Three left: two prompts, the second saying it is the last.
            let typed = try Terminal.run(cli, ["keys", "rotate", "bob"], answers: ["wrong-1", "wrong-2", "wrong-3"])
            #expect(typed.status == 77, "\(typed.output)")
            #expect(Self.prompts(typed.output) == 2, "\(typed.output)")
            #expect(typed.output.contains("Wrong PIN, try again (1 try left)."), "\(typed.output)")
            let after = try Self.counters(tpm)
            #expect(after.failures == 2 && after.failures < after.maximum, "\(after)")
            // The right PIN still opens: the prompt did not lock the TPM out.
            #expect(try cli.run(["status", "--key", "bob"], environment: ["SEALKIT_PASSPHRASE": "right-pin"]).status == 0)

            // One wrong PIN left before lockout: the prompt asks nothing and says why.
            let refused = try Terminal.run(cli, ["keys", "rotate", "bob"], answers: ["wrong-4"])
            #expect(refused.status == 77, "\(refused.output)")
            #expect(Self.prompts(refused.output) == 0, "\(refused.output)")
            #expect(refused.output.contains("takes one more wrong PIN before it locks out"), "\(refused.output)")
            #expect(refused.output.contains("SEALKIT_PASSPHRASE"), "\(refused.output)")
            #expect(try Self.counters(tpm).failures == 2)
        }
    }

    @Test func aPromptWithOneTryLeftSaysSoFirst() throws {
        try SoftwareTPM.with { tpm in
            let cli = try TPMCLITests.cli(tpm)
            #expect(try cli.run(["keys", "generate", "bob", "--tpm", "--tpm-pin"], environment: ["SEALKIT_PASSPHRASE": "right-pin"]).status == 0)
            let wrong = try cli.run(["keys", "rotate", "bob"], environment: ["SEALKIT_PASSPHRASE": "wrong-pin"])
            #expect(wrong.status == 77)
            let typed = try Terminal.run(cli, ["status", "--key", "bob"], answers: ["right-pin"])
            #expect(typed.status == 0, "\(typed.output)")
            #expect(typed.output.contains("1 try left"), "\(typed.output)")
        }
    }

    @Test func aNewTPMPINIsAskedForAsAPIN() throws {
        try SoftwareTPM.with { tpm in
            let cli = try TPMCLITests.cli(tpm)
            let typed = try Terminal.run(cli, ["keys", "generate", "carol", "--tpm", "--tpm-pin"], answers: ["4321", "4321"])
            #expect(typed.status == 0, "\(typed.output)")
            #expect(typed.output.contains("New TPM PIN: ") && !typed.output.contains("passphrase"), "\(typed.output)")
            #expect(try TPMCLITests.flags(cli, "carol") == "tpm,pin")
            #expect(try cli.run(["status", "--key", "carol"], environment: ["SEALKIT_PASSPHRASE": "4321"]).status == 0)
        }
    }

    @Test func passwdTPMKeepsAPINUnlessToldOtherwise() throws {
        try SoftwareTPM.with { tpm in
            let cli = try TPMCLITests.cli(tpm)
            #expect(try cli.run(["keys", "generate", "bob", "--tpm", "--tpm-pin"], environment: ["SEALKIT_PASSPHRASE": "2468"]).status == 0)
            let sealed = try cli.run(["encrypt", "--key", "bob"], stdin: "pinned", environment: ["SEALKIT_PASSPHRASE": "2468"])
            #expect(sealed.status == 0, "\(sealed.stderr)")
            let resealed = try cli.run(["keys", "passwd", "bob", "--tpm"], environment: ["SEALKIT_PASSPHRASE": "2468"])
            #expect(resealed.status == 0 && resealed.output.hasSuffix("\tsealed to the TPM with a PIN"), "\(resealed.output) \(resealed.stderr)")
            #expect(try TPMCLITests.flags(cli, "bob") == "tpm,pin")
            let noPIN = try cli.run(["decrypt", "--key", "bob", "--", sealed.output])
            expectCleanFailure(noPIN, containing: "sealed to the TPM under a PIN")
            #expect(try cli.run(["decrypt", "--key", "bob", "--", sealed.output], environment: ["SEALKIT_PASSPHRASE": "2468"]).output == "pinned")
            // Told otherwise: --no-tpm-pin drops it.
            let dropped = try cli.run(["keys", "passwd", "bob", "--tpm", "--no-tpm-pin"], environment: ["SEALKIT_PASSPHRASE": "2468"])
            #expect(dropped.status == 0 && dropped.output.hasSuffix("\tsealed to the TPM"), "\(dropped.stderr)")
            #expect(try TPMCLITests.flags(cli, "bob") == "tpm")
            #expect(try cli.run(["decrypt", "--key", "bob", "--", sealed.output]).output == "pinned")
            expectCleanFailure(try cli.run(["keys", "passwd", "bob", "--no-tpm-pin"]), containing: "--no-tpm-pin goes with --tpm")
        }
    }

    @Test func aSilentTPMEndpointFailsWithin69AndOneLine() throws {
        let silent = try SilentServer()
        defer { silent.stop() }
        let cli = try SoftwareTPM.with { tpm in
            let cli = try TPMCLITests.cli(tpm)
            #expect(try cli.run(["keys", "generate", "alice", "--tpm"]).status == 0)
            return cli
        }
        let tcti = "swtpm:host=127.0.0.1,port=\(silent.port)"
        let begin = Date()
        let result = try ChildProcess.run(
            CLI.executable.path, ["encrypt", "--key", "alice"], stdin: Array("x".utf8),
            environment: cli.environment.merging(["SEALKIT_TPM_TCTI": tcti, "SEALKIT_TPM_TIMEOUT": "1"]) { $1 }, timeout: 30)
        let elapsed = Date().timeIntervalSince(begin)
        #expect(!result.timedOut, "sealkit hung on a TPM that never answers")
        expectCleanFailure(CLI.Result(result), containing: "did not answer within 1 s")
        #expect(result.status == 69)
        #expect(result.stderrText.contains("SEALKIT_TPM_TIMEOUT"), "\(result.stderrText)")
        #expect(elapsed < 10, "took \(elapsed) s")
        #expect(silent.connections >= 1, "sealkit never connected to the silent endpoint")
        // Keys generated against it fail the same way and store nothing.
        let made = try ChildProcess.run(
            CLI.executable.path, ["keys", "generate", "bob", "--tpm"],
            environment: cli.environment.merging(["SEALKIT_TPM_TCTI": tcti, "SEALKIT_TPM_TIMEOUT": "1"]) { $1 }, timeout: 30)
        #expect(made.status == 69, "\(made.stderrText)")
        #expect(try TPMCLITests.flags(cli, "bob") == nil)
        // The time limit is checked like the keyring's.
        for bad in ["0", "601", "1.5", "soon"] {
            let refused = try cli.run(["encrypt", "--key", "alice"], stdin: "x", environment: ["SEALKIT_TPM_TIMEOUT": bad])
            expectCleanFailure(refused, containing: "SEALKIT_TPM_TIMEOUT must be a whole number of seconds from 1 to 600")
            #expect(refused.status == 64)
        }
    }

    @Test func onlyTheTCTINamesTpm2TSSDocumentsAreOpened() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        #expect(try cli.run(["keys", "passwd", "alice", "--tpm"], environment: ["SEALKIT_TPM_TCTI": "swtpm:host=127.0.0.1,port=1"]).status == 69)
        let marker = cli.home.appendingPathComponent("cmd-ran").path
        let library = cli.home.appendingPathComponent("libtss2-tcti-evil.so").path
        for tcti in ["cmd:touch \(marker)", "\(library):anything", "libtss2-tcti-cmd.so.0:touch \(marker)", "/usr/lib/x.so", "../swtpm:port=1"] {
            let refused = try cli.run(["keys", "passwd", "alice", "--tpm"], environment: ["SEALKIT_TPM_TCTI": tcti])
            expectCleanFailure(refused, containing: "SEALKIT_TPM_TCTI must name a TCTI tpm2-tss documents")
            #expect(refused.status == 64, "\(tcti): \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker), "the cmd TCTI ran a command the environment chose")
        #expect(try TPMCLITests.flags(cli, "alice") == "-")
    }

    /// `device:` must name a character device: tpm2-tss opens the path read-write and writes TPM commands to
    /// it, so a regular file, or a link to one, is refused before it is opened, and is left as it was.
    @Test func theDeviceTCTIOpensOnlyACharacterDevice() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "alice"]).status == 0)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-tcti-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let victim = folder.appendingPathComponent("victim.txt"), link = folder.appendingPathComponent("tpm-link")
        try Data("precious data\n".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        for path in [victim.path, link.path] {
            for arguments in [["keys", "generate", "v", "--tpm"], ["keys", "passwd", "alice", "--tpm"]] {
                let refused = try cli.run(arguments, environment: ["SEALKIT_TPM_TCTI": "device:\(path)", "SEALKIT_TPM_TIMEOUT": "2"])
                expectCleanFailure(refused, containing: "is not a character device")
                #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
            }
            // The library refuses it too, whoever calls it.
            #expect {
                _ = try TPMSealer(tcti: "device:\(path)").lockoutState()
            } throws: { error in
                guard case KeystoreError.tpmUnavailable(_, let detail) = error else { return false }
                return detail.hasSuffix("is not a character device")
            }
        }
        #expect(try String(contentsOf: victim, encoding: .utf8) == "precious data\n", "TPM commands were written into the file")
        #expect(try TPMCLITests.flags(cli, "alice") == "-")
        #expect(try cli.run(["keys", "list"]).stdout.split(separator: "\n").allSatisfy { !$0.hasPrefix("v\t") })
    }

    @Test func aBackupOfTheSameKeyReplacesACopySealedToAnotherTPM() throws {
        /// A paper backup of `id` in `cli`'s keystore: its text and its passphrase.
        func backup(_ cli: CLI, _ id: String) throws -> (text: String, words: String) {
            let made = try cli.run(["keys", "backup", id, "--format", "text"])
            try #require(made.status == 0, "\(made.stderr)")
            let words = try #require(made.stderr.split(separator: "\n").first { $0.hasPrefix("    ") }).split(separator: " ").joined(separator: " ")
            return (made.output, words)
        }
        try SoftwareTPM.with { first in
            let cli = try TPMCLITests.cli(first)
            #expect(try cli.run(["keys", "generate", "alice", "--tpm"]).status == 0)
            let sealed = try cli.run(["encrypt", "--key", "alice"], stdin: "carried").output
            let same = try backup(cli, "alice")
            // Another key that happens to have the same id, elsewhere.
            let elsewhere = try CLI()
            #expect(try elsewhere.run(["keys", "generate", "alice"]).status == 0)
            let different = try backup(elsewhere, "alice")
            try SoftwareTPM.with { second in
                // The same keystore files (a copied home), another machine's TPM.
                let there = ["SEALKIT_TPM_TCTI": second.tcti]
                let stuck = try cli.run(["encrypt", "--key", "alice"], stdin: "x", environment: there)
                expectCleanFailure(stuck, containing: "sealed to another machine's TPM")
                #expect(stuck.stderr.contains("run 'sealkit keys delete alice'"), "\(stuck.stderr)")
                // A backup of another key under the id: refused, saying exactly what to run; nothing changed.
                let before = try TPMCLITests.keyFile(cli, "alice").text
                let refused = try cli.run(
                    ["keys", "restore", "alice", "--tpm"], stdin: different.text + "\n",
                    environment: there.merging(["SEALKIT_PASSPHRASE": different.words]) { $1 })
                expectCleanFailure(refused, containing: "run 'sealkit keys delete alice'")
                #expect(refused.status == 77)
                #expect(try TPMCLITests.keyFile(cli, "alice").text == before)
                // The same key: restored in its place, sealed to this TPM.
                let restored = try cli.run(
                    ["keys", "restore", "alice", "--tpm"], stdin: same.text + "\n",
                    environment: there.merging(["SEALKIT_PASSPHRASE": same.words]) { $1 })
                #expect(restored.status == 0, "\(restored.stderr)")
                #expect(try TPMCLITests.flags(cli, "alice") == "tpm")
                let opened = try cli.run(["decrypt", "--key", "alice", "--", sealed], environment: there)
                #expect(opened.status == 0 && opened.output == "carried", "\(opened.stderr)")
            }
        }
    }
}

/// TCP servers on 127.0.0.1, on a port P and P + 1 (swtpm's server and control ports), that accept every
/// connection and never answer: a TPM endpoint that hangs.
final class SilentServer: @unchecked Sendable {
    /// P, the server port; the control port is P + 1.
    let port: Int
    private let listeners: [Int32]
    private let lock = NSLock()
    private var accepted: [Int32] = []
    private var stopped = false

    init() throws {
        var found: (Int, [Int32])?
        for _ in 0..<50 where found == nil {
            guard let (first, port) = Self.listen(on: 0) else { continue }
            if port < 65535, let (second, _) = Self.listen(on: port + 1) {
                found = (port, [first, second])
            } else {
                close(first)
            }
        }
        guard let (port, listeners) = found else { throw SoftwareTPM.Failure("cannot listen on two ports side by side") }
        self.port = port
        self.listeners = listeners
        let thread = Thread { [self] in acceptForever() }
        thread.start()
    }

    /// A listening socket on `port` (0: any) of 127.0.0.1, and its port.
    private static func listen(on port: Int) -> (Int32, Int)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0, Glibc.listen(fd, 16) == 0 else {
            close(fd)
            return nil
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// How many connections it accepted.
    var connections: Int { lock.withLock { accepted.count } }

    /// Accepts until stopped, then closes the listeners itself (so their numbers are never reused under a poll).
    private func acceptForever() {
        while !lock.withLock({ stopped }) {
            var ready = listeners.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&ready, nfds_t(ready.count), 100) > 0 else { continue }
            for entry in ready where entry.revents & Int16(POLLIN) != 0 {
                let fd = accept(entry.fd, nil, nil)
                if fd >= 0 { lock.withLock { accepted.append(fd) } }
            }
        }
        for fd in listeners { close(fd) }
    }

    /// Stops accepting (within 0.1 s) and closes every connection.
    func stop() {
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            for fd in accepted { close(fd) }
        }
    }

    deinit { stop() }
}

/// A key file sealed without a PIN by an earlier version (before `noDA`): the `opens` vector of Fixtures/tpm.
@Suite("A PIN-less key sealed before noDA (swtpm on a copy of Fixtures/tpm/state)", .requires(.swtpm))
struct TPMLegacyLockoutCLITests {
    @Test func itsLockoutMessageBlamesOtherKeysAndPasswdTPMTakesItOutOfTheLockout() throws {
        let fixtures = Repository.root.appendingPathComponent("Fixtures/tpm")
        struct Vector: Decodable {
            let id: String
            let file: String
            let pin: String?
            let expect: String
        }
        struct File: Decodable { let vectors: [Vector] }
        let vectors = try JSONDecoder().decode(File.self, from: Data(contentsOf: fixtures.appendingPathComponent("vectors.json"))).vectors
        let legacy = try #require(vectors.first { $0.expect == "ok" && $0.pin == nil && $0.file.contains("\nprotection tpm nopin ") })
        let pinned = try #require(vectors.first { $0.expect == "ok" && $0.pin != nil })
        let pin = try #require(pinned.pin)
        // The vector's sealed object (TPM2B_PUBLIC first: size, type, name algorithm, then the attributes) lacks noDA,
        // as every PIN-less object did before: this test is about such a file.
        try #require(
            try TPMLockoutCLITests.sealedAttributes(legacy.file) & TPMLockoutCLITests.noDA == 0,
            "the fixture's PIN-less object is sealed noDA: it no longer stands for an earlier version's")
        let copy = try TemporaryFolder.make().appendingPathComponent("state")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("state"), to: copy)
        try SoftwareTPM.with(state: copy.path) { tpm in
            let cli = try TPMCLITests.cli(tpm)
            let folder = cli.home.appendingPathComponent("keys/default")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: cli.home.appendingPathComponent("keys").path)
            for vector in [legacy, pinned] {
                let path = folder.appendingPathComponent(try KeyID(vector.id).fileName).path
                try #require(FileManager.default.createFile(atPath: path, contents: Data(vector.file.utf8), attributes: [.posixPermissions: 0o600]))
            }
            // It still opens, as it was sealed.
            #expect(try cli.run(["encrypt", "--key", legacy.id], stdin: "x").status == 0)
            /// Three wrong PINs for the other key: the TPM's lockout.
            func lockOut() throws {
                for _ in 0..<3 {
                    let wrong = try cli.run(["encrypt", "--key", pinned.id], stdin: "x", environment: ["SEALKIT_PASSPHRASE": pin + "-wrong"])
                    #expect(wrong.status == 77, "\(wrong.stderr)")
                }
            }
            try lockOut()
            // Sealed inside the lockout, it is locked too, and the message says whose PINs did it and what to run.
            let locked = try cli.run(["encrypt", "--key", legacy.id], stdin: "x")
            expectCleanFailure(locked, containing: "key '\(legacy.id)' has no PIN")
            #expect(locked.stderr.contains("wrong PINs for other keys"), "\(locked.stderr)")
            #expect(locked.stderr.contains("run 'sealkit keys passwd \(legacy.id) --tpm'"), "\(locked.stderr)")
            #expect(locked.status == 77)
            // The lockout ended (the owner's reset, here), it is sealed again, and the next lockout leaves it open.
            let reset = try ChildProcess.run("tpm2_dictionarylockout", ["--tcti", tpm.tcti, "--clear-lockout"], timeout: 30)
            try #require(reset.status == 0, "\(reset.stderrText)")
            let resealed = try cli.run(["keys", "passwd", legacy.id, "--tpm"])
            #expect(resealed.status == 0 && resealed.output.hasSuffix("\tsealed to the TPM"), "\(resealed.stderr)")
            #expect(try TPMLockoutCLITests.sealedAttributes(TPMCLITests.keyFile(cli, legacy.id).text) & TPMLockoutCLITests.noDA != 0)
            try lockOut()
            let opened = try cli.run(["encrypt", "--key", legacy.id], stdin: "x")
            #expect(opened.status == 0, "\(opened.stderr)")
        }
    }
}
