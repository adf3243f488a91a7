import Foundation
import SealKit
import SealTestSupport
import Testing

@_spi(CLI) import SealKitBackup

/// Every key read is one guarded allocation, so a peer that knows the code must not be
/// able to make a receiver allocate keys until the memory mappings run out and it crashes.
@Suite("Key bundle limits")
struct KeyBundleLimitTests {
    /// 17 ids of 255 keys each: 4,335 keys, more than one transfer carries. The ids share their
    /// 255 keys, so the test itself holds only 255 guarded allocations.
    static func tooManyKeys() throws -> [KeyHistory] {
        var versions: [KeyHistory.Version] = []
        for version in 0..<255 {
            let created = Date(timeIntervalSince1970: TimeInterval(1_000 + version))
            let retired: Date? = version == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(2_000 + version))
            versions.append(KeyHistory.Version(key: SymmetricKey.generate(), created: created, retired: retired))
        }
        var keys: [KeyHistory] = []
        for index in 0..<(KeyBundle.maximumKeyCount / 255 + 1) {
            keys.append(try KeyHistory(id: KeyID("id-\(index)"), versions: versions))
        }
        return keys
    }

    @Test func moreKeysThanATransferCarriesAreRefusedBySenderAndReceiver() throws {
        let keys = try Self.tooManyKeys()
        #expect(KeyBundle.keyCount(of: keys) > KeyBundle.maximumKeyCount)
        // The sender refuses to make such a transfer; one id fewer is within the limit.
        #expect(throws: CodeError.self) { try KeyBundle.validate(keys) }
        #expect(throws: Never.self) { try KeyBundle.validate(Array(keys.dropLast())) }

        // A peer that writes one anyway: the receiver refuses it once the count passes the limit.
        let message = KeyBundleTimeTests.refusal(reading: KeyBundleTimeTests.bundle(keys))
        let refused = try #require(message)
        #expect(refused.contains("more than \(KeyBundle.maximumKeyCount) keys"), "\(refused)")
    }
}

/// A key file holds up to 4,096 keys of one id, a backup or transfer 255 (a one-byte count).
/// An id over that was refused as "too many keys for one transfer (it would take 100 parts ...): send
/// fewer ids at a time", which is wrong for one id that fits in about 19 parts.
@Suite("Keys of one id a bundle carries")
struct KeyBundleVersionLimitTests {
    @Test func anIdOfMoreThan255KeysIsRefusedNamingTheIdAndTheBound() throws {
        let alice = try history("alice", retired: 255)
        #expect(throws: CodeError.tooManyVersions(alice.id, count: 256)) { try KeyBundle.validate([alice]) }
        let passphrase = try Passphrase("correct horse battery staple")
        do {
            _ = try PaperBackup.make([alice], passphrase: passphrase, kdf: PassphraseKDF(opsLimit: 1, memLimit: 8192), now: Date())
            Issue.record("a backup of 256 keys of one id was made")
        } catch {
            let message = error.description
            #expect(message.contains("'alice' has 256 keys"), "\(message)")
            #expect(message.contains("255"), "\(message)")
            #expect(!message.contains("parts"), "\(message)")
            #expect(!message.contains("fewer ids"), "\(message)")
        }
    }

    @Test func anIdOf255KeysIsCarried() throws {
        let alice = try history("alice", retired: 254)
        let passphrase = try Passphrase("correct horse battery staple")
        let lines = try PaperBackup.make([alice], passphrase: passphrase, kdf: PassphraseKDF(opsLimit: 1, memLimit: 8192), now: Date())
        let opened = try PaperBackup.restore(lines.joined(separator: "\n"), passphrase: passphrase)
        #expect(opened.keys.first?.versions.count == 255)
    }

    @Test func moreThan4096KeysInAllAreRefusedAsSuch() throws {
        let keys = try KeyBundleLimitTests.tooManyKeys()
        let count = KeyBundle.keyCount(of: keys)
        #expect(throws: CodeError.tooManyKeys(count: count)) { try KeyBundle.validate(keys) }
    }
}

/// A key time no keystore or output can show (`Int64.max` crashed `transfer receive` in the
/// middle of storing) is refused while the bundle is read, so no id of it is stored.
@Suite("Key bundle times")
struct KeyBundleTimeTests {
    /// `keys` written as a transfer carries them.
    static func bundle(_ keys: [KeyHistory]) -> [UInt8] {
        SecureBytes(count: KeyBundle.byteCount(of: keys)) { buffer in
            var writer = ByteWriter(buffer)
            KeyBundle.write(keys, into: &writer)
        }.withUnsafeBytes { Array($0) }
    }

    /// Why a receiver refuses to read `bytes` as a bundle, or nil when it reads them.
    static func refusal(reading bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { raw -> String? in
            var reader = ByteReader(raw, kind: .reply)
            do throws(CodeError) {
                _ = try KeyBundle.read(from: &reader, as: .reply)
                return nil
            } catch {
                return error.description
            }
        }
    }

    @Test(arguments: [Int64.max, Int64.min, -1, KeyTime.latest + 1])
    func aTimeOutOfRangeRefusesTheWholeBundle(_ time: Int64) throws {
        let marker: Int64 = 1_234_567_890
        let keys = [
            try KeyHistory(id: KeyID("first"), versions: [.init(key: .generate(), created: Date(timeIntervalSince1970: 1_000), retired: nil)]),
            try KeyHistory(id: KeyID("second"), versions: [.init(key: .generate(), created: Date(timeIntervalSince1970: TimeInterval(marker)), retired: nil)]),
        ]
        var bytes = Self.bundle(keys)
        // Put `time` where the second id's created time is, in the bundle's own byte order.
        let bigEndian = withUnsafeBytes(of: marker.bigEndian) { Array($0) }
        let littleEndian = withUnsafeBytes(of: marker.littleEndian) { Array($0) }
        let offset = try #require((0...(bytes.count - 8)).first { Array(bytes[$0..<$0 + 8]) == bigEndian || Array(bytes[$0..<$0 + 8]) == littleEndian })
        let replacement = Array(bytes[offset..<offset + 8]) == bigEndian
            ? withUnsafeBytes(of: time.bigEndian) { Array($0) } : withUnsafeBytes(of: time.littleEndian) { Array($0) }
        bytes.replaceSubrange(offset..<offset + 8, with: replacement)
        let message = Self.refusal(reading: bytes)
        let refused = try #require(message, "a bundle with a key time of \(time) was read")
        #expect(refused.contains("bad key times for 'second'"), "\(refused)")
    }

    /// A transfer cannot plant an id's twin: `café` in NFD arrives as `café` in NFC, and a bundle that
    /// holds both forms holds one id twice.
    @Test func aBundleCannotPlantAnIDsTwin() throws {
        let keys = [
            try KeyHistory(id: KeyID("caf\u{E9}"), versions: [.init(key: .generate(), created: Date(timeIntervalSince1970: 1), retired: nil)]),
            try KeyHistory(id: KeyID("abcdef"), versions: [.init(key: .generate(), created: Date(timeIntervalSince1970: 1), retired: nil)]),
        ]
        var bytes = Self.bundle(keys)
        let placeholder = Array("abcdef".utf8), decomposed = Array("cafe\u{301}".utf8)
        #expect(placeholder.count == decomposed.count)
        let offset = try #require((0...(bytes.count - 6)).first { Array(bytes[$0..<$0 + 6]) == placeholder })
        bytes.replaceSubrange(offset..<offset + 6, with: decomposed)
        let message = Self.refusal(reading: bytes)
        #expect(try #require(message).contains("appears twice"))
    }

    @Test func historiesRefuseTimesOutOfRange() throws {
        for seconds in [-1.0, Double(KeyTime.latest) + 1, 9.3e18, .infinity, .nan] {
            #expect(throws: KeyHistoryError.self) {
                try KeyHistory(id: KeyID("a"), versions: [.init(key: .generate(), created: Date(timeIntervalSince1970: seconds), retired: nil)])
            }
        }
        #expect(throws: Never.self) {
            try KeyHistory(id: KeyID("a"), versions: [.init(key: .generate(), created: Date(timeIntervalSince1970: Double(KeyTime.latest)), retired: nil)])
        }
    }
}
