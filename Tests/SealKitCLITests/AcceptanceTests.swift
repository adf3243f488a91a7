import Foundation
import SealKit
import SealTestSupport
import Testing

/// A black-box pass over issues 11 (offline), 12 and 14: each test drives `sealkit` the way the
/// issue's contract words it, from a fresh keystore, and covers what the other suites did not.
@Suite("sealkit acceptance")
struct AcceptanceTests {
    static let link = "https://example.rownd.link/s/Ab3dE"

    static func cliWithKey(_ id: String = "ada") throws -> CLI {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", id]).status == 0)
        return cli
    }

    /// Runs a bash script with `$SEALKIT` set to the binary, in the CLI's environment.
    static func bash(_ script: String, in cli: CLI, stdin: String = "") throws -> ProcessResult {
        var environment = cli.environment
        environment["SEALKIT"] = CLI.executable.path
        return try ChildProcess.run("/bin/bash", ["-c", script], stdin: Array(stdin.utf8), environment: environment)
    }

    // MARK: Issue 14: a closed stdout ends every command quietly

    /// `transfer send --rownd --format text` writes its one line straight from guarded memory; a
    /// reader that has gone must end it as `| head -1` ends the others: no "Broken pipe", no 74.
    @Test func rowndTextIntoAClosedPipeEndsQuietly() throws {
        let cli = try Self.cliWithKey("u")
        // The reader (head -c 0) is gone well before sealkit writes.
        let result = try Self.bash(
            """
            { sleep 0.5; "$SEALKIT" transfer send u --rownd --link '\(Self.link)' --format text; } | head -c 0
            echo "${PIPESTATUS[0]}"
            """, in: cli)
        let status = result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(status == "0" || status == "141", "exit status \(status): \(result.stderrText)")
        #expect(!result.stderrText.contains("cannot write"), "\(result.stderrText)")
        // Only the warning that the text holds the raw key, which is written before the text.
        #expect(result.stderrText.split(separator: "\n").allSatisfy { $0.hasPrefix("sealkit: warning: ") }, "\(result.stderrText)")
    }

    // MARK: Odd but plausible input: CRLF and blanks around a ciphertext

    /// A ciphertext is exactly its text (docs/format.md): blanks around one are refused with words
    /// that say so, from stdin, `-`, `--input` and an argument, and stdin's one trailing newline is
    /// the only exception (issue 28 reversed the earlier leniency, which the format never allowed).
    /// `--lines` reads CRLF files: CRLF ends a line there.
    @Test func decryptRefusesBlanksAroundACiphertextAndLinesReadCRLF() throws {
        let cli = try Self.cliWithKey()
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

    // MARK: Issue 12: the QR a terminal shows holds exactly URL#KEY

    /// Turns what a terminal shows into the QR code's text: escapes and CRs dropped, the longest
    /// run of half-block lines read as module rows (each glyph is two rows; a block is dark),
    /// scaled into a PBM image, and decoded by zbarimg. Nil when there is no code to scan.
    static func scanTerminalQR(_ screen: String, in folder: URL) throws -> String? {
        let glyphs: [Character: (Bool, Bool)] = [" ": (false, false), "▀": (true, false), "▄": (false, true), "█": (true, true)]
        var runs: [[[Bool]]] = [[]]
        // "\r\n" is one Character in Swift: drop the CRs before splitting lines.
        for raw in screen.replacingOccurrences(of: "\r", with: "").split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw).replacing(/\u{1B}\[[0-9;]*[A-Za-z]/, with: "")
            if line.count >= 21, line.allSatisfy({ glyphs[$0] != nil }), runs[runs.count - 1].last.map({ $0.count == line.count }) ?? true {
                runs[runs.count - 1].append(contentsOf: [line.map { glyphs[$0]!.0 }, line.map { glyphs[$0]!.1 }])
            } else if !runs[runs.count - 1].isEmpty {
                runs.append([])
            }
        }
        guard let rows = runs.max(by: { $0.count < $1.count }), let width = rows.first?.count, rows.joined().contains(true) else {
            return nil
        }
        let scale = 4
        var pbm = "P1\n\(width * scale) \(rows.count * scale)\n"
        for row in rows {
            let line = row.flatMap { Array(repeating: $0 ? "1" : "0", count: scale) }.joined(separator: " ") + "\n"
            pbm += String(repeating: line, count: scale)
        }
        let image = folder.appendingPathComponent("screen.pbm")
        try Data(pbm.utf8).write(to: image)
        let scanned = try ChildProcess.run("zbarimg", ["--nodbus", "--raw", "-q", "-Sbinary", image.path])
        guard scanned.status == 0 else { return nil }
        return scanned.stdoutText.hasSuffix("\n") ? String(scanned.stdoutText.dropLast()) : scanned.stdoutText
    }

    /// "prints (text) and shows (QR) exactly <link>#<base64 key>": on a terminal (the default
    /// there, or --format qr), with colours and without, the QR code zbarimg reads is the text
    /// `--format text` prints, byte for byte.
    @Test(.requires(.zbarimg)) func theQRCodeOnTheTerminalHoldsExactlyTheLinkAndKey() throws {
        let cli = try Self.cliWithKey("u")
        let link = Self.link + "?ref=qr&x=1"
        let text = try cli.run(["transfer", "send", "u", "--rownd", "--link", link, "--format", "text"])
        #expect(text.status == 0, "\(text.stderr)")
        let expected = text.output
        #expect(expected.hasPrefix(link + "#") && expected.count == link.count + 45)
        for (format, colour) in [("", true), ("--format qr", true), ("--format qr", false)] {
            var environment = cli.environment
            environment["TERM"] = "xterm"
            environment["NO_COLOR"] = colour ? nil : "1"
            let arguments = ["transfer", "send", "u", "--rownd", "--link", link] + format.split(separator: " ").map(String.init)
            let screen = try ChildProcess.run(CLI.executable.path, arguments, environment: environment, terminal: 200)
            let shown = screen.stdoutText
            #expect(shown.contains("\u{1B}[38;5;16;48;5;231m") == colour, "\(format) colour \(colour)")
            let scanned = try Self.scanTerminalQR(shown, in: cli.home)
            #expect(scanned == expected, "\(format) colour \(colour): zbarimg read \(scanned ?? "nothing")")
            // And the same text under it, for people who copy instead of scanning.
            #expect(shown.contains(expected + "\r\n"), "\(format) colour \(colour)")
        }
    }

    // MARK: Issue 12: Rownd's schema types through the command line

    /// A known key, so PyNaCl can open what sealkit wrote.
    static let knownKey = "+RCiJFwwS1QhC87mwjLZVopVCPERtT2rcjVAZm7MYno="

    static let typedFields = """
        "ssn": {"type": "string", "encryption": {"state": "enabled"}},
        "fav": {"type": "any", "encryption": {"state": "enabled"}},
        "nothing": {"type": "null", "encryption": {"state": "enabled"}},
        "photo": {"type": "image", "encryption": {"state": "enabled"}},
        "scan": {"type": "document", "encryption": {"state": "enabled"}},
        "plan": {"type": "string"}
        """

    /// What PyNaCl finds inside each flagged ciphertext of a profile: field -> plaintext.
    static func openWithPyNaCl(_ profile: String) throws -> [String: String] {
        let script = """
            import sys, json, base64, nacl.secret
            box = nacl.secret.SecretBox(base64.b64decode(sys.stdin.readline().strip()))
            profile = json.loads(sys.stdin.read())
            print(json.dumps({k: box.decrypt(base64.b64decode(v)).decode() for k, v in profile.items()
                              if isinstance(v, str) and k != "plan" and len(v) >= 56}))
            """
        let result = try python(script, stdin: knownKey + "\n" + profile)
        #expect(result.status == 0, "\(result.stderr)")
        guard case .object(let members) = try JSONValue.parse(result.stdout) else { return [:] }
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value.stringValue ?? "") })
    }

    /// `any` holds every JSON type, encrypted as its JSON text (PyNaCl finds exactly that text)
    /// and given back as the same value, byte for byte; `null` stays null; `image` and `document`
    /// are strings. The schema bare, under "schema" and under "app" gives the same profile.
    @Test(.requires(.pyNaCl)) func everyRowndTypeThroughTheCommandLine() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "u"], stdin: Self.knownKey).status == 0)
        var schemas: [String] = []
        for (index, wrapped) in [
            "{\(Self.typedFields)}", "{\"schema\": {\(Self.typedFields)}}",
            "{\"app\": {\"id\": \"a\", \"schema\": {\(Self.typedFields)}}}",
        ].enumerated() {
            let url = cli.home.appendingPathComponent("schema\(index).json")
            try Data(wrapped.utf8).write(to: url)
            schemas.append(url.path)
        }
        let anyValues = [
            #""text""#, #""""#, #""é ✨ \"q\"""#, "12.50", "-0", "1E+2", "12345678901234567890.10", "true", "false",
            #"{"a":[1,{"b":null}],"c":1.0}"#, #"[1,"x",null]"#, "[]", "{}",
        ]
        for value in anyValues {
            let profile = #"{"ssn":"078-05-1120","fav":\#(value),"nothing":null,"photo":"data:image/png;base64,iVBO","scan":"d.pdf","plan":"pro"}"#
            var outputs: [String] = []
            for schema in schemas {
                let sealed = try cli.run(["profile", "encrypt", "--schema", schema, "--key", "u"], stdin: profile)
                #expect(sealed.status == 0 && sealed.stderr.isEmpty, "\(value): \(sealed.stderr)")
                let parsed = try JSONValue.parse(sealed.output)
                #expect(parsed["nothing"] == .null && parsed["plan"] == "pro", "\(value)")
                let opened = try Self.openWithPyNaCl(sealed.output)
                #expect(opened["fav"] == value, "\(value): PyNaCl found \(opened["fav"] ?? "nothing")")
                #expect(opened["ssn"] == "078-05-1120" && opened["photo"] == "data:image/png;base64,iVBO" && opened["scan"] == "d.pdf")
                let back = try cli.run(["profile", "decrypt", "--schema", schema, "--key", "u", "-"], stdin: sealed.stdout)
                #expect(back.status == 0 && back.output == profile, "\(value): \(back.stderr) \(back.output)")
                outputs.append(back.output)
            }
            #expect(Set(outputs).count == 1, "\(value): the wrappers disagree")
        }
        // A null-typed field holding something else is refused, not encrypted as if it were null.
        let refused = try cli.run(["profile", "encrypt", "--schema", schemas[0], "--key", "u"], stdin: #"{"nothing":"x"}"#)
        expectCleanFailure(refused, containing: "nothing")
        #expect(refused.status == 65)
    }

    /// Under --rownd an `any` string is sealed as the string itself, as the SDKs seal any string,
    /// and every other JSON type stays in plaintext, noted by path and never by value.
    @Test(.requires(.pyNaCl)) func anyUnderRowndSealsOnlyStrings() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "u"], stdin: Self.knownKey).status == 0)
        let schema = cli.home.appendingPathComponent("schema.json")
        try Data("{\(Self.typedFields)}".utf8).write(to: schema)
        let text = try cli.run(["profile", "encrypt", "--rownd", "--schema", schema.path, "--key", "u"], stdin: #"{"fav":"blue sky"}"#)
        #expect(text.status == 0 && text.stderr.isEmpty, "\(text.stderr)")
        #expect(try Self.openWithPyNaCl(text.output)["fav"] == "blue sky")
        for value in ["812", "true", "null", #"{"secret":"kept"}"#, #"["secret"]"#] {
            let profile = #"{"fav":\#(value)}"#
            let result = try cli.run(["profile", "encrypt", "--rownd", "--schema", schema.path, "--key", "u"], stdin: profile)
            #expect(result.status == 0 && result.output == profile, "\(value): \(result.stderr)")
            #expect(value == "null" ? result.stderr.isEmpty : result.stderr.hasPrefix("sealkit: note: fav left in plaintext"), "\(value): \(result.stderr)")
            #expect(!result.stderr.contains("secret") && !result.stderr.contains("812"), "\(result.stderr)")
        }
    }

    /// The oldest form a Rownd app showed without a sign-in link, {"data":"#KEY"}, still imports.
    @Test func keysImportReadsTheWrapperWithoutALink() throws {
        let stored = try CLI()
        let expected = try stored.run(["keys", "import", "k"], stdin: Self.knownKey)
        for text in ["{\"data\":\"#\(Self.knownKey)\"}\n", "{\"data\": \"#\(Self.knownKey)\"}\r\n", "#\(Self.knownKey)\r\n"] {
            let cli = try CLI()
            let imported = try cli.run(["keys", "import", "k"], stdin: text)
            #expect(imported.status == 0 && imported.output == expected.output, "\(text.debugDescription): \(imported.stderr)")
        }
    }

    // MARK: Issue 14: '-' is stdin for audit too

    /// `jq -c ... | sealkit audit -`: stdin is read as NDJSON, findings name it `-`, it mixes
    /// with files, and empty stdin is "nothing was audited" (66), not a pass.
    @Test func auditReadsNDJSONFromStdin() throws {
        let cli = try Self.cliWithKey()
        let sealed = try cli.run(["encrypt", "--key", "ada"], stdin: "x").output
        let schema = cli.home.appendingPathComponent("schema.json")
        try Data(#"{"ssn": {"type": "string", "encryption": {"state": "enabled"}}}"#.utf8).write(to: schema)
        let input = #"{"ssn":"\#(sealed)"}"# + "\r\n\n" + #"{"ssn":"078-05-1120"}"# + "\n"
        let found = try cli.run(["audit", "--schema", schema.path, "--key", "ada", "-"], stdin: input)
        #expect(found.status == 1, "\(found.stderr)")
        #expect(found.stdout.contains("plaintext-field") && found.stdout.contains("-:3"), "\(found.stdout)")
        #expect(found.stdout.contains("1 file, 2 values, 1 blank line skipped"), "\(found.stdout)")
        #expect(!found.stdout.contains("078-05-1120"))

        let clean = try cli.run(["audit", "--schema", schema.path, "--key", "ada", "-"], stdin: #"{"ssn":"\#(sealed)"}"#)
        #expect(clean.status == 0 && clean.stdout.contains("No findings (1 file, 1 value)"), "\(clean.stderr)")

        let file = cli.home.appendingPathComponent("more.ndjson")
        try Data((#"{"ssn":"\#(sealed)"}"# + "\n").utf8).write(to: file)
        let mixed = try cli.run(["audit", "--format", "json", "-", file.path], stdin: #"{"ssn":"\#(sealed)"}"# + "\n")
        #expect(mixed.status == 1 && mixed.stdout.contains(#""duplicate-ciphertext""#), "\(mixed.stderr)")
        #expect(mixed.stdout.contains(#""file": "-""#), "\(mixed.stdout)")

        let empty = try cli.run(["audit", "-"])
        expectCleanFailure(empty, containing: "nothing was audited")
        #expect(empty.status == 66)
    }

    // MARK: Issue 11 (offline): the contract for scripts

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

    // MARK: '-' for output too

    /// `qr --output -` writes to stdout, as `-o -` does for other tools, instead of a file named "-".
    @Test func qrOutputDashIsStdout() throws {
        let cli = try CLI()
        let folder = cli.home.appendingPathComponent("cwd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let plain = try cli.run(["qr", "--format", "svg", "--", "hello"])
        #expect(plain.status == 0 && plain.stdout.contains("<svg"))
        let dash = try Self.bash(
            #"cd "$1" && "$SEALKIT" qr --format svg --output - -- hello"#.replacingOccurrences(of: "$1", with: folder.path), in: cli)
        #expect(dash.status == 0 && dash.stdoutText == plain.stdout, "\(dash.stderrText)")
        let png = try Self.bash(
            #"cd "$1" && "$SEALKIT" qr --format png --output - -- hello | head -c 8 | od -An -tx1"#
                .replacingOccurrences(of: "$1", with: folder.path), in: cli)
        #expect(png.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "89 50 4e 47 0d 0a 1a 0a", "\(png.stdoutText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "a file was written")
    }

    /// A long line arriving through a pipe, 64 KiB per read, is searched once: 20 MB of zeros on
    /// stdin took minutes when every read searched the whole partial line again.
    @Test func aLongLineThroughAPipeIsReadInLinearTime() throws {
        let cli = try CLI()
        let started = ContinuousClock.now
        let result = try cli.run(["audit", "-"], stdinBytes: [UInt8](repeating: 0, count: 20 << 20))
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 1 && result.stdout.contains("unreadable-file"), "\(result.stderr)")
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }

    // MARK: Issue 14: --passphrase-file takes pipes, for new keys too

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
            environment["KEY"] = Self.knownKey
            let made = try ChildProcess.run("/bin/bash", ["-c", command], stdin: [], environment: environment)
            #expect(made.status == 0, "\(command): \(made.stderrText)")
        }
        let listed = try cli.run(["keys", "list"])
        #expect(listed.stdout.contains("p\t") && listed.stdout.contains("q\t") && listed.stdout.contains("protected"), "\(listed.stdout)")
        for id in ["p", "q"] {
            let opened = try Self.bash(
                #""$SEALKIT" status --key \#(id) --passphrase-file <(printf '%s\n' 'correct horse battery')"#, in: cli)
            #expect(opened.status == 0, "\(id): \(opened.stderrText)")
            let locked = try cli.run(["status", "--key", id])
            #expect(locked.status != 0, "\(id) is not protected")
        }
    }
}
