// Showing a code on screen and reading codes from a photo: libqrencode out, zbar and zxing-cpp in.
import SealKitQR

// An app that draws the code itself (a canvas, a view) asks for each module; sealkit's own formats do the same.
func drawLink(_ link: String, fill: (_ x: Int, _ y: Int, _ side: Int) -> Void) throws -> [UInt8] {
    // A higher correction level survives a smudged screen at the cost of room: check the payload fits first.
    let correction = QRErrorCorrection.quartile
    guard link.utf8.count <= QRCode.maximumPayload(correction: correction) else { return [] }
    let code = try QRCode(Array(link.utf8), correction: correction)
    print("version \(code.version), \(code.size) modules, \(code.correction)")
    let side = QRCode.pixelsPerModule
    for y in 0..<code.size {
        for x in 0..<code.size where code.isDark(x: x, y: y) {
            fill((x + QRCode.quietZone) * side, (y + QRCode.quietZone) * side, side)
        }
    }
    print("canvas: \(code.sizeWithQuietZone * side) pixels a side, quiet zone included")
    // Or let SealKit write it: a PNG for a file, or text for a terminal (inverted where the terminal draws light
    // text on a dark background, so that the modules still come out dark on light).
    let format = QRFormat.png
    if format.isTerminalText { return try code.rendered(as: format, inverted: true) }
    return try code.rendered(as: format)
}

// A photo may hold more than one code: take the one of the kind the app expects, and say what else it held.
func scanTransferCode(photo: [UInt8]) async throws -> String {
    guard photo.count <= QRScanner.maximumFileBytes else { return "" }
    // Bounded by design: larger images, or progressive JPEGs with more scans, are refused before decoding.
    print("up to \(QRScanner.maximumPixelCount) pixels, \(QRScanner.maximumProgressiveScans) JPEG scans")
    let payloads = try await QRScanner.codes(inImageFile: photo)
    let kind = QRCodeKind(name: "transfer code", plural: "transfer codes", prefixes: ["sealkit-transfer:"])
    let choice = try QRScanner.choose(kind, from: payloads, in: "the photo")
    if !choice.ignored.isEmpty { print("ignored \(choice.ignored.count) other codes, not \(kind.plural)") }
    return choice.codes[0]
}

// Frames from a camera arrive as luminance already: no file to decode.
func scanFrame(width: Int, height: Int, luminance: [UInt8]) throws -> [[UInt8]] {
    QRScanner.scan(try GrayImage(width: width, height: height, luminance: luminance))
}
