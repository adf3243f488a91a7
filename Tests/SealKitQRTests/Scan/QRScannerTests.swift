import Foundation
import SealKit
import SealKitQR
import SealTestSupport
import Testing


/// Reading QR codes back: SealKit's own images, an independent encoder's (the `qrencode` CLI), JPEG
/// through libjpeg-turbo's `cjpeg`, many codes in one image, inverted codes, and hostile files.
@Suite("QR scanning")
struct QRScannerTests {
    static func qrencode(_ payload: [UInt8], _ arguments: [String] = []) throws -> [UInt8] {
        let result = try ChildProcess.run("qrencode", ["-8", "-o", "-", "-t", "PNG", "-s", "4"] + arguments, stdin: payload)
        #expect(result.status == 0, "\(result.stderrText)")
        return result.stdout
    }

    /// A grayscale image as binary PGM.
    static func pgm(_ image: GrayImage) -> [UInt8] { Array("P5 \(image.width) \(image.height) 255\n".utf8) + image.pixels }

    @Test func sealKitsOwnImagesReadBackByteForByte() throws {
        for payload in ["hello", "sealkit-offer-v2:" + String(repeating: "A", count: 300), "Zoë ✓ 7-guitarist-revenge"] {
            for format in [QRFormat.png, .pbm] {
                let image = try QRCode(payload).rendered(as: format)
                #expect(try QRScanner.scan(imageFile: image) == [Array(payload.utf8)], "\(format)")
            }
        }
    }

    @Test(.requires(.qrencode)) func anIndependentEncodersBinaryPayloadOfTwoKilobytes() throws {
        var random = SplitMix64(seed: 20261125)
        let payload = (0..<2048).map { _ in UInt8.random(in: 0...255, using: &random) }
        let image = try Self.qrencode(payload, ["-l", "L"])
        #expect(try QRScanner.scan(imageFile: image) == [payload])
    }

    @Test(.requires(.cjpeg), .requires(.qrencode)) func jpegPhotosAtLowQuality() throws {
        let image = try QRScanner.decode(try Self.qrencode(Array("https://app.rownd.link/x#4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=".utf8)))
        for quality in [20, 50, 90] {
            let jpeg = try ChildProcess.run("cjpeg", ["-quality", String(quality), "-grayscale"], stdin: Self.pgm(image))
            #expect(jpeg.status == 0 && jpeg.stdout.starts(with: [0xFF, 0xD8]))
            #expect(try QRScanner.scan(imageFile: jpeg.stdout).first.map { String(decoding: $0, as: UTF8.self) }?.hasSuffix("#4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=") == true, "quality \(quality)")
        }
        // A JPEG cut short is damaged, not a crash.
        let whole = try ChildProcess.run("cjpeg", ["-quality", "80"], stdin: Self.pgm(image)).stdout
        #expect(throws: SealKitError.self) { try QRScanner.scan(imageFile: Array(whole.prefix(200))) }
    }

    @Test func twentyCodesInOneImageReadTopToBottomLeftToRight() throws {
        let tiles = try (0..<20).map { try QRScanner.decode(try QRCode("code \($0)").rendered(as: .pbm)) }
        let side = tiles.map { max($0.width, $0.height) }.max()!
        let columns = 5, rows = 4
        let width = side * columns, height = side * rows
        var pixels = [UInt8](repeating: 255, count: width * height)
        for (index, tile) in tiles.enumerated() {
            let originX = (index % columns) * side, originY = (index / columns) * side
            for y in 0..<tile.height {
                for x in 0..<tile.width { pixels[(originY + y) * width + originX + x] = tile.pixels[y * tile.width + x] }
            }
        }
        let found = QRScanner.scan(GrayImage(width: width, height: height, pixels: pixels))
        #expect(found.map { String(decoding: $0, as: UTF8.self) } == (0..<20).map { "code \($0)" })
    }

    /// The fallback decoder, zxing-cpp through CZXing, reads what zbar reads, with the same order.
    @Test(.requires(.qrencode)) func zxingFallbackReadsByteForByte() throws {
        let image = try QRScanner.decode(try Self.qrencode(Array("sealkit-offer-v2:abc".utf8)))
        #expect(QRScanner.zxingScan(image) == [Array("sealkit-offer-v2:abc".utf8)])
        #expect(QRScanner.zbarScan(image) == QRScanner.zxingScan(image))
        #expect(QRScanner.zxingScan(GrayImage(width: 64, height: 64, pixels: [UInt8](repeating: 255, count: 64 * 64))).isEmpty)
    }

    @Test func invertedCodesRead() throws {
        let image = try QRScanner.decode(try QRCode("light on dark").rendered(as: .png))
        let inverted = GrayImage(width: image.width, height: image.height, pixels: image.pixels.map { 255 - $0 })
        #expect(QRScanner.scan(inverted) == [Array("light on dark".utf8)])
    }

    @Test(.requires(.python)) func hostileFilesFailCleanly() throws {
        let png = try QRCode("x").rendered(as: .png)
        // A PNG header claiming 100,000 × 100,000 pixels: refused from the header, nothing allocated.
        let huge = try Python.output(of: """
            import struct, sys, zlib
            def chunk(kind, data): return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
            sys.stdout.buffer.write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(b"\\x00" * 64)) + chunk(b"IEND", b""))
            """)
        let cases: [([UInt8], ScanError?)] = [
            (Array(png.prefix(40)), nil),
            (huge, .tooLarge(width: 100_000, height: 100_000)),
            (Array("P5 100000 100000 255\n".utf8), .tooLarge(width: 100_000, height: 100_000)),
            (Array("P6 10 10 255\n".utf8) + [1, 2, 3], nil),
            (Array("P2 2 2 255 1 2".utf8), nil),
            (Array("not an image".utf8), .notAnImage),
            ([], .notAnImage),
        ]
        for (bytes, expected) in cases {
            do {
                _ = try QRScanner.scan(imageFile: bytes)
                Issue.record("\(bytes.prefix(8)) was read")
            } catch {
                if let expected { #expect(error == SealKitError(expected)) }
            }
        }
    }

    /// zbarimg's binary mode, which the camera pipe (`zbarcam --raw -Sbinary`) uses, gives the same bytes.
    @Test(.requires(.zbarimg), .requires(.qrencode)) func zbarimgBinaryModeAgrees() throws {
        let payload = Array("sealkit-reply-v2:abc\u{E9}".utf8)
        let image = try Self.qrencode(payload)
        let folder = try TemporaryFolder.make()
        let path = folder.appendingPathComponent("code.png").path
        try Data(image).write(to: URL(fileURLWithPath: path))
        let zbar = try ChildProcess.run("zbarimg", ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", path])
        #expect(Array(zbar.stdout.prefix(payload.count)) == payload)
        #expect(try QRScanner.scan(imageFile: image) == [payload])
    }
}
