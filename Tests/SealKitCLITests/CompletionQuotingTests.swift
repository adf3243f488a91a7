import Foundation
import SealTestSupport
import Testing

/// Key ids through each real shell's completion: a peer can send keys under any
/// id a Rownd app uses, so an id is text someone else chose. Each shell runs interactively on a
/// terminal with the completion script `sealkit --generate-completion-script` writes (the one
/// Scripts/install and the .deb install); for each hostile id, alone in its keystore, the test types
/// `sealkit status --key ` and Tab, then runs the line. Nothing may run (no PWNED file), and the
/// inserted word must be one word naming the id: `status` finds the id's key and prints its fingerprint.
@Suite("shell completion of hostile key ids", .requires(.shells))
struct CompletionQuotingTests {
    /// Ids with every kind of text a shell treats specially.
    static let hostileIDs = [
        "$(cd;touch PWNED;echo alice)", "`cd;touch PWNED`", "x>PWNED", "a;touch PWNED", "it's", "say \"hi\"",
        "two words", "*", "?", "~root", "$HOME", "a$((1+1))", "{x,y}", "a:b", ":colon", "back\\slash", "tab&pipe|", "bang!x",
        "=ls", "#x", "!!",
    ]

    struct Shell: Sendable {
        let name: String
        let arguments: [String]
        /// Ids this shell's completion leaves out: it would expand or change them however they were
        /// written (`Completions.swift` says why). Tab must insert nothing for them, and run nothing.
        let leavesOut: @Sendable (_ id: String) -> Bool
        /// Lines that load the completion script from `folder`.
        let setup: @Sendable (_ folder: String) -> [String]
        /// A command line that prints `marker` and then the last command's exit status plus 1000.
        let status: @Sendable (_ marker: String) -> String
    }

    static let shells = [
        Shell(
            name: "bash", arguments: ["--norc", "--noprofile", "-i"],
            leavesOut: { $0.hasPrefix("~") || $0.contains("$") || $0.contains("`") },
            setup: { ["PS1='$ '", "source \($0)/sealkit.bash"] },
            status: { "echo \($0)$((1000+$?))" }),
        Shell(
            name: "zsh", arguments: ["-f", "-i"],
            leavesOut: { $0.contains("!") },
            setup: { ["PS1='$ '", "fpath=(\($0) $fpath)", "autoload -Uz compinit", "compinit -u -D"] },
            status: { "echo \($0)$((1000+$?))" }),
        Shell(
            name: "fish", arguments: ["--no-config", "-i"],
            leavesOut: { $0.hasPrefix("~") },
            setup: { ["function fish_prompt; echo '$ '; end", "source \($0)/sealkit.fish"] },
            status: { "echo \($0)(math 1000 + $status)" }),
    ]

    @Test(arguments: ["bash", "zsh", "fish"])
    func hostileIDsCompleteToThemselvesAndRunNothing(shellName: String) throws {
        let shell = try #require(Self.shells.first { $0.name == shellName })
        let cli = try CLI()
        let root = cli.home
        let home = root.appendingPathComponent("home"), work = root.appendingPathComponent("work")
        let scripts = root.appendingPathComponent("completions")
        for folder in [home, work, scripts] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        // A file a glob would expand to.
        try Data().write(to: work.appendingPathComponent("decoy"))
        try Data().write(to: work.appendingPathComponent("q"))
        for (shell, file) in [("bash", "sealkit.bash"), ("zsh", "_sealkit"), ("fish", "sealkit.fish")] {
            let script = try cli.run(["--generate-completion-script", shell])
            try #require(script.status == 0)
            try Data(script.stdout.utf8).write(to: scripts.appendingPathComponent(file))
        }
        // One keystore per id, so Tab completes it alone; the fingerprint says which key the line found.
        var fingerprints: [String] = []
        for (index, id) in Self.hostileIDs.enumerated() {
            let made = try cli.run(
                ["keys", "generate", id], environment: ["SEALKIT_HOME": root.appendingPathComponent("keys\(index)").path])
            try #require(made.status == 0, "\(id): \(made.stderr)")
            fingerprints.append(try #require(made.output.split(separator: "\t").last.map(String.init)))
            let all = try cli.run(["keys", "generate", id], environment: ["SEALKIT_HOME": root.appendingPathComponent("all").path])
            try #require(all.status == 0)
        }
        try #require(try cli.run(["keys", "generate", "zz-listed"], environment: ["SEALKIT_HOME": root.appendingPathComponent("all").path]).status == 0)

        var environment = cli.environment
        environment["HOME"] = home.path
        environment["PATH"] = CLI.executable.deletingLastPathComponent().path + ":/usr/bin:/bin"
        environment["TERM"] = "xterm"
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        environment["XDG_DATA_HOME"] = home.appendingPathComponent(".local/share").path
        for name in ["HISTFILE", "ENV", "BASH_ENV", "ZDOTDIR", "PROMPT_COMMAND", "SEALKIT_KEYSTORE"] { environment.removeValue(forKey: name) }
        let session = try ChildProcess(
            "/usr/bin/" + shell.name, shell.arguments, environment: environment, workingDirectory: work.path,
            terminal: 4000, killAfter: 120)
        defer { session.kill() }
        var step = 0
        /// Types `line`, then the status line, and waits for the status; returns it (nil: never came).
        func run(_ line: String) -> Int? {
            step += 1
            let marker = "STEP\(step)-"
            let start = session.outputSoFar.count
            session.write(line + "\r")
            session.write(shell.status(marker) + "\r")
            // The typed line shows `STEP1-$((1000+$?))`; only the shell's echo shows the digits.
            let pattern = Array(marker.utf8)
            var found: Int?
            _ = session.wait(from: start, timeout: 30) { shown in
                var rest = shown[...]
                while let range = rest.firstRange(of: pattern) {
                    let digits = rest[range.upperBound...].prefix(4)
                    if digits.count == 4, digits.allSatisfy({ (0x30...0x39).contains($0) }) {
                        found = Int(String(decoding: digits, as: UTF8.self))! - 1000
                        return true
                    }
                    rest = rest[range.upperBound...]
                }
                return false
            }
            return found
        }
        for line in shell.setup(scripts.path) { #expect(run(line) == 0, "\(shell.name): \(line)") }

        for (index, id) in Self.hostileIDs.enumerated() {
            #expect(run("export SEALKIT_HOME=\(root.appendingPathComponent("keys\(index)").path)") == 0)
            let start = session.outputSoFar.count
            // Tab completes the only id; the completion runs before the shell reads the Enter after it.
            let status = run("sealkit status --key \t")
            let shown = String(decoding: session.outputSoFar[start...], as: UTF8.self)
            if shell.leavesOut(id) {
                // Nothing inserted: `--key` without a value is a usage error.
                #expect(status == 64, "\(shell.name): \(id) should not complete: \(shown.suffix(600).debugDescription)")
            } else {
                #expect(status == 0, "\(shell.name): \(id) did not complete to itself: \(shown.suffix(600).debugDescription)")
                #expect(shown.contains("key \(fingerprints[index])"), "\(shell.name): \(id): \(shown.suffix(600).debugDescription)")
            }
            for folder in [home, work, root] {
                #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("PWNED").path), "\(shell.name): \(id) ran a command")
            }
        }

        // Every id in one keystore, listed by a second Tab: the listing runs nothing either.
        #expect(run("export SEALKIT_HOME=\(root.appendingPathComponent("all").path)") == 0)
        let start = session.outputSoFar.count
        session.write("sealkit status --key \t\t")
        #expect(session.wait(for: "zz-listed", from: start, timeout: 30), "\(shell.name) listed no ids")
        session.write("\u{03}")
        _ = run("true")
        for folder in [home, work, root] {
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("PWNED").path), "\(shell.name): the listing ran a command")
        }
        session.write("exit\r")
    }
}
