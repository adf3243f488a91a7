#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The binary list of keys that replies and backups carry (see docs/transfer.md, "Keys"):
///
/// ```
/// id count         u16, 1...4096
/// per id:
///   id length      u8, 1...255
///   id             UTF-8, a valid key id, each id once
///   version count  u8, 1...255
///   per version:   key (32) ‖ fingerprint (8) ‖ created (i64) ‖ retired (i64, 0 for the current key)
/// ```
/// All integers big-endian; the current key first, then retired keys, newest first.
package enum KeyBundle {
    package static let maximumIDCount = 4096
    /// The most keys (current and retired, of every id) one transfer or backup carries: as many as
    /// one id may hold. Each key read is one guarded allocation (a few memory mappings each, against
    /// the kernel's usual limit of 65,530), so this keeps a hostile peer far from making us crash.
    package static let maximumKeyCount = 4096
    /// The most keys of one id a bundle carries: its count is one byte. A key file holds more (4,096).
    package static let maximumVersionCount = 255
    package static let versionByteCount = SymmetricKey.byteCount + 8 + 8 + 8

    /// The bytes `write` produces for `keys`.
    package static func byteCount(of keys: [KeyHistory]) -> Int {
        keys.reduce(2) { $0 + 1 + $1.id.rawValue.utf8.count + 1 + $1.versions.count * versionByteCount }
    }

    /// Checks what `write` cannot express.
    package static func validate(_ keys: [KeyHistory]) throws(CodeError) {
        guard !keys.isEmpty else { throw .nothingToSend }
        for history in keys where history.versions.count > maximumVersionCount {
            throw .tooManyVersions(history.id, count: history.versions.count)
        }
        // Every id has at least one key, so this also bounds the id count (`maximumIDCount`).
        guard keyCount(of: keys) <= maximumKeyCount else { throw .tooManyKeys(count: keyCount(of: keys)) }
    }

    /// Every key of every id: current and retired.
    package static func keyCount(of keys: [KeyHistory]) -> Int { keys.reduce(0) { $0 + $1.versions.count } }

    package static func write(_ keys: [KeyHistory], into writer: inout ByteWriter) {
        writer.write(UInt16(keys.count))
        for history in keys {
            let id = Array(history.id.rawValue.utf8)
            writer.write(UInt8(id.count))
            writer.write(id)
            writer.write(UInt8(history.versions.count))
            for version in history.versions {
                version.key.storage.withUnsafeBytes { writer.write($0) }
                writer.write(version.key.fingerprint.bytes)
                writer.write(max(0, unixTime(version.created)))
                writer.write(version.retired.map { max(1, unixTime($0)) } ?? 0)
            }
        }
    }

    /// Reads keys, checking every field; key bytes go straight into guarded memory.
    package static func read(from reader: inout ByteReader, as kind: CodeKind) throws(CodeError) -> [KeyHistory] {
        let count = Int(try reader.uint16())
        guard (1...maximumIDCount).contains(count) else { throw .malformed(kind, reason: "bad key count") }
        var keys: [KeyHistory] = []
        var seen = Set<KeyID>()
        var keysRead = 0
        for _ in 0..<count {
            let idLength = Int(try reader.byte())
            guard let text = String(validating: try reader.bytes(idLength), as: UTF8.self), let id = try? KeyID(text)
            else { throw .malformed(kind, reason: "bad key id") }
            guard seen.insert(id).inserted else { throw .malformed(kind, reason: "key id '\(id)' appears twice") }
            let versionCount = Int(try reader.byte())
            keysRead += versionCount
            guard keysRead <= maximumKeyCount else {
                throw .malformed(kind, reason: "it holds more than \(maximumKeyCount) keys, more than one transfer carries")
            }
            var versions: [KeyHistory.Version] = []
            for index in 0..<versionCount {
                let material = try reader.bytes(SymmetricKey.byteCount)
                let key: SymmetricKey
                do {
                    key = try SymmetricKey(bytes: material)
                } catch {
                    throw .malformed(kind, reason: "bad key")
                }
                let fingerprint = try reader.array(8)
                guard key.fingerprint.bytes == fingerprint else {
                    throw .malformed(kind, reason: "a key for '\(id)' does not match its fingerprint")
                }
                let created = try reader.int64()
                let retired = try reader.int64()
                // Only the first version is current, and only it has no retired time.
                guard (index == 0) == (retired == 0), KeyTime.admits(created), KeyTime.admits(retired) else {
                    throw .malformed(kind, reason: "bad key times for '\(id)': outside \(KeyTime.rangeDescription)")
                }
                versions.append(KeyHistory.Version(
                    key: key, created: Date(timeIntervalSince1970: TimeInterval(created)),
                    retired: retired == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(retired))))
            }
            do {
                keys.append(try KeyHistory(id: id, versions: versions))
            } catch {
                throw .malformed(kind, reason: error.description)
            }
        }
        return keys
    }
}

package func unixTime(_ date: Date) -> Int64 { KeyTime.seconds(of: date) }
