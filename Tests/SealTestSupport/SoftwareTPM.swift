import Foundation

/// A software TPM 2.0 (`swtpm socket --tpm2`) of the test's own, on free ports of 127.0.0.1, with its
/// state in a folder of the test's own: what `SEALKIT_TPM_TCTI` points at in the TPM tests.
///
/// Use `SoftwareTPM.with { tpm in ... }`: the TPM is stopped by its PID afterwards, also when the body
/// throws or an expectation fails, and its state folder (when it made one) is removed.
public final class SoftwareTPM: @unchecked Sendable {
    /// The TCTI string for `SEALKIT_TPM_TCTI`: `swtpm:host=127.0.0.1,port=P`.
    public let tcti: String
    /// The folder holding the TPM's state (its seeds: a TPM of its own), an absolute path.
    public let state: String
    private let process: ChildProcess
    private let removesState: Bool

    private init(tcti: String, state: String, process: ChildProcess, removesState: Bool) {
        self.tcti = tcti
        self.state = state
        self.process = process
        self.removesState = removesState
    }

    /// Runs `body` with a TPM started on `state` (nil: a fresh TPM in a new temporary folder, removed
    /// afterwards), and stops it afterwards.
    public static func with<R>(state: String? = nil, _ body: (SoftwareTPM) throws -> R) throws -> R {
        let tpm = try start(state: state)
        defer { tpm.stop() }
        return try body(tpm)
    }

    /// Starts swtpm and waits (up to 30 s) until it accepts connections.
    /// - Parameter state: an existing state folder (absolute), or nil for a fresh TPM.
    public static func start(state: String? = nil) throws -> SoftwareTPM {
        let folder: String
        if let state {
            folder = state
        } else {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("swtpm-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        var lastError: Error = Failure("swtpm did not start")
        // The server port and the control port next to it must both be free; another process may take
        // one between the check and swtpm's bind, so try a few times.
        for _ in 0..<5 {
            let port = try freePortPair()
            // swtpm lives until stopped, for at most an hour; and, through setpriv's parent-death signal, not past
            // the thread that started it (the test's, which runs the whole `with` body), so a test process that
            // crashes or is killed takes its TPMs with it.
            let arguments = [
                "socket", "--tpm2", "--tpmstate", "dir=\(folder)",
                "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
                "--flags", "not-need-init,startup-clear",
            ]
            let process = try setpriv.map { try ChildProcess($0, ["--pdeathsig", "KILL", "--", "swtpm"] + arguments, outputLimit: 1 << 16, killAfter: 3600) }
                ?? ChildProcess("swtpm", arguments, outputLimit: 1 << 16, killAfter: 3600)
            let tpm = SoftwareTPM(tcti: "swtpm:host=127.0.0.1,port=\(port)", state: folder, process: process, removesState: state == nil)
            Waits.until(timeout: 30, every: 0.02) { !process.isRunning || Loopback.accepts(port) }
            if process.isRunning && Loopback.accepts(port) { return tpm }
            tpm.process.stopServer()
            lastError = Failure("swtpm did not start listening on port \(port): \(process.finish(timeout: 1).stderrText)")
        }
        if state == nil { try? FileManager.default.removeItem(atPath: folder) }
        throw lastError
    }

    /// Flushes every transient object and loaded session, as the kernel's resource manager (/dev/tpmrm0) does when a
    /// process ends: swtpm has no resource manager, so a `sealkit` killed mid-command leaves its handles loaded, and
    /// swtpm has three object slots. tpm2-tools' `tpm2_flushcontext`, an independent TSS client.
    public func flushLeftovers() throws {
        for kind in ["--transient-object", "--loaded-session"] {
            let result = try ChildProcess.run("tpm2_flushcontext", ["--tcti", tcti, kind], timeout: 30)
            guard result.status == 0 else { throw Failure("tpm2_flushcontext \(kind) failed: \(result.stderrText)") }
        }
    }

    /// Stops swtpm (SIGTERM to its PID, then SIGKILL if it lingers), waits for it, and removes a state folder it made.
    public func stop() {
        process.stopServer()
        if removesState { try? FileManager.default.removeItem(atPath: state) }
    }


    /// swtpm's process id (setpriv runs it in its own place): how a test checks that it was stopped.
    public var pid: pid_t { process.pid }

    deinit { stop() }

    /// util-linux's setpriv, which sets the parent-death signal and then runs swtpm in its place (the same PID).
    private static let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A port P with P and P + 1 both free now.
    private static func freePortPair() throws -> Int {
        for _ in 0..<50 {
            let port = try Loopback.freePort()
            if port < 65535 && Loopback.isFree(port + 1) { return port }
        }
        throw Failure("cannot find two free ports side by side")
    }

    /// Why swtpm could not be used, or what a TPM test did not find.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }
}
