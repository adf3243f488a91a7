import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitQR

#if canImport(Glibc)
import Glibc
#endif

extension QRFormat: ExpressibleByArgument {}

extension QRErrorCorrection: ExpressibleByArgument {
    public init?(argument: String) { self.init(rawValue: argument.uppercased()) }
}

struct QRCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qr",
        abstract: "Show text as a QR code on the terminal, or write it as an image.",
        discussion: """
            Reads TEXT, else stdin with one trailing newline dropped, and encodes the bytes exactly. \
            On a terminal the default format is ansi, which scans on dark and light themes alike; \
            otherwise utf8, drawn in the terminal's own colours: on a dark theme it comes out light on dark, so add \
            --invert (or set SEALKIT_QR_INVERT=1) there. ascii is for copying, not scanning. With --output and no \
            --format, a name ending in .png, .svg or .pbm picks that format.
            """)

    @Option(help: "Output format: ansi, utf8, ascii (for copying, not scanning), svg, png or pbm (default: ansi on a terminal, else utf8).")
    var format: QRFormat?

    @Flag(help: "For utf8 and ascii on a dark terminal: draw the light modules, so the code shows dark on light (also SEALKIT_QR_INVERT=1).")
    var invert = false

    @Option(name: .customLong("ecc"), help: ArgumentHelp("Error correction: higher survives more damage, lower holds more.", valueName: "level"))
    var correction: QRErrorCorrection = .medium

    @Option(help: ArgumentHelp("Write to this file (mode 0600, replaced atomically) instead of stdout ('-' is stdout).", valueName: "path"))
    var output: String?

    /// The file to write; nil for stdout. `--output -` names stdout, as `-` names stdin elsewhere,
    /// instead of making a file called "-".
    private var outputFile: String? { output == "-" ? nil : output }

    @Argument(help: "The text to encode (after --); stdin when absent or '-'.")
    var text: String?

    func run() throws {
        let format = chosenFormat()
        if outputFile == nil, [.png, .pbm].contains(format), StandardOutput.isTerminal {
            throw CLIFailure(
                "refusing to write a \(format.rawValue) image to the terminal: add --output PATH or redirect stdout",
                status: .usage)
        }
        let payload = try payload()
        let code: QRCode
        let rendered: [UInt8]
        do {
            code = try QRCode(payload, correction: correction)
            rendered = try code.rendered(as: format, inverted: invert || Terminal.invertsQR)
        } catch {
            // A payload that makes no QR code is bad input, whatever the library's reason (empty, too long).
            throw CLIFailure(said(error), status: .dataError)
        }
        if let output = outputFile {
            try DurableFile.write(rendered, to: output)
            return
        }
        let standardOutput = StandardOutput()
        try rendered.withUnsafeBytes { try standardOutput.write(bytes: $0) }
        try standardOutput.flush()
        // Warn after the code, so the warning is the last thing on screen rather than scrolled away.
        if StandardOutput.isTerminal, let needed = code.terminalWidth(for: format), let columns = Terminal.columns(),
            needed > columns
        {
            StandardError.write(
                "sealkit: warning: this QR code is \(needed) columns wide but the terminal has \(columns), "
                    + "so it wraps and will not scan; widen the terminal, or use --format png --output FILE\n")
        }
    }

    private func payload() throws -> [UInt8] {
        if let text, text != "-" { return Array(text.utf8) }
        var bytes = try StandardInput.readAll(limit: InputLimits.qrPayload, what: "text to encode")
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        return bytes
    }

    /// The format asked for; else one the output file's name names; else, on a terminal, ansi,
    /// whose explicit colours scan whatever the theme; else utf8, because escape codes would be
    /// noise in a file or pipe, where the reader decides the colours.
    private func chosenFormat() -> QRFormat {
        if let format { return format }
        if let output = outputFile {
            let pathExtension = URL(fileURLWithPath: output).pathExtension.lowercased()
            return [QRFormat.png, .svg, .pbm].first { $0.rawValue == pathExtension } ?? .utf8
        }
        return StandardOutput.isTerminal && Terminal.allowsColor ? .ansi : .utf8
    }
}

/// The terminal on stdout.
enum Terminal {
    /// Its width in columns, from the terminal on `fd` itself, else `$COLUMNS`; nil when neither says.
    static func columns(fd: Int32 = 1) -> Int? {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return ProcessInfo.processInfo.environment["COLUMNS"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Whether `SEALKIT_QR_INVERT` asks for codes drawn without colours to be inverted, for a dark
    /// terminal: set to anything but empty or `0`.
    static var invertsQR: Bool {
        let value = ProcessInfo.processInfo.environment["SEALKIT_QR_INVERT"] ?? ""
        return !value.isEmpty && value != "0"
    }

    /// Whether escape sequences may be chosen by default: not when `NO_COLOR` is set to anything
    /// (no-color.org) or `TERM=dumb`. A format asked for explicitly is honoured regardless.
    static var allowsColor: Bool {
        let environment = ProcessInfo.processInfo.environment
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
        return environment["TERM"] != "dumb"
    }
}
