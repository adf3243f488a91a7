import Testing

@_spi(CLI) import SealKitQR

@Suite("Formats")
struct FormatTests {
    static let code = try! QRCode("https://example.com/sealkit?v=1", correction: .high)

    @Test("Each format shows exactly the symbol's modules in a 4-module light quiet zone", arguments: QRFormat.allCases)
    func modulesAndQuietZone(format: QRFormat) throws {
        let code = Self.code
        let grid = try readBack(code, as: format)
        let side = code.size + 8
        try #require(grid.width == side && grid.height == side, "a \(grid.width) x \(grid.height) grid, not \(side) x \(side)")
        for index in 0..<side {
            for band in Array(0..<4) + Array(side - 4..<side) {
                #expect(!grid.rows[band][index] && !grid.rows[index][band], "quiet zone dark at \(band), \(index)")
            }
        }
        // The finder pattern's outer corners sit right inside the quiet zone.
        #expect(grid.rows[4][4] && grid.rows[4][side - 5] && grid.rows[side - 5][4])
        #expect(grid == ModuleGrid(expected: code))
    }

    @Test("utf8 uses only half blocks and spaces, two module rows per line")
    func utf8Layout() throws {
        let text = String(decoding: try Self.code.rendered(as: .utf8), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "")
        #expect(lines.count - 1 == (Self.code.size + 8 + 1) / 2)
        #expect(text.unicodeScalars.allSatisfy { " \n\u{2580}\u{2584}\u{2588}".unicodeScalars.contains($0) })
    }

    @Test("ansi sets black on white on every line and resets at its end")
    func ansiColours() throws {
        let ansi = String(decoding: try Self.code.rendered(as: .ansi), as: UTF8.self)
        let utf8 = String(decoding: try Self.code.rendered(as: .utf8), as: UTF8.self)
        #expect(try withoutColours(ansi) == utf8)
    }

    @Test("terminalWidth is the columns the text formats use; nil for images", arguments: QRFormat.allCases)
    func terminalWidth(format: QRFormat) throws {
        let code = Self.code
        guard format.isTerminalText else {
            #expect(code.terminalWidth(for: format) == nil)
            return
        }
        var text = String(decoding: try code.rendered(as: format), as: UTF8.self)
        if format == .ansi { text = try withoutColours(text) }
        let widths = Set(text.split(separator: "\n").map { $0.unicodeScalars.count })
        #expect(widths == [try #require(code.terminalWidth(for: format))])
        #expect(code.terminalWidth(for: .utf8) == code.size + 8)
        #expect(code.terminalWidth(for: .ascii) == 2 * (code.size + 8))
    }

    @Test("svg is a standalone document: white background, one dark path, crisp edges")
    func svgDocument() throws {
        let side = Self.code.size + 8
        let document = try SVGDocument(try Self.code.rendered(as: .svg))
        #expect(document.rootName == "svg")
        #expect(document.rootAttributes["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(document.rootAttributes["viewBox"] == "0 0 \(side) \(side)")
        #expect(document.rootAttributes["width"] == "\(side * QRCode.pixelsPerModule)")
        #expect(document.rootAttributes["shape-rendering"] == "crispEdges")
        #expect(document.rects == [["width": "\(side)", "height": "\(side)", "fill": "#ffffff"]])
        #expect(document.paths.count == 1)
        #expect(document.paths.first?["fill"] == "#000000")
    }

    @Test("png and pbm use pixelsPerModule pixels per module")
    func rasterSize() throws {
        let pixels = (Self.code.size + 8) * QRCode.pixelsPerModule
        let pbm = try Self.code.rendered(as: .pbm)
        let header = Array("P4\n\(pixels) \(pixels)\n".utf8)
        #expect(Array(pbm.prefix(header.count)) == header)
        #expect(pbm.count == header.count + (pixels + 7) / 8 * pixels)
        let png = try Self.code.rendered(as: .png)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }
}
