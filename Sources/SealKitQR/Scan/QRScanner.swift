import CJPEG
import CPNG
import CZXing
import CZbar

import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// An 8-bit grayscale image, one byte per pixel, row by row: what `QRScanner/scan(_:)` reads.
///
/// Make one from an image file's bytes with `init(imageFile:)` (PNG, JPEG, PBM, PGM or PPM), or from
/// pixels a camera or a renderer gave with `init(width:height:luminance:)`.
public struct GrayImage: Sendable {
    /// Columns.
    public let width: Int
    /// Rows.
    public let height: Int
    /// One byte of luminance per pixel, row by row.
    public let pixels: [UInt8]

    package init(width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Decodes an image file: PNG (libpng), JPEG (libjpeg-turbo, read strictly, at most
    /// `QRScanner/maximumProgressiveScans` scans) or netpbm's PBM, PGM and PPM, to gray.
    /// - Parameter bytes: the file's contents, at most `QRScanner/maximumFileBytes`.
    /// - Throws: `SealKitError/Reason/unreadableImage` for bytes that are no image SealKit reads, an
    ///   image of more than `QRScanner/maximumPixelCount` pixels (checked from its header, before its
    ///   pixels are allocated), or a damaged one; `SealKitError/Reason/libraryUnavailable` when zbar,
    ///   zxing-cpp or (for a JPEG) libjpeg cannot be loaded.
    public init(imageFile bytes: [UInt8]) throws(SealKitError) {
        try QRScanner.loadDecoders()
        guard bytes.count <= QRScanner.maximumFileBytes else {
            throw SealKitError(.unreadableImage, "the image file is larger than \(QRScanner.maximumFileBytes >> 20) MiB")
        }
        do {
            self = try QRScanner.decode(bytes)
        } catch {
            throw SealKitError(error)
        }
    }

    /// An image from its pixels.
    /// - Parameters:
    ///   - width: columns, at least 1.
    ///   - height: rows, at least 1.
    ///   - luminance: one byte per pixel (0 black, 255 white), row by row: `width` × `height` bytes.
    /// - Throws: `SealKitError/Reason/invalidArgument` when the size and the pixels disagree,
    ///   `SealKitError/Reason/unreadableImage` for more than `QRScanner/maximumPixelCount` pixels, and
    ///   `SealKitError/Reason/libraryUnavailable` when zbar or zxing-cpp, which `QRScanner` reads it
    ///   with, cannot be loaded.
    public init(width: Int, height: Int, luminance: [UInt8]) throws(SealKitError) {
        try QRScanner.loadDecoders()
        guard width > 0, height > 0 else { throw SealKitError(.invalidArgument, "an image needs at least one row and one column") }
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, count <= QRScanner.maximumPixelCount else {
            throw SealKitError(ScanError.tooLarge(width: width, height: height))
        }
        guard luminance.count == count else {
            throw SealKitError(.invalidArgument, "a \(width) × \(height) image has \(count) pixels, not \(luminance.count)")
        }
        self.init(width: width, height: height, pixels: luminance)
    }

    /// The negative: light-on-dark codes become dark-on-light.
    func inverted() -> GrayImage { GrayImage(width: width, height: height, pixels: pixels.map { 255 - $0 }) }
}

/// Reads QR codes out of images: PNG (libpng), JPEG (libjpeg-turbo) and netpbm's PBM, PGM and PPM,
/// decoded by zbar in its binary mode, so payloads come back byte for byte.
///
/// Two maintained decoders, each strong where the other is weak (docs/transfer.md, "Reading QR
/// codes", has the measurements), both reading every image, upright and inverted: zbar for its speed,
/// its binary mode, low contrast and noise; zxing-cpp for codes seen at an angle (perspective) and
/// terminal screenshots that zbar misses. Every reading reads the whole image: no code is left out.
///
/// An app can host it: nothing here waits on a semaphore or forks the host. zxing-cpp cannot be
/// stopped and some images cost it time growing with the cube of their finder patterns, so it runs
/// in a helper process with a time budget: the host's own executable, started afresh with
/// `posix_spawn` (an exec, not a fork of the host's threads and locks) and stopped, before the host's
/// `main` runs, by a constructor in SealKit's C++ part that serves the one image and exits. So the
/// library must be part of the executable, as SwiftPM links it (statically, or as a library the
/// executable is linked against), not a plugin loaded later with `dlopen`. To take only the code an
/// option needs out of what an image holds, see `choose(_:from:in:)`.
///
/// The decoders are not linked: zbar (`libzbar.so.0`), zxing-cpp (`libZXing.so.2`) and libjpeg
/// (`libjpeg.so.62`) are opened with `dlopen` by the first image read, once per process, so a program
/// that reads no image does not load them (nor zbar's X11, V4L and D-Bus libraries). A machine without
/// one gets `SealKitError/Reason/libraryUnavailable` from `GrayImage`'s initializers, naming the
/// library and the Debian package that provides it (libzbar0, libzxing2, libjpeg62-turbo).
public enum QRScanner {
    /// The most pixels an image may have: 40 megapixels (a 7,680 × 5,120 photo), checked from the
    /// header before anything is allocated for the pixels, so a decompression bomb costs nothing.
    public static let maximumPixelCount = 40_000_000
    /// The most bytes of an image file read.
    public static let maximumFileBytes = 64 << 20
    /// The most scans a progressive JPEG may have (libjpeg-turbo's encoders write 10 at most): each
    /// scan costs a pass over the whole image, so a file of many tiny scans is refused at scan 101.
    public static let maximumProgressiveScans = Int(SEALKIT_JPEG_MAX_SCANS)

    /// Every QR code in `bytes` (an image file's contents), in reading order: top to bottom, then
    /// left to right.
    ///
    /// Synchronous: it reads on the calling thread and waits for zxing-cpp's helper process, at most
    /// its time budget (1.5 s and 0.1 s a megapixel of CPU time; three times that of wall-clock time on
    /// a machine too loaded to give it the CPU). From async code, `codes(inImageFile:)` reads the same
    /// without blocking a thread.
    /// Every code is read, whatever it starts with: stopping at the first code a caller looks for could
    /// hide a second one, which the caller must see to refuse an image holding two (`QRScanner.choose`).
    /// - Parameter bytes: a PNG, JPEG, PBM, PGM or PPM file's contents.
    /// - Returns: each code's payload, byte for byte.
    /// - Throws: `SealKitError/Reason/unreadableImage` for bytes that are no image SealKit reads,
    ///   an image too large, or a damaged one, and when zxing-cpp's helper stopped before the end
    ///   of its reading; `SealKitError/Reason/timedOut` when the image could not be read whole within
    ///   the budget (an image made to cost zxing-cpp time, or a very large one on a slow machine): never
    ///   part of the codes, as a caller choosing one of them must not decide on part of the image;
    ///   `SealKitError/Reason/libraryUnavailable` when a decoder cannot be loaded.
    public static func scan(imageFile bytes: [UInt8]) throws(SealKitError) -> [[UInt8]] {
        try readWhole(try GrayImage(imageFile: bytes))
    }

    /// Every QR code in `image`, in reading order: top to bottom, then left to right.
    ///
    /// Both decoders read every image, upright and inverted (light-on-dark): zxing-cpp in its helper
    /// process while zbar reads the image and its negative on the calling thread. A code both find, or
    /// found upright and inverted, is one code: the same payload where the two bounding boxes overlap.
    /// Synchronous, as `scan(imageFile:)`.
    ///
    /// An image that cannot be read whole (where `scan(imageFile:)` throws `SealKitError/Reason/timedOut`
    /// or `SealKitError/Reason/unreadableImage`) reads as holding no code: what one decoder found alone
    /// is never returned as the image's codes.
    /// - Parameter image: the pixels.
    /// - Returns: each code's payload, byte for byte.
    public static func scan(_ image: GrayImage) -> [[UInt8]] {
        (try? readWhole(image)) ?? []
    }

    /// Every code in `image` from both decoders, or an error when zxing-cpp's reading did not come back
    /// whole: the one place a reading is judged complete.
    static func readWhole(_ image: GrayImage) throws(SealKitError) -> [[UInt8]] {
        let zxing = ZXingJob(image)
        let found = merged(zbarCodes(image), zbarCodes(image.inverted()))
        return ordered(merged(found, try zxing.finish().codes(of: image)), height: image.height)
    }

    /// Every QR code in `bytes` (an image file's contents), in reading order, as
    /// `scan(imageFile:)` reads them, without blocking a thread: zbar reads the image and its
    /// negative in two child tasks, and the task sleeps between looks at zxing-cpp's helper process.
    /// Cancelling the task stops the helper and throws `SealKitError/Reason/cancelled`: part of a
    /// reading is never returned.
    /// - Parameter bytes: a PNG, JPEG, PBM, PGM or PPM file's contents.
    /// - Returns: each code's payload, byte for byte.
    /// - Throws: as `scan(imageFile:)`, and `SealKitError/Reason/cancelled`.
    public static func codes(inImageFile bytes: [UInt8]) async throws(SealKitError) -> [[UInt8]] {
        try await readWhole(try GrayImage(imageFile: bytes))
    }

    /// Every QR code in `image`, in reading order, without blocking a thread (see `codes(inImageFile:)`).
    /// An image that cannot be read whole, or whose task is cancelled, reads as holding no code, as with
    /// `scan(_:)`.
    /// - Parameter image: the pixels.
    /// - Returns: each code's payload, byte for byte.
    public static func codes(in image: GrayImage) async -> [[UInt8]] {
        (try? await readWhole(image)) ?? []
    }

    /// `readWhole(_:)` without blocking a thread.
    static func readWhole(_ image: GrayImage) async throws(SealKitError) -> [[UInt8]] {
        let zxing = ZXingJob(image)
        async let upright = zbarCodes(image)
        async let inverted = zbarCodes(image.inverted())
        let found = merged(await upright, await inverted)
        while !Task.isCancelled, zxing.poll() == 0 {
            try? await Task.sleep(for: .milliseconds(5))
        }
        guard !Task.isCancelled else {
            zxing.cancel()
            throw SealKitError(.cancelled, "the image's reading was cancelled")
        }
        return ordered(merged(found, try zxing.finish().codes(of: image)), height: image.height)
    }

    /// How much CPU time zxing-cpp may spend on an image (upright and inverted) before it is stopped: a
    /// second and a half, and a tenth of a second more for each megapixel (5.5 s at the 40-megapixel
    /// limit). zxing-cpp takes 1.3 s on a 40-megapixel photo of noise and tens of milliseconds on a
    /// screenshot; an image made to cost it more (one tiled with finder patterns costs time growing
    /// with the cube of their number) is cut off here, and the image is not read whole.
    package static func zxingBudget(width: Int, height: Int) -> Duration {
        .milliseconds(1_500 + width * height / 10_000)
    }

    /// The longest a reading waits for zxing-cpp in wall-clock time, when a loaded machine does not give
    /// it the CPU time to spend its budget sooner: three times the budget.
    package static func zxingWallLimit(width: Int, height: Int) -> Duration {
        zxingBudget(width: width, height: height) * Int(SEALKIT_ZXING_WALL_FACTOR)
    }

    /// One code a decoder found: its payload and the bounding box of its corners.
    struct Code: Equatable, Sendable {
        var payload: [UInt8]
        var left: Int, top: Int, right: Int, bottom: Int

        /// Whether the two boxes share a pixel.
        func overlaps(_ other: Code) -> Bool {
            left <= other.right && other.left <= right && top <= other.bottom && other.top <= bottom
        }
    }

    /// `first` with every code of `second` that is not already there (the same payload, overlapping).
    static func merged(_ first: [Code], _ second: [Code]) -> [Code] {
        var all = first
        for code in second where !all.contains(where: { $0.payload == code.payload && $0.overlaps(code) }) {
            all.append(code)
        }
        return all
    }

    /// Top to bottom, then left to right: codes whose tops are within a tenth of the image's height
    /// read as one row.
    static func ordered(_ found: [Code], height: Int) -> [[UInt8]] {
        let band = max(1, height / 10)
        return found.sorted { a, b in
            if abs(a.top - b.top) > band { return a.top < b.top }
            return a.left < b.left
        }.map(\.payload)
    }

    /// zxing-cpp reading an image, upright and inverted, in a helper process (CZXing) that is
    /// killed when its budget runs out (zxing-cpp itself cannot be stopped). The pixels are copied to
    /// the helper when the job starts.
    final class ZXingJob {
        private var job = sealkit_zxing_job(pid: -1, fd: -1, deadline: 0, answer: nil, limit: 0, state: 0, budget: 0, cutoff: 0)
        private static let capacity = 64

        init(_ image: GrayImage, budget: Duration? = nil) {
            let budget = budget ?? QRScanner.zxingBudget(width: image.width, height: image.height)
            let milliseconds = Int32(clamping: budget.components.seconds * 1_000 + budget.components.attoseconds / 1_000_000_000_000_000)
            _ = image.pixels.withUnsafeBufferPointer { pixels in
                sealkit_zxing_start(pixels.baseAddress, Int32(image.width), Int32(image.height), Self.capacity, milliseconds, 1, &job)
            }
        }

        /// What the helper answered: the codes it found, or why there is no whole reading.
        enum Reading {
            case whole([Code])
            case outOfTime
            case failed

            /// The codes of a whole reading of `image`; an error otherwise.
            func codes(of image: GrayImage) throws(SealKitError) -> [Code] {
                switch self {
                case .whole(let codes):
                    return codes
                case .outOfTime:
                    let budget = QRScanner.zxingBudget(width: image.width, height: image.height)
                    let tenths = Int(budget.components.seconds) * 10 + Int(budget.components.attoseconds / 100_000_000_000_000_000)
                    throw SealKitError(
                        .timedOut,
                        "the image was not read whole: zxing-cpp did not finish within its budget of \(tenths / 10).\(tenths % 10) s of CPU time")
                case .failed:
                    throw SealKitError(.unreadableImage, "the image was not read whole: zxing-cpp's reader stopped before the end")
                }
            }
        }

        /// The codes found, or why there is no whole reading (the budget ran out; the helper crashed or
        /// could not be started).
        func finish() -> Reading {
            var codes = [sealkit_zxing_code](repeating: sealkit_zxing_code(), count: Self.capacity)
            let count = sealkit_zxing_finish(&job, &codes, Self.capacity)
            if count == SEALKIT_ZXING_OUT_OF_TIME { return .outOfTime }
            guard count >= 0 else { return .failed }
            return .whole(codes.prefix(count).map { code in
                defer { free(code.bytes) }
                return Code(
                    payload: Array(UnsafeBufferPointer(start: code.bytes, count: code.count)),
                    left: Int(code.left), top: Int(code.top), right: Int(code.right), bottom: Int(code.bottom))
            })
        }

        /// Looks at the helper's answer without waiting: 0 while it is still working.
        func poll() -> Int32 { sealkit_zxing_poll(&job) }

        /// Stops the helper without its answer.
        func cancel() { sealkit_zxing_cancel(&job) }

        deinit { sealkit_zxing_cancel(&job) }
    }

    /// zxing-cpp's reading alone, upright and inverted, in reading order.
    package static func zxingScan(_ image: GrayImage, budget: Duration? = nil) -> [[UInt8]] {
        guard case .whole(let codes) = ZXingJob(image, budget: budget).finish() else { return [] }
        return ordered(codes, height: image.height)
    }

    /// zbar's reading alone (upright only), in reading order.
    package static func zbarScan(_ image: GrayImage) -> [[UInt8]] {
        ordered(zbarCodes(image), height: image.height)
    }

    /// zbar's reading of the image as it is, in binary mode.
    static func zbarCodes(_ image: GrayImage) -> [Code] {
        // Loaded by GrayImage's public initializers, which report a missing zbar; nil here reads nothing.
        guard let zbar = sealkit_zbar(nil, 0)?.pointee, let scanner = zbar.image_scanner_create() else { return [] }
        defer { zbar.image_scanner_destroy(scanner) }
        _ = zbar.image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        _ = zbar.image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        // Binary: the payload's bytes as they are, with no guessing at a character set.
        _ = zbar.image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        guard let zimage = zbar.image_create() else { return [] }
        defer { zbar.image_destroy(zimage) }
        zbar.image_set_format(zimage, 0x3030_3859)  // fourcc "Y800": 8-bit gray
        zbar.image_set_size(zimage, UInt32(image.width), UInt32(image.height))
        var found: [Code] = []
        image.pixels.withUnsafeBytes { pixels in
            // zbar reads the pixels in place during the scan; no cleanup handler, since we own them.
            zbar.image_set_data(zimage, pixels.baseAddress, UInt(pixels.count), nil)
            guard zbar.scan_image(scanner, zimage) > 0 else { return }
            var symbol = zbar.image_first_symbol(zimage)
            while let current = symbol {
                let length = Int(zbar.symbol_get_data_length(current))
                let payload = zbar.symbol_get_data(current).map { data in
                    data.withMemoryRebound(to: UInt8.self, capacity: max(length, 1)) { Array(UnsafeBufferPointer(start: $0, count: length)) }
                } ?? []
                // The bounding box of the code's corners.
                var code = Code(payload: payload, left: Int.max, top: Int.max, right: Int.min, bottom: Int.min)
                for index in 0..<zbar.symbol_get_loc_size(current) {
                    let x = Int(zbar.symbol_get_loc_x(current, index)), y = Int(zbar.symbol_get_loc_y(current, index))
                    code.left = min(code.left, x)
                    code.top = min(code.top, y)
                    code.right = max(code.right, x)
                    code.bottom = max(code.bottom, y)
                }
                found.append(code)
                symbol = zbar.symbol_next(current)
            }
            zbar.image_set_data(zimage, nil, 0, nil)
        }
        return found
    }

    /// Opens the two decoders, zbar (libzbar.so.0) and zxing-cpp (libZXing.so.2), in this process: they are
    /// opened with `dlopen` by the first image read, not linked, so that a program that reads no image does
    /// not load them. Once per process; later calls only look at the outcome.
    /// - Throws: `SealKitError/Reason/libraryUnavailable` naming the library that cannot be loaded and the
    ///   Debian package that provides it.
    package static func loadDecoders() throws(SealKitError) {
        var error = [CChar](repeating: 0, count: 320)
        if sealkit_zbar(&error, error.count) == nil || sealkit_zxing_load(&error, error.count) != 0 {
            throw libraryUnavailable(error)
        }
    }

    /// The error for a library the loader could not open, with the loader's one line.
    package static func libraryUnavailable(_ message: [CChar]) -> SealKitError {
        let text = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return SealKitError(.libraryUnavailable, "cannot read images: " + String(decoding: text, as: UTF8.self))
    }

    /// Decodes an image file to gray pixels.
    package static func decode(_ bytes: [UInt8]) throws(ScanError) -> GrayImage {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return try decodePNG(bytes) }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return try decodeJPEG(bytes) }
        if bytes.count >= 2, bytes[0] == UInt8(ascii: "P"), (UInt8(ascii: "1")...UInt8(ascii: "6")).contains(bytes[1]) {
            return try NetPBM.decode(bytes)
        }
        throw .notAnImage
    }

    private static func decodePNG(_ bytes: [UInt8]) throws(ScanError) -> GrayImage {
        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        let began = bytes.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        guard began != 0 else {
            defer { png_image_free(&image) }
            throw .damaged(reason: message(of: image))
        }
        defer { png_image_free(&image) }
        let width = Int(image.width), height = Int(image.height)
        guard width > 0, height > 0, width.multipliedReportingOverflow(by: height).partialValue <= maximumPixelCount,
            width <= maximumPixelCount, height <= maximumPixelCount
        else { throw .tooLarge(width: width, height: height) }
        image.format = png_uint_32(PNG_FORMAT_GRAY)
        var pixels = [UInt8](repeating: 0, count: width * height)
        // Transparent pixels over white: a QR code with a transparent background reads as printed.
        var white = png_color(red: 255, green: 255, blue: 255)
        let finished = pixels.withUnsafeMutableBytes { png_image_finish_read(&image, &white, $0.baseAddress, Int32(width), nil) }
        guard finished != 0 else { throw .damaged(reason: message(of: image)) }
        return GrayImage(width: width, height: height, pixels: pixels)
    }

    private static func message(of image: png_image) -> String {
        var copy = image.message
        return withUnsafeBytes(of: &copy) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static func decodeJPEG(_ bytes: [UInt8]) throws(ScanError) -> GrayImage {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0, height: Int32 = 0
        var error = [CChar](repeating: 0, count: Int(SEALKIT_JPEG_ERROR_SIZE))
        let status = bytes.withUnsafeBufferPointer { data in
            sealkit_jpeg_decode_gray(data.baseAddress, data.count, maximumPixelCount, &pixels, &width, &height, &error)
        }
        switch status {
        case 0:
            guard let pixels else { throw .damaged(reason: "no pixels") }
            defer { free(pixels) }
            let count = Int(width) * Int(height)
            return GrayImage(width: Int(width), height: Int(height), pixels: Array(UnsafeBufferPointer(start: pixels, count: count)))
        case -2:
            throw .tooLarge(width: nil, height: nil)
        case -3:
            throw .libraryUnavailable(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        default:
            let text = error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            throw .damaged(reason: String(decoding: text, as: UTF8.self).lowercased())
        }
    }
}

/// Why an image could not be scanned.
package enum ScanError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not a PNG, JPEG, PBM, PGM or PPM image.
    case notAnImage
    /// The image is larger than SealKit decodes (40 megapixels).
    case tooLarge(width: Int?, height: Int?)
    /// The image is truncated or damaged, for this reason.
    case damaged(reason: String)
    /// A library that reads images cannot be loaded: the loader's line (the library, its Debian package, why).
    case libraryUnavailable(String)

    package var description: String {
        switch self {
        case .notAnImage: return "not an image SealKit reads (PNG, JPEG, PBM, PGM or PPM)"
        case .tooLarge(let width?, let height?):
            return "the image is \(width) × \(height) pixels, more than the \(QRScanner.maximumPixelCount / 1_000_000) megapixels SealKit reads"
        case .tooLarge:
            return "the image has more than the \(QRScanner.maximumPixelCount / 1_000_000) megapixels SealKit reads"
        case .damaged(let reason): return "the image is damaged or cut short (\(reason.isEmpty ? "unreadable" : reason))"
        case .libraryUnavailable(let message): return "cannot read images: \(message)"
        }
    }
}

extension SealKitError {
    /// An image that could not be scanned, with its message unchanged.
    package init(_ error: ScanError) {
        if case .libraryUnavailable = error {
            self.init(.libraryUnavailable, error.description)
        } else {
            self.init(.unreadableImage, error.description)
        }
    }
}

/// netpbm's formats: a text header and raw (P4, P5, P6) or ASCII (P1, P2, P3) samples, no compression.
enum NetPBM {
    static func decode(_ bytes: [UInt8]) throws(ScanError) -> GrayImage {
        var position = 2
        let kind = bytes[1] - UInt8(ascii: "0")
        func nextNumber() throws(ScanError) -> Int {
            // Whitespace and # comments, then digits.
            while position < bytes.count {
                if bytes[position] == UInt8(ascii: "#") {
                    while position < bytes.count, bytes[position] != UInt8(ascii: "\n") { position += 1 }
                } else if [9, 10, 13, 32].contains(bytes[position]) {
                    position += 1
                } else {
                    break
                }
            }
            var value = 0
            var digits = 0
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]), digits < 10 {
                value = value * 10 + Int(bytes[position] - UInt8(ascii: "0"))
                position += 1
                digits += 1
            }
            guard digits > 0 else { throw .damaged(reason: "bad netpbm header") }
            return value
        }
        let width = try nextNumber(), height = try nextNumber()
        guard width > 0, height > 0 else { throw .damaged(reason: "bad netpbm size") }
        guard width <= QRScanner.maximumPixelCount, height <= QRScanner.maximumPixelCount, width * height <= QRScanner.maximumPixelCount else {
            throw .tooLarge(width: width, height: height)
        }
        let maxValue = kind == 1 || kind == 4 ? 1 : try nextNumber()
        guard (1...65535).contains(maxValue) else { throw .damaged(reason: "bad netpbm maximum value") }
        let count = width * height
        var pixels = [UInt8](repeating: 0, count: count)
        func scaled(_ sample: Int) -> UInt8 { UInt8(min(255, sample * 255 / maxValue)) }
        switch kind {
        case 4:
            // One bit per pixel, 1 is black, rows padded to whole bytes.
            position += 1
            let rowBytes = (width + 7) / 8
            guard bytes.count - position >= rowBytes * height else { throw .damaged(reason: "cut short") }
            for y in 0..<height {
                for x in 0..<width {
                    let bit = bytes[position + y * rowBytes + x / 8] >> (7 - x % 8) & 1
                    pixels[y * width + x] = bit == 1 ? 0 : 255
                }
            }
        case 5, 6:
            position += 1
            let channels = kind == 6 ? 3 : 1
            let sampleBytes = maxValue > 255 ? 2 : 1
            guard bytes.count - position >= count * channels * sampleBytes else { throw .damaged(reason: "cut short") }
            for index in 0..<count {
                var sum = 0
                for channel in 0..<channels {
                    let offset = position + (index * channels + channel) * sampleBytes
                    sum += sampleBytes == 2 ? Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) : Int(bytes[offset])
                }
                pixels[index] = scaled(sum / channels)
            }
        default:
            let channels = kind == 3 ? 3 : 1
            for index in 0..<count {
                var sum = 0
                for _ in 0..<channels { sum += min(try nextNumber(), maxValue) }
                pixels[index] = kind == 1 ? (sum == 1 ? 0 : 255) : scaled(sum / channels)
            }
        }
        return GrayImage(width: width, height: height, pixels: pixels)
    }
}
