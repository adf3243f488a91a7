extension QRCode {
    /// U+2580 UPPER HALF BLOCK, U+2584 LOWER HALF BLOCK, U+2588 FULL BLOCK, in UTF-8.
    private static let upperHalf: [UInt8] = [0xE2, 0x96, 0x80]
    private static let lowerHalf: [UInt8] = [0xE2, 0x96, 0x84]
    private static let fullBlock: [UInt8] = [0xE2, 0x96, 0x88]

    // Colours from the 256-colour cube (16 = #000000, 231 = #ffffff) rather than the basic
    // 30-37/40-47: terminal themes restyle the basic sixteen (a "black" that is grey, a
    // "white" that is beige) but leave the cube alone, and QR readers need strong contrast.
    private static let blackOnWhite = Array("\u{1B}[38;5;16;48;5;231m".utf8)
    private static let reset = Array("\u{1B}[0m".utf8)

    /// Two module rows per line: the glyph's top half is the upper row, its bottom half the lower.
    /// `inverted` draws the light modules instead of the dark ones, for a terminal that draws light
    /// text on a dark background.
    func halfBlockText(colored: Bool, inverted: Bool = false) -> [UInt8] {
        let quiet = Self.quietZone
        let side = sizeWithQuietZone
        var text: [UInt8] = []
        text.reserveCapacity((side + 1) / 2 * (side * 3 + 24))
        for top in stride(from: 0, to: side, by: 2) {
            if colored { text += Self.blackOnWhite }
            for column in 0..<side {
                let x = column - quiet
                switch (isDark(x: x, y: top - quiet) != inverted, isDark(x: x, y: top + 1 - quiet) != inverted) {
                case (true, true): text += Self.fullBlock
                case (true, false): text += Self.upperHalf
                case (false, true): text += Self.lowerHalf
                case (false, false): text.append(UInt8(ascii: " "))
                }
            }
            if colored { text += Self.reset }
            text.append(UInt8(ascii: "\n"))
        }
        return text
    }

    /// One line per module row, two characters per module so modules come out roughly square;
    /// `inverted` marks the light modules instead of the dark ones.
    func asciiText(inverted: Bool = false) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(sizeWithQuietZone * (2 * sizeWithQuietZone + 1))
        forEachModuleRow { _, isDark in
            for column in 0..<sizeWithQuietZone {
                let mark = isDark(column) != inverted ? UInt8(ascii: "#") : UInt8(ascii: " ")
                text.append(mark)
                text.append(mark)
            }
            text.append(UInt8(ascii: "\n"))
        }
        return text
    }
}
