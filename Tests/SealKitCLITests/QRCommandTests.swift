import Foundation
import SealKit
import Testing

/// Drives the built `sealkit qr` as a separate process and scans what it writes with zbarimg.
@Suite("sealkit qr")
struct QRCommandTests {
    @Test("--format png --output writes a 0600 file that zbarimg decodes to the text", arguments: [
        "hello", "Grüße aus Köln — 東京 🔐",
    ])
    func pngFile(text: String) throws {
        try withScratchFolder { folder in
            let file = folder.appendingPathComponent("code.png")
            let result = try Sealkit.run(["qr", "--format", "png", "--output", file.path, "--", text])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.isEmpty)
            #expect(result.standardError.isEmpty)
            #expect(try Zbarimg.decode(file) == Array(text.utf8))
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        }
    }

    @Test("stdin is the payload, one trailing newline dropped; the file name picks the format")
    func stdinToPBM() throws {
        try withScratchFolder { folder in
            let file = folder.appendingPathComponent("code.pbm")
            let result = try Sealkit.run(["qr", "--output", file.path], input: Array("line one\nline two\n".utf8))
            #expect(result.status == 0, "\(result.standardError)")
            #expect(try Array(Data(contentsOf: file).prefix(3)) == Array("P4\n".utf8))
            #expect(try Zbarimg.decode(file) == Array("line one\nline two".utf8))

            let svg = folder.appendingPathComponent("code.svg")
            #expect(try Sealkit.run(["qr", "--output", svg.path, "--", "x"]).status == 0)
            #expect(try String(contentsOf: svg, encoding: .utf8).hasPrefix("<?xml"))
        }
    }

    @Test("Piped stdout gets utf8 by default; --format and --ecc are honoured")
    func textToPipe() throws {
        let text = "https://example.com/sealkit"
        let plain = try Sealkit.run(["qr", "--", text])
        #expect(plain.status == 0)
        #expect(plain.standardOutput == (try QRCode(text, correction: .medium).rendered(as: .utf8)))
        let ascii = try Sealkit.run(["qr", "--format", "ascii", "--ecc", "h", "--", text])
        #expect(ascii.status == 0)
        #expect(ascii.standardOutput == (try QRCode(text, correction: .high).rendered(as: .ascii)))
    }

    @Test("Too long for any QR code: one line saying what fits, nothing written")
    func tooLong() throws {
        try withScratchFolder { folder in
            let file = folder.appendingPathComponent("code.png")
            let payload = [UInt8](repeating: UInt8(ascii: "a"), count: 2332)
            let result = try Sealkit.run(["qr", "--output", file.path], input: payload)
            #expect(result.status == 65)
            #expect(result.standardOutput.isEmpty)
            let message = String(decoding: result.standardError, as: UTF8.self)
            #expect(message.hasPrefix("sealkit: too long for a QR code: 2332 bytes"))
            #expect(message.contains("at most 2331 bytes") && message.contains("--ecc L holds 2953 bytes"))
            #expect(message.filter { $0 == "\n" }.count == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }

    @Test("Empty input and an unknown --ecc are refused")
    func refusals() throws {
        let empty = try Sealkit.run(["qr"], input: [])
        #expect(empty.status == 65)
        #expect(String(decoding: empty.standardError, as: UTF8.self).hasPrefix("sealkit: nothing to encode"))
        let badLevel = try Sealkit.run(["qr", "--ecc", "X", "--", "a"])
        #expect(badLevel.status == 64)
        #expect(badLevel.standardOutput.isEmpty)
        #expect(String(decoding: badLevel.standardError, as: UTF8.self).hasPrefix("sealkit: "))
    }

    @Test("--output replaces an existing file whole and leaves no temporary file")
    func replacesAtomically() throws {
        try withScratchFolder { folder in
            let file = folder.appendingPathComponent("code.png")
            try Data("old contents".utf8).write(to: file)
            #expect(try Sealkit.run(["qr", "--output", file.path, "--", "new"]).status == 0)
            #expect(try Zbarimg.decode(file) == Array("new".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["code.png"])
        }
    }

    @Test("On a terminal: ansi by default, a warning when too wide, no binary images")
    func onTerminal() throws {
        let wide = try Sealkit.runOnTerminal(columns: 200, ["qr", "--", "hello"])
        #expect(wide.status == 0)
        #expect(wide.output.contains("\u{1B}[38;5;16;48;5;231m"))
        #expect(!wide.output.contains("warning"))

        let narrow = try Sealkit.runOnTerminal(columns: 20, ["qr", "--", "hello"])
        #expect(narrow.status == 0)
        #expect(narrow.output.contains("sealkit: warning: this QR code is 29 columns wide but the terminal has 20"))
        #expect(narrow.output.contains("--format png"))

        let png = try Sealkit.runOnTerminal(columns: 200, ["qr", "--format", "png", "--", "hello"])
        #expect(png.status == 64)
        #expect(png.output.hasPrefix("sealkit: refusing to write a png image to the terminal"))
    }
}

// MARK: - Helpers

private func withScratchFolder(_ body: (URL) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("sealkit-qr-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try body(folder)
}

private struct ProcessResult {
    var status: Int32
    var standardOutput: [UInt8]
    var standardError: [UInt8]
}

private enum Sealkit {
    /// The `sealkit` built beside the test bundle.
    static func binary() throws -> URL {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent("sealkit"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("sealkit"),
        ]
        return try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
            "the sealkit binary is not built next to the tests")
    }

    static func run(_ arguments: [String], input: [UInt8] = []) throws -> ProcessResult {
        try runProcess(binary(), arguments, input: input)
    }

    /// Runs under a pseudo-terminal of the given width (util-linux `script`); stdout and stderr
    /// arrive mixed, as on a screen.
    static func runOnTerminal(columns: Int, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let command = "stty cols \(columns); exec " + ([try binary().path] + arguments).map(shellQuoted).joined(separator: " ")
        let script = URL(fileURLWithPath: "/usr/bin/script")
        try #require(FileManager.default.isExecutableFile(atPath: script.path), "util-linux script is missing")
        let result = try runProcess(script, ["-qec", command, "/dev/null"], input: [])
        return (result.status, String(decoding: result.standardOutput, as: UTF8.self))
    }

    private static func shellQuoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

private enum Zbarimg {
    /// The bytes of the QR code in `file`; `-Sbinary` keeps zbar from converting character sets.
    static func decode(_ file: URL) throws -> [UInt8] {
        let zbarimg = URL(fileURLWithPath: "/usr/bin/zbarimg")
        try #require(
            FileManager.default.isExecutableFile(atPath: zbarimg.path), "zbarimg is missing: install zbar-tools")
        let result = try runProcess(zbarimg, ["--nodbus", "--raw", "-q", "-Sbinary", file.path], input: [])
        try #require(result.status == 0, "zbarimg found no QR code in \(file.lastPathComponent)")
        return result.standardOutput
    }
}

private func runProcess(_ executable: URL, _ arguments: [String], input: [UInt8]) throws -> ProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let standardInput = Pipe()
    let standardOutput = Pipe()
    let standardError = Pipe()
    process.standardInput = standardInput
    process.standardOutput = standardOutput
    process.standardError = standardError
    try process.run()
    // Drain stderr on its own thread so neither pipe can fill up and stall the child.
    let errors = PipeDrain(standardError.fileHandleForReading)
    if !input.isEmpty { try standardInput.fileHandleForWriting.write(contentsOf: Data(input)) }
    try standardInput.fileHandleForWriting.close()
    let output = standardOutput.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus, standardOutput: [UInt8](output), standardError: [UInt8](errors.wait()))
}

private final class PipeDrain: @unchecked Sendable {
    // Written once on the reader thread; the semaphore orders that write before `wait()` reads it.
    private var data = Data()
    private let finished = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread {
            self.data = handle.readDataToEndOfFile()
            self.finished.signal()
        }.start()
    }

    func wait() -> Data {
        finished.wait()
        return data
    }
}
