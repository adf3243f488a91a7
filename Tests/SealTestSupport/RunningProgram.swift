import Foundation

/// A program kept running while a test talks to it: stdout read line by line, stdin written
/// as needed, signals sent by PID. It is killed after `limit` seconds so nothing hangs a run.
/// The one runner for conversations with a child (the CLI tests' `RunningCLI` wraps it); `Subprocess` runs to completion, `TimedProcess` adds no terminal, timed reads and memory.
public final class RunningProgram: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe(), output = Pipe(), errors = Pipe()
    private var pending: [UInt8] = []
    private let errorData = LockedData()

    /// Starts `executable` with `arguments` and the whole `environment`.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, limit: Double = 60) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let errors = errors
        let errorData = errorData
        Thread { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }.start()
        let process = process
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }

    /// The next stdout line without its newline; nil at the end of output.
    public func readLine() -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeFirst(newline + 1)
                return line
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { return nil }
            pending += data
        }
    }

    /// Writes `text` to stdin.
    public func write(_ text: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    }

    /// Sends `signal` to the process.
    public func send(signal: Int32) { kill(process.processIdentifier, signal) }

    /// Closes stdin, waits for the exit, and returns the rest of stdout and all of stderr.
    public func finish() -> ProcessResult {
        try? input.fileHandleForWriting.close()
        let rest = pending + output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { usleep(1000) }
        return ProcessResult(status: process.terminationStatus, stdout: Array(rest), stderr: Array(errorData.get()))
    }
}
