import CPNG
import Testing

import SealKitQR

/// Light and dark modules read back out of a rendering, independently of how it was made.
struct ModuleGrid: Equatable, CustomStringConvertible {
    var width: Int
    var rows: [[Bool]]

    var height: Int { rows.count }

    var description: String {
        rows.map { row in String(row.map { $0 ? "#" : "." }) }.joined(separator: "\n")
    }

    /// The modules a code and its 4-module quiet zone should show.
    init(expected code: QRCode) {
        let quiet = QRCode.quietZone
        let side = code.size + 2 * quiet
        width = side
        rows = (0..<side).map { y in (0..<side).map { x in code.isDark(x: x - quiet, y: y - quiet) } }
    }

    init(width: Int, rows: [[Bool]]) {
        self.width = width
        self.rows = rows
    }

    /// Reads `utf8` output: each line holds two module rows, one per half of each character.
    init(halfBlocks text: String) throws {
        var rows: [[Bool]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            var top: [Bool] = []
            var bottom: [Bool] = []
            for scalar in line.unicodeScalars {
                switch scalar {
                case "\u{2588}": top.append(true); bottom.append(true)
                case "\u{2580}": top.append(true); bottom.append(false)
                case "\u{2584}": top.append(false); bottom.append(true)
                case " ": top.append(false); bottom.append(false)
                default: Issue.record("unexpected character U+\(String(scalar.value, radix: 16)) in utf8 output")
                }
            }
            rows += [top, bottom]
        }
        try self.init(checkedRows: rows)
    }

    /// Reads `ascii` output: one line per module row, two characters per module.
    init(ascii text: String) throws {
        var rows: [[Bool]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let characters = Array(line)
            try #require(characters.count % 2 == 0, "odd line length \(characters.count) in ascii output")
            rows.append(
                try stride(from: 0, to: characters.count, by: 2).map { index in
                    let pair = String(characters[index...index + 1])
                    try #require(pair == "##" || pair == "  ", "unexpected \"\(pair)\" in ascii output")
                    return pair == "##"
                })
        }
        try self.init(checkedRows: rows)
    }

    /// Reads a binary PBM, sampling the centre of each `scale` x `scale` cell.
    init(pbm image: [UInt8], scale: Int) throws {
        // Header: "P4", width, height as decimal text separated by whitespace, then one whitespace byte.
        var fields: [String] = []
        var index = 0
        while fields.count < 3, index < image.count {
            while index < image.count, image[index] == 0x20 || image[index] == 0x0A { index += 1 }
            let start = index
            while index < image.count, image[index] != 0x20, image[index] != 0x0A { index += 1 }
            fields.append(String(decoding: image[start..<index], as: UTF8.self))
        }
        index += 1
        try #require(fields.count == 3 && fields[0] == "P4", "not a binary PBM")
        let pixelWidth = try #require(Int(fields[1]))
        let pixelHeight = try #require(Int(fields[2]))
        let rowBytes = (pixelWidth + 7) / 8
        try #require(image.count - index == rowBytes * pixelHeight, "PBM body has the wrong length")
        try #require(pixelWidth % scale == 0 && pixelHeight % scale == 0, "PBM size is not a whole number of modules")
        let body = Array(image[index...])
        let pixel = { (x: Int, y: Int) in body[y * rowBytes + x / 8] & (0x80 >> UInt8(x % 8)) != 0 }
        let rows = (0..<pixelHeight / scale).map { row in
            (0..<pixelWidth / scale).map { column in pixel(column * scale + scale / 2, row * scale + scale / 2) }
        }
        try self.init(checkedRows: rows)
    }

    /// Reads a PNG with libpng (as 8-bit gray), sampling the centre of each cell; every pixel
    /// must be pure black or pure white.
    init(png image: [UInt8], scale: Int) throws {
        var header = png_image()
        header.version = png_uint_32(PNG_IMAGE_VERSION)
        defer { png_image_free(&header) }
        let began = image.withUnsafeBytes { png_image_begin_read_from_memory(&header, $0.baseAddress, $0.count) }
        try #require(began != 0, "libpng cannot read the PNG")
        header.format = png_uint_32(PNG_FORMAT_GRAY)
        let pixelWidth = Int(header.width)
        let pixelHeight = Int(header.height)
        var gray = [UInt8](repeating: 0x7F, count: pixelWidth * pixelHeight)
        let finished = gray.withUnsafeMutableBytes {
            png_image_finish_read(&header, nil, $0.baseAddress, Int32(pixelWidth), nil)
        }
        try #require(finished != 0, "libpng cannot decode the PNG")
        #expect(gray.allSatisfy { $0 == 0 || $0 == 0xFF }, "PNG has grey pixels")
        try #require(pixelWidth % scale == 0 && pixelHeight % scale == 0, "PNG size is not a whole number of modules")
        let rows = (0..<pixelHeight / scale).map { row in
            (0..<pixelWidth / scale).map { column in
                gray[(row * scale + scale / 2) * pixelWidth + column * scale + scale / 2] == 0
            }
        }
        try self.init(checkedRows: rows)
    }

    /// Reads the `M x y h w v1 h-w z` runs of the SVG path back into modules.
    init(svgPath path: String, side: Int) throws {
        var rows = [[Bool]](repeating: [Bool](repeating: false, count: side), count: side)
        for run in path.split(separator: "z") {
            let numbers = run.split(whereSeparator: { "Mhv ".contains($0) }).compactMap { Int($0) }
            try #require(numbers.count == 5, "unexpected path command \(run)")
            let (x, y, length) = (numbers[0], numbers[1], numbers[2])
            try #require(numbers[3] == 1 && numbers[4] == -length, "run \(run) is not one module high")
            try #require(x >= 0 && length > 0 && x + length <= side && (0..<side).contains(y), "run \(run) outside")
            for column in x..<x + length { rows[y][column] = true }
        }
        try self.init(checkedRows: rows)
    }

    private init(checkedRows rows: [[Bool]]) throws {
        let width = rows.first?.count ?? 0
        try #require(rows.allSatisfy { $0.count == width }, "rows of different widths")
        self.init(width: width, rows: rows)
    }

    /// Trims a trailing light row: `utf8` output has an even number of module rows, the symbol an odd one.
    func trimmed(toHeight height: Int) -> ModuleGrid {
        ModuleGrid(width: width, rows: Array(rows.prefix(height)))
    }

    /// A binary PBM, `scale` pixels per module, for zbarimg.
    func pbm(scale: Int) -> [UInt8] {
        let pixels = width * scale
        let rowBytes = (pixels + 7) / 8
        var image = Array("P4\n\(pixels) \(height * scale)\n".utf8)
        for row in rows {
            var packed = [UInt8](repeating: 0, count: rowBytes)
            for x in 0..<pixels where row[x / scale] { packed[x / 8] |= 0x80 >> UInt8(x % 8) }
            for _ in 0..<scale { image += packed }
        }
        return image
    }
}
