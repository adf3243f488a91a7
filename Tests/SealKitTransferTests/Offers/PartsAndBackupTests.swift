import Foundation
import SealKit
@testable import SealKitTransfer
import Testing

@testable import SealKitBackup

@Suite("Parts")
struct PartsTests {
    static let payload = "sealkit-reply-v2:" + CodeText.encode(SecureRandom.bytes(count: 3000))

    @Test func shortCodesStayWholeLongOnesSplitEvenly() throws {
        #expect(try TransferParts.split("sealkit-reply-v2:AAAA") == ["sealkit-reply-v2:AAAA"])
        let parts = try TransferParts.split(Self.payload)
        #expect(parts.count == 4)
        #expect(parts.allSatisfy { $0.count <= TransferParts.maximumLineLength })
        #expect(parts.enumerated().allSatisfy { $1.contains(":\($0 + 1)/4:") })
        #expect(try TransferParts.join(parts) == Self.payload)
        #expect(try TransferParts.join([parts[2], "", parts[0], " \(parts[3])\r", parts[1]]) == Self.payload)
    }

    @Test func missingDuplicatedAndForeignPartsAreRefused() throws {
        let parts = try TransferParts.split(Self.payload)
        let other = try TransferParts.split("sealkit-reply-v2:" + CodeText.encode(SecureRandom.bytes(count: 3000)))
        #expect(throws: TransferError.code(.missingParts([2, 4], count: 4))) { try TransferParts.join([parts[0], parts[2]]) }
        #expect(throws: TransferError.code(.duplicatePart(index: 1, count: 4))) { try TransferParts.join([parts[0], parts[0]]) }
        #expect(throws: TransferError.code(.partsFromTwoTransfers)) { try TransferParts.join([parts[0], other[1]]) }
        #expect(throws: TransferError.code(.partsMixedWithWhole)) { try TransferParts.join([parts[0], "sealkit-reply-v2:AAAA"]) }
        #expect(throws: TransferError.code(.partsMixedWithWhole)) { try TransferParts.join(["sealkit-reply-v2:AAAA", parts[0]]) }
        #expect(throws: TransferError.code(.noInput(.reply))) { try TransferParts.join(["", " "]) }

        // A piece changed but renumbered consistently: the transfer id catches it.
        var changed = parts
        changed[1] = String(parts[1].dropLast()) + (parts[1].last == "A" ? "B" : "A")
        #expect(throws: TransferError.code(.partsDoNotFit)) { try TransferParts.join(changed) }
    }

    @Test(arguments: [
        "sealkit-part-v1:short:1/2:AAAA", "sealkit-part-v1:AAAAAAAAAAAA:3/2:AAAA", "sealkit-part-v1:AAAAAAAAAAAA:01/2:AAAA",
        "sealkit-part-v1:AAAAAAAAAAAA:1/1:AAAA", "sealkit-part-v1:AAAAAAAAAAAA:1/100:AAAA", "sealkit-part-v1:AAAAAAAAAAAA:1/2:",
        "sealkit-part-v1:AAAAAAAAAAAA:1/2:AA AA", "sealkit-part-v1:AAAAAAAAAAAA:1-2:AAAA", "sealkit-part-v1:AAAAAAAAAAAA",
    ])
    func malformedPartsAreRefused(_ line: String) {
        var assembler = PartAssembler()
        #expect(throws: TransferError.self) { try assembler.add(line) }
    }

    @Test func tooLargeIsRefused() {
        let huge = "sealkit-reply-v2:" + String(repeating: "A", count: 1165 * 100)
        #expect(throws: TransferError.code(.tooLarge(parts: 101))) { try TransferParts.split(huge) }
    }
}

@Suite("Format vectors in Fixtures/transfer")
struct TransferVectorTests {
    struct Vector: Decodable {
        let name: String
        let kind: String
        let lines: [String]
        let passphrase: String?
        let expect: String
        let keys: [VectorKey]?
        let receiver: VectorReceiver?
    }
    /// The offline receiver the vector was made for: its code, fixed SPAKE2 entropy, and clock.
    struct VectorReceiver: Decodable {
        let code: String
        let entropy: String
        let now: Int64
    }
    struct VectorKey: Decodable {
        let id: String
        let versions: [VectorVersion]
    }
    struct VectorVersion: Decodable {
        let key: String
        let fingerprint: String
        let created: Int64
        let retired: Int64?
    }

    static let vectors: [Vector] = {
        var folder = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { folder.deleteLastPathComponent() }
        let url = folder.appendingPathComponent("Fixtures/transfer/vectors.json")
        guard let data = try? Data(contentsOf: url) else { return [] }
        return (try? JSONDecoder().decode([Vector].self, from: data)) ?? []
    }()

    @Test func vectorsAreThere() {
        #expect(Self.vectors.count >= 6, "Fixtures/transfer/vectors.json is missing or unreadable")
        #expect(Set(Self.vectors.map(\.kind)) == ["offer", "reply", "backup"])
        #expect(Set(Self.vectors.filter { $0.kind == "reply" }.map(\.expect)).isSuperset(of: ["ok", "wrong-code", "retired-version"]))
    }

    @Test(arguments: vectors.map(\.name))
    func vector(_ name: String) throws {
        let vector = try #require(Self.vectors.first { $0.name == name })
        let outcome: String
        var opened: [KeyHistory] = []
        do {
            let joined = try TransferParts.join(vector.lines)
            switch vector.kind {
            case "backup":
                let passphrase = try Passphrase(vector.passphrase ?? "-")
                opened = try TransferError.converting { () throws(CodeError) in try PaperBackup.open(joined, passphrase: passphrase) }.keys
            case "parts":
                #expect(joined.hasPrefix("sealkit-"))
            case "offer":
                let offer = try TransferOffer(joined)
                let made = try Self.receiver(vector)
                #expect(offer.text == made.offer.text, "the receiver's offer differs from python-spake2's")
            case "reply":
                let receiver = try Self.receiver(vector)
                let now = Date(timeIntervalSince1970: TimeInterval(try #require(vector.receiver).now))
                opened = try receiver.accept(joined, now: now).keys
            default:
                Issue.record("unknown kind \(vector.kind)")
            }
            outcome = "ok"
        } catch let error as TransferError {
            outcome = Self.name(of: error)
        }
        #expect(outcome == vector.expect, "\(name)")
        if outcome == "ok", let keys = vector.keys {
            #expect(opened.map(\.id.rawValue) == keys.map(\.id))
            for (history, expected) in zip(opened, keys) {
                #expect(history.versions.count == expected.versions.count)
                for (version, wanted) in zip(history.versions, expected.versions) {
                    #expect(version.key == (try SymmetricKey(base64Encoded: wanted.key)))
                    #expect(version.key.fingerprint.description == wanted.fingerprint)
                    #expect(unixTime(version.created) == wanted.created)
                    #expect(version.retired.map(unixTime) == wanted.retired)
                }
            }
        }
    }

    /// A receiver with the vector's code and entropy: it makes python-spake2's offer.
    static func receiver(_ vector: Vector) throws -> TransferReceiver {
        let made = try #require(vector.receiver)
        var seed: [UInt8] = []
        var index = made.entropy.startIndex
        while index < made.entropy.endIndex {
            let next = made.entropy.index(index, offsetBy: 2)
            seed.append(try #require(UInt8(made.entropy[index..<next], radix: 16)))
            index = next
        }
        let fixed = seed
        return TransferReceiver(code: try WormholeCode(parsing: made.code), entropy: { Array(fixed.prefix($0)) })
    }

    static func name(of error: TransferError) -> String {
        switch error {
        case .wrongCode: return "wrong-code"
        case .code(.retiredVersion): return "retired-version"
        case .expired: return "expired"
        case .code(.wrongPassphrase): return "wrong-passphrase"
        case .code(.missingParts): return "missing-parts"
        case .code(.duplicatePart): return "duplicate-part"
        case .code(.partsFromTwoTransfers): return "parts-from-two-transfers"
        case .code(.partsDoNotFit): return "parts-do-not-fit"
        case .code(.unsupportedVersion): return "unsupported-version"
        case .code(.malformed): return "malformed"
        default: return "other: \(error)"
        }
    }
}
