import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C at a prompt outside a network transfer (a passphrase, the offline reply's paste, a backup's
/// screens): as the network transfer's `InterruptHandler` does, the terminal is given back as it was
/// (echo on, libedit's mode left, the alternate screen left), one line `sealkit: interrupted...` goes
/// to stderr, and the process exits 130. The default action would end it silently, echo off or on the
/// alternate screen.
///
/// A signal handler of its own rather than a dispatch source: a command that has started no thread
/// (`keys backup` waiting for Enter) has no dispatch thread to run a source's handler, so the
/// interrupt would be lost. The handler does only what a signal handler may: it reads atomics and
/// memory set up before it was installed, and calls `tcsetattr`, `write` and `_exit`.
///
/// The handler is installed while a guard runs and the previous action put back after, so a command
/// that writes after its prompts is not cut short by this handler, and a network transfer's own
/// handler (which takes SIGINT with a dispatch source) is left alone.
enum PromptInterrupt {
    /// What the line says was not done.
    enum Outcome: Int {
        /// `sealkit: interrupted`.
        case unsaid = 0
        /// `sealkit: interrupted: nothing was stored`.
        case nothingStored = 1
    }

    /// Guards entered and not yet left, with their outcomes, innermost last (the main thread's alone).
    nonisolated(unsafe) private static var outcomes: [Outcome] = []
    /// The action SIGINT had before the outermost guard.
    nonisolated(unsafe) private static var previous = sigaction()
    /// What the handler says: the innermost guard's outcome that says something.
    private static let outcome = Atomic<Int>(0)
    /// Whether the alternate screen is shown (a backup's screens), to leave on an interrupt.
    private static let alternateScreen = Atomic<Bool>(false)
    /// Whether stderr is a terminal, where the line starts on a line of its own (read before the handler runs).
    private static let stderrIsTerminal = Atomic<Bool>(false)
    /// Set while a network transfer's `InterruptHandler` owns Ctrl-C: it releases the code first.
    static let transferOwnsInterrupts = Atomic<Bool>(false)

    /// Runs `body` (which prompts) with Ctrl-C ending the process as described above.
    /// - Parameter outcome: what the line says was not done.
    static func guarding<T>(_ outcome: Outcome = .unsaid, _ body: () throws -> T) rethrows -> T {
        enter(outcome)
        defer { leave() }
        return try body()
    }

    /// Shows the alternate screen, cleared with its scrollback, for `body`, and clears and leaves it
    /// after (an interrupt leaves it too): what was on it cannot be scrolled back to.
    static func onAlternateScreen<T>(_ body: () throws -> T) rethrows -> T {
        StandardError.write("\u{1B}[?1049h" + clearScreen)
        alternateScreen.store(true, ordering: .releasing)
        defer {
            alternateScreen.store(false, ordering: .releasing)
            StandardError.write(clearScreen + "\u{1B}[?1049l")
        }
        return try body()
    }

    /// Clears the screen and its scrollback (ESC[3J) and homes the cursor.
    static let clearScreen = "\u{1B}[2J\u{1B}[3J\u{1B}[H"

    private static func enter(_ outcome: Outcome) {
        outcomes.append(outcome)
        self.outcome.store(current, ordering: .releasing)
        guard outcomes.count == 1, !transferOwnsInterrupts.load(ordering: .acquiring) else { return }
        // Everything the handler reads exists before it can run.
        stderrIsTerminal.store(isatty(2) == 1, ordering: .releasing)
        _ = (lineEnd, leaveScreen, interrupted, nothingStored)
        _ = (LineEditor.saved, TerminalPrompt.saved)
        _ = alternateScreen.load(ordering: .acquiring)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in PromptInterrupt.interrupt() }
        sigfillset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, &previous)
    }

    private static func leave() {
        outcomes.removeLast()
        outcome.store(current, ordering: .releasing)
        guard outcomes.isEmpty, !transferOwnsInterrupts.load(ordering: .acquiring) else { return }
        sigaction(SIGINT, &previous, nil)
    }

    private static var current: Int { (outcomes.last { $0 != .unsaid } ?? .unsaid).rawValue }

    private static let lineEnd: StaticString = "\n"
    private static let leaveScreen: StaticString = "\u{1B}[2J\u{1B}[3J\u{1B}[H\u{1B}[?1049l"
    private static let interrupted: StaticString = "sealkit: interrupted"
    private static let nothingStored: StaticString = ": nothing was stored"

    private static func say(_ text: StaticString) { _ = write(2, text.utf8Start, text.utf8CodeUnitCount) }

    /// The signal handler.
    private static func interrupt() {
        // A network transfer took SIGINT over after this handler was installed: it is its business.
        guard !transferOwnsInterrupts.load(ordering: .acquiring) else { return }
        let atPrompt = restoreTerminal()
        if alternateScreen.load(ordering: .acquiring) {
            say(leaveScreen)
        } else if atPrompt || stderrIsTerminal.load(ordering: .acquiring) {
            say(lineEnd)
        }
        say(interrupted)
        if outcome.load(ordering: .acquiring) == Outcome.nothingStored.rawValue { say(nothingStored) }
        say(lineEnd)
        _exit(ExitStatus.interrupted.rawValue)
    }

    /// Gives the terminal back as it was before the prompt being answered, if one is.
    /// - Returns: whether a prompt was being answered.
    static func restoreTerminal() -> Bool {
        let editing = LineEditor.saved.restore()
        let silent = TerminalPrompt.saved.restore()
        return editing || silent
    }
}

/// A terminal's settings from before a prompt changed them, for an interrupt to give back: kept in
/// memory allocated up front and published with an atomic, since a signal handler reads them.
final class SavedTerminal: @unchecked Sendable {
    private let descriptor = Atomic<Int32>(-1)
    private let settings = UnsafeMutablePointer<termios>.allocate(capacity: 1)

    /// Keeps `settings` of the terminal `fd` until `clear`.
    func save(_ fd: Int32, _ settings: termios) {
        self.settings.pointee = settings
        descriptor.store(fd, ordering: .releasing)
    }

    /// The prompt is over: nothing to give back.
    func clear() { descriptor.store(-1, ordering: .releasing) }

    /// Puts the saved settings back, if any.
    /// - Returns: whether there were some.
    func restore() -> Bool {
        let fd = descriptor.load(ordering: .acquiring)
        guard fd >= 0 else { return false }
        tcsetattr(fd, TCSANOW, settings)
        return true
    }
}
