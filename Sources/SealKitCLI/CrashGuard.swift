import CProcessHardening

#if canImport(Glibc)
import Glibc
#endif

/// Keeps secrets out of crash output: no core file, and no crash report that prints memory.
///
/// Why: `decrypt --lines` holds plaintext, and key material sits in memory; a core file or Swift's
/// crash reporter (which prints registers and bytes of memory on stderr) would hand them to whoever
/// reads the file or the log.
/// - `PR_SET_DUMPABLE` 0: the kernel writes no core file, whatever the core pattern (a file or a
///   pipe to a collector), and other processes of the same user cannot ptrace or read
///   `/proc/<pid>/mem`.
/// - `RLIMIT_CORE` 0, soft and hard: no core file either, should the process become dumpable again
///   (an exec drops it), and nothing a child inherits can raise it.
/// - Handlers for the crash signals, installed after the Swift runtime installed its own (it reads
///   `SWIFT_BACKTRACE` before `main`, so setting that variable now would change nothing), replace
///   the backtracer: they write one fixed line, which names no memory, and exit. They run on their
///   own stack, so a stack overflow is reported the same way.
/// - SIGQUIT (Ctrl-\\) gets its default action back, which ends the process (with no core file, as
///   above): the runtime takes it for its backtracer too, which prints memory and then keeps the
///   process running. At a prompt, `PromptInterrupt` takes it as it takes Ctrl-C.
enum CrashGuard {
    /// The one line a crash prints. Fixed text: nothing is formatted in a signal handler.
    static let crashLine: StaticString = "sealkit: internal error: the process crashed and was stopped; no memory was printed and no core file written\n"

    /// Makes the process non-dumpable and installs the crash handlers. Call first thing in `main`.
    static func install() {
        _ = sealkit_set_undumpable()
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)

        // An alternate stack for this (the main) thread, so a stack overflow still reaches the handler.
        let stackSize = 64 << 10
        if let stack = mmap(nil, stackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            stack != MAP_FAILED
        {
            var alternate = stack_t()
            alternate.ss_sp = stack
            alternate.ss_size = stackSize
            alternate.ss_flags = 0
            _ = sigaltstack(&alternate, nil)
        }

        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            let line = CrashGuard.crashLine
            _ = write(2, line.utf8Start, line.utf8CodeUnitCount)
            _exit(ExitStatus.internalError.rawValue)
        }
        action.sa_flags = SA_ONSTACK
        sigfillset(&action.sa_mask)
        // A blocked mask is inherited across exec: a parent that blocks SIGABRT would otherwise keep
        // the handler from ever running.
        var crashSignals = sigset_t()
        sigemptyset(&crashSignals)
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP, SIGSYS] {
            _ = sigaction(signal, &action, nil)
            sigaddset(&crashSignals, signal)
        }
        _ = sigprocmask(SIG_UNBLOCK, &crashSignals, nil)

        var quit = sigaction()
        quit.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&quit.sa_mask)
        _ = sigaction(SIGQUIT, &quit, nil)
    }
}
