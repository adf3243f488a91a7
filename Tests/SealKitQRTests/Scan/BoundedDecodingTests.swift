import Foundation
import Synchronization
import SealTestSupport
import Testing

import SealKitQR

/// Images made to cost a decoder time rather than memory: each is
/// generated here, and each is given up within a bound measured on the test's own clock.
extension QRScannerTests {
    /// A screen tiled with QR finder patterns (`finderTilePixels`), which zxing-cpp cannot finish.
    static func finderTiles(width: Int, height: Int) -> GrayImage {
        GrayImage(width: width, height: height, pixels: finderTilePixels(width: width, height: height))
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
        // The budget is CPU time; on a machine too loaded to give it that soon, the wall-clock bound holds.
        #expect(elapsed < QRScanner.zxingWallLimit(width: image.width, height: image.height) + .seconds(2))
    }

    /// A code beside a screen of finder patterns: zbar reads the code at once, zxing-cpp runs out of its
    /// budget on the patterns.
    static func codeBesideFinderTiles(_ text: String) throws -> GrayImage {
        let pixels = finderTilePixels(width: 1920, height: 1080, with: try QRCode(text).grayPixels(scale: 6))
        return try GrayImage(width: 1920, height: 1080, luminance: pixels)
    }

    /// An image that zxing-cpp cannot finish is not read whole, and never gives what zbar read of it as
    /// its codes: the code there could be a hostile one beside the real one that only zxing-cpp reads (at
    /// an angle), and the one-code rule would take it.
    @Test func aCodeBesideWhatZXingCannotFinishIsNotTheImagesCode() async throws {
        let hostile = QROneRuleImageTests.hostile
        let image = try Self.codeBesideFinderTiles(hostile)
        #expect(QRScanner.zbarScan(image) == [Array(hostile.utf8)], "the premise: zbar reads the code alone")

        #expect(QRScanner.scan(image).isEmpty)
        #expect(await QRScanner.codes(in: image).isEmpty)
        for reading in 0..<2 {
            do {
                let codes = reading == 0
                    ? try QRScanner.scan(imageFile: Self.pgm(image)) : try await QRScanner.codes(inImageFile: Self.pgm(image))
                Issue.record("read \(codes.count) code(s) of an image zxing-cpp did not finish")
            } catch {
                #expect(error.reason == .timedOut)
                #expect(error.description.hasPrefix("the image was not read whole: zxing-cpp did not finish within its budget of 1.7 s"), "\(error)")
                #expect(!error.description.contains("crossover"))
            }
        }
        // The one rule then finds no code to take, rather than the hostile one.
        #expect(throws: SealKitError.self) { try QROneRuleImageTests.choose(image) }
    }

    /// The budget is CPU time: a helper that gets no CPU (stopped here for longer than its budget, as a
    /// machine busy with other work may leave it waiting) reads on when it runs again, and the code is read.
    @Test func aHelperLeftWaitingForTheCPUStillHasItsBudget() throws {
        let code = try QROneRuleImageTests.image([QROneRuleImageTests.real], scale: 8)
        // A large photo of noise, so the helper is still at work when it is found and stopped; the code on a
        // light square in it.
        let width = 6_000, height = 4_000
        var random = SplitMix64(seed: 46)
        var pixels = [UInt8](repeating: 0, count: width * height)
        for index in stride(from: 0, to: pixels.count, by: 8) {
            withUnsafeBytes(of: random.next()) { bytes in
                for offset in 0..<min(8, pixels.count - index) { pixels[index + offset] = bytes[offset] }
            }
        }
        for y in 0..<(code.height + 200) { for x in 0..<(code.width + 200) { pixels[(y + 900) * width + x + 1_900] = 255 } }
        for y in 0..<code.height { for x in 0..<code.width { pixels[(y + 1_000) * width + x + 2_000] = code.pixels[y * code.width + x] } }
        let image = try GrayImage(width: width, height: height, luminance: pixels)
        let budget = QRScanner.zxingBudget(width: width, height: height)
        #expect(QRScanner.zxingWallLimit(width: width, height: height) > budget + .seconds(2))

        // On a thread of its own, not the cooperative pool, which other tests' scans may be holding.
        let result = Mutex<[[UInt8]]?>(nil)
        Thread { let found = QRScanner.zxingScan(image); result.withLock { $0 = found } }.start()
        var helper: Int32?
        let seen = ContinuousClock.now
        while helper == nil, ContinuousClock.now - seen < .seconds(10) {
            // This scan's helper, not another test's: its request (its stdin) holds this image's pixels.
            helper = HostedScannerTests.childrenRunningThisExecutable().first { child in
                var request = stat()
                guard stat("/proc/\(child.pid)/fd/0", &request) == 0 else { return false }
                return child.commandLine.first == "sealkit-zxing-reader" && (width * height..<width * height + 64).contains(Int(request.st_size))
            }?.pid
            if helper == nil { usleep(1_000) }
        }
        let pid = try #require(helper, "no zxing-cpp helper seen")
        #expect(kill(pid, SIGSTOP) == 0)
        usleep(20_000)
        // Stopped while at work, not after it had answered.
        let status = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let state = status.split(separator: ")").last?.split(separator: " ").first
        #expect(state == "t" || state == "T", "\(status)")
        Thread.sleep(forTimeInterval: Double(budget.components.seconds) + 1)
        #expect(kill(pid, SIGCONT) == 0)
        let waited = ContinuousClock.now
        while result.withLock({ $0 }) == nil, ContinuousClock.now - waited < QRScanner.zxingWallLimit(width: width, height: height) {
            usleep(10_000)
        }
        #expect(result.withLock { $0 } == [Array(QROneRuleImageTests.real.utf8)], "the helper was stopped as out of time")
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
