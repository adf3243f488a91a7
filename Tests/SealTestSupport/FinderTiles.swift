/// A screen tiled with QR finder patterns, as 8-bit gray pixels row by row: 7 × 7 modules of `module`
/// pixels, `gap` light modules apart. zxing-cpp pairs up every three candidate patterns, so its time grows
/// with the cube of their number; zbar reads such a screen in a fraction of a second and finds nothing. The
/// image that makes zxing-cpp run out of its budget, for the scanner's tests and the CLI's.
public func finderTilePixels(width: Int, height: Int, module: Int = 3, gap: Int = 2) -> [UInt8] {
    let period = 7 + gap
    func dark(_ x: Int, _ y: Int) -> Bool {
        guard x < 7, y < 7 else { return false }
        // Rings around the centre: 0 and 1 the dark eye, 2 light, 3 the dark border.
        return max(abs(x - 3), abs(y - 3)) != 2
    }
    let rows = (0..<period).map { row in (0..<width).map { x -> UInt8 in dark(x / module % period, row) ? 0 : 255 } }
    var pixels = [UInt8]()
    pixels.reserveCapacity(width * height)
    for y in 0..<height { pixels += rows[y / module % period] }
    return pixels
}

/// A `width` × `height` screen of finder patterns (`finderTilePixels`) with a square image over its top-left
/// corner, on a light margin of `margin` pixels: a code zbar reads at once beside what zxing-cpp cannot finish.
/// - Parameter code: the square's side and its gray pixels, row by row (`QRCode.grayPixels(scale:)`).
public func finderTilePixels(width: Int, height: Int, with code: (side: Int, pixels: [UInt8]), margin: Int = 60) -> [UInt8] {
    var pixels = finderTilePixels(width: width, height: height)
    for y in 0..<(code.side + 2 * margin) {
        pixels.replaceSubrange(y * width..<y * width + code.side + 2 * margin, with: repeatElement(255, count: code.side + 2 * margin))
    }
    for y in 0..<code.side {
        let row = (margin + y) * width + margin
        pixels.replaceSubrange(row..<row + code.side, with: code.pixels[y * code.side..<(y + 1) * code.side])
    }
    return pixels
}
