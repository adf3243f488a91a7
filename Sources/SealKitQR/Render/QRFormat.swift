import SealKit

/// The ways a ``QRCode`` can be written out; every one includes the 4-module quiet zone.
public enum QRFormat: String, CaseIterable, Sendable {
    /// Unicode half blocks, two module rows per line, dark modules drawn in the text colour.
    /// Scans where the terminal draws dark text on a light background; on a dark background it
    /// comes out light-on-dark, which SealKit reads but many phone readers do not: render it
    /// `inverted` there.
    case utf8
    /// The `utf8` half blocks with explicit black-on-white colours on every line,
    /// so it scans on dark and light terminal themes alike.
    case ansi
    /// `##` for a dark module and two spaces for a light one, one line per module row, for
    /// terminals without Unicode: for copying, not scanning (its glyphs leave gaps inside each
    /// module, and screenshots of it do not scan reliably).
    case ascii
    /// A standalone SVG document: a white background and one path of dark modules.
    case svg
    /// An 8-bit grayscale PNG, ``QRCode/pixelsPerModule`` pixels per module.
    case png
    /// A binary (P4) portable bitmap, ``QRCode/pixelsPerModule`` pixels per module.
    case pbm

    /// Whether the format is text meant for a terminal rather than an image file.
    public var isTerminalText: Bool {
        switch self {
        case .utf8, .ansi, .ascii: true
        case .svg, .png, .pbm: false
        }
    }
}

extension QRCode {
    /// Pixels along each side of one module in `png` and `pbm` output; `svg` uses it for its
    /// default display size. Large enough for camera and file scanners, small enough for version 40.
    public static let pixelsPerModule = 8

    /// Modules along one side including the quiet zone on both sides.
    public var sizeWithQuietZone: Int { size + 2 * Self.quietZone }

    /// Writes the code in a format.
    /// - Parameters:
    ///   - format: the output format.
    ///   - inverted: for `utf8` and `ascii`, draw the light modules instead of the dark ones, so a
    ///     terminal with light text on a dark background shows dark modules on light; the formats
    ///     with colours of their own (`ansi`, `svg`, `png`, `pbm`) ignore it.
    /// - Returns: the encoded text (UTF-8) or image bytes.
    /// - Throws: `SealKitError/Reason/fileSystem` if libpng cannot write the PNG
    ///   (only on running out of memory); the other formats cannot fail.
    public func rendered(as format: QRFormat, inverted: Bool = false) throws(SealKitError) -> [UInt8] {
        switch format {
        case .utf8: return halfBlockText(colored: false, inverted: inverted)
        case .ansi: return halfBlockText(colored: true)
        case .ascii: return asciiText(inverted: inverted)
        case .svg: return svgDocument()
        case .png:
            do {
                return try pngImage()
            } catch {
                throw SealKitError(error)
            }
        case .pbm: return pbmImage()
        }
    }

    /// Terminal columns a text format needs, quiet zone included, so a caller can tell
    /// before printing whether a code would wrap (and so not scan).
    /// - Parameter format: the output format.
    /// - Returns: the width in columns, or nil for image formats.
    @_spi(CLI) public func terminalWidth(for format: QRFormat) -> Int? {
        switch format {
        case .utf8, .ansi: sizeWithQuietZone
        case .ascii: 2 * sizeWithQuietZone
        case .svg, .png, .pbm: nil
        }
    }

    /// Visits every module of the symbol and its quiet zone, row by row; `(0, 0)` is the
    /// top-left corner of the quiet zone.
    func forEachModuleRow(_ body: (_ row: Int, _ isDark: (_ column: Int) -> Bool) -> Void) {
        let quiet = Self.quietZone
        for row in 0..<sizeWithQuietZone {
            body(row) { column in isDark(x: column - quiet, y: row - quiet) }
        }
    }
}
