import CPNG

extension QRCode {
    /// One path of dark runs on a white rectangle, in module units; `crispEdges` keeps
    /// renderers from anti-aliasing the seams between neighbouring runs.
    func svgDocument() -> [UInt8] {
        let side = sizeWithQuietZone
        let pixels = side * Self.pixelsPerModule
        var path = ""
        forEachModuleRow { row, isDark in
            var column = 0
            while column < side {
                guard isDark(column) else { column += 1; continue }
                let start = column
                while column < side, isDark(column) { column += 1 }
                path += "M\(start) \(row)h\(column - start)v1h-\(column - start)z"
            }
        }
        let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(pixels)" height="\(pixels)" \
            viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">
            <rect width="\(side)" height="\(side)" fill="#ffffff"/>
            <path fill="#000000" d="\(path)"/>
            </svg>

            """
        return Array(document.utf8)
    }

    /// Binary PBM (P4): rows packed eight pixels to a byte, most significant bit first, 1 for black.
    func pbmImage() -> [UInt8] {
        let scale = Self.pixelsPerModule
        let pixels = sizeWithQuietZone * scale
        let rowBytes = (pixels + 7) / 8
        var image = Array("P4\n\(pixels) \(pixels)\n".utf8)
        let header = image.count
        image += [UInt8](repeating: 0, count: rowBytes * pixels)
        forEachModuleRow { row, isDark in
            var packed = [UInt8](repeating: 0, count: rowBytes)
            for pixel in 0..<pixels where isDark(pixel / scale) {
                packed[pixel / 8] |= 0x80 >> UInt8(pixel % 8)
            }
            for line in 0..<scale {
                let start = header + (row * scale + line) * rowBytes
                image.replaceSubrange(start..<start + rowBytes, with: packed)
            }
        }
        return image
    }

    /// The code with its quiet zone as 8-bit gray pixels, row by row, `scale` pixels a module: black (0) on
    /// white (255), `side` pixels square. What the PNG holds, and what tests compose their photos from.
    package func grayPixels(scale: Int = pixelsPerModule) -> (side: Int, pixels: [UInt8]) {
        let side = sizeWithQuietZone * scale
        var gray = [UInt8](repeating: 0xFF, count: side * side)
        forEachModuleRow { row, isDark in
            for pixel in 0..<side where isDark(pixel / scale) {
                for line in 0..<scale { gray[(row * scale + line) * side + pixel] = 0 }
            }
        }
        return (side, gray)
    }

    /// 8-bit grayscale through libpng's simplified API, which handles its own errors without setjmp.
    func pngImage() throws(QRCodeError) -> [UInt8] {
        let (pixels, gray) = grayPixels()

        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        image.width = png_uint_32(pixels)
        image.height = png_uint_32(pixels)
        image.format = png_uint_32(PNG_FORMAT_GRAY)
        defer { png_image_free(&image) }

        // First pass measures, second writes: libpng compresses twice, but no size is guessed.
        var byteCount: png_alloc_size_t = 0
        let measured = gray.withUnsafeBytes { buffer in
            png_image_write_to_memory(&image, nil, &byteCount, 0, buffer.baseAddress, Int32(pixels), nil)
        }
        guard measured != 0, byteCount > 0 else { throw Self.pngFailure(image) }
        var png = [UInt8](repeating: 0, count: Int(byteCount))
        let written = png.withUnsafeMutableBytes { output in
            gray.withUnsafeBytes { buffer in
                png_image_write_to_memory(
                    &image, output.baseAddress, &byteCount, 0, buffer.baseAddress, Int32(pixels), nil)
            }
        }
        guard written != 0 else { throw Self.pngFailure(image) }
        png.removeSubrange(Int(byteCount)...)
        return png
    }

    private static func pngFailure(_ image: png_image) -> QRCodeError {
        var message = image.message
        let reason = withUnsafeBytes(of: &message) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return .renderingFailed(format: .png, reason: reason.isEmpty ? "libpng error" : reason)
    }
}
