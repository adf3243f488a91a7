import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a finished child process left behind.
public struct ProcessResult: Sendable {
    /// The exit status, or minus the signal's number when a signal ended the process (as Python's
    /// `subprocess` reports it), so a crash never passes for an exit code.
    public let status: Int32
    /// stdout not already taken by `ChildProcess.readLine` (on a terminal: everything it showed).
    public let stdout: [UInt8]
    /// Everything written to stderr (empty on a terminal, where it is mixed into `stdout`).
    public let stderr: [UInt8]
    /// The deadline passed and the process was killed (SIGKILL).
    public let timedOut: Bool
    /// The process exited, but something it started still held its stdout or stderr open `ChildProcess.afterExit`
    /// seconds later: its process group was killed and the reading stopped (the test fails, saying so).
    public let outputsHeldOpen: Bool
    /// An output went past the size bound; the rest of it was read and dropped.
    public let truncated: Bool

    /// The signal that ended the process, if one did.
    public var signal: Int32? { status < 0 ? -status : nil }
    /// stdout as UTF-8 text (invalid bytes replaced).
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// stderr as UTF-8 text (invalid bytes replaced).
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// The one way the tests start another program: the `sealkit` binary, PyNaCl and magic-wormhole
/// peers, zbarimg, the keyring daemon, a shell.
///
/// `ChildProcess.run` runs to completion; an instance is a running child to talk to (read lines,
/// write, signal) and then `finish`. Either way:
/// - the child starts in a session of its own, with no controlling terminal, so a command that
///   would prompt on `/dev/tty` fails at once instead of waiting for a person; or, with
///   `terminal: columns`, on a new pseudo-terminal that is its controlling terminal, as a person
///   at a terminal would run it (one mechanism: the same spawn with the terminal's far end as
///   stdin, stdout and stderr);
/// - it inherits no descriptor above stderr and no blocked or ignored signal of this process (a
///   daemon holding another test's pipe would keep that test waiting for end of file);
/// - stdout and stderr are drained by a thread of its own, so a child writing a lot before it
///   reads cannot deadlock against a full pipe; each is kept up to `outputLimit` bytes;
/// - every wait has a deadline, after which the child is killed and the result says `timedOut` (`run` records a
///   test failure naming the program); and once the child has exited, reading its outputs waits at most
///   `afterExit` seconds more: a process it left behind holding a pipe (a background job of a shell, a writer
///   blocked on a FIFO) fails the test in seconds instead of keeping it waiting for end of file.
public final class ChildProcess: @unchecked Sendable {
    /// The process id (also its process group's: the child leads a session of its own).
    public let pid: pid_t
    /// The program, as it was given, for messages.
    public let executable: String
    /// The deadline of `run` when none is given: long enough for the slowest command a test runs on a loaded machine
    /// (Argon2id, a QR image decoded by zbarimg), short enough that a hang fails the test in two minutes.
    public static let defaultTimeout: Double = 120
    /// Seconds that reading a child's outputs goes on after it exited, waiting for end of file.
    public static let afterExit: Double = 5
    /// The write end of stdin (or the terminal), -1 once closed.
    private var input: Int32
    private let isTerminal: Bool
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var stdoutBytes: [UInt8] = []
    private var stdoutTaken = 0
    private var stderrBytes: [UInt8] = []
    private var truncated = false
    private var outputsOpen = true
    private var waitStatus: Int32?
    /// When `waitStatus` was set.
    private var exitedAt: Date?
    private var abandoned = false
    private var hungUp = false

    /// Starts `executable` (a path, or a name looked up on `PATH`) with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil inherits ours.
    ///   - workingDirectory: where it starts; nil is ours.
    ///   - terminal: the width, in columns, of a pseudo-terminal to run it on (0: no size, as
    ///     Python's `pty.fork` leaves it); nil for pipes.
    ///   - outputLimit: the bytes kept of stdout and of stderr each.
    ///   - killAfter: seconds after which the child is killed whatever happens, so nothing a failed
    ///     test leaves running hangs the run; nil for never (servers that live as long as the tests).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        workingDirectory: String? = nil, terminal columns: Int? = nil, outputLimit: Int = 256 << 20,
        killAfter limit: Double? = 60
    ) throws {
        Self.ignoreBrokenPipes()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var everySignal = sigset_t(), noSignal = sigset_t()
        sigfillset(&everySignal)
        sigemptyset(&noSignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setsigmask(&attributes, &noSignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | Self.setsid))

        // What this process keeps (`ours`) and what the child gets (closed here once it started).
        var ours: [Int32] = [], theirs: [Int32] = []
        var stdinWriter: Int32 = -1
        var readers: [Int32] = []
        do {
            if let columns {
                let terminal = try Terminal(columns: columns)
                ours = [terminal.controller]
                stdinWriter = terminal.controller
                readers = [terminal.controller]
                // Opened after the spawn's setsid, the far end becomes the new session's controlling terminal.
                posix_spawn_file_actions_addopen(&actions, 0, terminal.path, O_RDWR, 0)
                posix_spawn_file_actions_adddup2(&actions, 0, 1)
                posix_spawn_file_actions_adddup2(&actions, 0, 2)
            } else {
                let stdinPipe = try Self.pipe(), stdoutPipe = try Self.pipe(), stderrPipe = try Self.pipe()
                ours = [stdinPipe.write, stdoutPipe.read, stderrPipe.read]
                theirs = [stdinPipe.read, stdoutPipe.write, stderrPipe.write]
                stdinWriter = stdinPipe.write
                readers = [stdoutPipe.read, stderrPipe.read]
                posix_spawn_file_actions_adddup2(&actions, stdinPipe.read, 0)
                posix_spawn_file_actions_adddup2(&actions, stdoutPipe.write, 1)
                posix_spawn_file_actions_adddup2(&actions, stderrPipe.write, 2)
            }
        } catch {
            for fd in ours + theirs { close(fd) }
            throw error
        }
        _ = LibC.closeFrom(&actions, 3)
        if let workingDirectory { _ = LibC.changeDirectory(&actions, workingDirectory) }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = executable.contains("/")
            ? posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            : posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        for fd in theirs { close(fd) }
        guard result == 0 else {
            for fd in ours { close(fd) }
            throw Failure("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        self.executable = executable
        self.input = stdinWriter
        self.isTerminal = columns != nil
        // Writes to stdin must never block past a deadline.
        _ = fcntl(stdinWriter, F_SETFL, fcntl(stdinWriter, F_GETFL) | O_NONBLOCK)
        let outputs = readers
        let thread = Thread { [self] in drain(outputs, limit: outputLimit) }
        thread.start()
        if let limit {
            DispatchQueue.global().asyncAfter(deadline: .now() + limit) { [weak self] in self?.kill() }
        }
    }

    /// Runs `executable ARGS` to the end, feeding `stdin`, and returns what it left behind.
    /// - Parameters:
    ///   - timeout: seconds after which it is killed (SIGKILL), the result says `timedOut`, and the running test
    ///     records a failure naming the program and the deadline.
    public static func run(
        _ executable: String, _ arguments: [String], stdin: [UInt8] = [], environment: [String: String]? = nil,
        workingDirectory: String? = nil, terminal columns: Int? = nil, outputLimit: Int = 256 << 20,
        timeout: Double = defaultTimeout,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) throws -> ProcessResult {
        // (Not a `#_sourceLocation` default: the macro would need every caller's file to import Testing.)
        let sourceLocation = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let child = try ChildProcess(
            executable, arguments, environment: environment, workingDirectory: workingDirectory, terminal: columns,
            outputLimit: outputLimit, killAfter: nil)
        let result = child.finish(stdin: stdin, timeout: timeout, at: sourceLocation)
        if result.timedOut {
            Issue.record(
                "\(executable) did not finish within its deadline of \(Int(timeout)) s: killed (a hang; or pass a longer `timeout:`)",
                sourceLocation: sourceLocation)
        }
        return result
    }

    /// `run`, with the child's peak resident memory in KiB, measured from a small parent (python3):
    /// the rusage of a child spawned from the test process counts the test process's own peak, which
    /// the child shared until it called exec. A signal that ends the child ends the parent alike.
    public static func runMeasuringPeakMemory(
        _ executable: String, _ arguments: [String], stdin: [UInt8] = [], environment: [String: String]? = nil,
        timeout: Double = defaultTimeout
    ) throws -> (result: ProcessResult, peakKiB: Int) {
        let parent = """
            import os, resource, signal, subprocess, sys
            status = subprocess.run(sys.argv[2:]).returncode
            open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
            if status < 0:
                signal.signal(-status, signal.SIG_DFL)
                os.kill(os.getpid(), -status)
            sys.exit(status)
            """
        let peakFile = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-peak-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: peakFile) }
        let result = try run(
            "python3", ["-c", parent, peakFile, executable] + arguments, stdin: stdin, environment: environment, timeout: timeout)
        let peak = (try? String(contentsOfFile: peakFile, encoding: .utf8)).flatMap { Int($0) } ?? .max
        return (result, peak)
    }

    // MARK: Talking to a running child

    /// The next stdout line without its newline, waiting up to `timeout` seconds; nil at the end
    /// of output or the deadline. The line is taken: `finish` returns what follows it.
    /// Once the child has exited, it waits at most `afterExit` seconds more.
    public func readLine(timeout: Double = 60) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let newline = stdoutBytes[stdoutTaken...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: stdoutBytes[stdoutTaken..<newline], as: UTF8.self)
                stdoutTaken = newline + 1
                return line
            }
            if !outputsOpen || !condition.wait(until: boundedByExit(deadline)) && Date() >= boundedByExit(deadline) { return nil }
        }
    }

    /// Waits up to `timeout` seconds until `shown` holds for the child's output from byte `start`
    /// (stdout, or on a terminal everything it showed), testing it as each piece arrives; says whether it held.
    /// Once the child has exited, it waits at most `afterExit` seconds more.
    @discardableResult
    public func wait(from start: Int = 0, timeout: Double = 30, until shown: (ArraySlice<UInt8>) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if start <= stdoutBytes.count, shown(stdoutBytes[start...]) { return true }
            if !outputsOpen || !condition.wait(until: boundedByExit(deadline)) && Date() >= boundedByExit(deadline) {
                return start <= stdoutBytes.count && shown(stdoutBytes[start...])
            }
        }
    }

    /// `deadline`, or `afterExit` seconds after the child exited if that is sooner. Called under the lock.
    private func boundedByExit(_ deadline: Date) -> Date {
        guard let exitedAt else { return deadline }
        return min(deadline, exitedAt.addingTimeInterval(Self.afterExit))
    }

    /// Waits up to `timeout` seconds until the output from byte `start` contains `marker`; says whether it does.
    @discardableResult
    public func wait(for marker: [UInt8], from start: Int = 0, timeout: Double = 30) -> Bool {
        wait(from: start, timeout: timeout) { $0.firstRange(of: marker) != nil }
    }

    /// `wait(for:from:timeout:)` with text.
    @discardableResult
    public func wait(for marker: String, from start: Int = 0, timeout: Double = 30) -> Bool {
        wait(for: Array(marker.utf8), from: start, timeout: timeout)
    }

    /// Everything on stdout (or the terminal) so far, taken lines included.
    public var outputSoFar: [UInt8] { condition.withLock { stdoutBytes } }

    /// Writes `bytes` to stdin (or types them on the terminal), waiting up to `timeout` seconds
    /// for room; stdin stays open. Says whether all of it went (not when the child stopped reading).
    @discardableResult
    public func write(_ bytes: [UInt8], timeout: Double = 30) -> Bool {
        writeAll(bytes, deadline: Date().addingTimeInterval(timeout))
    }

    /// `write(_:timeout:)` with text.
    @discardableResult
    public func write(_ text: String, timeout: Double = 30) -> Bool { write(Array(text.utf8), timeout: timeout) }

    /// Closes stdin, so the child reads end of file (not on a terminal, which stays open to be read).
    public func closeInput() {
        guard !isTerminal else { return }
        condition.withLock {
            if input >= 0 {
                close(input)
                input = -1
            }
        }
    }

    /// Closes the terminal under the child, as closing its window does: the child gets SIGHUP and
    /// end of file. (The reading thread, which owns the terminal's descriptor, closes it.)
    public func hangUp() {
        guard isTerminal else { return }
        condition.withLock { hungUp = true }
    }

    /// Sends `signal` to the process, unless it has already been reaped.
    public func send(signal: Int32) {
        condition.withLock {
            if waitStatus == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Sends SIGKILL.
    public func kill() { send(signal: SIGKILL) }

    /// Feeds `stdin` and closes it, collects both outputs to their end, and reaps the child,
    /// killing it (SIGKILL) if that takes more than `timeout` seconds. Once the child has exited, its outputs
    /// get `afterExit` seconds to reach their end; if something it started still holds them open then, that
    /// process group is killed, the reading stops, the result says `outputsHeldOpen`, and the running test
    /// records a failure saying so.
    public func finish(
        stdin: [UInt8] = [], timeout: Double = 60,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) -> ProcessResult {
        finish(stdin: stdin, timeout: timeout, at: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    private func finish(stdin: [UInt8], timeout: Double, at sourceLocation: SourceLocation) -> ProcessResult {
        let deadline = Date().addingTimeInterval(timeout)
        if !stdin.isEmpty { writeAll(stdin, deadline: deadline) }
        closeInput()
        condition.lock()
        defer { condition.unlock() }
        var timedOut = false, heldOpen = false
        while outputsOpen || waitStatus == nil {
            let limit = boundedByExit(deadline)
            if !condition.wait(until: limit) && Date() >= limit && (outputsOpen || waitStatus == nil) {
                if waitStatus == nil { timedOut = true } else { heldOpen = true }
                // The child and whatever it started in its session's process group (a grandchild holding the
                // outputs open); then stop reading, and wait (boundedly) for the reaping.
                _ = Glibc.kill(-pid, SIGKILL)
                if waitStatus == nil { _ = Glibc.kill(pid, SIGKILL) }
                abandoned = true
                let last = Date().addingTimeInterval(30)
                while (waitStatus == nil || outputsOpen) && (condition.wait(until: last) || Date() < last) {}
                break
            }
        }
        if input >= 0 {
            close(input)
            input = -1
        }
        // Not reaped within the bound (a process stuck in the kernel): reported as killed.
        let raw = waitStatus ?? SIGKILL
        let exited = raw & 0x7f == 0
        let status = exited ? (raw >> 8) & 0xff : -(raw & 0x7f)
        if heldOpen {
            let message = "\(executable) exited (status \(status)), but a process it started still held its stdout or "
                + "stderr open \(Int(Self.afterExit)) s later: killed its process group and stopped reading"
            Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
        }
        return ProcessResult(
            status: status, stdout: Array(stdoutBytes[stdoutTaken...]),
            stderr: stderrBytes, timedOut: timedOut, outputsHeldOpen: heldOpen, truncated: truncated)
    }

    /// Waits up to `timeout` seconds for the child to exit, whatever its outputs do; says whether it did.
    public func waitForExit(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while waitStatus == nil {
            if !condition.wait(until: deadline) && Date() >= deadline { return waitStatus != nil }
        }
        return true
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { condition.withLock { waitStatus == nil } }

    /// The reading thread keeps the instance alive until the child is reaped: a child dropped
    /// without `finish` ends on its own or at `killAfter`.
    deinit {
        if input >= 0 { close(input) }
    }

    // MARK: The reading thread

    /// Reads the outputs into the buffers until they end (or the reading is abandoned), and
    /// reaps the child as soon as it exits.
    private func drain(_ readers: [Int32], limit: Int) {
        var open = readers
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while !open.isEmpty {
            if condition.withLock({ abandoned || hungUp }) { break }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 100)
            for entry in fds where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress!, $0.count) }
                if count > 0 {
                    condition.withLock {
                        let toStdout = entry.fd == readers[0]
                        let kept = toStdout ? stdoutBytes.count : stderrBytes.count
                        let room = max(0, min(count, limit - kept))
                        if room < count { truncated = true }
                        if toStdout { stdoutBytes += buffer[0..<room] } else { stderrBytes += buffer[0..<room] }
                        condition.broadcast()
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    // End of file; on a terminal, EIO once the child and its children closed it.
                    open.removeAll { $0 == entry.fd }
                }
            }
            reap(blocking: false)
        }
        condition.withLock {
            // The terminal's controlling end is also the input: closed here, under the lock writes take.
            if isTerminal { input = -1 }
            for fd in readers { close(fd) }
            outputsOpen = false
            condition.broadcast()
        }
        reap(blocking: true)
    }

    private func reap(blocking: Bool) {
        guard condition.withLock({ waitStatus == nil }) else { return }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, blocking ? 0 : WNOHANG) } while result < 0 && errno == EINTR
        guard result == pid else { return }
        condition.withLock {
            waitStatus = status
            exitedAt = Date()
            condition.broadcast()
        }
    }

    @discardableResult
    private func writeAll(_ bytes: [UInt8], deadline: Date) -> Bool {
        var written = 0
        while written < bytes.count {
            // Under the lock: the reading thread may close a terminal's descriptor (the writes do not block).
            let (fd, count, error) = condition.withLock { () -> (Int32, Int, Int32) in
                guard input >= 0 else { return (-1, -1, EBADF) }
                let count = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress! + written, $0.count - written) }
                return (input, count, errno)
            }
            guard fd >= 0 else { return false }
            if count > 0 {
                written += count
            } else if count < 0 && (error == EAGAIN || error == EINTR) {
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else { return false }
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&entry, 1, Int32(min(remaining, 0.1) * 1000) + 1)
            } else {
                // EPIPE: a child may exit without reading all its input (as a refusing command
                // should); that is its answer, not a test failure.
                return false
            }
        }
        return true
    }

    // MARK: Plumbing

    /// glibc's POSIX_SPAWN_SETSID (a GNU extension Swift does not import): a new session.
    private static let setsid: Int32 = 0x80

    /// Writing to a child that stopped reading must fail the write, not kill the test process.
    private static func ignoreBrokenPipes() { _ = brokenPipesIgnored }
    private static let brokenPipesIgnored: Void = { signal(SIGPIPE, SIG_IGN) }()

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw Failure("pipe: \(String(cString: strerror(errno)))") }
        // Close-on-exec: other tests start children at the same time, and none may inherit these
        // (each child also closes every descriptor above stderr, whoever opened it).
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// A new pseudo-terminal: the controlling end this process keeps and the path of the far end.
    private struct Terminal {
        let controller: Int32
        let path: String

        init(columns: Int) throws {
            controller = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard controller >= 0 else { throw Failure("/dev/ptmx: \(String(cString: strerror(errno)))") }
            var name = [CChar](repeating: 0, count: 128)
            var size = winsize(ws_row: columns == 0 ? 0 : 50, ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
            guard LibC.unlockTerminal(controller) == 0, LibC.terminalName(controller, &name, name.count) == 0,
                  ioctl(controller, UInt(TIOCSWINSZ), &size) == 0
            else {
                close(controller)
                throw Failure("pseudo-terminal: \(String(cString: strerror(errno)))")
            }
            path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// glibc's GNU spawn actions and the pseudo-terminal calls, which Swift's Glibc module does not
    /// import (they need _GNU_SOURCE or _XOPEN_SOURCE), looked up by name.
    private enum LibC {
        typealias UnlockTerminal = @convention(c) (Int32) -> Int32
        typealias TerminalName = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32

        static func unlockTerminal(_ fd: Int32) -> Int32 {
            unsafeBitCast(symbol("unlockpt"), to: UnlockTerminal.self)(fd)
        }

        static func terminalName(_ fd: Int32, _ buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> Int32 {
            unsafeBitCast(symbol("ptsname_r"), to: TerminalName.self)(fd, buffer, size)
        }

        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

        static func closeFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32 {
            unsafeBitCast(symbol("posix_spawn_file_actions_addclosefrom_np"), to: CloseFrom.self)(actions, lowest)
        }

        static func changeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32 {
            unsafeBitCast(symbol("posix_spawn_file_actions_addchdir_np"), to: ChangeDirectory.self)(actions, path)
        }

        private static func symbol(_ name: String) -> UnsafeMutableRawPointer {
            guard let found = dlsym(dlopen(nil, RTLD_NOW), name) else { fatalError("glibc has no \(name)") }
            return found
        }
    }

    /// Why a child could not start.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
