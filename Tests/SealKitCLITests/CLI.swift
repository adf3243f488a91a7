import Foundation
import SealTestSupport
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

    /// A fresh keystore holding a new key called `id`.
    static func withKey(_ id: String = "ada") throws -> CLI {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", id]).status == 0)
        return cli
    }

    /// The repository's `Fixtures/profile` folder: schemas and profiles.
    static let profileFixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/profile")

    /// Writes `text` to `name` (folders made) under this CLI's temporary home, and returns its path.
    func write(_ text: String, to name: String) throws -> String {
        let url = home.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// Runs a bash script with `$SEALKIT` set to the binary, in `cli`'s environment: for pipes, process
    /// substitutions and working folders, as a user's shell has them.
    static func bash(_ script: String, in cli: CLI, stdin: String = "") throws -> ProcessResult {
        var environment = cli.environment
        environment["SEALKIT"] = executable.path
        return try ChildProcess.run("/bin/bash", ["-c", script], stdin: Array(stdin.utf8), environment: environment)
    }

    /// Runs `sealkit ARGS` with `stdin`, waiting for it to finish.
    @discardableResult
    func run(_ arguments: [String], stdin: String = "", environment extra: [String: String] = [:]) throws -> Result {
        try run(arguments, stdinBytes: Array(stdin.utf8), environment: extra)
    }

    @discardableResult
    func run(_ arguments: [String], stdinBytes: [UInt8], environment extra: [String: String] = [:]) throws -> Result {
        let result = try ChildProcess.run(
            Self.executable.path, arguments, stdin: stdinBytes, environment: environment.merging(extra) { $1 })
        return Result(result)
    }
}

extension CLI.Result {
    /// A finished `sealkit` process's result, with its outputs also as text.
    init(_ result: ProcessResult) {
        self.init(status: result.status, stdout: result.stdoutText, stderr: result.stderrText, stdoutBytes: result.stdout)
    }
}

/// Asserts the failure contract: non-zero exit below 126, one line on stderr starting
/// with `sealkit: `, and nothing on stdout.
func expectCleanFailure(
    _ result: CLI.Result, containing fragment: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.status > 0 && result.status < 126, "exit status \(result.status)", sourceLocation: sourceLocation)
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
    let result = try Python.run(script, stdin: Array(stdin.utf8))
    return (result.status, result.stdoutText, result.stderrText)
}
