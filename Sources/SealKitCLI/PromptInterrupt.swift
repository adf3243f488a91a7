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
/// Ctrl-\\ (SIGQUIT) is Ctrl-C there too: its default would bring up Swift's crash reporter, which
/// prints memory while a secret is in it. SIGTERM and SIGHUP give the terminal back the same way, say
/// `sealkit: terminated`, and then end the process with the signal (the shell says 143 or 129).
///
/// Ctrl-Z (SIGTSTP, and SIGTTIN or SIGTTOU for a prompt in the background) gives the terminal back
/// before the process stops, as OpenSSH's `readpassphrase` does: stopped, the shell is not left with
/// echo off. On SIGCONT the prompt's mode (echo off) is put back, since the shell turned echo on while
/// it was stopped, so the rest of a passphrase typed after `fg` is not shown. On a backup's screens
/// Ctrl-Z is Ctrl-C: the screen is cleared and left, and the process ends, rather than leave a backup
/// or its passphrase on the terminal while the shell has it, or redraw a secret after `fg`.
///
/// The handlers are installed while a guard runs and the previous actions put back after, so a command
/// that writes after its prompts is not cut short by them, and a network transfer's own handler (which
/// takes SIGINT with a dispatch source) is left alone.
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
    /// The signals the guard takes, and the actions they had before the outermost guard.
    private static let signals: [Int32] = [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT]
    nonisolated(unsafe) private static let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: signals.count)
    /// The action the stop signals get back once the process is continued (the handler's own memory).
    nonisolated(unsafe) private static let stopAction = UnsafeMutablePointer<sigaction>.allocate(capacity: 1)
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
        _ = (lineEnd, leaveScreen, interrupted, nothingStored, terminated)
        _ = (LineEditor.saved, TerminalPrompt.saved)
        _ = alternateScreen.load(ordering: .acquiring)
        var ending = sigaction()
        ending.__sigaction_handler.sa_handler = { _ in PromptInterrupt.interrupt() }
        sigfillset(&ending.sa_mask)
        ending.sa_flags = 0
        var terminating = ending
        terminating.__sigaction_handler.sa_handler = { signal in PromptInterrupt.terminate(signal) }
        // A stopped and continued prompt goes on reading: the interrupted read is restarted.
        var stopping = ending
        stopping.__sigaction_handler.sa_handler = { signal in PromptInterrupt.stop(signal) }
        stopping.sa_flags = SA_RESTART
        stopAction.pointee = stopping
        var continuing = stopping
        continuing.__sigaction_handler.sa_handler = { _ in PromptInterrupt.resume() }
        for (index, signal) in signals.enumerated() {
            switch signal {
            case SIGINT, SIGQUIT: sigaction(signal, &ending, previous + index)
            case SIGTERM, SIGHUP: sigaction(signal, &terminating, previous + index)
            case SIGCONT: sigaction(signal, &continuing, previous + index)
            default: sigaction(signal, &stopping, previous + index)
            }
            // A signal ignored when sealkit started (SIGHUP under nohup) stays ignored, as the shell meant.
            if signal != SIGINT, unsafeBitCast(previous[index].__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                sigaction(signal, previous + index, nil)
            }
        }
    }

    private static func leave() {
        outcomes.removeLast()
        outcome.store(current, ordering: .releasing)
        guard outcomes.isEmpty, !transferOwnsInterrupts.load(ordering: .acquiring) else { return }
        for index in signals.indices { sigaction(signals[index], previous + index, nil) }
    }

    private static var current: Int { (outcomes.last { $0 != .unsaid } ?? .unsaid).rawValue }

    private static let lineEnd: StaticString = "\n"
    private static let leaveScreen: StaticString = "\u{1B}[2J\u{1B}[3J\u{1B}[H\u{1B}[?1049l"
    private static let interrupted: StaticString = "sealkit: interrupted"
    private static let nothingStored: StaticString = ": nothing was stored"
    private static let terminated: StaticString = "sealkit: terminated\n"

    private static func say(_ text: StaticString) { _ = write(2, text.utf8Start, text.utf8CodeUnitCount) }

    /// The signal handler.
    private static func interrupt() {
        // A network transfer took SIGINT over after this handler was installed: it is its business.
        guard !transferOwnsInterrupts.load(ordering: .acquiring) else { return }
        giveTerminalBack()
        say(interrupted)
        if outcome.load(ordering: .acquiring) == Outcome.nothingStored.rawValue { say(nothingStored) }
        say(lineEnd)
        _exit(ExitStatus.interrupted.rawValue)
    }

    /// SIGTERM or SIGHUP: the terminal given back and the screen left, one line, then the signal's own end.
    private static func terminate(_ signal: Int32) {
        giveTerminalBack()
        say(terminated)
        endWithDefault(signal)
        _exit(128 + signal)
    }

    /// Before the line an ending handler writes: the prompt's terminal settings back, and the backup's screen
    /// left, or the line started on a line of its own.
    private static func giveTerminalBack() {
        let atPrompt = restoreTerminal()
        if alternateScreen.load(ordering: .acquiring) {
            say(leaveScreen)
        } else if atPrompt || stderrIsTerminal.load(ordering: .acquiring) {
            say(lineEnd)
        }
    }

    /// Ctrl-Z, or a background prompt's SIGTTIN or SIGTTOU: the terminal given back, then stopped.
    private static func stop(_ signal: Int32) {
        // A backup's screen is not left up, nor redrawn: Ctrl-Z ends it as Ctrl-C does.
        if alternateScreen.load(ordering: .acquiring) { interrupt() }
        let saved = errno
        _ = restoreTerminal()
        endWithDefault(signal)
        // Continued: this handler takes the next stop. SIGCONT's handler puts the prompt's mode back.
        sigaction(signal, stopAction, nil)
        errno = saved
    }

    /// SIGCONT: the prompt's mode (echo off) back on the terminal, if a prompt is being answered.
    private static func resume() {
        let saved = errno
        LineEditor.saved.reapply()
        TerminalPrompt.saved.reapply()
        errno = saved
    }

    /// Takes `signal`'s default action now: SIG_DFL, raised, and unblocked (the handler blocks every
    /// signal), so it ends or stops the process here.
    private static func endWithDefault(_ signal: Int32) {
        var fallback = sigaction()
        fallback.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&fallback.sa_mask)
        fallback.sa_flags = 0
        sigaction(signal, &fallback, nil)
        raise(signal)
        var only = sigset_t()
        sigemptyset(&only)
        sigaddset(&only, signal)
        sigprocmask(SIG_UNBLOCK, &only, nil)
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
    /// The prompt's own mode (echo off), to put back when a stopped process is continued.
    private let prompting = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    private let hasPromptMode = Atomic<Bool>(false)

    /// Keeps `settings` of the terminal `fd` until `clear`, and the mode the prompt sets, if it is one
    /// of its own (libedit keeps its own mode and puts it back on SIGCONT itself).
    func save(_ fd: Int32, _ settings: termios, prompting mode: termios? = nil) {
        self.settings.pointee = settings
        if let mode { prompting.pointee = mode }
        hasPromptMode.store(mode != nil, ordering: .releasing)
        descriptor.store(fd, ordering: .releasing)
    }

    /// Puts the prompt's mode back, if a prompt of its own is being answered.
    func reapply() {
        let fd = descriptor.load(ordering: .acquiring)
        guard fd >= 0, hasPromptMode.load(ordering: .acquiring) else { return }
        tcsetattr(fd, TCSANOW, prompting)
    }

    /// The prompt is over: nothing to give back.
    func clear() { descriptor.store(-1, ordering: .releasing) }

    /// Puts the saved settings back, if any, and drops what was typed and not yet read: a passphrase half
    /// typed when a signal came from elsewhere would otherwise be read by the shell, shown, and run as a
    /// command. (Ctrl-C, Ctrl-\\ and Ctrl-Z make the terminal drop it itself; `kill` does not.)
    /// - Returns: whether there were some.
    func restore() -> Bool {
        let fd = descriptor.load(ordering: .acquiring)
        guard fd >= 0 else { return false }
        tcflush(fd, TCIFLUSH)
        tcsetattr(fd, TCSANOW, settings)
        return true
    }
}
