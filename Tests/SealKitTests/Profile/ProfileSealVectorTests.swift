import Foundation
import SealKit
import SealTestSupport
import Testing


/// Profile seals against Fixtures/seal/vectors.json, made by Scripts/make-format-vectors.py from
/// docs/format.md ("Profile seal") with hashlib alone, and checked by Scripts/check-format-vectors.py.
@Suite("Profile seal vectors")
struct ProfileSealVectorTests {
    struct Vector: CustomTestStringConvertible {
        let name: String
        let expect: String
        let keys: [SymmetricKey]
        let user: String
        let flagged: [String]
        let profile: JSONValue
        let remembered: SealMark?
        let version: UInt64?
        var testDescription: String { name }
    }

    static let vectors: [Vector] = {
        guard let data = try? Data(contentsOf: Repository.fixture("seal/vectors.json")),
            let file = try? JSONValue.parse([UInt8](data)), case .array(let entries)? = file["vectors"]
        else { return [] }
        return entries.compactMap { entry in
            guard let name = entry["name"]?.stringValue, let expect = entry["expect"]?.stringValue,
                case .array(let keys)? = entry["keys"], case .array(let flagged)? = entry["flagged"],
                let user = entry["user"]?.stringValue, let profile = entry["profile"]
            else { return nil }
            var remembered: SealMark?
            if let mark = entry["remembered"], case .number(let version)? = mark["version"],
                let mac = mark["mac"]?.stringValue.flatMap(Hex.decode)
            {
                remembered = SealMark(version: UInt64(version)!, mac: mac)
            }
            var version: UInt64?
            if case .number(let text)? = entry["version"] { version = UInt64(text) }
            return Vector(
                name: name, expect: expect,
                keys: keys.compactMap { $0.stringValue.flatMap { try? SymmetricKey(base64Encoded: $0) } }, user: user,
                flagged: flagged.compactMap(\.stringValue), profile: profile, remembered: remembered, version: version)
        }
    }()

    @Test func vectorsCoverEveryOutcome() {
        #expect(Self.vectors.count >= 20)
        #expect(Set(Self.vectors.map(\.expect)) == ["ok", "seal-missing", "seal-mismatch", "older", "conflicting"])
    }

    @Test(arguments: vectors) func vectorGivesItsOutcome(_ vector: Vector) throws {
        let fields = vector.flagged.map { ProfileSchema.Field(name: $0, type: nil, isEncrypted: true) }
            + [ProfileSchema.Field(name: "name", type: .string, isEncrypted: false)]
        let encryptor = ProfileEncryptor(schema: try ProfileSchema(fields: fields))
        let ring = KeyRing(current: vector.keys[0], retired: Array(vector.keys.dropFirst()), id: vector.user)
        let outcome: String
        var version: UInt64?
        do {
            version = try encryptor.verifySeal(of: vector.profile, with: ring, against: vector.remembered).version
            outcome = "ok"
        } catch .seal(.missing) {
            outcome = "seal-missing"
        } catch .seal(.mismatch) {
            outcome = "seal-mismatch"
        } catch .seal(.older) {
            outcome = "older"
        } catch .seal(.conflicting) {
            outcome = "conflicting"
        } catch {
            outcome = "\(error)"
        }
        #expect(outcome == vector.expect)
        #expect(version == vector.version)
    }

    @Test func sealsSwiftMakesVerifyAsTheVectorsSay() throws {
        // The "valid" vector's profile, sealed again by SealKit at its version, gives the same text.
        let vector = try #require(Self.vectors.first { $0.name == "valid" })
        let fields = vector.flagged.map { ProfileSchema.Field(name: $0, type: nil, isEncrypted: true) }
        let encryptor = ProfileEncryptor(schema: try ProfileSchema(fields: fields))
        let ring = KeyRing(current: vector.keys[0], id: vector.user)
        let (_, seal) = try encryptor.sealing(vector.profile, with: ring, version: 3)
        #expect(seal.text == vector.profile["sealkit_seal"]?.stringValue)
    }

    @Test func theParserTakesOnlyCanonicalSeals() throws {
        let vector = try #require(Self.vectors.first { $0.name == "valid" })
        let text = try #require(vector.profile["sealkit_seal"]?.stringValue)
        let seal = try #require(ProfileSeal(parsing: text))
        #expect(seal.text == text && seal.version == 3)
        #expect(text.hasPrefix("sks2:"))
        for bad in [text.dropLast(4) + "", text + "=", "SKS2:" + text.dropFirst(5), text.replacingOccurrences(of: "sks2:", with: "sks2: "),
                    "", "sks2:", "sks1:", String(text.dropLast(2)) + "x=", "sks1:" + text.dropFirst(5), "sks3:" + text.dropFirst(5)]
        {
            #expect(ProfileSeal(parsing: String(bad)) == nil, "\(bad)")
        }
        // Records on disk: exact text only.
        let mark = SealMark(version: 7, mac: seal.mac)
        #expect(SealMark(fileText: mark.fileText) == mark)
        #expect(SealMark(fileText: Array("sealkit-seal-mark 1 07 \(Hex.encode(seal.mac))\n".utf8)) == nil)
        #expect(SealMark(fileText: Array("sealkit-seal-mark 1 7 \(Hex.encode(seal.mac))".utf8)) == nil)
        #expect(SealMark(fileText: Array("sealkit-seal-mark 1 +7 \(Hex.encode(seal.mac))\n".utf8)) == nil)
        #expect(SealMark(fileText: Array("sealkit-seal-mark 1 0 \(Hex.encode(seal.mac))\n".utf8)) == nil)
        // A write not yet read back names the version it was made over: 0 (a new profile) up to one below its own.
        for base: UInt64 in [0, 3, 6] {
            let written = mark.written(over: base)
            #expect(SealMark(fileText: written.fileText) == written)
            #expect(written.lowestVersionToEdit == base)
        }
        #expect(String(decoding: mark.written(over: 6).fileText, as: UTF8.self) == "sealkit-seal-mark 1 7 \(Hex.encode(seal.mac)) 6\n")
        for bad in ["7", "8", "06", "-1", "", "6 6"] {
            #expect(SealMark(fileText: Array("sealkit-seal-mark 1 7 \(Hex.encode(seal.mac)) \(bad)\n".utf8)) == nil, "\(bad)")
        }
        // A read of the same seal confirms the write; a write never replaces the same seal.
        #expect(mark.written(over: 6).recording(mark, acceptingConflict: false) == .record)
        #expect(mark.recording(mark.written(over: 6), acceptingConflict: false) == .unchanged)
        #expect(mark.recording(mark, acceptingConflict: false) == .unchanged)
    }

    /// A record names the key of the seal it holds, so that a new key for the id starts its own history; a record
    /// written before (`sealkit-seal-mark 1`) names none and applies to any key.
    @Test func recordsNameTheirKey() throws {
        let mac = [UInt8](repeating: 0xAB, count: 32)
        let tag = KeyFingerprint(bytes: [1, 2, 3, 4, 5, 6, 7, 0xFE])
        let mark = SealMark(version: 9, mac: mac, keyTag: tag)
        #expect(String(decoding: mark.fileText, as: UTF8.self) == "sealkit-seal-mark 2 01020304050607fe 9 \(Hex.encode(mac))\n")
        #expect(SealMark(fileText: mark.fileText) == mark)
        #expect(SealMark(fileText: mark.written(over: 4).fileText) == mark.written(over: 4))
        for bad in ["01020304050607FE", "01020304050607", "01020304050607fe00", "", "0102030405060zfe"] {
            #expect(SealMark(fileText: Array("sealkit-seal-mark 2 \(bad) 9 \(Hex.encode(mac))\n".utf8)) == nil, "\(bad)")
        }
        #expect(SealMark(fileText: Array("sealkit-seal-mark 3 01020304050607fe 9 \(Hex.encode(mac))\n".utf8)) == nil)
        #expect(mark.belongs(to: [KeyFingerprint(bytes: Array(repeating: 9, count: 8)), tag]))
        #expect(!mark.belongs(to: [KeyFingerprint(bytes: Array(repeating: 9, count: 8))]))
        #expect(SealMark(version: 9, mac: mac).belongs(to: []))
    }
}
