#if canImport(Glibc)
import Glibc
#endif

/// `SealKitFuzz TARGET [ARGS...]`: the fuzz targets of Scripts/fuzz.
///
/// Built with `-sanitize=fuzzer` (Scripts/fuzz), it hands ARGS to libFuzzer's driver.
/// In an ordinary build it replays inputs instead: `SealKitFuzz TARGET FILE...` runs each
/// file through the target once, which is how a crash found by fuzzing is reproduced.
@main
enum FuzzMain {
    static func main() {
        var arguments = CommandLine.arguments
        // libFuzzer's -fork mode starts workers without the target name; they find it here.
        if let name = getenv(targetVariable).map({ String(cString: $0) }), arguments.count < 2 || FuzzTarget(rawValue: arguments[1]) == nil {
            arguments.insert(name, at: 1)
        }
        guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            printError("usage: SealKitFuzz TARGET [libFuzzer arguments | input files]; targets: \(names)")
            exit(64)
        }
        FuzzTarget.selected = target
        // libFuzzer exports its driver only in fuzzing builds (Scripts/fuzz links with
        // --export-dynamic-symbol=LLVMFuzzerRunDriver); without it, replay.
        if let driver = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "LLVMFuzzerRunDriver") {
            typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
            typealias Driver = @convention(c) (
                UnsafeMutablePointer<CInt>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>, Callback
            ) -> CInt
            setenv(targetVariable, target.rawValue, 1)
            // libFuzzer sees argv without the target name.
            var argv: [UnsafeMutablePointer<CChar>?] = ([arguments[0]] + arguments.dropFirst(2)).map { strdup($0) } + [nil]
            var argc = CInt(argv.count - 1)
            let status = argv.withUnsafeMutableBufferPointer { buffer in
                var base: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
                return unsafeBitCast(driver, to: Driver.self)(&argc, &base) { data, size in
                    FuzzTarget.runSelected(data, size)
                }
            }
            exit(status)
        }
        var replayed = 0
        for path in arguments.dropFirst(2) {
            guard let file = fopen(path, "rb") else {
                printError("cannot read \(path)")
                exit(66)
            }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = fread(&buffer, 1, buffer.count, file)
                if count <= 0 { break }
                bytes += buffer[0..<count]
            }
            fclose(file)
            target.run(bytes)
            replayed += 1
        }
        print("\(target.rawValue): replayed \(replayed) input(s) without a crash")
    }
}

private let targetVariable = "SEALKIT_FUZZ_TARGET"

private func printError(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}

/// libFuzzer's entry point; it calls the target chosen on the command line.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.runSelected(data, size)
}
