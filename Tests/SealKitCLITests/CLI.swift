import Foundation
import Testing

/// Runs the built `sealkit` binary as a separate process, the way scripts use it.
struct CLI {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        let stdoutBytes: [UInt8]

        /// stdout without its final newline.
        var output: String { stdout.hasSuffix("\n") ? String(stdout.dropLast()) : stdout }
    }

    /// A fresh, empty keystore root in a temporary folder.
    let home: URL
    var environment: [String: String]

    init(environment extra: [String: String] = [:]) throws {
        home = try TemporaryFolder.make()
        var environment = ProcessInfo.processInfo.environment
        environment["SEALKIT_HOME"] = home.appendingPathComponent("keys").path
        environment.removeValue(forKey: "SEALKIT_PASSPHRASE")
        environment.removeValue(forKey: "SEALKIT_NAMESPACE")
        environment.merge(extra) { $1 }
        self.environment = environment
    }

    /// The `sealkit` executable built beside this test bundle (or `$SEALKIT_BIN`).
    static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["SEALKIT_BIN"] { return URL(fileURLWithPath: path) }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("sealkit")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/sealkit")
    }()

    /// Runs `sealkit ARGS` with `stdin`, waiting for it to finish.
    @discardableResult
    func run(_ arguments: [String], stdin: String = "", environment extra: [String: String] = [:]) throws -> Result {
        try run(arguments, stdinBytes: Array(stdin.utf8), environment: extra)
    }

    @discardableResult
    func run(_ arguments: [String], stdinBytes: [UInt8], environment extra: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        process.environment = environment.merging(extra) { $1 }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Feed stdin and drain both outputs concurrently so large data cannot deadlock.
        let writer = Thread {
            input.fileHandleForWriting.write(Data(stdinBytes))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let errorData = LockedData()
        let reader = Thread { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { usleep(1000) }
        let err = errorData.get()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self), stdoutBytes: Array(out))
    }
}

final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.withLock { data = value } }
    var isSet: Bool { lock.withLock { data != nil } }
    func get() -> Data { lock.withLock { data ?? Data() } }
}

enum TemporaryFolder {
    static func make() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Asserts the failure contract: non-zero exit below 126, one line on stderr starting
/// with `sealkit: `, and nothing on stdout.
func expectCleanFailure(
    _ result: CLI.Result, containing fragment: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.status != 0 && result.status < 126, "exit status \(result.status)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "stdout: \(result.stdout)", sourceLocation: sourceLocation)
    let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 2 && lines[1].isEmpty, "stderr must be exactly one line: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.hasPrefix("sealkit: "), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    if let fragment {
        #expect(result.stderr.contains(fragment), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    }
}

/// Runs a Python snippet (PyNaCl for interop), passing secrets through stdin, never argv.
func python(_ script: String, stdin: String = "") throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script]
    let input = Pipe(), output = Pipe(), errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    input.fileHandleForWriting.write(Data(stdin.utf8))
    try input.fileHandleForWriting.close()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}
