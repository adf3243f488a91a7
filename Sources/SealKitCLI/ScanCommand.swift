import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

#if canImport(Glibc)
import Glibc
#endif

struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Print the payload of every QR code in images: PNG, JPEG, PBM, PGM or PPM ('-' is stdin).",
        discussion: """
            Every code an image holds, image by image, then top to bottom and left to right within an image, one \
            payload per line, byte for byte: zbar (in its binary mode) and zxing-cpp both read every image, upright \
            and inverted (light on dark). Exit 0 when every image holds at least one code (at least N with --expect N); \
            65 when one holds fewer, is not an image, or is larger than \(QRScanner.maximumPixelCount / 1_000_000) \
            megapixels; 66 for a missing file. A camera: zbarcam --raw -Sbinary | sealkit keys import ID (or any \
            command that reads stdin).
            """)

    @Flag(help: "End each payload with a NUL byte instead of a newline (for payloads that hold a newline).") var null = false
    @Option(help: ArgumentHelp(
        "Each image must hold at least N codes (else exit 65, naming how many it holds); with N above 1, the count of each image is said on stderr.",
        valueName: "N"))
    var expect: Int?
    @Argument(help: ArgumentHelp("Image files; '-' or none reads one image from stdin.", valueName: "image"), completion: .file())
    var images: [String] = []

    func validate() throws {
        if let expect, expect < 1 { throw ValidationError("--expect must be at least 1") }
        // Nothing given and nothing piped: waiting on the keyboard for an image would look like a hang.
        if images.isEmpty && isatty(0) == 1 { throw ValidationError("name an image file, or pipe one to stdin ('-')") }
    }

    func run() throws {
        let output = StandardOutput()
        for image in images.isEmpty ? ["-"] : images {
            let payloads = try ImageInput.payloads(in: image, atLeast: expect ?? 1)
            if let expect, expect > 1 {
                StandardError.write("sealkit: \(ImageInput.name(image)): \(ImageInput.count(payloads.count))\n")
            }
            for payload in payloads {
                if !null && payload.contains(UInt8(ascii: "\n")) {
                    throw CLIFailure("a code in \(ImageInput.name(image)) holds a newline, which one line per payload cannot show: use --null", status: .dataError)
                }
                try payload.withUnsafeBytes { try output.write(bytes: $0) }
                try output.write(null ? "\0" : "\n")
            }
        }
        try output.flush()
    }
}

/// QR codes read from image files, for `scan` and every `--qr` option.
enum ImageInput {
    static func name(_ path: String) -> String { path == "-" ? "the image on stdin" : path }

    /// "1 QR code", "2 QR codes".
    static func count(_ number: Int) -> String { number == 1 ? "1 QR code" : "\(number) QR codes" }

    /// Every code's payload in the image at `path` (`-` is stdin); at least `atLeast`. With `prefix`,
    /// reading may stop once a code starting with it is found.
    static func payloads(in path: String, atLeast: Int = 1, lookingFor prefix: String? = nil) throws -> [[UInt8]] {
        let fd = try StandardInput.fileDescriptor(path, what: "image")
        defer { if fd != 0 { close(fd) } }
        let bytes = try StandardInput.readAll(
            fd: fd, limit: QRScanner.maximumFileBytes, what: name(path), advice: "give an image of at most \(QRScanner.maximumFileBytes >> 20) MiB")
        let payloads: [[UInt8]]
        do {
            payloads = try QRScanner.scan(imageFile: bytes, lookingFor: prefix.map { Array($0.utf8) })
        } catch {
            throw CLIFailure("\(name(path)): \(error)", status: .dataError)
        }
        guard !payloads.isEmpty else { throw CLIFailure("no QR code found in \(name(path))", status: .dataError) }
        guard payloads.count >= atLeast else {
            throw CLIFailure("\(name(path)) holds \(count(payloads.count)), fewer than the \(atLeast) expected", status: .dataError)
        }
        return payloads
    }

    /// The payloads of every image, as text lines, in order.
    static func lines(in paths: [String]) throws -> [String] {
        try paths.flatMap { path in try text(of: payloads(in: path), in: path) }
    }

    private static func text(of payloads: [[UInt8]], in path: String) throws -> [String] {
        try payloads.map { payload in
            guard let text = String(validating: payload, as: UTF8.self) else {
                throw CLIFailure("a code in \(name(path)) is not text, so it is no SealKit code", status: .dataError)
            }
            return text
        }
    }

    /// The one code of one image that an option takes: the one starting with `prefix` when the
    /// image holds several (the others are named, by kind only, on stderr as ignored), else the
    /// image's only code, for the caller to check.
    static func single(in path: String, what: String, prefix: String? = nil) throws -> String {
        let lines = try text(of: payloads(in: path, lookingFor: prefix), in: path)
        if lines.count == 1 { return lines[0] }
        let wanted = prefix.map { prefix in lines.filter { $0.lowercased().hasPrefix(prefix) } } ?? []
        guard wanted.count == 1 else {
            let which = wanted.isEmpty ? "" : ", \(wanted.count) of them \(what)s"
            throw CLIFailure("\(name(path)) holds \(count(lines.count))\(which); give an image of the \(what) alone", status: .dataError)
        }
        let others = lines.filter { !$0.lowercased().hasPrefix(prefix!) }.map(kind)
        StandardError.write("sealkit: \(name(path)): took the \(what); ignored \(others.joined(separator: ", "))\n")
        return wanted[0]
    }

    /// What a code is, without its contents (a key's code is the key): its `sealkit-...:` or URI
    /// scheme prefix, else its length.
    static func kind(_ payload: String) -> String {
        if let colon = payload.firstIndex(of: ":"), payload.distance(from: payload.startIndex, to: colon) <= 24,
            payload[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        {
            return "a \(payload[...colon]) code"
        }
        return "a code of \(payload.utf8.count) bytes"
    }
}
