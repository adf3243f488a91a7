import SealTestSupport
import Testing

import SealKitQR

/// Renders `code` in `format` and reads the modules back with the parser for that format.
func readBack(_ code: QRCode, as format: QRFormat) throws -> ModuleGrid {
    let output = try code.rendered(as: format)
    let side = code.sizeWithQuietZone
    switch format {
    case .utf8:
        return try ModuleGrid(halfBlocks: String(decoding: output, as: UTF8.self)).trimmed(toHeight: side)
    case .ansi:
        return try ModuleGrid(halfBlocks: try withoutColours(String(decoding: output, as: UTF8.self)))
            .trimmed(toHeight: side)
    case .ascii:
        return try ModuleGrid(ascii: String(decoding: output, as: UTF8.self))
    case .png:
        return try ModuleGrid(png: output, scale: QRCode.pixelsPerModule)
    case .pbm:
        return try ModuleGrid(pbm: output, scale: QRCode.pixelsPerModule)
    case .svg:
        let document = try SVGDocument(output)
        return try ModuleGrid(svgPath: document.path, side: side)
    }
}

let colourPrefix = "\u{1B}[38;5;16;48;5;231m"
let colourReset = "\u{1B}[0m"

/// Removes the colour codes around each `ansi` line, requiring both on every line.
func withoutColours(_ text: String) throws -> String {
    var plain = ""
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
        try #require(line.hasPrefix(colourPrefix), "ansi line does not start by setting black on white")
        try #require(line.hasSuffix(colourReset), "ansi line does not end with a reset")
        plain += line.dropFirst(colourPrefix.count).dropLast(colourReset.count) + "\n"
    }
    return plain
}

/// Scans a rendering the way a reader would see it: image formats as written,
/// text formats turned back into a bitmap first.
func scan(_ code: QRCode, as format: QRFormat) throws -> [UInt8] {
    switch format {
    case .png, .pbm:
        return try Zbar.decode(code.rendered(as: format), named: "code.\(format.rawValue)")
    case .utf8, .ansi, .ascii, .svg:
        // Two pixels per module is plenty for zbar and keeps large codes fast to scan.
        return try Zbar.decode(readBack(code, as: format).pbm(scale: 2), named: "code-\(format.rawValue).pbm")
    }
}

/// Deterministic bytes covering the whole 0...255 range (SplitMix64), so failures reproduce.
func pseudoRandomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
}
