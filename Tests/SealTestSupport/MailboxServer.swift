import Foundation

/// magic-wormhole's own mailbox server (`twist wormhole-mailbox` from the project's `.venv`,
/// which Scripts/test installs), on a free port of 127.0.0.1 with an in-memory database.
///
/// Use `MailboxServer.with { server in ... }`: the server is stopped by its PID afterwards,
/// also when the body throws or an expectation fails.
public final class MailboxServer: @unchecked Sendable {
    /// The relay address for `--relay`, such as `ws://127.0.0.1:41234/v1`.
    public let relay: String
    /// The TCP port.
    public let port: Int
    private let process: ChildProcess

    /// The project's virtual environment's programs (twist, python).
    public static let venv = Repository.root.appendingPathComponent(".venv/bin")

    /// The Python interpreter with magic-wormhole installed.
    public static var python: String { venv.appendingPathComponent("python").path }

    private init(port: Int, process: ChildProcess) {
        self.port = port
        self.process = process
        relay = "ws://127.0.0.1:\(port)/v1"
    }

    /// Runs `body` with a fresh server, and stops the server afterwards.
    public static func with<R>(_ body: (MailboxServer) throws -> R) throws -> R {
        let server = try start()
        defer { server.stop() }
        return try body(server)
    }

    /// Runs `body` with the test process's one shared server, started on first use and
    /// stopped when the process exits: starting a Python server per test costs seconds on a
    /// loaded machine. Tests sharing it must look only at their own nameplates, and a test that
    /// checks a nameplate was released uses `with` instead: on a shared server another test
    /// may claim the same number as soon as it is free.
    public static func shared<R>(_ body: (MailboxServer) throws -> R) throws -> R {
        let server = try sharedServer.withLock { shared -> MailboxServer in
            if let running = shared, running.process.isRunning { return running }
            let server = try start()
            shared = server
            sharedPID.withLock { $0 = server.process.pid }
            if !registeredExit {
                registeredExit = true
                atexit { MailboxServer.stopShared() }
            }
            return server
        }
        return try body(server)
    }

    /// `shared` for async tests: `body` gets the shared server's relay address.
    public static func sharedAsync<R>(_ body: (String) async throws -> R) async throws -> R {
        let relay = try shared { $0.relay }
        return try await body(relay)
    }

    /// `with` for async tests: a fresh server of the test's own, stopped afterwards.
    public static func withAsync<R>(_ body: (String) async throws -> R) async throws -> R {
        let server = try start()
        defer { server.stop() }
        return try await body(server.relay)
    }

    /// The nameplates `relay` has in use for `appID` (the server's `list`), as a second client sees them:
    /// how tests check that a nameplate was released. Asked by magic-wormhole's own WebSocket client
    /// library in a subprocess (`Scripts/lib/list_nameplates.py`), so that it needs nothing of this
    /// process's cooperative pool, which synchronous tests hold while their subprocesses run. (SealKit's
    /// sender lists them once, to tell a cancelled receiver's code.)
    public static func nameplatesInUse(relay: String, appID: String) throws -> [String] {
        let script = Repository.root.appendingPathComponent("Scripts/lib/list_nameplates.py").path
        let result = try ChildProcess.run(python, [script, relay, appID])
        guard result.status == 0,
            let list = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String]
        else { throw Failure("listing the nameplates failed (\(result.status)): \(result.stderrText)") }
        return list
    }

    nonisolated(unsafe) private static var registeredExit = false
    private static let sharedServer = Locked<MailboxServer?>(nil)
    private static let sharedPID = Locked<Int32>(0)

    /// Stops the shared server by its PID (at exit).
    private static func stopShared() {
        let pid = sharedPID.withLock { $0 }
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        usleep(200_000)
        kill(pid, SIGKILL)
    }

    /// Starts a server and waits (up to 30 s) until it accepts connections.
    public static func start() throws -> MailboxServer {
        let twist = venv.appendingPathComponent("twist")
        guard FileManager.default.isExecutableFile(atPath: twist.path) else {
            throw Failure("no \(twist.path): run Scripts/test, which installs magic-wormhole-mailbox-server into .venv")
        }
        let port = try Loopback.freePort()
        // Its log is read and dropped past a small bound; it lives until stopped.
        let process = try ChildProcess(
            twist.path, ["wormhole-mailbox", "--port=tcp:\(port):interface=127.0.0.1", "--channel-db=:memory:"],
            workingDirectory: FileManager.default.temporaryDirectory.path, outputLimit: 1 << 16, killAfter: nil)
        let server = MailboxServer(port: port, process: process)
        try process.endsWithTheTestProcess()
        Waits.until(timeout: 30, every: 0.05) { Loopback.accepts(port) || !process.isRunning }
        guard process.isRunning, Loopback.accepts(port) else {
            server.stop()
            throw Failure("the mailbox server did not start listening on port \(port)")
        }
        return server
    }

    /// Stops the server (SIGTERM to its PID, then SIGKILL if it lingers) and waits for it.
    public func stop() { process.stopServer() }

    /// The server's process id: how a test checks that it was stopped.
    public var pid: pid_t { process.pid }

    deinit { stop() }

    /// Why the server could not be used.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}

/// A value behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
