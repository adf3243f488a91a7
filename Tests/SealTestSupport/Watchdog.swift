import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// Makes this child (a server the tests share) end when the test process ends, however it ends: a `defer` or an
    /// `atexit` handler runs on a thrown error or a normal exit, but not when the process traps (an index out of
    /// range, a force unwrap) or is killed, and a server with no deadline of its own would then run forever.
    ///
    /// A small shell outside this process watches both PIDs: once the test process is gone it stops the child (SIGTERM,
    /// then SIGKILL after 2 s); once the child is gone it exits. (swtpm gets the same from `setpriv --pdeathsig`, which
    /// ties it to the starting thread: right for a TPM that lives within one `with` body, not for a server that
    /// outlives the test that started it, whose thread the pool may retire.)
    public func endsWithTheTestProcess() throws {
        let script = """
            while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
            kill -0 "$2" 2>/dev/null || exit 0
            kill -TERM "$2" 2>/dev/null; sleep 2; kill -KILL "$2" 2>/dev/null
            exit 0
            """
        _ = try ChildProcess("/bin/sh", ["-c", script, "watchdog", String(getpid()), String(pid)], outputLimit: 1 << 12, killAfter: nil)
    }
}
