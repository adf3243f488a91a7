import Foundation
@_spi(CLI) import SealKit
import Testing

@Suite("Durable files")
struct DurableFileTests {
    let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-df-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    }

    private func contents(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    private func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
    private func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".sealkit-") }
    }

    @Test func writesAndReplacesWholeFilesWithMode0600() throws {
        let path = folder + "/out.txt"
        let previous = umask(0)
        defer { umask(previous) }
        try DurableFile.write(Array("first\n".utf8), to: path)
        #expect(try contents(path) == Array("first\n".utf8))
        #expect(try mode(path) == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        try DurableFile.write(Array("second\n".utf8), to: path)
        #expect(try contents(path) == Array("second\n".utf8))
        #expect(try mode(path) == 0o600)
        try DurableFile.write([], to: path)
        #expect(try contents(path).isEmpty)
        #expect(try leftovers().isEmpty)
    }

    @Test func exclusiveRefusesAnythingAlreadyThere() throws {
        let path = folder + "/share-1.txt"
        try DurableFile.write(Array("share\n".utf8), to: path, exclusive: true)
        #expect(try contents(path) == Array("share\n".utf8))
        #expect(try mode(path) == 0o600)
        #expect(throws: SealKitError(.fileSystem, "cannot write \(path): file exists")) {
            try DurableFile.write(Array("other\n".utf8), to: path, exclusive: true)
        }
        #expect(try contents(path) == Array("share\n".utf8))
        // A link is refused, never written through.
        let target = folder + "/target"
        try DurableFile.write(Array("target\n".utf8), to: target)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: target)
        #expect(throws: SealKitError(.fileSystem, "cannot write \(folder)/link: file exists")) {
            try DurableFile.write(Array("through\n".utf8), to: folder + "/link", exclusive: true)
        }
        #expect(try contents(target) == Array("target\n".utf8))
        #expect(try leftovers().isEmpty)
    }

    @Test func replacingALinkReplacesTheLinkNotItsTarget() throws {
        let target = folder + "/target"
        try DurableFile.write(Array("target\n".utf8), to: target)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: target)
        try DurableFile.write(Array("new\n".utf8), to: folder + "/link")
        #expect(try contents(target) == Array("target\n".utf8))
        #expect(try FileManager.default.attributesOfItem(atPath: folder + "/link")[.type] as? FileAttributeType == .typeRegular)
        #expect(try contents(folder + "/link") == Array("new\n".utf8))
    }

    @Test func failuresNameThePathAndTheReasonAndLeaveNothing() throws {
        let missing = folder + "/missing/x.png"
        #expect(throws: SealKitError(.fileSystem, "cannot write \(missing): no such file or directory")) {
            try DurableFile.write([1, 2, 3], to: missing)
        }
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: false)
        #expect(throws: SealKitError(.fileSystem, "cannot write \(folder)/sub: is a directory")) {
            try DurableFile.write([1, 2, 3], to: folder + "/sub")
        }
        #expect(throws: SealKitError(.fileSystem, "cannot write \(folder)/sub: file exists")) {
            try DurableFile.write([1, 2, 3], to: folder + "/sub", exclusive: true)
        }
        #expect(try leftovers().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["sub"])
    }
}
