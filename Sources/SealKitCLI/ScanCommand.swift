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

    /// Every code's payload in the image at `path` (`-` is stdin), the whole image read; at least `atLeast`.
    static func payloads(in path: String, atLeast: Int = 1) throws -> [[UInt8]] {
        let fd = try StandardInput.fileDescriptor(path, what: "image")
        defer { if fd != 0 { close(fd) } }
        let bytes = try StandardInput.readAll(
            fd: fd, limit: QRScanner.maximumFileBytes, what: name(path), advice: "give an image of at most \(QRScanner.maximumFileBytes >> 20) MiB")
        let payloads: [[UInt8]]
        do {
            payloads = try QRScanner.scan(imageFile: bytes)
        } catch where error.reason == .libraryUnavailable {
            throw error  // not the image's fault: the machine lacks a library that reads images (69, naming it)
        } catch where error.reason == .timedOut {
            // Never part of an image's codes: a second code the reading did not reach could be the real one.
            throw CLIFailure("\(name(path)): \(said(error)); give a smaller image, or one of the code alone", status: .dataError)
        } catch {
            throw CLIFailure("\(name(path)): \(said(error))", status: .dataError)
        }
        guard !payloads.isEmpty else { throw CLIFailure("no QR code found in \(name(path))", status: .dataError) }
        guard payloads.count >= atLeast else {
            throw CLIFailure("\(name(path)) holds \(count(payloads.count)), fewer than the \(atLeast) expected", status: .dataError)
        }
        return payloads
    }

    /// The codes an option takes from its images, by the library's one rule (`QRScanner.choose`):
    /// every image read whole, then the one code of `kind` (or every part of its one whole) taken,
    /// two of the kind refused, the others named on stderr by kind only.
    static func codes(of kind: QRCodeKind, in paths: [String]) throws -> [String] {
        var payloads: [[UInt8]] = []
        for path in paths { payloads += try self.payloads(in: path) }
        let names = paths.map(name)
        let place = names.count > 1 ? names.dropLast().joined(separator: ", ") + " and " + names.last! : names[0]
        let choice: QRChoice
        do {
            choice = try QRScanner.choose(kind, from: payloads, in: place)
        } catch {
            throw CLIFailure("\(said(error))", status: .dataError)
        }
        if !choice.ignored.isEmpty {
            StandardError.write("sealkit: \(place): took the \(kind.name); ignored \(choice.ignored.joined(separator: ", "))\n")
        }
        return choice.codes
    }

    /// The one code of `kind` in the image at `path` (see `codes(of:in:)`).
    static func single(_ kind: QRCodeKind, in path: String) throws -> String {
        let codes = try codes(of: kind, in: [path])
        guard codes.count == 1 else {
            throw CLIFailure("\(name(path)) holds \(codes.count) parts of a \(kind.name); give an image of the \(kind.name) whole", status: .dataError)
        }
        return codes[0]
    }
}

extension QRCodeKind {
    /// A network transfer's code (`--code-qr`): `sealkit-transfer:...`; a bare code alone is taken too.
    static let transferCode = QRCodeKind(name: "transfer code", prefixes: [TransferLink.scheme])
    /// An offline receiver's offer (`--to-qr`).
    static let offer = QRCodeKind(name: "offer", prefixes: [OfflineOffer.prefix])
    /// An offline sender's reply, whole or in parts (`receive --offline --qr`).
    static let reply = QRCodeKind(name: "reply", plural: "replies", prefixes: [ReplyAssembler.replyPrefix], partPrefix: ReplyAssembler.partPrefix)
    /// A paper backup, whole or in parts (`keys restore --qr`).
    static let paperBackup = QRCodeKind(name: "paper backup", prefixes: [PaperBackup.prefix], partPrefix: PaperBackup.partPrefix)
    /// A share backup's sealed bundle, with its SLIP-39 shares (words of small letters) along (`keys restore --shares --qr`).
    static let shareBackup = QRCodeKind(name: "share backup", prefixes: [ShareBackup.bundlePrefix]) { text in
        !text.isEmpty && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || $0 == " " }
    }
    /// A key (`keys import --qr`): a code that reads as one (bare base64, Rownd's `<link>#<key>`, or
    /// `{"data":...}`), so a key photographed beside a transfer code or a menu's link is taken alone
    /// while two keys are refused. An image whose one code is no key still gives it to `PastedKey`,
    /// whose error says what is wrong with it.
    static let key = QRCodeKind(name: "key") { text in
        var bytes = Array(text.utf8)
        defer { wipe(&bytes) }
        return (try? PastedKey(parsing: bytes)) != nil
    }
}
