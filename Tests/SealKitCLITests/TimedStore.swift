import Foundation
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion or to a deadline, for tests that must notice hangs and
/// crashes rather than wait on them.
///
/// The child starts in a new session, so it has no controlling terminal: a command that
/// would prompt on `/dev/tty` fails at once instead of waiting for a person.
/// Not `Subprocess`/`RunningProgram`: those cannot start a child without a terminal, put deadlines on reads, or report the killing signal and peak memory.
enum TimedProcess {
    struct Outcome {
        /// The exit status, or nil when a signal ended the process.
        let status: Int32?
        /// The signal that ended the process, if one did.
        let signal: Int32?
        let stdout: [UInt8]
        let stderr: [UInt8]
        /// The deadline passed and the process was killed.
        let timedOut: Bool
        /// Peak resident memory, in KiB.
        let maxResidentKiB: Int

        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// Runs `executable ARGS` with `environment` and `stdin`, killing it (SIGKILL) after `timeout` seconds.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String], stdin: [UInt8] = [],
        timeout: Double = 10
    ) throws -> Outcome {
        let process = try start(executable, arguments, environment: environment)
        return process.finish(stdin: stdin, timeout: timeout)
    }

    /// A started child with pipes on stdin, stdout and stderr.
    final class Running {
        let pid: pid_t
        fileprivate var input: Int32
        fileprivate let output: Int32
        fileprivate let errors: Int32
        /// stdout read by `readLine`, handed back whole by `finish`.
        private var early: [UInt8] = []

        fileprivate init(pid: pid_t, input: Int32, output: Int32, errors: Int32) {
            self.pid = pid
            self.input = input
            self.output = output
            self.errors = errors
        }

        /// The first line on stdout (without its newline), waiting up to `timeout` seconds.
        func readLine(timeout: Double = 10) -> String? {
            readLines(1, timeout: timeout)?.first
        }

        /// The first `count` lines of stdout, without their newlines, once they are there; they
        /// stay in the output `finish` returns. Nil if they do not come in `timeout` seconds.
        func readLines(_ count: Int, timeout: Double = 10) -> [String]? {
            let deadline = Date().addingTimeInterval(timeout)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while early.filter({ $0 == UInt8(ascii: "\n") }).count < count {
                var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else { return nil }
                if poll(&entry, 1, Int32(remaining * 1000) + 1) <= 0 { continue }
                let bytesRead = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress!, $0.count) }
                if bytesRead <= 0 { return nil }
                early += buffer[0..<bytesRead]
            }
            return early.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(count)
                .map { String(decoding: $0, as: UTF8.self) }
        }

        /// Writes a small part of stdin (it must fit in the pipe) and keeps stdin open.
        func feed(_ bytes: [UInt8]) {
            if input >= 0 { _ = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) } }
        }

        /// Writes a small stdin (it must fit in the pipe) and closes it.
        func send(_ bytes: [UInt8]) {
            if input >= 0 { _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) } }
            closeInput()
        }

        /// Sends SIGKILL.
        func kill() { _ = Glibc.kill(pid, SIGKILL) }

        /// Feeds `stdin`, collects both outputs, and reaps the child, killing it at the deadline.
        func finish(stdin: [UInt8], timeout: Double) -> Outcome {
            let deadline = Date().addingTimeInterval(timeout)
            var out: [UInt8] = early, err: [UInt8] = []
            var written = 0
            var openOutputs: Set<Int32> = [output, errors]
            if stdin.isEmpty { closeInput() }
            var timedOut = false
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while !openOutputs.isEmpty || input >= 0 {
                let remaining = deadline.timeIntervalSinceNow
                if remaining <= 0 {
                    timedOut = true
                    kill()
                    break
                }
                var fds = openOutputs.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                if input >= 0 { fds.append(pollfd(fd: input, events: Int16(POLLOUT), revents: 0)) }
                let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining, 1) * 1000) + 1)
                if ready < 0 && errno == EINTR { continue }
                for entry in fds where entry.revents != 0 {
                    if entry.fd == input {
                        let count = stdin.withUnsafeBytes { write(input, $0.baseAddress! + written, min($0.count - written, 1 << 16)) }
                        if count > 0 { written += count }
                        if count < 0 && errno != EAGAIN && errno != EINTR || written == stdin.count { closeInput() }
                        continue
                    }
                    let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress!, $0.count) }
                    if count > 0 {
                        if entry.fd == output { out += buffer[0..<count] } else { err += buffer[0..<count] }
                    } else if count == 0 || errno != EINTR && errno != EAGAIN {
                        openOutputs.remove(entry.fd)
                    }
                }
            }
            closeInput()
            close(output)
            close(errors)
            var status: Int32 = 0
            var usage = rusage()
            while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
            let exited = status & 0x7f == 0
            return Outcome(
                status: exited ? (status >> 8) & 0xff : nil, signal: exited ? nil : status & 0x7f,
                stdout: out, stderr: err, timedOut: timedOut, maxResidentKiB: usage.ru_maxrss)
        }

        private func closeInput() {
            if input >= 0 {
                close(input)
                input = -1
            }
        }
    }

    /// Starts a child; the caller must `finish` it.
    static func start(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Running {
        // A child that exits before reading all its stdin must not take the test runner down with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        var stdinPipe: [Int32] = [0, 0], stdoutPipe: [Int32] = [0, 0], stderrPipe: [Int32] = [0, 0]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            throw TimedProcessError("pipe: \(String(cString: strerror(errno)))")
        }
        // Other tests spawn processes at the same time: none of them may inherit these pipes.
        for fd in stdinPipe + stdoutPipe + stderrPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (glibc): a new session, hence no controlling terminal.
        posix_spawnattr_setflags(&attributes, Int16(0x80))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        close(stderrPipe[1])
        guard result == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            close(stderrPipe[0])
            throw TimedProcessError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        // Writes to stdin must not block the loop that drains stdout and stderr.
        _ = fcntl(stdinPipe[1], F_SETFL, fcntl(stdinPipe[1], F_GETFL) | O_NONBLOCK)
        return Running(pid: pid, input: stdinPipe[1], output: stdoutPipe[0], errors: stderrPipe[0])
    }
}

struct TimedProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A snapshot of every file and folder under a path: names, types, modes and contents.
/// Equal snapshots mean nothing was created, deleted, changed or re-permissioned.
struct TreeSnapshot: Equatable, CustomStringConvertible {
    struct Item: Equatable {
        let mode: UInt32
        let contents: [UInt8]?
        let link: String?
    }

    let items: [String: Item]

    init(_ root: String) {
        var items: [String: Item] = [:]
        func visit(_ path: String, _ relative: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return }
            let type = info.st_mode & S_IFMT
            if type == S_IFDIR {
                items[relative + "/"] = Item(mode: UInt32(info.st_mode), contents: nil, link: nil)
                for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                    visit(path + "/" + name, relative + "/" + name)
                }
            } else if type == S_IFLNK {
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path)
                items[relative] = Item(mode: UInt32(info.st_mode), contents: nil, link: target)
            } else {
                let contents = FileManager.default.contents(atPath: path).map(Array.init)
                items[relative] = Item(mode: UInt32(info.st_mode), contents: contents, link: nil)
            }
        }
        visit(root, "")
        self.items = items
    }

    /// The paths that differ between two snapshots.
    func differences(from other: TreeSnapshot) -> [String] {
        Set(items.keys).union(other.items.keys).filter { items[$0] != other.items[$0] }.sorted()
    }

    var description: String { items.keys.sorted().joined(separator: ", ") }
}

/// A fresh keystore driven through the binary with a deadline on every run, for the suites
/// that must notice hangs and crashes (crash safety, secret hygiene).
struct TimedStore {
    let home: String
    var environment: [String: String]

    init() throws {
        home = try TemporaryFolder.make().path
        environment = ProcessInfo.processInfo.environment
        environment["SEALKIT_HOME"] = home + "/keys"
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
        environment.removeValue(forKey: "SEALKIT_NAMESPACE")
    }

    func run(_ arguments: [String], stdin: String = "", environment extra: [String: String] = [:]) throws -> TimedProcess.Outcome {
        try TimedProcess.run(
            CLI.executable.path, arguments, environment: environment.merging(extra) { $1 }, stdin: Array(stdin.utf8))
    }

    /// id → (fingerprint, line) from `keys list`, or nil when the keystore does not open.
    func listing() throws -> [String: String]? {
        let result = try run(["keys", "list"])
        guard result.status == 0 else { return nil }
        var entries: [String: String] = [:]
        for line in result.stdoutText.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            entries[String(fields[0])] = String(fields[1])
        }
        return entries
    }
}
