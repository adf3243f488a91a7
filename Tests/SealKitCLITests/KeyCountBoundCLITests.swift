import Foundation
import SealKit
import Testing

/// A key file holds up to 4,096 keys of one id, a backup or transfer 255. `keys backup` of an id
/// of 256 keys said "too many keys for one transfer (it would take 100 parts, the limit is 99): send fewer
/// ids at a time", which is wrong for one id; it names the id and the bound instead.
@Suite("sealkit keys backup: the 255 keys of one id a backup carries")
struct KeyCountBoundCLITests {
    @Test func anIdOf256KeysIsRefusedNamingTheIdAndTheBound() throws {
        let cli = try CLI()
        let keystore = FileKeystore(root: cli.home.appendingPathComponent("keys").path)
        // One write of 256 keys, current first, then retired ones, newest first.
        var versions: [KeyHistory.Version] = []
        for index in 0..<256 {
            let created = Date(timeIntervalSince1970: TimeInterval(1_700_000_000 - 1_000 * index))
            let retired: Date? = index == 0 ? nil : created.addingTimeInterval(500)
            versions.append(KeyHistory.Version(key: SymmetricKey.generate(), created: created, retired: retired))
        }
        _ = try keystore.storeAll([try KeyHistory(id: KeyID("alice"), versions: versions)], passphrase: nil)

        let backup = try cli.run(
            ["keys", "backup", "alice", "--format", "text"], environment: ["SEALKIT_PASSPHRASE": "correct horse battery staple"])
        #expect(backup.status == 64, "\(backup.stderr)")
        #expect(backup.stdout.isEmpty)
        let lines = backup.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(backup.stderr)")
        #expect(backup.stderr.hasPrefix("sealkit: key id 'alice' has 256 keys (current and retired), more than the 255 of one id"), "\(backup.stderr)")
        #expect(!backup.stderr.contains("parts"), "\(backup.stderr)")
        #expect(!backup.stderr.contains("fewer ids"), "\(backup.stderr)")
    }
}
