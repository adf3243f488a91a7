import Foundation

/// PyNaCl and Python's json: the independent implementations SealKit is checked against.
public enum Python {
    /// Runs `python3 -c script`. Secrets go through stdin, never the command line.
    public static func run(_ script: String, stdin: [UInt8] = []) throws -> ProcessResult {
        try ChildProcess.run("python3", ["-c", script], stdin: stdin)
    }

    /// Runs `python3 -c script` and returns its stdout, throwing when it fails (the test
    /// fails with Python's message rather than skipping).
    public static func output(of script: String, stdin: [UInt8] = []) throws -> [UInt8] {
        let result = try run(script, stdin: stdin)
        guard result.status == 0 else { throw Failure(status: result.status, stderr: result.stderrText) }
        return result.stdout
    }

    /// A Python script that failed.
    public struct Failure: Error, CustomStringConvertible {
        public let status: Int32
        public let stderr: String
        public var description: String { "python3 failed (\(status)): \(stderr)" }
    }
}

/// Files of this repository, found from this source file's place in it.
public enum Repository {
    /// The repository's root folder.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file or folder under `Fixtures/`.
    public static func fixture(_ path: String) -> URL { root.appendingPathComponent("Fixtures").appendingPathComponent(path) }
}

/// Fresh folders for tests.
public enum TemporaryFolder {
    /// Makes a new, empty folder under the system's temporary folder.
    public static func make() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Scripts/sealkit_v2.py: the v2 format written from docs/format.md with PyNaCl, SealKit's peer for v2.
public enum PythonV2 {
    /// One place, as the script takes it.
    public enum Place: Sendable {
        case field(String)
        case context(String)
        var json: [String: String] {
            switch self {
            case .field(let name): return ["kind": "field", "name": name]
            case .context(let name): return ["kind": "context", "name": name]
            }
        }
    }

    private static func request(keys: [String], id: String, place: Place, extra: [String: String]) throws -> [UInt8] {
        var object: [String: Any] = ["keys": keys, "id": id, "place": place.json]
        for (key, value) in extra { object[key] = value }
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    private static func run(_ command: String, _ request: [UInt8]) throws -> String {
        let script = Repository.root.appendingPathComponent("Scripts/sealkit_v2.py").path
        let result = try ChildProcess.run("python3", [script, command], stdin: request)
        guard result.status == 0 else { throw Python.Failure(status: result.status, stderr: result.stderrText) }
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Seals `plaintext` under the first of `keys` (base64) as the script does.
    public static func seal(_ plaintext: String, keys: [String], id: String, place: Place) throws -> String {
        try run("seal", request(keys: keys, id: id, place: place, extra: ["plaintext": plaintext]))
    }

    /// Opens `ciphertext` as the script does: its outcome ("ok", "wrong-place", "unknown-key",
    /// "tampered", ...) and the plaintext when it opened.
    public static func open(_ ciphertext: String, keys: [String], id: String, place: Place) throws -> (outcome: String, plaintext: String?) {
        let output = try run("open", request(keys: keys, id: id, place: place, extra: ["ciphertext": ciphertext]))
        let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        return (object?["outcome"] as? String ?? "", object?["plaintext"] as? String)
    }
}
