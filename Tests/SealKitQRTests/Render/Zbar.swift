import Foundation
import SealTestSupport
import Testing

/// Decodes QR codes with zbarimg (Debian's zbar-tools), a reader independent of libqrencode.
enum Zbar {
    /// Scans one image file and returns the symbol's bytes exactly: `-Sbinary` stops zbar from
    /// guessing a character set and converting, and `--raw` drops the "QR-Code:" prefix. (Tests that
    /// call it say `.requires(.zbarimg)`.)
    static func decode(imageAt url: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
        let result = try ChildProcess.run("zbarimg", ["--nodbus", "--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", url.path])
        try #require(
            result.status == 0,
            "zbarimg found no QR code in \(url.lastPathComponent) (exit \(result.status))",
            sourceLocation: sourceLocation)
        return result.stdout
    }

    /// Writes `image` to a scratch file, scans it, and removes the file.
    static func decode(
        _ image: [UInt8], named name: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sealqr-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent(name)
        try Data(image).write(to: url)
        return try decode(imageAt: url, sourceLocation: sourceLocation)
    }
}
