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
            Image by image, then top to bottom and left to right within an image, one payload per line, byte for byte \
            (zbar in its binary mode). Exit 0 when every image holds at least one code; 65 when one holds none, is not \
            an image, or is larger than \(QRScanner.maximumPixelCount / 1_000_000) megapixels; 66 for a missing file. \
            A camera: zbarcam --raw -Sbinary | sealkit keys import ID (or any command that reads stdin).
            """)

    @Flag(help: "End each payload with a NUL byte instead of a newline (for payloads that hold a newline).") var null = false
    @Argument(help: ArgumentHelp("Image files; '-' or none reads one image from stdin.", valueName: "image"), completion: .file())
    var images: [String] = []

    func validate() throws {
        // Nothing given and nothing piped: waiting on the keyboard for an image would look like a hang.
        if images.isEmpty && isatty(0) == 1 { throw ValidationError("name an image file, or pipe one to stdin ('-')") }
    }

    func run() throws {
        let output = StandardOutput()
        for image in images.isEmpty ? ["-"] : images {
            for payload in try ImageInput.payloads(in: image) {
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

    /// Every code's payload in the image at `path` (`-` is stdin); at least one.
    static func payloads(in path: String) throws -> [[UInt8]] {
        let fd = try StandardInput.fileDescriptor(path, what: "image")
        defer { if fd != 0 { close(fd) } }
        let bytes = try StandardInput.readAll(
            fd: fd, limit: QRScanner.maximumFileBytes, what: name(path), advice: "give an image of at most \(QRScanner.maximumFileBytes >> 20) MiB")
        let payloads: [[UInt8]]
        do {
            payloads = try QRScanner.scan(imageFile: bytes)
        } catch {
            throw CLIFailure("\(name(path)): \(error)", status: .dataError)
        }
        guard !payloads.isEmpty else { throw CLIFailure("no QR code found in \(name(path))", status: .dataError) }
        return payloads
    }

    /// The payloads of every image, as text lines, in order.
    static func lines(in paths: [String]) throws -> [String] {
        try paths.flatMap { path in
            try payloads(in: path).map { payload in
                guard let text = String(validating: payload, as: UTF8.self) else {
                    throw CLIFailure("a code in \(name(path)) is not text, so it is no SealKit code", status: .dataError)
                }
                return text
            }
        }
    }

    /// The one payload of one image, for options that take one code.
    static func single(in path: String, what: String) throws -> String {
        let lines = try lines(in: [path])
        guard lines.count == 1 else {
            throw CLIFailure("\(name(path)) holds \(lines.count) QR codes; give an image of the \(what) alone", status: .dataError)
        }
        return lines[0]
    }
}
