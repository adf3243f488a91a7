import Foundation
import SealTestSupport
import Testing

/// Prompts at a terminal, driven through a pseudo-terminal as a person would: Ctrl-C typed at the offline
/// paste and at the backup passphrase, the paper backup's two screens, and a bad photo of the offline reply.
@Suite("Prompts at a terminal: Ctrl-C, the backup's screens, a bad photo", .timeLimit(.minutes(5)))
struct PromptTerminalCLITests {
    static let interrupt = "\u{03}"
    static let clear = "\u{1B}[2J\u{1B}[3J"

    /// `sealkit ARGS` on a new terminal from a shell, which then prints the terminal's settings and
    /// sealkit's exit status: what a person's shell finds after it. (A sealkit ended by the signal
    /// itself ends the shell too, which then prints nothing.)
    static func onATerminal(_ cli: CLI, _ arguments: [String], columns: Int = 0) throws -> ChildProcess {
        var environment = cli.environment
        environment["SEALKIT"] = CLI.executable.path
        let script = "\"$SEALKIT\" \"$@\"; status=$?; echo; stty -a | tr '\\n' ' '; echo; echo \"exit=$status\""
        return try ChildProcess("/bin/bash", ["-c", script, "bash"] + arguments, environment: environment, terminal: columns, killAfter: 120)
    }

    /// The screen's text, without the terminal's carriage returns.
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\r", with: "") }

    /// What the shell reported after sealkit: its exit status, and whether echo is on.
    static func after(_ screen: String) -> (status: String?, echo: Bool) {
        let status = screen.firstMatch(of: /exit=(\d+)/).map { String($0.output.1) }
        let settings = screen.split(separator: "\n").first { $0.contains("speed") } ?? ""
        let flags = settings.split(separator: " ").map(String.init)
        return (status, flags.contains("echo") && !flags.contains("-echo"))
    }

    /// Ctrl-C at the offline receiver's paste: one line, exit 130, the terminal as it was, nothing stored.
    @Test func interruptAtTheOfflinePaste() throws {
        let receiving = try CLI()
        let terminal = try Self.onATerminal(receiving, ["transfer", "receive", "--offline", "--format", "text"])
        #expect(terminal.wait(for: "Paste the reply", timeout: 30))
        terminal.write("sealkit-reply-v2:AAAA")
        usleep(200_000)
        terminal.write(Self.interrupt)
        let screen = Self.text(terminal.finish(timeout: 60).stdout)
        #expect(screen.contains("\nsealkit: interrupted: nothing was stored\n"), "\(screen)")
        let after = Self.after(screen)
        #expect(after.status == "130", "\(screen)")
        #expect(after.echo, "\(screen)")
        #expect(try TransferCLITests.ids(receiving).isEmpty)
    }

    /// Ctrl-C at `keys import`'s paste: the same, and no keystore made.
    @Test func interruptAtTheKeyPaste() throws {
        let cli = try CLI()
        let terminal = try Self.onATerminal(cli, ["keys", "import", "x"])
        #expect(terminal.wait(for: "Paste the key", timeout: 30))
        terminal.write("4f4a6IInDu")
        usleep(200_000)
        terminal.write(Self.interrupt)
        let screen = Self.text(terminal.finish(timeout: 60).stdout)
        #expect(screen.contains("\nsealkit: interrupted: nothing was stored\n"), "\(screen)")
        #expect(Self.after(screen).status == "130", "\(screen)")
        #expect(try cli.run(["keys", "list"]).status != 0, "a keystore was made")
    }

    /// Ctrl-C at `keys restore`'s backup passphrase, typed with echo off: echo is back on, one line,
    /// exit 130, nothing stored.
    @Test func interruptAtTheBackupPassphrase() throws {
        let owner = try CLI.withKey("u")
        let made = try owner.run(["keys", "backup", "u", "--format", "text"], environment: ["SEALKIT_PASSPHRASE": "paper pass phrase"])
        let backup = made.stdout.trimmingCharacters(in: .newlines)
        #expect(made.status == 0 && backup.hasPrefix("sealkit-backup-v1:") && !backup.contains("\n"), "\(made.stderr)")

        let other = try CLI()
        let terminal = try Self.onATerminal(other, ["keys", "restore", "--all"])
        #expect(terminal.wait(for: "Paste the backup", timeout: 30))
        terminal.write(backup + "\n")
        #expect(terminal.wait(for: "Backup passphrase: ", timeout: 30))
        terminal.write("paper pass")
        usleep(200_000)
        terminal.write(Self.interrupt)
        let screen = Self.text(terminal.finish(timeout: 60).stdout)
        #expect(screen.contains("\nsealkit: interrupted: nothing was stored\n"), "\(screen)")
        #expect(!screen.contains("paper pass"), "the passphrase was echoed")
        let after = Self.after(screen)
        #expect(after.status == "130", "\(screen)")
        #expect(after.echo, "echo is left off: \(screen)")
        #expect(try other.run(["keys", "list"]).status != 0, "a keystore was made")
    }

    /// At a terminal `keys backup` shows the backup alone until Enter, clears it, then shows the made
    /// passphrase alone until Enter, and clears that: no one screen (or photo of it) holds both. The two
    /// restore the keys.
    @Test func theBackupAndItsPassphraseAreNeverOnOneScreen() throws {
        let owner = try CLI.withKey("u")
        let terminal = try ChildProcess(CLI.executable.path, ["keys", "backup", "u"], environment: owner.environment, terminal: 200, killAfter: 120)
        #expect(terminal.wait(for: "press Enter to clear it and show its passphrase", timeout: 60))
        let first = Self.text(terminal.outputSoFar)
        #expect(first.contains("sealkit-backup-v1:"), "\(first)")
        #expect(!first.contains("Backup passphrase"), "the passphrase is on the backup's screen: \(first)")
        // The QR is drawn (ANSI half blocks), then the text it holds.
        #expect(first.contains("\u{1B}[?1049h"), "not on the alternate screen: \(first)")
        usleep(300_000)
        #expect(!Self.text(terminal.outputSoFar).contains("Backup passphrase"), "shown without waiting for Enter")

        terminal.write("\n")
        #expect(terminal.wait(for: "Once the passphrase is written down, press Enter", timeout: 30))
        let second = Self.text(terminal.outputSoFar)
        terminal.write("\n")
        let result = terminal.finish(timeout: 60)
        #expect(result.status == 0, "\(Self.text(result.stdout))")
        let screen = Self.text(result.stdout)

        let backupLine = try #require(screen.split(separator: "\n").first { $0.hasPrefix("sealkit-backup-v1:") }).trimmingCharacters(in: .whitespaces)
        let heading = try #require(screen.range(of: "Backup passphrase"))
        let backupShown = try #require(screen.range(of: backupLine, options: .backwards))
        // Between the backup and the passphrase, the screen and its scrollback were cleared.
        #expect(screen[backupShown.upperBound..<heading.lowerBound].contains(Self.clear), "\(screen)")
        #expect(!screen[heading.upperBound...].contains("sealkit-backup-v1:"), "the backup is shown again after its passphrase")
        let secondHeading = try #require(second.range(of: "Backup passphrase"))
        let passphrase = try #require(second[secondHeading.upperBound...].split(separator: "\n").first { $0.hasPrefix("    ") })
            .trimmingCharacters(in: .whitespaces)
        #expect(passphrase.split(separator: " ").count == 6, "\(passphrase)")
        // After it, cleared and the alternate screen left: the shell's screen holds neither.
        let rest = screen[try #require(screen.range(of: passphrase)).upperBound...]
        #expect(rest.contains(Self.clear + "\u{1B}[H\u{1B}[?1049l"), "\(rest)")
        let left = try #require(screen.range(of: "\u{1B}[?1049l", options: .backwards))
        #expect(!screen[left.upperBound...].contains(passphrase))

        let other = try CLI()
        let restored = try other.run(["keys", "restore", "--all"], stdin: backupLine + "\n", environment: ["SEALKIT_PASSPHRASE": passphrase])
        #expect(restored.status == 0 && restored.stdout.hasPrefix("u\t"), "\(restored.stderr)")

        // Scripts keep the contract: the backup alone on stdout, the passphrase last on stderr.
        let scripted = try owner.run(["keys", "backup", "u"])
        #expect(scripted.status == 0 && scripted.stdout.hasPrefix("sealkit-backup-v1:"), "\(scripted.stderr)")
        #expect(scripted.stderr.contains("Backup passphrase (made for this backup"), "\(scripted.stderr)")
        #expect(!scripted.stderr.contains(Self.clear))
    }

    /// Ctrl-C at the backup's screen, or at a share backup's share: the screen is cleared and left, one
    /// line, exit 130.
    @Test func interruptAtTheBackupsScreen() throws {
        let owner = try CLI.withKey("u")
        let terminal = try ChildProcess(CLI.executable.path, ["keys", "backup", "u"], environment: owner.environment, terminal: 200, killAfter: 120)
        #expect(terminal.wait(for: "press Enter to clear it and show its passphrase", timeout: 60))
        terminal.write(Self.interrupt)
        let result = terminal.finish(timeout: 60)
        let screen = Self.text(result.stdout)
        #expect(result.status == 130, "\(screen)")
        #expect(screen.hasSuffix(Self.clear + "\u{1B}[H\u{1B}[?1049lsealkit: interrupted\n"), "\(screen)")
        #expect(!screen.contains("Backup passphrase"))

        // The same at a share backup's share: it used to stay on the screen, the terminal left on the alternate screen.
        var environment = owner.environment
        environment["SEALKIT_PASSPHRASE"] = "share pass phrase"
        let shares = try ChildProcess(
            CLI.executable.path, ["keys", "backup", "u", "--shares", "2", "--threshold", "2"], environment: environment, terminal: 200,
            killAfter: 120)
        #expect(shares.wait(for: "Press Enter to show share 1", timeout: 60))
        shares.write("\n")
        #expect(shares.wait(for: "Hand this share to its keeper", timeout: 30))
        shares.write(Self.interrupt)
        let interrupted = shares.finish(timeout: 60)
        let sharesScreen = Self.text(interrupted.stdout)
        #expect(interrupted.status == 130, "\(sharesScreen)")
        #expect(sharesScreen.hasSuffix(Self.clear + "\u{1B}[H\u{1B}[?1049lsealkit: interrupted\n"), "\(sharesScreen)")
    }

    /// At a terminal a photo of the reply that cannot be read, or holds another code, is said and
    /// another asked for, as a bad paste is; the good one then stores the keys.
    @Test func aBadPhotoOfTheReplyIsAskedAgain() throws {
        let sender = try CLI.withKey("u"), receiving = try CLI()
        let folder = receiving.home.path
        let photo = folder + "/reply.png"
        let terminal = try ChildProcess(
            CLI.executable.path, ["transfer", "receive", "--offline", "--format", "text", "--qr", photo], environment: receiving.environment,
            terminal: 0, killAfter: 120)
        #expect(terminal.wait(for: "Save the photo of the reply as", timeout: 30))
        let lines = Self.text(terminal.outputSoFar).split(separator: "\n").map(String.init)
        let offer = try #require(lines.first { $0.hasPrefix("sealkit-offer-v2:") })
        let code = try #require(lines.drop { $0 != offer }.dropFirst().first).trimmingCharacters(in: .whitespaces)

        // A photo of another code.
        #expect(try sender.run(["qr", "--output", photo], stdin: "https://example.com/menu").status == 0)
        terminal.write("\n")
        #expect(terminal.wait(for: "Save another photo of the reply", timeout: 30), "\(Self.text(terminal.outputSoFar))")
        // A file that is no image, by the path typed (quoted, as a file dropped on the terminal is).
        let notAnImage = folder + "/notes.png"
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: notAnImage))
        var mark = terminal.outputSoFar.count
        terminal.write("'\(notAnImage)'\n")
        #expect(terminal.wait(for: "Save another photo of the reply", from: mark, timeout: 30), "\(Self.text(terminal.outputSoFar))")
        // The reply's photo, by the path typed.
        let sent = try sender.run(["transfer", "send", "u", "--to", offer, "--code", code, "--format", "text"])
        #expect(sent.status == 0, "\(sent.stderr)")
        let good = folder + "/good.png"
        #expect(try sender.run(["qr", "--output", good], stdin: sent.stdout.trimmingCharacters(in: .newlines)).status == 0)
        mark = terminal.outputSoFar.count
        terminal.write(good + "\n")
        #expect(terminal.wait(for: "Store these keys? [y/N]", from: mark, timeout: 60), "\(Self.text(terminal.outputSoFar))")
        terminal.write("y\n")
        let result = terminal.finish(timeout: 60)
        let screen = Self.text(result.stdout)
        #expect(result.status == 0, "\(screen)")
        #expect(screen.contains("\n\(photo): not a SealKit transfer reply"), "\(screen)")
        #expect(screen.contains("\n\(notAnImage): not an image"), "\(screen)")
        #expect(!screen.contains("example.com"), "the other code's contents were shown")
        #expect(screen.contains("u\t") && screen.contains("\timported"), "\(screen)")
        #expect(try TransferCLITests.ids(receiving) == ["u"])

        // Not at a terminal, a bad photo still ends the run: one line, nothing stored.
        let scripted = try CLI()
        let scriptedPhoto = scripted.home.path + "/reply.png"
        #expect(try scripted.run(["qr", "--output", scriptedPhoto], stdin: "https://example.com/menu").status == 0)
        let ended = try scripted.run(["transfer", "receive", "--offline", "--format", "text", "--yes", "--qr", scriptedPhoto])
        #expect(ended.status == 65, "\(ended.stderr)")
        #expect(ended.stderr.hasPrefix("sealkit: ") && ended.stderr.split(separator: "\n").count == 1, "\(ended.stderr)")
        #expect(ended.stdout.split(separator: "\n").count == 2, "offer and code only: \(ended.stdout)")
        #expect(try TransferCLITests.ids(scripted).isEmpty)
    }

    // MARK: Other signals at a prompt: Ctrl-Z and fg, Ctrl-\, SIGTERM and SIGHUP

    static let stop = "\u{1A}"
    static let quit = "\u{1C}"

    /// `sealkit ARGS` as a job of a shell with job control, as at a person's terminal: stopped by Ctrl-Z,
    /// the shell prints the terminal's settings (`stopped: ...`), turns echo on as an interactive shell
    /// does for itself, and brings the job back with `fg`. After it, the settings and the exit status.
    /// With `readingLeftovers`, the shell then reads one line from the terminal and shows it (`left=[...]`): what
    /// was typed at the prompt and not read would reach a person's shell, as a command. The test ends that line.
    static func asAJob(_ cli: CLI, _ arguments: [String], columns: Int = 0, readingLeftovers: Bool = false) throws -> ChildProcess {
        var environment = cli.environment
        environment["SEALKIT"] = CLI.executable.path
        let leftovers = readingLeftovers ? "IFS= read -r -t 30 left; echo \"left=[$left]\"" : ""
        let script = """
            set -m
            "$SEALKIT" "$@"; status=$?
            if [ "$status" = 148 ]; then echo; echo "stopped: $(stty -a | tr '\\n' ' ')"; stty echo; echo resuming; fg; status=$?; fi
            \(leftovers)
            echo; stty -a | tr '\\n' ' '; echo; echo "exit=$status"
            """
        return try ChildProcess("/bin/bash", ["-c", script, "bash"] + arguments, environment: environment, terminal: columns, killAfter: 120)
    }

    /// Whether the settings on the line starting `prefix` have echo on.
    static func echo(in screen: String, after prefix: String) -> Bool? {
        guard let line = screen.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        let flags = line.split(separator: " ").map(String.init)
        return flags.contains("echo") && !flags.contains("-echo")
    }

    /// A backup made with the passphrase `paper pass phrase`, and a keystore-less CLI at its passphrase prompt.
    static func atTheBackupPassphrase(readingLeftovers: Bool = false) throws -> (CLI, ChildProcess) {
        let owner = try CLI.withKey("u")
        let made = try owner.run(["keys", "backup", "u", "--format", "text"], environment: ["SEALKIT_PASSPHRASE": "paper pass phrase"])
        let backup = made.stdout.trimmingCharacters(in: .newlines)
        try #require(made.status == 0 && backup.hasPrefix("sealkit-backup-v1:"), "\(made.stderr)")
        let other = try CLI()
        let terminal = try asAJob(other, ["keys", "restore", "--all"], readingLeftovers: readingLeftovers)
        try #require(terminal.wait(for: "Paste the backup", timeout: 30))
        terminal.write(backup + "\n")
        try #require(terminal.wait(for: "Backup passphrase: ", timeout: 30))
        return (other, terminal)
    }

    /// Ctrl-Z halfway through the backup passphrase: stopped, the shell has echo on; after `fg` the
    /// passphrase is typed with echo off again (the shell had turned it on), and the prompt, not ended by
    /// the stop, takes it and restores the keys. (The terminal drops what was typed before Ctrl-Z.)
    @Test func stopAndContinueAtThePassphrase() throws {
        let (other, terminal) = try Self.atTheBackupPassphrase()
        terminal.write("paper ")
        usleep(200_000)
        terminal.write(Self.stop)
        // `fg` names the job, hands it the terminal and continues it, which puts echo off again.
        #expect(terminal.wait(for: "resuming\r\n\"$SEALKIT\" \"$@\"\r\n", timeout: 30), "\(Self.text(terminal.outputSoFar))")
        usleep(1_000_000)
        terminal.write("paper pass phrase\n")
        let screen = Self.text(terminal.finish(timeout: 60).stdout)
        #expect(Self.echo(in: screen, after: "stopped: ") == true, "echo left off while stopped: \(screen)")
        #expect(!screen.contains("pass phrase") && !screen.contains("paper"), "the passphrase was echoed: \(screen)")
        let after = Self.after(screen.components(separatedBy: "resuming").last ?? "")
        #expect(after.status == "0", "\(screen)")
        #expect(after.echo, "\(screen)")
        #expect(try other.run(["keys", "list"]).stdout.hasPrefix("u\t"), "the prompt did not take the passphrase after fg")
    }

    /// Ctrl-\ at the passphrase and at the backup's screen is Ctrl-C: one line, exit 130, echo on, the
    /// screen cleared and left, nothing stored; never Swift's crash reporter.
    @Test func quitAtAPromptIsAnInterrupt() throws {
        let (other, terminal) = try Self.atTheBackupPassphrase()
        terminal.write("paper pass")
        usleep(200_000)
        terminal.write(Self.quit)
        let screen = Self.text(terminal.finish(timeout: 30).stdout)
        #expect(screen.contains("\nsealkit: interrupted: nothing was stored\n"), "\(screen)")
        #expect(!screen.contains("crashed") && !screen.contains("paper pass"), "\(screen)")
        let after = Self.after(screen)
        #expect(after.status == "130", "\(screen)")
        #expect(after.echo, "\(screen)")
        #expect(try other.run(["keys", "list"]).status != 0, "a keystore was made")

        let owner = try CLI.withKey("u")
        let backup = try ChildProcess(CLI.executable.path, ["keys", "backup", "u"], environment: owner.environment, terminal: 200, killAfter: 60)
        #expect(backup.wait(for: "press Enter to clear it and show its passphrase", timeout: 60))
        backup.write(Self.quit)
        let result = backup.finish(timeout: 30)
        let backupScreen = Self.text(result.stdout)
        #expect(result.status == 130, "\(backupScreen)")
        #expect(backupScreen.hasSuffix(Self.clear + "\u{1B}[H\u{1B}[?1049lsealkit: interrupted\n"), "\(backupScreen)")
    }

    /// Ctrl-Z at the backup's screen ends it as Ctrl-C does: the backup is never left on the terminal
    /// while the shell has it.
    @Test func stopAtTheBackupsScreenClearsIt() throws {
        let owner = try CLI.withKey("u")
        let terminal = try Self.asAJob(owner, ["keys", "backup", "u"], columns: 200)
        #expect(terminal.wait(for: "press Enter to clear it and show its passphrase", timeout: 60))
        terminal.write(Self.stop)
        let screen = Self.text(terminal.finish(timeout: 30).stdout)
        #expect(screen.contains(Self.clear + "\u{1B}[H\u{1B}[?1049lsealkit: interrupted\n"), "\(screen)")
        #expect(!screen.contains("stopped: "), "the job stopped with the backup on the screen: \(screen)")
        #expect(Self.after(screen).status == "130", "\(screen)")
    }

    /// SIGTERM or SIGHUP at the backup's screen: cleared and left, one line, ended by the signal. SIGTERM at
    /// the passphrase: echo back on, the shell's 143, nothing stored.
    @Test func terminatedAtAPromptGivesTheTerminalBack() throws {
        for signal in [SIGTERM, SIGHUP] {
            let owner = try CLI.withKey("u")
            let terminal = try ChildProcess(CLI.executable.path, ["keys", "backup", "u"], environment: owner.environment, terminal: 200, killAfter: 60)
            #expect(terminal.wait(for: "press Enter to clear it and show its passphrase", timeout: 60))
            terminal.send(signal: signal)
            let result = terminal.finish(timeout: 30)
            let screen = Self.text(result.stdout)
            #expect(result.signal == signal, "\(signal): \(result.status)")
            #expect(screen.hasSuffix(Self.clear + "\u{1B}[H\u{1B}[?1049lsealkit: terminated\n"), "\(signal): \(screen)")
        }

        let (other, terminal) = try Self.atTheBackupPassphrase(readingLeftovers: true)
        terminal.write("paper pass")
        usleep(200_000)
        // The shell's job: its only child.
        let children = try String(contentsOfFile: "/proc/\(terminal.pid)/task/\(terminal.pid)/children", encoding: .utf8)
        let job = try #require(children.split(separator: " ").first.flatMap { pid_t($0) })
        kill(job, SIGTERM)
        // The half-typed passphrase was dropped with the prompt: the shell's line holds only what comes after.
        #expect(terminal.wait(for: "sealkit: terminated", timeout: 30))
        usleep(200_000)
        terminal.write("\n")
        let screen = Self.text(terminal.finish(timeout: 30).stdout)
        #expect(screen.contains("left=[]") && !screen.contains("paper pass"), "the passphrase reached the shell: \(screen)")
        #expect(screen.contains("\nsealkit: terminated\n"), "\(screen)")
        let after = Self.after(screen)
        #expect(after.status == "143", "\(screen)")
        #expect(after.echo, "echo is left off: \(screen)")
        #expect(try other.run(["keys", "list"]).status != 0, "a keystore was made")
    }
}
