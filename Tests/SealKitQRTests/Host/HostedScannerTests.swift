import Foundation
import SealKitQR
import SealTestSupport
import Testing

/// The scanner as an app hosts it: only SealKitQR's public API (no `@testable`),
/// PNG and JPEG bytes in, called from many tasks at once in this multithreaded test process; zxing-cpp
/// runs in a helper that is a fresh executable image, never a fork of the host; and library code holds
/// no semaphore, no `.wait(` and no `fork(`.
@Suite("QR scanning hosted in an app")
struct HostedScannerTests {
    static func qrencode(_ payload: String) throws -> [UInt8] {
        let made = try ChildProcess.run("qrencode", ["-8", "-o", "-", "-t", "PNG", "-s", "4"], stdin: Array(payload.utf8))
        #expect(made.status == 0, "\(made.stderrText)")
        return made.stdout
    }

    static func jpeg(ofPNG png: [UInt8]) throws -> [UInt8] {
        let image = try GrayImage(imageFile: png)
        let pgm = Array("P5 \(image.width) \(image.height) 255\n".utf8) + image.pixels
        let made = try ChildProcess.run("cjpeg", ["-quality", "60", "-grayscale"], stdin: pgm)
        #expect(made.status == 0 && made.stdout.starts(with: [0xFF, 0xD8]))
        return made.stdout
    }

    @Test(.requires(.qrencode), .requires(.cjpeg)) func pngAndJPEGBytesScanThroughThePublicAPI() async throws {
        let png = try Self.qrencode("sealkit-offer-v2:hosted")
        let jpeg = try Self.jpeg(ofPNG: png)
        for bytes in [png, jpeg] {
            let image = try GrayImage(imageFile: bytes)
            #expect(QRScanner.scan(image) == [Array("sealkit-offer-v2:hosted".utf8)])
            #expect(try QRScanner.scan(imageFile: bytes) == [Array("sealkit-offer-v2:hosted".utf8)])
            #expect(try await QRScanner.codes(inImageFile: bytes) == [Array("sealkit-offer-v2:hosted".utf8)])
            // Pixels from elsewhere (a camera frame) make an image too.
            let again = try GrayImage(width: image.width, height: image.height, luminance: image.pixels)
            #expect(await QRScanner.codes(in: again) == [Array("sealkit-offer-v2:hosted".utf8)])
        }
        #expect(throws: SealKitError.self) { try GrayImage(width: 2, height: 2, luminance: [0, 0, 0]) }
        #expect(throws: SealKitError.self) { try GrayImage(width: 100_000, height: 100_000, luminance: []) }
        #expect(throws: SealKitError.self) { try GrayImage(imageFile: Array("not an image".utf8)) }
    }

    /// Twelve scans at once from the cooperative pool and from threads of the app's own, each with its
    /// helper: every one reads its code.
    @Test(.requires(.qrencode)) func manyScansAtOnceInAMultithreadedHost() async throws {
        let payloads = (0..<6).map { "sealkit-transfer:\($0)-hosted-scan" }
        let images = try payloads.map { try Self.qrencode($0) }
        let fromTasks = try await withThrowingTaskGroup(of: (Int, [[UInt8]]).self) { group in
            for (index, image) in images.enumerated() {
                group.addTask { (index, try await QRScanner.codes(inImageFile: image)) }
            }
            var found = [[[UInt8]]](repeating: [], count: images.count)
            for try await (index, codes) in group { found[index] = codes }
            return found
        }
        #expect(fromTasks == payloads.map { [Array($0.utf8)] })
        let results = Results(count: images.count)
        let threads = images.enumerated().map { index, image in
            Thread { results.set(index, (try? QRScanner.scan(imageFile: image)) ?? []) }
        }
        threads.forEach { $0.start() }
        for _ in 0..<600 where !results.complete { try await Task.sleep(for: .milliseconds(50)) }
        #expect(results.all == payloads.map { [Array($0.utf8)] })
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var found: [[[UInt8]]?]
        init(count: Int) { found = Array(repeating: nil, count: count) }
        func set(_ index: Int, _ codes: [[UInt8]]) { lock.withLock { found[index] = codes } }
        var complete: Bool { lock.withLock { found.allSatisfy { $0 != nil } } }
        var all: [[[UInt8]]] { lock.withLock { found.map { $0 ?? [] } } }
    }

    /// While zxing-cpp works on an image made to cost it its whole budget (a screen tiled with finder
    /// patterns), this process has a child running its own executable: the helper, whose command line is
    /// its own, not the test runner's, as it would be after a fork without exec. (Children running other
    /// programs, the `sealkit` of tests running beside this one, and exit tests' children are not looked at.)
    @Test func zxingRunsInAnExecutedHelperNotAForkOfTheHost() async throws {
        let image = try GrayImage(width: 1920, height: 1080, luminance: finderTilePixels(width: 1920, height: 1080))
        let scan = Task.detached { await QRScanner.codes(in: image) }
        var helpers: [[String]] = []
        for _ in 0..<100 where helpers.isEmpty {
            try await Task.sleep(for: .milliseconds(20))
            helpers = Self.childCommandLines().filter { !$0.isEmpty }
        }
        #expect(await scan.value.isEmpty)
        #expect(!helpers.isEmpty, "no child process seen while zxing-cpp read")
        for helper in helpers {
            #expect(helper == ["sealkit-zxing-reader", "--sealkit-zxing-reader-v1"], "\(helper)")
        }
    }

    /// The argument vectors of this process's children that run this process's executable.
    static func childCommandLines() -> [[String]] { childrenRunningThisExecutable().map(\.commandLine) }

    /// This process's children that run this process's executable: their pids and argument vectors.
    static func childrenRunningThisExecutable() -> [(pid: Int32, commandLine: [String])] {
        let me = getpid()
        let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> (pid: Int32, commandLine: [String])? in
            guard Int32(entry) != nil, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, Int32(fields[1]) == me,
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/exe")) == executable,
                let line = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return nil }
            // Swift Testing's exit tests (tests running beside this one) start this executable too, executed with an
            // exit-test id in its environment, which a fork of this process would not have.
            if let environment = FileManager.default.contents(atPath: "/proc/\(entry)/environ"),
                environment.split(separator: 0).contains(where: { $0.starts(with: Array("SWT_EXIT_TEST_ID=".utf8)) }) {
                return nil
            }
            return (Int32(entry)!, line.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
        }
    }

    /// Library code (every Seal* target but the two executables) holds no semaphore and no `.wait(`,
    /// which park a thread an app's cooperative pool may need, and no target forks: zxing-cpp's helper
    /// is started with posix_spawn.
    @Test func libraryCodeNeitherWaitsNorForks() throws {
        let sources = Repository.root.appendingPathComponent("Sources")
        let targets = try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
        var offences: [String] = []
        var read = 0
        for target in targets where target != "SealKitCLI" && target != "SealKitFuzz" {
            let folder = sources.appendingPathComponent(target)
            guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let file as String in files {
                guard [".swift", ".c", ".cpp", ".h"].contains(where: { file.hasSuffix($0) }) else { continue }
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                read += 1
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    if code.hasPrefix("//") || code.hasPrefix("*") || code.hasPrefix("/*") { continue }
                    let swift = file.hasSuffix(".swift") && target.hasPrefix("Seal")
                    let banned = (swift ? ["DispatchSemaphore", ".wait("] : []) + ["fork(", "vfork("]
                    for word in banned where code.contains(word) {
                        offences.append("Sources/\(target)/\(file):\(number + 1): \(word)")
                    }
                }
            }
        }
        #expect(read > 100)
        #expect(offences.isEmpty, "\(offences)")
    }
}
