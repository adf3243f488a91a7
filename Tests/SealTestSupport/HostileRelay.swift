import Foundation

/// Scripts/lib/hostile_relay.py, a mailbox relay that lies or stalls as its URL path says
/// (`ws://127.0.0.1:PORT/MODE`), on a free port of 127.0.0.1.
///
/// Use `HostileRelay.with { relay in ... }`: the relay is stopped by its PID afterwards.
public final class HostileRelay: @unchecked Sendable {
    /// The TCP port.
    public let port: Int
    private let program: ChildProcess

    private init(port: Int, program: ChildProcess) {
        self.port = port
        self.program = program
    }

    /// The address of the relay behaving as `mode`, for `--relay`.
    public func url(_ mode: String) -> String { "ws://127.0.0.1:\(port)/\(mode)" }

    /// Runs `body` with a relay that is ready, and stops it afterwards (it stops itself after `limit` seconds).
    public static func with<R>(limit: Int = 240, _ body: (HostileRelay) throws -> R) throws -> R {
        let relay = try start(limit: limit)
        defer { relay.stop() }
        return try body(relay)
    }

    /// `with` for async tests.
    public static func withAsync<R>(limit: Int = 240, _ body: (HostileRelay) async throws -> R) async throws -> R {
        let relay = try start(limit: limit)
        defer { relay.stop() }
        return try await body(relay)
    }

    private static func start(limit: Int) throws -> HostileRelay {
        let port = try Loopback.freePort()
        let script = Repository.root.appendingPathComponent("Scripts/lib/hostile_relay.py").path
        let program = try ChildProcess(MailboxServer.python, [script, String(port), String(limit)], killAfter: Double(limit + 10))
        let relay = HostileRelay(port: port, program: program)
        try program.endsWithTheTestProcess()
        guard program.readLine() == "ready" else {
            relay.stop()
            throw MailboxServer.Failure("the hostile relay did not start")
        }
        return relay
    }

    private func stop() {
        program.send(signal: SIGKILL)
        _ = program.finish()
    }
}
