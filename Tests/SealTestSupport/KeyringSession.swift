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

    private let process: Process
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
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // The shell starts the daemon (which reads the password from stdin), waits until it owns the
        // Secret Service's bus name (so no call activates a second daemon), prints the bus
        // address, then waits until `stop()` or this process ends. setsid keeps it out of our
        // process group, so a runner killing the group cannot leave the bus without its shell.
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
        process.arguments = ["setsid", "-w"] + Self.cleanly([
            "dbus-run-session", "--", "sh", "-c", script, "sh", String(getpid()), stopFile, home.path,
        ])
        process.environment = base
        // The password goes to the daemon on stdin, never on a command line.
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(Self.password.utf8))
        try input.fileHandleForWriting.close()

        // The first line is the address; anything else (or nothing within 20 s) is a failure.
        var line = Data()
        let deadline = Date().addingTimeInterval(20)
        let reader = output.fileHandleForReading
        while !line.contains(UInt8(ascii: "\n")) && Date() < deadline {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let end = line.firstIndex(of: UInt8(ascii: "\n")), end > line.startIndex else {
            _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
            process.waitUntilExit()
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            try? FileManager.default.removeItem(at: home)
            throw Failure(description: "the test keyring did not start (status \(process.terminationStatus)): "
                + said.split(separator: "\n").filter { !$0.contains("fd limit") }.joined(separator: " | "))
        }
        let address = String(decoding: line[line.startIndex..<end], as: UTF8.self)
        base["DBUS_SESSION_BUS_ADDRESS"] = address
        environment = base
        // Drain stderr so the bus never blocks on a full pipe.
        Thread { _ = errors.fileHandleForReading.readDataToEndOfFile() }.start()
    }

    /// `argv` run through python3 with a clean slate: every descriptor above stderr closed and
    /// no signal blocked. Foundation's Process passes on both: a daemon holding another test's
    /// pipe would keep that test waiting for end-of-file forever, and the SIGTERM this process
    /// blocks is what dbus-run-session ends the bus with.
    private static func cleanly(_ argv: [String]) -> [String] {
        let launcher = """
            import os, signal, sys
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.closerange(3, os.sysconf("SC_OPEN_MAX"))
            os.execvp(sys.argv[1], sys.argv[1:])
            """
        return ["python3", "-c", launcher] + argv
    }

    /// Runs a keyring daemon command in this session's environment; the daemon it leaves
    /// behind holds none of our descriptors.
    private func daemon(_ command: String, stdin: String = "") throws {
        let arguments = Self.cleanly(["sh", "-c", command + " >/dev/null 2>&1"])
        let result = try Subprocess.run("/usr/bin/env", arguments, stdin: Array(stdin.utf8), environment: environment)
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
        let result = try Subprocess.run(
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
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: home)
    }

    deinit { stop() }

    /// Why the test keyring could not start.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }
}
