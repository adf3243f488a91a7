import Foundation
import SealTestSupport
import Testing

import SealKitQR

/// Images made to cost a decoder time rather than memory: each is
/// generated here, and each is given up within a bound measured on the test's own clock.
extension QRScannerTests {
    /// A screen tiled with QR finder patterns: 7 × 7 modules of `module` pixels, `gap` light modules
    /// apart. zxing-cpp pairs up every three candidates, so its time grows with the cube of their
    /// number; zbar reads such a screen in a fraction of a second and finds nothing.
    static func finderTiles(width: Int, height: Int, module: Int = 3, gap: Int = 2) -> GrayImage {
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
        return GrayImage(width: width, height: height, pixels: pixels)
    }

    @Test func aScreenTiledWithFinderPatternsIsGivenUpInTime() {
        let image = Self.finderTiles(width: 1920, height: 1080)
        var found: [[UInt8]] = [[]]
        let elapsed = ContinuousClock().measure { found = QRScanner.scan(image) }
        print("finder tiles, 1920 × 1080, QRScanner.scan: \(elapsed) (zxing-cpp's budget \(QRScanner.zxingBudget(width: 1920, height: 1080)))")
        #expect(found.isEmpty)
        // zxing-cpp alone took 61 s on such a screen before it had a budget.
        #expect(elapsed < QRScanner.zxingBudget(width: 1920, height: 1080) + .seconds(5))
    }

    @Test func fortyMegapixelsOfFinderPatternsAreGivenUpInTime() {
        let image = Self.finderTiles(width: 7_680, height: 5_120)
        #expect(image.pixels.count <= QRScanner.maximumPixelCount)
        var found: [[UInt8]] = [[]]
        let elapsed = ContinuousClock().measure { found = QRScanner.zxingScan(image) }
        let budget = QRScanner.zxingBudget(width: image.width, height: image.height)
        print("finder tiles, 7680 × 5120, zxing-cpp: \(elapsed) (budget \(budget))")
        #expect(found.isEmpty)
        #expect(budget <= .seconds(6))
        #expect(elapsed < budget + .seconds(2))
    }

    /// A progressive JPEG's scans, each `script` line one scan (cjpeg -scans), of a white square.
    static func progressiveJPEG(side: Int, scans script: String) throws -> [UInt8] {
        let folder = try TemporaryFolder.make()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("scans.txt")
        try Data(script.utf8).write(to: path)
        let white = GrayImage(width: side, height: side, pixels: [UInt8](repeating: 255, count: side * side))
        let jpeg = try ChildProcess.run("cjpeg", ["-grayscale", "-scans", path.path], stdin: Self.pgm(white))
        #expect(jpeg.status == 0, "\(jpeg.stderrText)")
        return jpeg.stdout
    }

    /// Decodes `jpeg`, returning the error (nil when it decoded) and the time it took.
    static func timedDecode(_ jpeg: [UInt8]) -> (error: ScanError?, elapsed: Duration) {
        var error: ScanError?
        let elapsed = ContinuousClock().measure {
            do throws(ScanError) { _ = try QRScanner.decode(jpeg) } catch let caught { error = caught }
        }
        return (error, elapsed)
    }

    /// A progressive JPEG of a white square, a DC scan and one AC scan (of nothing but end-of-band
    /// runs, 16 bytes), with that AC scan then repeated `repeats` times: a repeat that libjpeg takes
    /// without a warning, and a pass over every block of the image each time.
    static func repeatingLastScan(side: Int, repeats: Int) throws -> [UInt8] {
        let jpeg = try Self.progressiveJPEG(side: side, scans: "0: 0 0 0 0;\n0: 1 63 0 0;\n")
        let lastScan = try #require(jpeg.indices.dropLast().last { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA })
        #expect(Array(jpeg.suffix(2)) == [0xFF, 0xD9])
        let scan = jpeg[lastScan..<(jpeg.count - 2)]
        var repeated = Array(jpeg.dropLast(2))
        for _ in 0..<repeats { repeated += scan }
        return repeated + [0xFF, 0xD9]
    }

    @Test(.requires(.cjpeg)) func aProgressiveJPEGScanBombStopsAtTheScanLimit() throws {
        // 2048 × 2048, 10,002 scans in 168 KB: seconds of work before there was a limit.
        let bomb = try Self.repeatingLastScan(side: 2048, repeats: 10_000)
        let (error, elapsed) = Self.timedDecode(bomb)
        print("progressive JPEG scan bomb, \(bomb.count) bytes, 10,002 scans: \(elapsed)")
        #expect(error == .damaged(reason: "more than \(QRScanner.maximumProgressiveScans) progressive scans"))
        #expect(elapsed < .seconds(1))
    }

    @Test(.requires(.cjpeg), .requires(.qrencode)) func progressiveJPEGsReadUpToTheScanLimitAndNoFurther() throws {
        let limit = QRScanner.maximumProgressiveScans
        #expect(Self.timedDecode(try Self.repeatingLastScan(side: 256, repeats: limit - 2)).error == nil)
        #expect(Self.timedDecode(try Self.repeatingLastScan(side: 256, repeats: limit - 1)).error == .damaged(reason: "more than \(limit) progressive scans"))
        // cjpeg's own progressive script (6 scans for gray) reads back.
        let code = try QRScanner.decode(try Self.qrencode(Array("sealkit-offer-v2:progressive".utf8)))
        let progressive = try ChildProcess.run("cjpeg", ["-progressive", "-grayscale"], stdin: Self.pgm(code)).stdout
        #expect(try QRScanner.scan(imageFile: progressive) == [Array("sealkit-offer-v2:progressive".utf8)])
    }

    @Test(.requires(.cjpeg), .requires(.qrencode)) func corruptJPEGDataIsAnErrorNotAWarning() throws {
        let code = try QRScanner.decode(try Self.qrencode(Array("sealkit-reply-v2:abc".utf8)))
        let jpeg = try ChildProcess.run("cjpeg", ["-quality", "90", "-grayscale"], stdin: Self.pgm(code)).stdout
        #expect(Self.timedDecode(jpeg).error == nil)
        // Cut short inside the image's data: libjpeg would warn and fill the rest with gray.
        let cut = Array(jpeg.prefix(jpeg.count * 7 / 10))
        #expect(Self.timedDecode(cut).error != nil)
        // Junk bytes between two markers: libjpeg would warn and skip them.
        let junk = Array(jpeg.prefix(2)) + [0x12, 0x34, 0x56] + Array(jpeg.dropFirst(2))
        #expect(Self.timedDecode(junk).error != nil)
    }
}
