import Foundation

/// A private desktop keyring for tests: a session bus of its own (`dbus-run-session`) with
/// GNOME Keyring's Secret Service on it (`gnome-keyring-daemon --unlock --components=secrets`,
/// the test password on its stdin), in a temporary HOME, so tests never touch the user's keyring.
///
/// The bus lives as long as a shell that watches this process: when `stop()` is called or
/// this process ends, however it ends, the shell exits, `dbus-run-session` ends the bus,
/// and the keyring daemon, losing its bus, exits too; the shell removes the temporary HOME.
public final class KeyringSession: @unchecked Sendable {
    /// The login password the test keyring is created and unlocked with.
    public static let password = "sealkit-test-login-password"

    /// The temporary home folder holding the keyring files and the runtime folder.
    public let home: URL
    /// What a child needs to reach this keyring: HOME, XDG folders, DBUS_SESSION_BUS_ADDRESS.
    public let environment: [String: String]

    private let process: ChildProcess
    /// Created by `stop()`: the bus's shell ends when it appears.
    private let stopFile: String
    private let lock = NSLock()
    private var stopped = false

    /// Set by Scripts/test when it found the keyring daemon cannot start on this machine;
    /// the keyring tests are then disabled, with this reason. Nothing else disables them.
    public static var skipReason: String? {
        ProcessInfo.processInfo.environment["SEALKIT_SKIP_KEYRING_TESTS"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Starts a bus and an unlocked keyring.
    /// - Throws: `KeyringSession.Failure` with the daemon's own words when it cannot start.
    public init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-keyring-\(UUID().uuidString)")
        let runtime = home.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var base = ProcessInfo.processInfo.environment
        for name in ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "GNOME_KEYRING_CONTROL", "SEALKIT_KEYSTORE"] {
            base.removeValue(forKey: name)
        }
        let folders = [
            "HOME": home.path,
            "XDG_DATA_HOME": home.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": home.appendingPathComponent("config").path,
            "XDG_CACHE_HOME": home.appendingPathComponent("cache").path,
            "XDG_RUNTIME_DIR": runtime.path,
        ]
        base.merge(folders) { $1 }

        stopFile = home.appendingPathComponent("stop").path
        // The shell starts the daemon (which reads the password from stdin), waits until it owns the
        // Secret Service's bus name (so no call activates a second daemon), prints the bus
        // address, then waits until `stop()` or this process ends. ChildProcess starts it in a session
        // of its own, out of our process group, so a runner killing the group cannot leave the bus
        // without its shell; and with no descriptor of ours and no signal blocked (a daemon holding
        // another test's pipe would keep that test waiting for end of file forever, and SIGTERM, which
        // this process blocks, is what dbus-run-session ends the bus with).
        let script = """
            gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null || exit 3
            tries=0
            until dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; do
              tries=$((tries + 1)); [ "$tries" -gt 100 ] && exit 4; sleep 0.1
            done
            printf '%s\n' "$DBUS_SESSION_BUS_ADDRESS"
            while kill -0 "$1" 2>/dev/null && [ ! -e "$2" ]; do sleep 0.2; done
            rm -rf "$3"
            """
        process = try ChildProcess(
            "dbus-run-session", ["--", "sh", "-c", script, "sh", String(getpid()), stopFile, home.path],
            environment: base, outputLimit: 1 << 20, killAfter: nil)
        // The password goes to the daemon on stdin, never on a command line.
        process.write(Self.password)
        process.closeInput()

        // The first line is the address; anything else (or nothing within 20 s) is a failure.
        guard let address = process.readLine(timeout: 20), !address.isEmpty else {
            _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
            let result = process.finish(timeout: 20)
            try? FileManager.default.removeItem(at: home)
            throw Failure(description: "the test keyring did not start (status \(result.status)): "
                + result.stderrText.split(separator: "\n").filter { !$0.contains("fd limit") }.joined(separator: " | "))
        }
        base["DBUS_SESSION_BUS_ADDRESS"] = address
        environment = base
    }

    /// Runs a keyring daemon command in this session's environment; the daemon it leaves
    /// behind holds none of our descriptors.
    private func daemon(_ command: String, stdin: String = "") throws {
        let result = try ChildProcess.run("sh", ["-c", command + " >/dev/null 2>&1"], stdin: Array(stdin.utf8), environment: environment)
        guard result.status == 0 else {
            throw Failure(description: "could not restart the test keyring (status \(result.status))")
        }
    }

    /// Restarts the keyring daemon without unlocking it, as after logging in without the
    /// keyring's password: the login keyring is then locked.
    public func restartLocked() throws {
        try daemon("gnome-keyring-daemon --replace --components=secrets --daemonize </dev/null")
    }

    /// Restarts the keyring daemon and unlocks it with the test password, as logging in does.
    public func restartUnlocked() throws {
        try daemon("gnome-keyring-daemon --replace --unlock --components=secrets --daemonize", stdin: Self.password)
    }

    /// The keyring daemon's process id, as the bus knows it.
    public func daemonProcessID() throws -> Int32 {
        let result = try ChildProcess.run(
            "dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets"],
            environment: environment)
        guard result.status == 0, let pid = result.stdoutText.split(separator: " ").last.flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        else { throw Failure(description: "cannot find the keyring daemon: \(result.stderrText)") }
        return pid
    }

    /// Ends the bus and the daemon, and removes the temporary HOME.
    public func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
        _ = process.waitForExit(timeout: 60)
        try? FileManager.default.removeItem(at: home)
    }

    deinit { stop() }

    /// Why the test keyring could not start.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }
}
