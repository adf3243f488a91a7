import Foundation
import SealCore
import SealJSON
import Testing

@testable import SealProfile

enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/profile")

    static func json(_ name: String) throws -> JSONValue {
        try JSONValue.parse([UInt8](Data(contentsOf: directory.appendingPathComponent(name))))
    }
}

/// Runs `python3 -c script` with `input` on stdin and returns its stdout.
/// Fails the test (rather than skipping) when python3 is missing or the script fails.
func runPython(_ script: String, input: [UInt8]) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script]
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let writer = Thread {
        stdin.fileHandleForWriting.write(Data(input))
        try? stdin.fileHandleForWriting.close()
    }
    writer.start()
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    let errors = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try #require(
        process.terminationStatus == 0,
        "python3 failed (\(process.terminationStatus)): \(String(decoding: errors, as: UTF8.self))")
    return [UInt8](output)
}

/// Catches the typed error of `body`, failing the test when nothing is thrown.
func profileError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> ProfileError? {
    do {
        try body()
        Issue.record("expected a ProfileError", sourceLocation: sourceLocation)
        return nil
    } catch let error as ProfileError {
        return error
    } catch {
        Issue.record("expected a ProfileError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

func schemaError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> SchemaError? {
    do {
        _ = try ProfileSchema(parsing: text)
        Issue.record("expected a SchemaError for \(text)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

extension JSONValue {
    /// The fields of a profile in Rownd's user-state shape.
    var data: JSONValue { self["data"] ?? .null }
}
