import Foundation
import SealKit
import Testing

@_spi(CLI) import SealKitBackup

/// The expected keys of an `ok` vector, as `Scripts/make-format-vectors.py` writes them.
struct FormatVectorKeys: Decodable {
    struct Version: Decodable {
        let key: String
        let fingerprint: String
        let created: Int64
        let retired: Int64?
    }
    let id: String
    let versions: [Version]

    /// Checks that `opened` holds exactly `expected`, in order.
    static func check(_ opened: [KeyHistory], against expected: [FormatVectorKeys], _ name: String) throws {
        #expect(opened.map(\.id.rawValue) == expected.map(\.id), "\(name)")
        for (history, wanted) in zip(opened, expected) {
            #expect(history.versions.count == wanted.versions.count, "\(name)")
            for (version, key) in zip(history.versions, wanted.versions) {
                #expect(version.key == (try SymmetricKey(base64Encoded: key.key)))
                #expect(version.key.fingerprint.description == key.fingerprint)
                #expect(unixTime(version.created) == key.created)
                #expect(version.retired.map(unixTime) == key.retired)
            }
        }
    }

    /// A vector file under `Fixtures/`, found from this source file's path.
    static func load<T: Decodable>(_ path: String, as type: T.Type) -> T? {
        var folder = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { folder.deleteLastPathComponent() }
        guard let data = try? Data(contentsOf: folder.appendingPathComponent("Fixtures").appendingPathComponent(path)) else { return nil }
        return try? JSONDecoder().decode(T.self, from: data)
    }
}

/// `Fixtures/backup/vectors.json`, paper backups written from docs/transfer.md alone, each with
/// its expected outcome, failures included.
@Suite("Paper backup vectors in Fixtures/backup")
struct PaperBackupVectorTests {
    struct File: Decodable { let vectors: [Vector] }
    struct Vector: Decodable {
        let name: String
        let lines: [String]
        let passphrase: String
        let expect: String
        let created: Int64?
        let keys: [FormatVectorKeys]?
    }

    static let vectors = FormatVectorKeys.load("backup/vectors.json", as: File.self)?.vectors ?? []

    @Test func vectorsAreThere() {
        #expect(Self.vectors.count >= 15, "Fixtures/backup/vectors.json is missing or unreadable")
        #expect(Set(Self.vectors.map(\.expect)).isSuperset(of: ["ok", "wrong-passphrase", "unsupported-kdf", "malformed", "unsupported-version"]))
    }

    static func name(of error: CodeError) -> String {
        switch error {
        case .wrongPassphrase: return "wrong-passphrase"
        case .unsupportedKDF: return "unsupported-kdf"
        case .unsupportedVersion: return "unsupported-version"
        case .malformed: return "malformed"
        case .missingParts: return "missing-parts"
        default: return "other: \(error)"
        }
    }

    @Test(arguments: vectors.map(\.name))
    func vector(_ name: String) throws {
        let vector = try #require(Self.vectors.first { $0.name == name })
        var outcome = "ok"
        var opened: PaperBackup.Contents?
        do {
            opened = try PaperBackup.open(try CodeParts.join(vector.lines), passphrase: Passphrase(vector.passphrase))
        } catch let error as CodeError {
            outcome = Self.name(of: error)
        }
        #expect(outcome == vector.expect, "\(name)")
        guard let opened, let keys = vector.keys else { return }
        try FormatVectorKeys.check(opened.keys, against: keys, name)
        #expect(unixTime(opened.created) == vector.created)
        // Parts: SealKit splits the whole code into exactly these lines (docs/transfer.md, "Parts").
        #expect(try CodeParts.split(try CodeParts.join(vector.lines)) == vector.lines, "\(name)")
    }
}

/// `Fixtures/shares/bundles.json`, share backup bundles and their SLIP-39 shares written from
/// docs/transfer.md alone, each with its expected outcome, failures included.
@Suite("Share bundle vectors in Fixtures/shares")
struct ShareBundleVectorTests {
    struct File: Decodable { let vectors: [Vector] }
    struct Vector: Decodable {
        let name: String
        let bundle: String
        let shares: [String]
        let passphrase: String
        let expect: String
        let created: Int64?
        let keys: [FormatVectorKeys]?
    }

    static let vectors = FormatVectorKeys.load("shares/bundles.json", as: File.self)?.vectors ?? []

    @Test func vectorsAreThere() {
        #expect(Self.vectors.count >= 10, "Fixtures/shares/bundles.json is missing or unreadable")
        #expect(Set(Self.vectors.map(\.expect)) == [
            "ok", "need-more-shares", "wrong-passphrase", "other-backup", "malformed", "unsupported-version",
        ])
    }

    /// What `keys restore --shares` does, through the public API: read the shares, then
    /// `ShareBackup.restore` (recover the shares' EMS, decrypt it with the passphrase, open the bundle;
    /// a bundle that does not open is this backup's under a wrong passphrase when the tags match).
    static func outcome(_ vector: Vector) throws -> (String, PaperBackup.Contents?) {
        let shares = try vector.shares.map { try ShareBackup.Share($0) }
        let passphrase = vector.passphrase.isEmpty ? nil : try Passphrase(vector.passphrase)
        do {
            return ("ok", try ShareBackup.restore(bundle: vector.bundle, shares: shares, passphrase: passphrase))
        } catch {
            switch error.reason {
            case .notEnoughShares: return ("need-more-shares", nil)
            case .wrongPassphrase: return ("wrong-passphrase", nil)
            case .sharesOfAnotherBackup: return ("other-backup", nil)
            case .unsupportedFormat: return ("unsupported-version", nil)
            case .damagedBackup: return ("malformed", nil)
            default: return ("other: \(error)", nil)
            }
        }
    }

    @Test(arguments: vectors.map(\.name))
    func vector(_ name: String) throws {
        let vector = try #require(Self.vectors.first { $0.name == name })
        let (outcome, opened) = try Self.outcome(vector)
        #expect(outcome == vector.expect, "\(name)")
        guard let opened, let keys = vector.keys else { return }
        try FormatVectorKeys.check(opened.keys, against: keys, name)
        #expect(unixTime(opened.created) == vector.created)
    }
}
