#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// Asks for a passphrase on the controlling terminal with echo off.
enum TerminalPrompt {
    /// The terminal of the passphrase being typed and its settings from before echo went off, to give
    /// back when an interrupt ends the process at the prompt.
    static let saved = SavedTerminal()

    /// Ctrl-C at the prompt gives the terminal back with echo on, says so, and exits 130 (`PromptInterrupt`).
    ///
    /// - Returns: nil when there is no terminal to ask on.
    static func passphrase(_ prompt: String) throws -> Passphrase? {
        try PromptInterrupt.guarding { try askSilently(prompt) }
    }

    private static func askSilently(_ prompt: String) throws -> Passphrase? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var original = termios()
        guard tcgetattr(fd, &original) == 0 else { return nil }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        saved.save(fd, original, prompting: silent)
        // Echo goes off before the prompt shows, so an answer typed (or pasted) the moment
        // the prompt appears is neither echoed nor flushed away by TCSAFLUSH.
        tcsetattr(fd, TCSAFLUSH, &silent)
        _ = prompt.withCString { Glibc.write(fd, $0, strlen($0)) }
        defer {
            saved.clear()
            tcsetattr(fd, TCSAFLUSH, &original)
            _ = Glibc.write(fd, "\n", 1)
        }
        // Room reserved up front, so no reallocation leaves an unwiped copy of what was typed behind.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(KeystoreOptions.passphraseFileLimit)
        defer { wipe(&bytes) }
        var byte: UInt8 = 0
        var tooLong = false
        while true {
            let count = Glibc.read(fd, &byte, 1)
            // A stop and `fg` (or any handled signal) is not the end of the passphrase.
            if count < 0 && errno == EINTR { continue }
            guard count == 1, byte != UInt8(ascii: "\n") else { break }
            if bytes.count < KeystoreOptions.passphraseFileLimit { bytes.append(byte) } else { tooLong = true }
        }
        if tooLong {
            throw CLIFailure("the passphrase is longer than \(KeystoreOptions.passphraseFileLimit) bytes", status: .usage)
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return try bytes.withUnsafeBytes { try Passphrase(utf8: $0) }
    }

    /// Writes `question` (ending in `[y/N] `) to stderr and reads the answer's line from `reader`:
    /// true for y or yes, in any case; anything else, end of input included, is no.
    static func confirm(_ question: String, reading reader: LineReader = LineReader(fd: 0)) throws -> Bool {
        StandardError.write(question)
        var answer = ""
        _ = try reader.nextLine { answer = String(decoding: $0, as: UTF8.self) }
        return isYes(answer)
    }

    /// Whether an answer to a [y/N] question is yes.
    static func isYes(_ answer: String) -> Bool { ["y", "yes"].contains(answer.trimmingBlanks().lowercased()) }

    /// Waits for Enter on the controlling terminal; what was typed is dropped. Throws `terminalGone`
    /// when there is no terminal or its input ends.
    static func line() throws {
        let fd = open("/dev/tty", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw terminalGone }
        defer { close(fd) }
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            // End of input or a terminal that went away: a caller looping on Enter must stop, not spin.
            guard count == 1 else { throw terminalGone }
            if byte == UInt8(ascii: "\n") { return }
        }
    }

    /// What a prompt that waits for Enter throws when the terminal closes under it.
    static let terminalGone = CLIFailure("the terminal closed while waiting for Enter", status: .ioError)

    /// Writes one line to the controlling terminal, if there is one (a retry hint).
    static func say(_ line: String) {
        let fd = open("/dev/tty", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = (line + "\n").withCString { Glibc.write(fd, $0, strlen($0)) }
    }

    /// Asks a yes/no question on stderr when stdin is a terminal, reading the answer from it.
    /// - Returns: nil when stdin is not a terminal (scripts are not asked), else whether
    ///   the answer was yes; anything but `y` or `yes` is no.
    static func confirm(_ question: String) -> Bool? {
        guard isatty(0) == 1 else { return nil }
        StandardError.write(question + " [y/N] ")
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while answer.count < 64, Glibc.read(0, &byte, 1) == 1, byte != UInt8(ascii: "\n") { answer.append(byte) }
        let text = String(decoding: answer, as: UTF8.self).trimmingBlanks().lowercased()
        return text == "y" || text == "yes"
    }
}
