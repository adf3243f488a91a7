import Foundation
import SealKit
import Testing

/// `profile … --ndjson` works on batches of lines across cores; what it writes must be what a
/// line-by-line loop writes: every line, in order, and the first failing line stops it.
@Suite("sealkit profile --ndjson across cores")
struct ProfileNDJSONParallelTests {
    /// About 2.7 MB in lines of about a kilobyte: ten batches (of 256 KiB) in flight one after
    /// another, each cut into chunks, so every worker takes part and order must be restored.
    static let count = 2600

    static func profiles() -> [JSONValue] {
        (0..<count).map { index in
            [
                "id": .string("user_\(index)"),
                "data": [
                    "ssn": .string("000-00-\(index)"), "credit_score": .number("\(index)"), "x": nil,
                    "notes": .string(String(repeating: "n", count: 900 + index % 200)),
                ],
            ]
        }
    }

    @Test func everyLineComesBackInOrderAndRoundTrips() throws {
        let cli = try CLI.withKey()
        let input = Self.profiles().map { $0.serialized() }.joined(separator: "\n") + "\n"
        let encrypted = try cli.run(["profile", "encrypt", "--ndjson", "--schema", ProfileCLITests.schema, "--key", "ada"], stdin: input)
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let lines = encrypted.output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == Self.count)
        for (index, line) in lines.enumerated() where index % 97 == 0 {
            #expect(line.hasPrefix(#"{"id":"user_\#(index)","#), "line \(index + 1) out of order")
        }
        let decrypted = try cli.run(
            ["profile", "decrypt", "--ndjson", "--schema", ProfileCLITests.schema, "--key", "ada"], stdin: encrypted.stdout)
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        #expect(decrypted.stdout == input)
    }

    @Test func theFirstFailingLineStopsTheRunAndIsNamed() throws {
        let cli = try CLI.withKey()
        var lines = Self.profiles().map { $0.serialized() }
        // Two bad lines in one batch, and others in later ones: the earliest is reported.
        lines[1500] = #"{"id": "bad", "data": {"credit_score": "not a number"}}"#
        lines[1510] = "not json"
        lines[1800] = "not json"
        lines[2500] = ""
        // From a file, not stdin: the command stops reading at the failure, and a test process
        // still writing to its stdin would die of SIGPIPE.
        let file = cli.home.appendingPathComponent("profiles.ndjson")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let result = try cli.run(
            ["profile", "encrypt", "--ndjson", "--schema", ProfileCLITests.schema, "--key", "ada", file.path])
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix("sealkit: line 1501: "), "\(result.stderr)")
        // Lines before it that reached stdout are whole lines, in order, and none after it.
        let written = result.stdout.split(separator: "\n")
        #expect(written.count <= 1500)
        for (index, line) in written.enumerated() {
            #expect(line.hasPrefix(#"{"id":"user_\#(index)","#))
        }
    }
}
