import Foundation
import SealKit
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every entry of the hostile corpus runs through the real `sealkit` binary and must fail
/// cleanly: exit status 1...125 (not a signal, not a hang), nothing on stdout, exactly one
/// line on stderr starting `sealkit: ` with no trace of a crash or of a secret, and not one
/// byte changed under the test's home folder (keystore included).
@Suite("Hostile input corpus")
struct HostileInputTests {
    @Test(arguments: HostileCorpus.cases)
    func failsCleanly(_ entry: HostileCase) throws {
        let home = try HostileCorpus.prepare(entry.setup)
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
        environment.removeValue(forKey: "SEALKIT_NAMESPACE")
        environment["SEALKIT_HOME"] = home + "/keys"
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(entry.environment(home)) { $1 }
        let before = TreeSnapshot(home)

        let outcome = try ChildProcess.run(
            CLI.executable.path, entry.arguments(home), stdin: entry.stdin, environment: environment, timeout: 20)

        #expect(!outcome.timedOut, "hung: killed after 20 s")
        #expect(outcome.signal == nil, "killed by signal \(outcome.signal ?? 0): \(outcome.stderrText)")
        #expect((1..<126).contains(outcome.status), "exit status \(outcome.signal == nil ? String(outcome.status) : "none")")
        switch entry.outcome {
        case .failure:
            #expect(outcome.stdout.isEmpty, "stdout: \(outcome.stdoutText.prefix(200))")
        case .failureAfterOffer:
            let lines = outcome.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(
                lines.count == 3 && lines[0].hasPrefix("sealkit-offer-v2:") && lines[1].wholeMatch(of: /[0-9]+-[a-z]+-[a-z]+/) != nil
                    && lines[2].isEmpty, "stdout: \(outcome.stdoutText.prefix(200))")
            // The code is on stdout for the person; it never reaches the error.
            if lines.count > 1 { #expect(!outcome.stderrText.contains(String(lines[1])), "the code reached stderr") }
        case .listedWithProblem:
            #expect(outcome.status == 65 || outcome.status == 77, "exit status \(outcome.signal == nil ? String(outcome.status) : "none")")
            // The damaged entry is the one under id "k": it is reported, never listed.
            #expect(!outcome.stdoutText.split(separator: "\n").contains { $0.hasPrefix("k\t") }, "stdout: \(outcome.stdoutText.prefix(200))")
        case .auditFinding:
            #expect(outcome.status == 1, "an audit finding exits 1")
            #expect(outcome.stdoutText.contains("unreadable-file"), "stdout: \(outcome.stdoutText.prefix(300))")
        }
        let stderr = outcome.stderrText
        #expect(stderr.hasPrefix("sealkit: ") && stderr.hasSuffix("\n"), "stderr: \(stderr.prefix(300))")
        #expect(stderr.utf8.filter { $0 == UInt8(ascii: "\n") }.count == 1, "stderr must be one line: \(stderr.prefix(600))")
        #expect(stderr.utf8.count < 2000, "stderr is \(stderr.utf8.count) bytes")
        for crashSign in ["Fatal error", "Stack dump", "Backtrace", "backtrace", "Crash", "panic", "Illegal instruction"] {
            #expect(!stderr.contains(crashSign), "stderr: \(stderr)")
        }
        for secret in [HostileCorpus.plainKey, HostileCorpus.passphrase, HostileCorpus.otherKey] {
            #expect(!stderr.contains(secret), "a secret reached stderr")
        }
        if let fragment = entry.expected {
            #expect(stderr.contains(fragment), "stderr should name the problem (\(fragment)): \(stderr)")
        }
        let after = TreeSnapshot(home)
        #expect(after == before, "written: \(after.differences(from: before))")
    }

    /// Replies to the live receiver's own offer, made here with SealKitTransfer: each is refused in
    /// one line after the offer and code, and the keystore is untouched.
    @Test(arguments: ["expired an hour ago", "created an hour from now", "wrong code", "answered another offer"])
    func transferReceiveRefusesRepliesToItsOwnOffer(_ kind: String) throws {
        let home = try HostileCorpus.prepare(.keystore)
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = ProcessInfo.processInfo.environment
        environment["SEALKIT_HOME"] = home + "/keys"
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
        let before = TreeSnapshot(home)
        let receiver = try ChildProcess(
            CLI.executable.path, ["transfer", "receive", "--offline", "--format", "text"], environment: environment, killAfter: nil)
        // A #require that fails below must not leave it waiting for input forever: killed on every path (after `finish`, a no-op).
        defer { receiver.kill() }
        let offerText = try #require(receiver.readLine(timeout: 10), "no offer and code")
        let codeText = try #require(receiver.readLine(timeout: 10), "no offer and code")
        let key = try SymmetricKey(base64Encoded: HostileCorpus.otherKey)
        let history = try KeyHistory(id: KeyID("new-id"), versions: [.init(key: key, created: Date(), retired: nil)])
        var offer = try TransferOffer(offerText)
        var code = try WormholeCode(parsing: codeText)
        var now = Date()
        switch kind {
        case "expired an hour ago": now -= 3600
        case "created an hour from now": now += 3600
        case "wrong code":
            // One online guess: the right nameplate, other words.
            code = try WormholeCode(parsing: codeText.hasSuffix("-aardvark") ? "\(code.nameplate)-adroitness-absurd" : "\(code.nameplate)-adroitness-aardvark")
        default:
            offer = try TransferOffer(HostileCorpus.strayOffer)
        }
        let lines = try offer.reply(sending: [history], code: code, now: now)
        receiver.write(Array((lines.joined(separator: "\n") + "\n").utf8))
        receiver.closeInput()
        let outcome = receiver.finish(stdin: [], timeout: 20)
        #expect((1..<126).contains(outcome.status) && outcome.signal == nil)
        // Nothing on stdout but the offer and the code (taken by readLine above).
        #expect(outcome.stdoutText.isEmpty, "stdout: \(offerText)\n\(codeText)\n\(outcome.stdoutText)")
        #expect(outcome.stderrText.hasPrefix("sealkit: ") && outcome.stderrText.split(separator: "\n").count == 1, "\(outcome.stderrText)")
        #expect(!outcome.stderrText.contains(codeText))
        if kind == "wrong code" || kind == "answered another offer" { #expect(outcome.stderrText.contains("wrong code")) }
        #expect(TreeSnapshot(home) == before, "the refused reply wrote to the keystore")
    }

    @Test func corpusCoversEveryCommandWithAtLeastAHundredInputs() {
        let cases = HostileCorpus.cases
        #expect(cases.count >= 100)
        #expect(Set(cases.map(\.name)).count == cases.count, "case names must be unique")
        let commands = Set(cases.map { $0.command })
        for command in [
            "keys generate", "keys import", "keys list", "keys rotate", "keys passwd", "keys delete", "keys backup", "keys restore", "encrypt",
            "decrypt", "status", "qr", "profile", "transfer", "audit",
        ] {
            #expect(commands.contains(command), "no hostile input for \(command)")
        }
    }
}

/// What exists before a hostile command runs.
enum HostileSetup: Sendable {
    /// An empty folder; SEALKIT_HOME points at a folder that does not exist yet.
    case empty
    /// A keystore with `k` (plain, the known key), `r` (rotated once) and `p` (passphrase-protected).
    case keystore
    /// The keystore with one key file damaged.
    case damaged(KeyFileDamage)
}

/// What a command does with hostile input.
enum HostileOutcome: Sendable {
    /// Fails: nothing on stdout, one line on stderr.
    case failure
    /// `transfer receive --offline` fails after showing its offer and code: stdout holds only those two lines.
    case failureAfterOffer
    /// `audit` reports bad content as a finding: the report on stdout, exit status 1, a
    /// one-line summary on stderr.
    case auditFinding
    /// `keys list` lists the healthy keys on stdout and the bad entry in one line on stderr,
    /// exiting 65 (damaged) or 77 (unsafe).
    case listedWithProblem
}

/// Ways a key file can be damaged on disk.
enum KeyFileDamage: String, Sendable, CaseIterable {
    case truncated, headerOnly, empty, garbage, wrongMagic, crlfLineEnds, idOfAnotherFile, fingerprintMismatch
    case materialNotBase64, materialWrongLength, groupReadable, symlink, directory, oversized, twoCurrentKeys
    case retiredListedFirst, absurdArgon2Limits, tamperedSalt, idNotUTF8, timestampOutOfRange, nulBytes
    case plantedByAnotherUser, protectedMetadataChanged, tooManyKeys, worldWritableFolder
}

struct HostileCase: Sendable, CustomTestStringConvertible {
    let name: String
    /// Arguments; `{home}` is replaced by the case's home folder.
    let rawArguments: [String]
    var stdin: [UInt8] = []
    var setup: HostileSetup = .keystore
    /// Extra environment; `{home}` is replaced by the case's home folder.
    var rawEnvironment: [String: String] = [:]
    /// A fragment the one-line message must contain.
    var expected: String?
    /// What a clean refusal looks like for this command.
    var outcome: HostileOutcome = .failure

    var testDescription: String { name }

    /// `keys import`, `encrypt`, ...
    var command: String {
        rawArguments.first == "keys" && rawArguments.count > 1 ? "keys " + rawArguments[1] : rawArguments.first ?? ""
    }

    func arguments(_ home: String) -> [String] { rawArguments.map { $0.replacingOccurrences(of: "{home}", with: home) } }
    func environment(_ home: String) -> [String: String] {
        rawEnvironment.mapValues { $0.replacingOccurrences(of: "{home}", with: home) }
    }
}

enum HostileCorpus {
    /// The key stored as `k`; it must never appear in any output.
    static let plainKey = KeyFixtures.rowndKey
    /// A key stored nowhere, for ciphertexts that must fail to authenticate.
    static let otherKey = "sIkgzxJBmxSF+XHXXM6CIGx2qnO5jG6ghlckXRBEOfg="
    /// The passphrase protecting `p`.
    static let passphrase = "hostile corpus passphrase 7f3a"

    // MARK: Cases

    static let cases: [HostileCase] = keyIDCases + importCases + ciphertextCases + encryptCases + passphraseCases
        + damagedFileCases + homeCases + qrCases + usageCases + profileCases + transferCases + backupCases + auditCases
        + boundedInputCases

    private static func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    static let keyIDCases: [HostileCase] = {
        let ids: [(String, String)] = [
            ("empty", ""), ("dot", "."), ("dot-dot", ".."), ("slash", "a/b"), ("parent path", "../../etc/passwd"),
            ("absolute path", "/tmp/x"), ("tab", "tab\there"), ("newline", "line\nbreak"), ("carriage return", "cr\rx"),
            ("escape sequence", "\u{1b}[2J\u{1b}[Hpwned"), ("DEL", "del\u{7f}"), ("C1 control", "next\u{85}line"),
            ("bell", "ding\u{7}"), ("256 bytes", String(repeating: "x", count: 256)),
            ("258 bytes of UTF-8", String(repeating: "é", count: 129)),
            ("right-to-left override", "evil\u{202E}gnp.exe"), ("zero-width space", "ali\u{200B}ce"),
            ("bidi isolate", "a\u{2066}b\u{2069}"), ("line separator", "a\u{2028}b"), ("byte order mark", "\u{FEFF}alice"),
        ]
        var cases: [HostileCase] = []
        for (label, id) in ids {
            cases.append(HostileCase(name: "keys generate: id \(label)", rawArguments: ["keys", "generate", id], expected: "invalid key id"))
        }
        // Every other command taking an id refuses the same ids.
        let others: [(String, [String], [UInt8])] = [
            ("keys import", ["keys", "import", "../../etc/passwd"], text(plainKey)),
            ("keys rotate", ["keys", "rotate", "a/b"], []),
            ("keys delete", ["keys", "delete", ".."], []),
            ("encrypt", ["encrypt", "--key", "\u{1b}]0;title\u{7}"], []),
            ("decrypt", ["decrypt", "--key", "/etc/shadow", "--", "AAAA"], []),
            ("status", ["status", "--key", "tab\tid"], []),
        ]
        for (command, arguments, stdin) in others {
            cases.append(HostileCase(name: "\(command): invalid id", rawArguments: arguments, stdin: stdin, expected: "invalid key id"))
        }
        return cases
    }()

    static let importCases: [HostileCase] = {
        let inputs: [(String, [UInt8], String?)] = [
            ("empty stdin", [], "no key material"),
            ("whitespace only", text(" \n\t\r\n"), "no key material"),
            ("not a key", text("not a key"), "not a key"),
            ("43 characters without padding", text(String(plainKey.dropLast())), "not a key"),
            ("31 bytes", text(Base64.encode([UInt8](repeating: 7, count: 31))), "not a key"),
            ("33 bytes", text(Base64.encode([UInt8](repeating: 7, count: 33))), "not a key"),
            ("URL-safe alphabet", text(plainKey.replacingOccurrences(of: "+", with: "-")), "not a key"),
            ("non-canonical final character", text(String(plainKey.dropLast(2)) + "p="), "not a key"),
            ("invalid UTF-8", [0xFF, 0xFE, 0xC3, 0x28, 0x80], "not a key"),
            ("NUL bytes", text(String(plainKey.prefix(20))) + [0, 0] + text(String(plainKey.dropFirst(22))), "not a key"),
            ("10 MB of base64", [UInt8](repeating: UInt8(ascii: "A"), count: 10 << 20), "larger than"),
            ("JSON cut short", text("{\"data\":"), "not Rownd's key QR text"),
            ("JSON empty key", text("{\"data\":\"https://x.rownd.link/s/a#\"}"), "not a key"),
            ("JSON number", text("{\"data\":123}"), "not Rownd's key QR text"),
            ("JSON null", text("{\"data\":null}"), "not Rownd's key QR text"),
            ("JSON array", text("[\"\(plainKey)\"]"), nil),
            ("JSON without data", text("{\"other\":\"x#\(plainKey)\"}"), "not Rownd's key QR text"),
            ("JSON lone surrogate escape", text("{\"data\":\"x#\\ud800\"}"), "not Rownd's key QR text"),
            ("JSON control character", text("{\"data\":\"x\u{1}#\(plainKey)\"}"), "not Rownd's key QR text"),
            ("JSON trailing garbage", text("{\"data\":\"x#\(plainKey)\"} trailing"), "not Rownd's key QR text"),
            ("JSON nested 100,000 levels", text(String(repeating: "{\"data\":", count: 100_000) + String(repeating: "}", count: 100_000)), nil),
            ("arrays nested 100,000 levels", text(String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)), nil),
            ("link with bad percent escape", text("https://x.rownd.link/s/a#%zz" + plainKey), "not a key"),
            ("link with cut percent escape", text("https://x.rownd.link/s/a#" + plainKey.dropLast() + "%3"), "not a key"),
            ("link with short key", text("https://x.rownd.link/s/a#AAAA"), "not a key"),
        ]
        var cases = inputs.map { label, stdin, expected in
            HostileCase(name: "keys import: \(label)", rawArguments: ["keys", "import", "new-id"], stdin: stdin, expected: expected)
        }
        cases += [
            HostileCase(
                name: "keys import: different key under an existing id", rawArguments: ["keys", "import", "k"],
                stdin: text(otherKey), expected: "different key"),
            HostileCase(
                name: "keys import: protected id without passphrase", rawArguments: ["keys", "import", "p"],
                stdin: text(otherKey), expected: "passphrase-protected"),
            HostileCase(
                name: "keys import: protected id with wrong passphrase", rawArguments: ["keys", "import", "p"],
                stdin: text(otherKey), rawEnvironment: ["SEALKIT_PASSPHRASE": "wrong"], expected: "wrong passphrase"),
            HostileCase(
                name: "keys import: --protect without a passphrase or terminal",
                rawArguments: ["keys", "import", "new-id", "--protect"], stdin: text(otherKey), expected: "--protect needs a passphrase"),
            HostileCase(
                name: "keys generate: existing id", rawArguments: ["keys", "generate", "k"], expected: "already exists"),
            HostileCase(
                name: "keys generate: --protect without a passphrase or terminal",
                rawArguments: ["keys", "generate", "new-id", "--protect"], expected: "--protect needs a passphrase"),
            HostileCase(name: "keys rotate: missing id", rawArguments: ["keys", "rotate", "missing"], expected: "no key for 'missing'"),
            HostileCase(
                name: "keys rotate: missing id in an empty home", rawArguments: ["keys", "rotate", "missing"], setup: .empty,
                expected: "no key for 'missing'"),
            HostileCase(
                name: "keys rotate: protected without passphrase", rawArguments: ["keys", "rotate", "p"], expected: "passphrase-protected"),
            HostileCase(
                name: "keys rotate: protected with wrong passphrase", rawArguments: ["keys", "rotate", "p"],
                rawEnvironment: ["SEALKIT_PASSPHRASE": "wrong"], expected: "wrong passphrase"),
            HostileCase(name: "keys delete: missing id", rawArguments: ["keys", "delete", "missing"], expected: "no key for 'missing'"),
            HostileCase(
                name: "keys delete: missing id in an empty home", rawArguments: ["keys", "delete", "missing"], setup: .empty,
                expected: "no key for 'missing'"),
        ]
        return cases
    }()

    /// A ciphertext of `plaintext` under the key stored as `k` (or another key).
    private static func sealed(_ plaintext: [UInt8], key: String = plainKey) -> String {
        let symmetricKey = try! SymmetricKey(base64Encoded: key)
        return plaintext.withUnsafeBytes { FieldCipher.encrypt(bytes: $0, using: symmetricKey) }
    }

    /// Flips one bit of the decoded ciphertext at `index`.
    private static func tampered(_ ciphertext: String, at index: Int) -> String {
        var bytes = Base64.decode(ciphertext)!
        bytes[index] ^= 0x01
        return Base64.encode(bytes)
    }

    static let ciphertextCases: [HostileCase] = {
        let good = sealed(text("a field value that is long enough to cut in several places"))
        let goodBytes = Base64.decode(good)!
        let inputs: [(String, String, String?)] = [
            ("not base64", "not base64!", "not base64"),
            ("empty", "", "too short"),
            ("whitespace only", "    ", "not base64"),
            ("URL-safe alphabet", String(repeating: "-_", count: 30), "not base64"),
            ("missing padding", String(Base64.encode(Array(goodBytes.dropLast())).prefix { $0 != "=" }), "not base64"),
            ("extra padding", good + "====", "not base64"),
            ("padding in the middle", String(good.prefix(8)) + "=" + String(good.dropFirst(9)), "not base64"),
            ("non-canonical final bits", String(Base64.encode(Array(goodBytes.dropLast())).dropLast(2)) + "B=", "not base64"),
            ("embedded newline", String(good.prefix(16)) + "\n" + String(good.dropFirst(16)), "not base64"),
            ("4 bytes", "AAAA", "too short"),
            ("39 bytes", Base64.encode([UInt8](repeating: 1, count: 39)), "too short"),
            ("40 zero bytes", Base64.encode([UInt8](repeating: 0, count: 40)), "authentication failed"),
            ("truncated by whole bytes", Base64.encode(Array(goodBytes.dropLast(5))), "authentication failed"),
            ("truncated mid-quad", String(good.dropLast(1)), "not base64"),
            ("truncated to nonce and tag", Base64.encode(Array(goodBytes.prefix(40))), "authentication failed"),
            ("tampered nonce", tampered(good, at: 3), "authentication failed"),
            ("tampered tag", tampered(good, at: 30), "authentication failed"),
            ("tampered body", tampered(good, at: goodBytes.count - 1), "authentication failed"),
            ("another key's ciphertext", sealed(text("other"), key: otherKey), "authentication failed"),
            ("plaintext not UTF-8", sealed([0xFF, 0xFE, 0x00, 0xC3]), "not UTF-8"),
            ("100 KB argument", String(repeating: "QUFB", count: 25_000), "authentication failed"),
        ]
        // v2 (sk2:), under the key stored as `k`.
        let ring = KeyRing(current: try! SymmetricKey(base64Encoded: plainKey), id: "k")
        let bound = try! ring.encrypt("a field value", format: .v2, place: .context(""))
        let body = Base64.decode(String(bound.dropFirst(4)))!
        let stranger = try! KeyRing(current: SymmetricKey(base64Encoded: otherKey), id: "k").encrypt("x", format: .v2, place: .context(""))
        let boundInputs: [(String, String, String)] = [
            ("v2 prefix alone", "sk2:", "too short to be a v2 ciphertext"),
            ("v2 body not base64", "sk2:!!!!", "not base64"),
            ("v2 truncated", "sk2:" + Base64.encode(Array(body.prefix(56))), "too short to be a v2 ciphertext"),
            ("v2 unknown version", "sk7:" + String(bound.dropFirst(4)), "not a ciphertext format this SealKit reads"),
            ("v2 version byte", "sk2:" + Base64.encode([9] + Array(body.dropFirst())), "not a ciphertext format this SealKit reads"),
            ("v2 tampered body", "sk2:" + tampered(String(bound.dropFirst(4)), at: body.count - 1), "authentication failed"),
            ("v2 tampered place tag", "sk2:" + tampered(String(bound.dropFirst(4)), at: 10), "sealed for another field or user"),
            ("v2 another key", stranger, "which this keystore does not have"),
            ("v2 header stripped", String(bound.dropFirst(4)), "stripped"),
            ("v2 huge version", "sk99999999999999999999:" + String(bound.dropFirst(4)), "not base64"),
        ]
        var cases = (inputs + boundInputs).map { label, ciphertext, expected in
            HostileCase(name: "decrypt: \(label)", rawArguments: ["decrypt", "--key", "k", "--", ciphertext], expected: expected)
        }
        var random = SystemRandomNumberGenerator()
        let huge = Base64.encode((0..<(12 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) })
        cases += [
            HostileCase(
                name: "decrypt: embedded NUL", rawArguments: ["decrypt", "--key", "k"],
                stdin: text(String(good.prefix(16))) + [0] + text(String(good.dropFirst(16))), expected: "not base64"),
            HostileCase(name: "decrypt: empty stdin", rawArguments: ["decrypt", "--key", "k"], expected: "too short"),
            HostileCase(name: "decrypt: stdin not UTF-8", rawArguments: ["decrypt", "--key", "k"], stdin: [0xC3, 0x28, 0xFF], expected: "not UTF-8"),
            HostileCase(name: "decrypt: 16 MB ciphertext", rawArguments: ["decrypt", "--key", "k"], stdin: text(huge), expected: "authentication failed"),
            HostileCase(
                name: "decrypt: oversized ciphertext line", rawArguments: ["decrypt", "--key", "k", "--lines"],
                stdin: text(good + "\n" + huge + "\n"), expected: "line 2: authentication failed"),
            HostileCase(
                name: "decrypt: bad line among good ones", rawArguments: ["decrypt", "--key", "k", "--lines"],
                stdin: text(good + "\n" + good + "\nAAAA\n" + good), expected: "line 3: too short"),
            HostileCase(
                name: "decrypt: line not UTF-8", rawArguments: ["decrypt", "--key", "k", "--lines"],
                stdin: text(good + "\n") + [0xFF, 0xFE, 0x0A], expected: "line 2"),
            HostileCase(
                name: "decrypt: plaintext with newline in --lines", rawArguments: ["decrypt", "--key", "k", "--lines"],
                stdin: text(sealed(text("two\nlines")) + "\n"), expected: "holds a newline"),
            HostileCase(
                name: "decrypt: --lines with an argument", rawArguments: ["decrypt", "--key", "k", "--lines", "--", good],
                expected: "--lines reads stdin"),
            HostileCase(name: "decrypt: missing key", rawArguments: ["decrypt", "--key", "missing", "--", good], expected: "no key for 'missing'"),
            HostileCase(
                name: "decrypt: missing key in an empty home", rawArguments: ["decrypt", "--key", "k", "--", good], setup: .empty,
                expected: "no key for 'k'"),
            HostileCase(name: "decrypt: another id's ciphertext", rawArguments: ["decrypt", "--key", "r", "--", good], expected: "authentication failed"),
        ]
        return cases
    }()

    static let encryptCases: [HostileCase] = [
        HostileCase(name: "encrypt: stdin not UTF-8", rawArguments: ["encrypt", "--key", "k"], stdin: [0x61, 0xFF, 0x62], expected: "not UTF-8"),
        HostileCase(
            name: "encrypt: overlong UTF-8 encoding", rawArguments: ["encrypt", "--key", "k"], stdin: [0xC0, 0xAF], expected: "not UTF-8"),
        HostileCase(
            name: "encrypt: UTF-8 surrogate", rawArguments: ["encrypt", "--key", "k"], stdin: [0xED, 0xA0, 0x80], expected: "not UTF-8"),
        HostileCase(
            name: "encrypt: line 3 not UTF-8", rawArguments: ["encrypt", "--key", "k", "--lines"],
            stdin: text("one\ntwo\n") + [0xFF] + text("\nfour\n"), expected: "line 3: not UTF-8"),
        HostileCase(name: "encrypt: missing key", rawArguments: ["encrypt", "--key", "missing"], expected: "no key for 'missing'"),
        HostileCase(name: "encrypt: no --key", rawArguments: ["encrypt", "--", "x"], expected: "--key"),
        HostileCase(name: "encrypt: --key without a value", rawArguments: ["encrypt", "--key"], expected: "--key"),
        HostileCase(name: "encrypt: --lines with an argument", rawArguments: ["encrypt", "--key", "k", "--lines", "--", "x"], expected: "--lines reads stdin"),
        HostileCase(name: "encrypt: protected without passphrase", rawArguments: ["encrypt", "--key", "p"], expected: "passphrase-protected"),
        HostileCase(
            name: "encrypt: protected with wrong passphrase", rawArguments: ["encrypt", "--key", "p"],
            rawEnvironment: ["SEALKIT_PASSPHRASE": "wrong"], expected: "wrong passphrase"),
        HostileCase(
            name: "status: missing key", rawArguments: ["status", "--key", "missing"], expected: "no key for 'missing'"),
        HostileCase(
            name: "status: protected without passphrase", rawArguments: ["status", "--key", "p"], expected: "passphrase-protected"),
        HostileCase(
            name: "status: protected with wrong passphrase", rawArguments: ["status", "--key", "p"],
            rawEnvironment: ["SEALKIT_PASSPHRASE": "wrong"], expected: "wrong passphrase"),
    ]

    static let passphraseCases: [HostileCase] = {
        let files: [(String, String, String?)] = [
            ("missing file", "{home}/no-such-file", "cannot read the passphrase file"),
            ("empty file", "{home}/empty", "is empty"),
            ("newline only", "{home}/newline", "is empty"),
            ("a directory", "{home}", "cannot read the passphrase file"),
            ("wrong passphrase", "{home}/wrong", "wrong passphrase"),
            ("endless file", "/dev/zero", "passphrase file"),
        ]
        var cases = files.map { label, path, expected in
            HostileCase(
                name: "--passphrase-file: \(label)", rawArguments: ["decrypt", "--key", "p", "--passphrase-file", path, "--", "AAAA"],
                expected: expected)
        }
        cases.append(HostileCase(
            name: "keys rotate: --passphrase-file wrong", rawArguments: ["keys", "rotate", "p", "--passphrase-file", "{home}/wrong"],
            expected: "wrong passphrase"))
        // keys passwd: nothing changes unless the current passphrase opens the keys and a new one is given.
        cases += [
            HostileCase(
                name: "keys passwd: wrong current passphrase", rawArguments: ["keys", "passwd", "p", "--new-passphrase-file", "{home}/wrong"],
                rawEnvironment: ["SEALKIT_PASSPHRASE": "wrong"], expected: "wrong passphrase"),
            HostileCase(
                name: "keys passwd: endless new passphrase file", rawArguments: ["keys", "passwd", "k", "--new-passphrase-file", "/dev/zero"],
                expected: "longer than 4096 bytes"),
            HostileCase(
                name: "keys passwd: empty new passphrase file", rawArguments: ["keys", "passwd", "k", "--new-passphrase-file", "{home}/empty"],
                expected: "is empty"),
            HostileCase(
                name: "keys passwd: no new passphrase and no terminal", rawArguments: ["keys", "passwd", "k"], expected: "--new-passphrase-file"),
            HostileCase(name: "keys passwd: missing id", rawArguments: ["keys", "passwd", "nobody", "--remove"], expected: "no key for 'nobody'"),
            HostileCase(
                name: "keys passwd: --remove without the passphrase", rawArguments: ["keys", "passwd", "p", "--remove"], expected: "passphrase-protected"),
            HostileCase(
                name: "keys passwd: --remove and a new passphrase", rawArguments: ["keys", "passwd", "k", "--remove", "--new-passphrase-file", "{home}/wrong"],
                expected: "not both"),
            HostileCase(
                name: "SEALKIT_PASSPHRASE set but empty", rawArguments: ["keys", "generate", "new-id"],
                rawEnvironment: ["SEALKIT_PASSPHRASE": ""], expected: "set but empty"),
            HostileCase(
                name: "SEALKIT_LOCK_TIMEOUT not a number", rawArguments: ["keys", "rotate", "k"],
                rawEnvironment: ["SEALKIT_LOCK_TIMEOUT": "ten"], expected: "SEALKIT_LOCK_TIMEOUT"),
            HostileCase(
                name: "keys restore --protect onto an unprotected id", rawArguments: ["keys", "restore", "k", "--protect"],
                rawEnvironment: ["SEALKIT_PASSPHRASE": passphrase], expected: "sealkit keys passwd k"),
        ]
        cases.append(HostileCase(
            name: "keys generate: --protect with empty passphrase file",
            rawArguments: ["keys", "generate", "new-id", "--protect", "--passphrase-file", "{home}/empty"], expected: "is empty"))
        return cases
    }()

    static let damagedFileCases: [HostileCase] = {
        // Each damage with a command that must read the damaged file. `keys list` reads only
        // what it shows, so it meets only damage to the file's structure.
        let encryptK = ["encrypt", "--key", "k"]
        let commands: [KeyFileDamage: [String]] = [
            .truncated: ["keys", "list"], .headerOnly: ["keys", "list"], .empty: ["status", "--key", "k"],
            .garbage: ["keys", "list"], .wrongMagic: ["keys", "generate", "k"], .crlfLineEnds: ["keys", "list"],
            .idOfAnotherFile: ["keys", "rotate", "k"], .fingerprintMismatch: encryptK,
            .materialNotBase64: ["decrypt", "--key", "k", "--", "AAAA"], .materialWrongLength: ["keys", "rotate", "k"],
            .groupReadable: ["keys", "list"], .symlink: encryptK, .directory: ["keys", "import", "k"],
            .oversized: ["keys", "list"], .twoCurrentKeys: ["keys", "list"], .retiredListedFirst: ["encrypt", "--key", "r"],
            .absurdArgon2Limits: ["encrypt", "--key", "p"], .tamperedSalt: ["keys", "rotate", "p"],
            .idNotUTF8: ["keys", "list"], .timestampOutOfRange: ["keys", "list"], .nulBytes: ["keys", "import", "k"],
            .plantedByAnotherUser: encryptK, .protectedMetadataChanged: ["encrypt", "--key", "p"],
            .tooManyKeys: ["keys", "rotate", "k"], .worldWritableFolder: ["keys", "generate", "new-id"],
        ]
        // The review's attacks on the keystore must be refused for the right reason.
        let reasons: [KeyFileDamage: String] = [
            .plantedByAnotherUser: "owned by uid 65534", .protectedMetadataChanged: "changed without the passphrase",
            .tooManyKeys: "more than the 4096", .worldWritableFolder: "chmod 700",
        ]
        return KeyFileDamage.allCases.map { damage in
            let arguments = commands[damage] ?? encryptK
            let stdin = arguments.starts(with: ["keys", "import"]) ? text(plainKey) : []
            return HostileCase(
                name: "damaged key file (\(damage.rawValue)): \(arguments.prefix(2).joined(separator: " "))",
                rawArguments: arguments, stdin: stdin, setup: .damaged(damage),
                rawEnvironment: ["SEALKIT_PASSPHRASE": passphrase], expected: reasons[damage],
                outcome: arguments == ["keys", "list"] ? .listedWithProblem : .failure)
        } + [
            // `keys delete` is the remedy the damaged-file message names, so it succeeds (KeysCLITests).
            HostileCase(name: "damaged key file (garbage): keys rotate", rawArguments: ["keys", "rotate", "k"], setup: .damaged(.garbage)),
            HostileCase(name: "damaged key file (truncated): encrypt", rawArguments: encryptK, setup: .damaged(.truncated)),
            HostileCase(
                name: "damaged key file (materialWrongLength): decrypt", rawArguments: ["decrypt", "--key", "k", "--", "AAAA"],
                setup: .damaged(.materialWrongLength)),
        ]
    }()

    static let homeCases: [HostileCase] = {
        let homes: [(String, String)] = [
            ("a regular file", "{home}/file"), ("under a regular file", "{home}/file/keys"),
            ("under /proc", "/proc/self/sealkit-keys"), ("under /dev/null", "/dev/null/keys"),
        ]
        var cases: [HostileCase] = []
        for (label, home) in homes {
            cases.append(HostileCase(
                name: "unwritable SEALKIT_HOME (\(label)): generate", rawArguments: ["keys", "generate", "g"], setup: .empty,
                rawEnvironment: ["SEALKIT_HOME": home], expected: "cannot"))
            cases.append(HostileCase(
                name: "unwritable SEALKIT_HOME (\(label)): import", rawArguments: ["keys", "import", "g"], stdin: text(plainKey),
                setup: .empty, rawEnvironment: ["SEALKIT_HOME": home], expected: "cannot"))
        }
        cases += [
            HostileCase(
                name: "unwritable SEALKIT_HOME (a regular file): list", rawArguments: ["keys", "list"], setup: .empty,
                rawEnvironment: ["SEALKIT_HOME": "{home}/file"], expected: "cannot"),
            HostileCase(
                name: "no SEALKIT_HOME, HOME or XDG_DATA_HOME", rawArguments: ["keys", "list"], setup: .empty,
                rawEnvironment: ["SEALKIT_HOME": "", "HOME": "", "XDG_DATA_HOME": ""], expected: "cannot find a place for keys"),
            HostileCase(
                name: "namespace: parent path", rawArguments: ["keys", "generate", "x", "--namespace", "../up"], expected: "invalid namespace"),
            HostileCase(
                name: "namespace: hidden", rawArguments: ["keys", "generate", "x", "--namespace", ".hidden"], expected: "invalid namespace"),
            HostileCase(
                name: "namespace: 65 characters", rawArguments: ["keys", "list", "--namespace", String(repeating: "n", count: 65)],
                expected: "invalid namespace"),
            HostileCase(
                name: "namespace: from the environment", rawArguments: ["encrypt", "--key", "k"],
                rawEnvironment: ["SEALKIT_NAMESPACE": "a/b"], expected: "invalid namespace"),
        ]
        return cases
    }()

    static let qrCases: [HostileCase] = [
        HostileCase(name: "qr: text too long", rawArguments: ["qr", "--", String(repeating: "x", count: 4000)]),
        HostileCase(name: "qr: stdin too long", rawArguments: ["qr"], stdin: [UInt8](repeating: 0xFF, count: 100_000)),
        HostileCase(name: "qr: unknown format", rawArguments: ["qr", "--format", "gif", "--", "x"]),
        HostileCase(name: "qr: unknown correction level", rawArguments: ["qr", "--ecc", "Z", "--", "x"]),
        HostileCase(name: "qr: output in a missing folder", rawArguments: ["qr", "--output", "{home}/missing/x.png", "--", "x"], expected: "cannot write"),
        HostileCase(name: "qr: output over a folder", rawArguments: ["qr", "--output", "{home}/keys", "--", "x"], expected: "cannot write"),
    ]

    static let usageCases: [HostileCase] = [
        HostileCase(name: "unknown command", rawArguments: ["frobnicate"]),
        HostileCase(name: "unknown option", rawArguments: ["keys", "list", "--frobnicate"]),
        HostileCase(name: "keys without a subcommand argument", rawArguments: ["keys", "generate"]),
        HostileCase(name: "extra argument", rawArguments: ["keys", "list", "extra"]),
    ]

    /// 100,000 levels of nesting.
    static let deeplyNested = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    static let deeplyNestedObjects = String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)

    /// Files each case's home holds, named in arguments as `{home}/NAME`.
    static let documents: [(String, [UInt8])] = {
        let schema = (try? Data(contentsOf: Repository.fixture("profile/schema.json"))).map(Array.init) ?? []
        let profile = (try? Data(contentsOf: Repository.fixture("profile/profile.json"))).map(Array.init) ?? []
        return [
            ("schema.json", schema), ("profile.json", profile), ("nested.json", text(deeplyNested)),
            ("schema-wrong-types.json", text("{\"app\":{\"schema\":{\"ssn\":{\"type\":\"string\",\"encryption\":\"yes\"}}}}")),
            ("schema-not-object.json", text("[1, 2, 3]")), ("not-utf8.json", [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D]),
            ("broken.ndjson", text("{\"ssn\":\"x\"}\n{\"ssn\":\n")), ("export.txt", text("{}")),
            ("numbers.json", text("{\"data\":{\"credit_score\":1e999999999999999999999}}")),
        ]
    }()

    static let profileCases: [HostileCase] = {
        let schema = ["--schema", "{home}/schema.json", "--key", "k"]
        let sealedNumberText = sealed(text("not a number"))
        let inputs: [(String, String, [UInt8], String?)] = [
            ("decrypt", "nested 100,000 levels", text(deeplyNested), "nest deeper"),
            ("encrypt", "objects nested 100,000 levels", text(deeplyNestedObjects), "nest deeper"),
            ("encrypt", "not UTF-8", [0x7B, 0x22, 0x64, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D], "UTF-8"),
            ("encrypt", "cut short", text("{\"data\":{\"ssn\":"), "invalid JSON"),
            ("encrypt", "trailing comma", text("{\"data\":{\"ssn\":\"1\",}}"), "invalid JSON"),
            ("encrypt", "duplicate keys", text("{\"ssn\":\"1\",\"ssn\":\"2\"}"), "appears twice"),
            ("encrypt", "lone surrogate", text("{\"ssn\":\"\\ud800\"}"), "invalid JSON"),
            ("encrypt", "an array", text("[]"), "must be a JSON object"),
            ("encrypt", "a number", text("42"), "must be a JSON object"),
            ("encrypt", "wrong type for a string field", text("{\"data\":{\"ssn\":12}}"), "schema declares type"),
            ("encrypt", "wrong type for a boolean field", text("{\"data\":{\"is_verified\":\"true\"}}"), "schema declares type"),
            ("decrypt", "plaintext where a ciphertext belongs", text("{\"data\":{\"ssn\":\"078-05-1120\"}}"), "cannot be decrypted"),
            ("decrypt", "number where a ciphertext belongs", text("{\"data\":{\"credit_score\":812}}"), "not a ciphertext"),
            ("decrypt", "tampered ciphertext", text("{\"data\":{\"ssn\":\"\(tampered(sealed(text("078")), at: 42))\"}}"), "none of the user's keys opens"),
            ("decrypt", "another key's ciphertext", text("{\"data\":{\"ssn\":\"\(sealed(text("x"), key: otherKey))\"}}"), "none of the user's keys opens"),
            ("decrypt", "decrypts to the wrong type", text("{\"data\":{\"credit_score\":\"\(sealedNumberText)\"}}"), "credit_score"),
            ("rotate", "truncated ciphertext", text("{\"data\":{\"ssn\":\"\(sealed(text("078")).dropLast(4))\"}}"), "cannot be decrypted"),
            ("encrypt", "empty stdin", [], "invalid JSON"),
        ]
        var cases = inputs.map { command, label, stdin, expected in
            HostileCase(name: "profile \(command): \(label)", rawArguments: ["profile", command] + schema, stdin: stdin, expected: expected)
        }
        cases += [
            HostileCase(
                name: "profile decrypt: line 2 of NDJSON is broken", rawArguments: ["profile", "decrypt", "--ndjson"] + schema,
                stdin: text("{\"data\":{}}\n{\"data\":\n"), expected: "line 2"),
            HostileCase(name: "profile encrypt: missing profile file", rawArguments: ["profile", "encrypt"] + schema + ["{home}/nope.json"]),
            HostileCase(name: "profile encrypt: profile is a folder", rawArguments: ["profile", "encrypt"] + schema + ["{home}"]),
            HostileCase(
                name: "profile encrypt: missing schema", rawArguments: ["profile", "encrypt", "--schema", "{home}/nope.json", "--key", "k"],
                stdin: text("{}")),
            HostileCase(
                name: "profile encrypt: schema nested 100,000 levels",
                rawArguments: ["profile", "encrypt", "--schema", "{home}/nested.json", "--key", "k"], stdin: text("{}"), expected: "nest deeper"),
            HostileCase(
                name: "profile encrypt: schema with wrong types",
                rawArguments: ["profile", "encrypt", "--schema", "{home}/schema-wrong-types.json", "--key", "k"], stdin: text("{}")),
            HostileCase(
                name: "profile encrypt: schema not an object",
                rawArguments: ["profile", "encrypt", "--schema", "{home}/schema-not-object.json", "--key", "k"], stdin: text("{}")),
            HostileCase(
                name: "profile encrypt: schema not UTF-8",
                rawArguments: ["profile", "encrypt", "--schema", "{home}/not-utf8.json", "--key", "k"], stdin: text("{}"), expected: "UTF-8"),
            HostileCase(
                name: "profile encrypt: missing key", rawArguments: ["profile", "encrypt", "--schema", "{home}/schema.json", "--key", "nobody"],
                stdin: text("{}"), expected: "no key for 'nobody'"),
            HostileCase(
                name: "profile decrypt: protected key, wrong passphrase",
                rawArguments: ["profile", "decrypt", "--schema", "{home}/schema.json", "--key", "p"], stdin: text("{}"),
                rawEnvironment: ["SEALKIT_PASSPHRASE": "wrong"], expected: "wrong passphrase"),
            HostileCase(
                name: "profile decrypt: number out of range where a ciphertext belongs",
                rawArguments: ["profile", "decrypt"] + schema + ["{home}/numbers.json"], expected: "not a ciphertext"),
        ]
        return cases
    }()

    /// A live-looking offer from a receiver that is gone, its code, and a reply made for it with
    /// that code: for every later receiver, a reply to another offer (which does not open).
    static let strayReceiver = TransferReceiver()
    static let strayOffer = strayReceiver.offer.text
    static let strayCode = strayReceiver.code.revealedText
    static let replayedReply: String = {
        guard let key = try? SymmetricKey(base64Encoded: plainKey), let id = try? KeyID("k"),
            let history = try? KeyHistory(id: id, versions: [.init(key: key, created: Date(), retired: nil)]),
            let lines = try? TransferOffer(strayOffer).reply(sending: [history], code: strayReceiver.code)
        else { return "" }
        return lines.joined(separator: "\n")
    }()

    /// `text` with one character in its body changed, as a mistyped copy would have it.
    static func mistyped(_ text: String) -> String {
        var characters = Array(text)
        guard characters.count > 30 else { return text }
        characters[25] = characters[25] == "A" ? "B" : "A"
        return String(characters)
    }

    /// Lines of a vector in Fixtures/transfer/vectors.json.
    static func transferVector(_ name: String) -> [String] {
        guard let data = try? Data(contentsOf: Repository.fixture("transfer/vectors.json")),
            let vectors = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]],
            let vector = vectors.first(where: { $0["name"] as? String == name })
        else { return ["missing vector \(name)"] }
        return vector["lines"] as? [String] ?? []
    }

    static let transferCases: [HostileCase] = {
        let offerBody = String(strayOffer.dropFirst("sealkit-offer-v2:".count))
        let offers: [(String, String, String?)] = [
            ("garbage", "garbage", nil),
            ("future version", "sealkit-offer-v3:" + offerBody, "v3"),
            ("retired version 1", "sealkit-offer-v1:" + String(repeating: "A", count: 86), "retired"),
            ("truncated", String(strayOffer.dropLast(5)), nil),
            ("one character changed", mistyped(strayOffer), "check"),
            ("padded base64", strayOffer + "==", nil),
            ("standard base64 alphabet", strayOffer.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "+/", nil),
            ("a reply instead", "sealkit-reply-v2:" + offerBody, nil),
            ("control characters", "sealkit-offer-v2:\u{1b}[2J" + offerBody, nil),
            ("100 KB", "sealkit-offer-v2:" + String(repeating: "A", count: 100_000), nil),
        ]
        var cases = offers.map { label, offer, expected in
            HostileCase(
                name: "transfer send: offer \(label)",
                rawArguments: ["transfer", "send", "k", "--to", offer, "--code", "7-guitarist-revenge", "--format", "text"],
                expected: expected)
        }
        cases.append(HostileCase(
            name: "transfer send: offer on stdin, 100 KB", rawArguments: ["transfer", "send", "k", "--to", "-", "--code", "7-guitarist-revenge"],
            stdin: text(String(repeating: "sealkit-offer-v2:", count: 6000)), expected: "larger than"))
        cases.append(HostileCase(
            name: "transfer send: offer on stdin, nothing", rawArguments: ["transfer", "send", "k", "--to", "-", "--code", "7-guitarist-revenge"]))
        let codes: [(String, String, String?)] = [
            ("empty", "", "no code"),
            ("no number", "guitarist-revenge", "number"),
            ("unknown word", "7-guitarist-xyzzy", "word list"),
            ("swapped words", "7-revenge-guitarist", "wrong order"),
            ("three words", "7-guitarist-revenge-aardvark", "3 words"),
            ("control characters", "7-guitarist-\u{1b}[2J", nil),
            ("10 KB", String(repeating: "7-", count: 5000), "too long"),
        ]
        cases += codes.map { label, code, expected in
            HostileCase(
                name: "transfer send: code \(label)", rawArguments: ["transfer", "send", "k", "--to", strayOffer, "--code", code, "--format", "text"],
                expected: expected)
        }
        cases.append(HostileCase(
            name: "transfer send: no code and no terminal", rawArguments: ["transfer", "send", "k", "--to", strayOffer, "--format", "text"],
            expected: "--code"))
        for lifetime in ["0", "86401", "-1", "99999999999999999999", "ten", "1e3"] {
            cases.append(HostileCase(
                name: "transfer send: --expires-in \(lifetime)",
                rawArguments: ["transfer", "send", "k", "--to", strayOffer, "--code", strayCode, "--expires-in", lifetime, "--format", "text"]))
        }
        cases += [
            HostileCase(name: "transfer send: missing id", rawArguments: ["transfer", "send", "nobody", "--to", strayOffer, "--code", strayCode, "--format", "text"], expected: "no key for 'nobody'"),
            HostileCase(name: "transfer send: no ids", rawArguments: ["transfer", "send", "--to", strayOffer, "--code", strayCode, "--format", "text"]),
            HostileCase(name: "transfer send: invalid id", rawArguments: ["transfer", "send", "../k", "--to", strayOffer, "--code", strayCode, "--format", "text"], expected: "invalid key id"),
            HostileCase(name: "transfer send: protected without passphrase", rawArguments: ["transfer", "send", "p", "--to", strayOffer, "--code", strayCode, "--format", "text"], expected: "passphrase-protected"),
            HostileCase(name: "transfer send: --rownd for a protected key, wrong passphrase", rawArguments: ["transfer", "send", "p", "--rownd", "--link", "https://a.rownd.link/x", "--format", "text"], rawEnvironment: ["SEALKIT_PASSPHRASE": "wrong"], expected: "wrong passphrase"),
            HostileCase(name: "transfer send: unknown format", rawArguments: ["transfer", "send", "k", "--to", strayOffer, "--code", strayCode, "--format", "gif"]),
        ]
        let replies: [(String, [String], String?)] = [
            ("nothing", [], nil),
            ("garbage", ["garbage"], nil),
            ("reply to another offer", [replayedReply], "wrong code"),
            ("future version", [replayedReply.replacingOccurrences(of: "sealkit-reply-v2:", with: "sealkit-reply-v3:")], "v3"),
            ("retired version 1", ["sealkit-reply-v1:" + String(repeating: "A", count: 400)], "retired"),
            ("truncated reply", [String(replayedReply.dropLast(7))], nil),
            ("one character changed", [mistyped(replayedReply)], "check"),
            ("an offer instead", [strayOffer], nil),
            ("a backup instead", transferVector("backup-one-key"), nil),
            ("parts with one missing", transferVector("parts-missing-one"), "missing"),
            ("a part twice", transferVector("parts-duplicated"), nil),
            ("parts of two transfers", transferVector("parts-from-two-transfers"), nil),
            ("altered parts", transferVector("parts-altered"), nil),
            ("100 KB line", [String(repeating: "sealkit-reply-v2:AAAA", count: 5000)], "longer than"),
        ]
        cases += replies.map { label, lines, expected in
            HostileCase(
                name: "transfer receive: \(label)", rawArguments: ["transfer", "receive", "--offline", "--format", "text"],
                stdin: text(lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")), expected: expected, outcome: .failureAfterOffer)
        }
        cases.append(HostileCase(
            name: "transfer receive: not UTF-8", rawArguments: ["transfer", "receive", "--offline", "--format", "text"], stdin: [0xFF, 0xFE, 0x0A],
            outcome: .failureAfterOffer))
        return cases
    }()

    static let backupCases: [HostileCase] = {
        let backupPassphrase = ["SEALKIT_PASSPHRASE": "correct horse battery staple"]
        let oneKey = transferVector("backup-one-key").first ?? ""
        // The same backup claiming Argon2id limits far beyond libsodium's sensitive preset.
        var absurd = oneKey
        if let body = oneKey.split(separator: ":", maxSplits: 1).last {
            var standard = body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
            if var bytes = Data(base64Encoded: standard).map(Array.init), bytes.count > 16 {
                for index in 8..<16 { bytes[index] = 0x7F }
                absurd = "sealkit-backup-v1:" + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            }
        }
        let inputs: [(String, [String], String, [String: String], String?)] = [
            ("nothing on stdin", [], "alice@example.com", backupPassphrase, nil),
            ("garbage", ["sealkit-backup-v1:!!!"], "alice@example.com", backupPassphrase, nil),
            ("wrong passphrase", [oneKey], "new-id", ["SEALKIT_PASSPHRASE": "Correct horse battery staple"], "wrong passphrase"),
            ("no passphrase", [oneKey], "new-id", [:], nil),
            ("future version", transferVector("backup-future-version"), "new-id", backupPassphrase, "v2"),
            ("truncated", transferVector("backup-truncated"), "new-id", backupPassphrase, nil),
            ("parts with one missing", transferVector("parts-missing-one"), "new-id", backupPassphrase, "missing"),
            ("altered parts", transferVector("parts-altered"), "new-id", backupPassphrase, nil),
            ("an id the backup lacks", [oneKey], "someone-else", backupPassphrase, "alice@example.com"),
            ("a different key under the id", [oneKey], "alice@example.com", backupPassphrase, "different key"),
            ("absurd Argon2id limits", [absurd], "new-id", backupPassphrase, nil),
            ("a reply instead", [replayedReply], "new-id", backupPassphrase, nil),
        ]
        var cases = inputs.map { label, lines, id, environment, expected in
            HostileCase(
                name: "keys restore: \(label)", rawArguments: ["keys", "restore", id], stdin: text(lines.joined(separator: "\n")),
                rawEnvironment: environment, expected: expected)
        }
        cases += [
            HostileCase(name: "keys backup: missing id", rawArguments: ["keys", "backup", "nobody", "--format", "text"], rawEnvironment: backupPassphrase, expected: "no key for 'nobody'"),
            HostileCase(name: "keys backup: chosen passphrase of 1 character", rawArguments: ["keys", "backup", "k", "--format", "text"], rawEnvironment: ["SEALKIT_PASSPHRASE": "1"], expected: "at least 12 characters"),
            HostileCase(name: "keys backup: protected key, wrong passphrase", rawArguments: ["keys", "backup", "p", "--format", "text"], rawEnvironment: ["SEALKIT_PASSPHRASE": "wrong"], expected: "wrong passphrase"),
            HostileCase(name: "keys backup: no ids", rawArguments: ["keys", "backup", "--format", "text"], rawEnvironment: backupPassphrase),
        ]
        return cases
    }()

    /// Each read of untrusted input stops at its cap (IO.swift's `InputLimits`)
    /// with one line, instead of reading on until memory runs out.
    static let boundedInputCases: [HostileCase] = {
        let a = UInt8(ascii: "A")
        let schema = ["--schema", "{home}/schema.json", "--key", "k"]
        return [
            HostileCase(
                name: "decrypt: 25 MiB on stdin", rawArguments: ["decrypt", "--key", "k"],
                stdin: [UInt8](repeating: a, count: 25 << 20), expected: "larger than 24 MiB"),
            HostileCase(
                name: "decrypt --lines: a 25 MiB line", rawArguments: ["decrypt", "--key", "k", "--lines"],
                stdin: [UInt8](repeating: a, count: 25 << 20) + [0x0A], expected: "line 1 of the ciphertexts on stdin is longer than 24 MiB"),
            HostileCase(
                name: "encrypt: 17 MiB on stdin", rawArguments: ["encrypt", "--key", "k"],
                stdin: [UInt8](repeating: a, count: 17 << 20), expected: "larger than 16 MiB"),
            HostileCase(
                name: "encrypt --lines: a 17 MiB third line", rawArguments: ["encrypt", "--key", "k", "--lines"],
                stdin: text("one\ntwo\n") + [UInt8](repeating: a, count: 17 << 20), expected: "line 3 of the text on stdin is longer than 16 MiB"),
            HostileCase(
                name: "keys restore: a 70 KiB line", rawArguments: ["keys", "restore", "k"],
                stdin: text("sealkit-backup-v1:") + [UInt8](repeating: a, count: 70 << 10),
                rawEnvironment: ["SEALKIT_PASSPHRASE": "correct horse battery staple"], expected: "longer than 64 KiB"),
            HostileCase(
                name: "keys restore: 2 MiB of blank lines", rawArguments: ["keys", "restore", "k"],
                stdin: [UInt8](repeating: 0x0A, count: 2 << 20), expected: "larger than 1 MiB"),
            HostileCase(
                name: "transfer receive: a 70 KiB line", rawArguments: ["transfer", "receive", "--offline", "--format", "text"],
                stdin: text("sealkit-reply-v2:") + [UInt8](repeating: a, count: 70 << 10), expected: "is longer than",
                outcome: .failureAfterOffer),
            HostileCase(
                name: "profile encrypt: a 17 MiB profile", rawArguments: ["profile", "encrypt"] + schema,
                stdin: text("{\"data\":\"") + [UInt8](repeating: a, count: 17 << 20) + text("\"}"), expected: "larger than 16 MiB"),
            HostileCase(
                name: "profile encrypt --ndjson: a 17 MiB line", rawArguments: ["profile", "encrypt", "--ndjson"] + schema,
                stdin: text("{\"data\":\"") + [UInt8](repeating: a, count: 17 << 20) + text("\"}\n"), expected: "longer than 16 MiB"),
            HostileCase(
                name: "qr: 70 KiB on stdin", rawArguments: ["qr"], stdin: [UInt8](repeating: a, count: 70 << 10),
                expected: "larger than 64 KiB"),
        ]
    }()

    static let auditCases: [HostileCase] = [
        HostileCase(name: "audit: missing path", rawArguments: ["audit", "{home}/nope"], expected: "no such file"),
        HostileCase(name: "audit: wrong extension", rawArguments: ["audit", "{home}/export.txt"]),
        HostileCase(name: "audit: schema nested 100,000 levels", rawArguments: ["audit", "--schema", "{home}/nested.json", "{home}/profile.json"], expected: "nest deeper"),
        HostileCase(name: "audit: schema with wrong types", rawArguments: ["audit", "--schema", "{home}/schema-wrong-types.json", "{home}/profile.json"]),
        HostileCase(name: "audit: missing schema", rawArguments: ["audit", "--schema", "{home}/nope.json", "{home}/profile.json"]),
        HostileCase(name: "audit: missing key", rawArguments: ["audit", "--key", "nobody", "{home}/profile.json"], expected: "no key for 'nobody'"),
        HostileCase(name: "audit: protected key, wrong passphrase", rawArguments: ["audit", "--key", "p", "{home}/profile.json"], rawEnvironment: ["SEALKIT_PASSPHRASE": "wrong"], expected: "wrong passphrase"),
        HostileCase(name: "audit: unknown format", rawArguments: ["audit", "--format", "xml", "{home}/profile.json"]),
        HostileCase(name: "audit: file nested 100,000 levels", rawArguments: ["audit", "{home}/nested.json"], outcome: .auditFinding),
        HostileCase(name: "audit: file not UTF-8", rawArguments: ["audit", "{home}/not-utf8.json"], outcome: .auditFinding),
        HostileCase(name: "audit: NDJSON cut short", rawArguments: ["audit", "{home}/broken.ndjson"], outcome: .auditFinding),
    ]

    // MARK: Setup

    /// A keystore built once through the binary, copied for each case.
    private static let template: Result<String, any Error> = Result {
        let home = try TemporaryFolder.make().path
        var environment = ProcessInfo.processInfo.environment
        environment["SEALKIT_HOME"] = home + "/keys"
        environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
        environment.removeValue(forKey: "SEALKIT_NAMESPACE")
        let steps: [([String], String, [String: String])] = [
            (["keys", "import", "k"], plainKey, [:]),
            (["keys", "generate", "r"], "", [:]),
            (["keys", "rotate", "r"], "", [:]),
            (["keys", "generate", "p"], "", ["SEALKIT_PASSPHRASE": passphrase]),
            // Holds a key other than the one in Fixtures/transfer's backups.
            (["keys", "generate", "alice@example.com"], "", [:]),
        ]
        for (arguments, stdin, extra) in steps {
            let outcome = try ChildProcess.run(
                CLI.executable.path, arguments, stdin: Array(stdin.utf8), environment: environment.merging(extra) { $1 }, timeout: 10)
            guard outcome.status == 0 else {
                throw SetupError("setup \(arguments) failed: \(outcome.stderrText)")
            }
        }
        try Data().write(to: URL(fileURLWithPath: home + "/empty"))
        try Data("\n".utf8).write(to: URL(fileURLWithPath: home + "/newline"))
        try Data("wrong\n".utf8).write(to: URL(fileURLWithPath: home + "/wrong"))
        try Data("a file, not a folder\n".utf8).write(to: URL(fileURLWithPath: home + "/file"))
        for (name, contents) in documents { try Data(contents).write(to: URL(fileURLWithPath: home + "/" + name)) }
        return home
    }

    /// A fresh home folder for one case.
    static func prepare(_ setup: HostileSetup) throws -> String {
        let template = try self.template.get()
        let home = try TemporaryFolder.make().path
        for name in ["empty", "newline", "wrong", "file"] + documents.map(\.0) {
            try FileManager.default.copyItem(atPath: template + "/" + name, toPath: home + "/" + name)
        }
        if case .empty = setup { return home }
        try copyPreservingModes(template + "/keys", to: home + "/keys")
        if case .damaged(let damage) = setup { try apply(damage, in: home + "/keys/default") }
        return home
    }

    private static func copyPreservingModes(_ source: String, to destination: String) throws {
        try FileManager.default.copyItem(atPath: source, toPath: destination)
        let enumerator = FileManager.default.enumerator(atPath: source)
        var relatives = [""]
        while let relative = enumerator?.nextObject() as? String { relatives.append("/" + relative) }
        for relative in relatives {
            var info = stat()
            guard lstat(source + relative, &info) == 0 else { continue }
            chmod(destination + relative, info.st_mode & 0o7777)
        }
    }

    /// The key file holding `id` in a namespace folder.
    static func keyFile(for id: String, in folder: String) throws -> String {
        let idLine = "id " + Base64.encode(Array(id.utf8))
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".key") {
            let contents = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            if contents.split(separator: "\n").dropFirst().first.map(String.init) == idLine { return folder + "/" + name }
        }
        throw SetupError("no key file for \(id) in \(folder)")
    }

    private static func apply(_ damage: KeyFileDamage, in folder: String) throws {
        let target: String
        switch damage {
        case .tamperedSalt, .absurdArgon2Limits, .protectedMetadataChanged: target = try keyFile(for: "p", in: folder)
        case .retiredListedFirst: target = try keyFile(for: "r", in: folder)
        default: target = try keyFile(for: "k", in: folder)
        }
        let original = try String(contentsOfFile: target, encoding: .utf8)
        var lines = original.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The file is what `sealkit` wrote: a writer that left out a line or a field fails this test, not the run.
        guard lines.count > 4 else { throw SetupError("\(target) has \(lines.count) lines") }
        func fields(of line: Int, atLeast count: Int) throws -> [String] {
            let fields = lines[line].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= count else { throw SetupError("line \(line + 1) of \(target) has \(fields.count) fields") }
            return fields
        }
        func replaceField(line: Int, field: Int, with value: String) throws {
            var parts = try fields(of: line, atLeast: field + 1)
            parts[field] = value
            lines[line] = parts.joined(separator: " ")
        }
        var bytes: [UInt8]?
        switch damage {
        case .truncated: bytes = Array(original.utf8.dropLast(10))
        case .headerOnly: bytes = Array((lines.prefix(2).joined(separator: "\n") + "\n").utf8)
        case .empty: bytes = []
        case .garbage: bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        case .wrongMagic: lines[0] = "sealkit-keyfile 9"
        case .crlfLineEnds: bytes = Array(original.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        case .idOfAnotherFile: bytes = Array(try String(contentsOfFile: try keyFile(for: "r", in: folder), encoding: .utf8).utf8)
        case .fingerprintMismatch:
            let fingerprint = try fields(of: 3, atLeast: 2)[1]
            try replaceField(line: 3, field: 1, with: String(fingerprint.reversed()))
        case .materialNotBase64: try replaceField(line: 3, field: 4, with: "!!!!not-base64!!!!")
        case .materialWrongLength: try replaceField(line: 3, field: 4, with: Base64.encode([UInt8](repeating: 9, count: 16)))
        case .groupReadable:
            chmod(target, 0o644)
            return
        case .symlink:
            unlink(target)
            symlink(try keyFile(for: "r", in: folder), target)
            return
        case .directory:
            unlink(target)
            mkdir(target, 0o700)
            return
        case .plantedByAnotherUser:
            // The tests run as root: a 0600 file of uid 65534 (nobody) that root could read.
            chown(target, 65534, 65534)
            return
        case .worldWritableFolder:
            chmod(folder, 0o1777)
            return
        case .protectedMetadataChanged:
            // Version 2: line 4 is the first key line; its creation time is authenticated.
            try replaceField(line: 4, field: 2, with: "1")
        case .tooManyKeys:
            var retired = try fields(of: 3, atLeast: 4)
            retired[3] = "1"
            lines.insert(contentsOf: Array(repeating: retired.joined(separator: " "), count: 5000), at: 4)
        case .oversized: bytes = Array(original.utf8) + [UInt8](repeating: UInt8(ascii: "#"), count: 2 << 20)
        case .twoCurrentKeys: lines.insert(lines[3], at: 4)
        case .retiredListedFirst: lines.swapAt(3, 4)
        case .absurdArgon2Limits: try replaceField(line: 2, field: 3, with: "4611686018427387904")
        case .tamperedSalt:
            var salt = try #require(Base64.decode(try fields(of: 2, atLeast: 5)[4]))
            salt[0] ^= 1
            try replaceField(line: 2, field: 4, with: Base64.encode(salt))
        case .idNotUTF8: lines[1] = "id " + Base64.encode([0xFF, 0x6B])
        case .timestampOutOfRange: try replaceField(line: 3, field: 2, with: "99999999999999999999")
        case .nulBytes: lines[1] += "\u{0}\u{0}"
        }
        let data = Data(bytes ?? Array(lines.joined(separator: "\n").utf8))
        try data.write(to: URL(fileURLWithPath: target))
        chmod(target, 0o600)
    }
}

/// A hostile-input case whose setup failed (not the behaviour under test).
struct SetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
