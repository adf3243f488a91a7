import Foundation
import SealTestSupport
import Testing

/// `sealkit audit` as a person sees it, stdout and stderr on one terminal: the progress line gives true sizes and
/// the summary is shown once.
@Suite("sealkit audit on a terminal")
struct AuditTerminalCLITests {
    /// A terminal's environment: TERM set, so the progress line may show.
    func terminal(_ cli: CLI) -> [String: String] {
        var environment = cli.environment
        environment["TERM"] = "xterm"
        return environment
    }

    @Test func progressGivesTheSizesReadAndTheFilesTotal() throws {
        let cli = try CLI()
        let export = try AuditScaleCLITests().bigExport(in: cli)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: export.path)[.size] as? Int)
        let screen = try ChildProcess.run(
            CLI.executable.path, ["audit", "--format", "json", "--fail-on", "error", export.path], environment: terminal(cli),
            terminal: 200)
        #expect(screen.status == 0, "\(screen.stdoutText.suffix(300))")
        // Every drawing of the line, as the terminal received them.
        let drawings = screen.stdoutText.split(separator: "\r").map(String.init).filter { $0.contains("sealkit audit: ") }
        try #require(!drawings.isEmpty, "no progress line: \(screen.stdoutText.prefix(300))")
        #expect(!screen.stdoutText.contains("0.0 MiB of 0.0 MiB"))
        let tenths = (size * 10) >> 20
        let total = "of \(tenths / 10).\(tenths % 10) MiB ("
        for drawing in drawings {
            // `sealkit audit: 4.0 MiB of 12.3 MiB (32%), 33000 values, 40.1 MiB/s, 0:01 left`
            let match = try #require(
                drawing.firstMatch(of: /sealkit audit: ([0-9]+)(?:\.([0-9]) MiB| KiB) of [0-9.]+ MiB \(([0-9]+)%\), ([0-9]+) values?, [0-9.]+ [KMG]iB\/s, [0-9]+:[0-9]{2} left/),
                "\(drawing.debugDescription)")
            #expect(drawing.contains(total), "the files' size is \(size) bytes: \(drawing.debugDescription)")
            let read = match.output.2 == nil ? Int(match.output.1)! << 10 : ((Int(match.output.1)! * 10 + Int(match.output.2!)!) << 20) / 10
            #expect(read <= size, "\(drawing.debugDescription)")
            #expect(Int(match.output.3)! <= 100)
        }
        // It moves: the last drawing has read more than nothing, and some values.
        let last = try #require(drawings.last?.firstMatch(of: /([0-9]+) values/))
        #expect(Int(last.output.1)! > 0, "\(drawings.last ?? "")")
        #expect(drawings.contains { !$0.contains("sealkit audit: 0 KiB") }, "\(drawings)")
    }

    /// With stdin among the paths the total is unknown: the files' sizes alone are not it, as stdin's bytes run
    /// past them. The line says what was read, and no total.
    @Test func progressWithStdinAmongThePathsGivesNoTotal() throws {
        let cli = try CLI()
        let export = try AuditScaleCLITests().bigExport(in: cli)
        let small = try cli.write(#"{"ssn": "\#(Data((0..<48).map { _ in UInt8.random(in: 0...255) }).base64EncodedString())"}"# + "\n", to: "small.ndjson")
        var environment = terminal(cli)
        environment["SEALKIT"] = CLI.executable.path
        // stdin held open past a second, which is when a line for an unknown total may first show.
        let script = #"{ cat "$1"; sleep 1.5; } | "$SEALKIT" audit --format json --fail-on error - "$2""#
        let screen = try ChildProcess.run("/bin/bash", ["-c", script, "bash", export.path, small], environment: environment, terminal: 200)
        #expect(screen.status == 0, "\(screen.stdoutText.suffix(300))")
        let drawings = screen.stdoutText.split(separator: "\r").map(String.init).filter { $0.contains("sealkit audit: ") }
        let last = try #require(drawings.last, "no progress line: \(screen.stdoutText.prefix(300))")
        #expect(last.firstMatch(of: /sealkit audit: [0-9]+\.[0-9] MiB, [0-9]+ values, [0-9.]+ [KMG]iB\/s$/) != nil, "\(last.debugDescription)")
        #expect(!drawings.contains { $0.contains(" of ") || $0.contains(" left") || $0.contains("0.0 MiB") }, "\(drawings)")
    }

    @Test func theSummaryShowsOnceWhenTheAuditFails() throws {
        let cli = try CLI.withKey()
        let sealed = try cli.run(["encrypt", "--key", "ada"], stdin: "same").output
        let file = try cli.write(#"{"ssn": "\#(sealed)"}"# + "\n" + #"{"ssn": "\#(sealed)"}"# + "\n", to: "copies/a.ndjson")
        let summary = "1 finding (1 file, 2 values): 1 duplicate-ciphertext; repeats: 1 ciphertext copied, "
            + "the largest group has 2 places, first at \(file):1."

        let screen = try ChildProcess.run(CLI.executable.path, ["audit", file], environment: terminal(cli), terminal: 400)
        #expect(screen.status == 1)
        let shown = screen.stdoutText.replacing("\r\n", with: "\n")
        #expect(shown.components(separatedBy: summary).count == 2, "the summary must show once: \(shown)")
        // stderr still says why the status is 1, in one line, without repeating the summary.
        #expect(shown.hasSuffix(summary + "\nsealkit: the audit fails: 1 finding at or above --fail-on warning\n"), "\(shown)")

        // Reports other than text, or stdout elsewhere (a pipe, a file): stderr carries the summary as before.
        let json = try ChildProcess.run(CLI.executable.path, ["audit", "--format", "json", file], environment: terminal(cli), terminal: 400)
        #expect(json.status == 1)
        #expect(json.stdoutText.replacing("\r\n", with: "\n").hasSuffix("}\nsealkit: " + summary + "\n"), "\(json.stdoutText)")
        let piped = try cli.run(["audit", file])
        #expect(piped.status == 1 && piped.stdout.hasSuffix("\n" + summary + "\n"), "\(piped.stdout)")
        #expect(piped.stderr == "sealkit: " + summary + "\n", "\(piped.stderr)")
    }
}
