import Foundation
import SealKit
import SealKitTransfer
import SealTestSupport
import Testing

/// Known answers from python-spake2, PyNaCl, `cryptography` and magic-wormhole
/// (Scripts/make-spake2-vectors.py → Fixtures/pake/vectors.json).
@Suite("SPAKE2, HKDF and wormhole key schedule vectors")
struct PAKEVectorTests {
    struct HKDFCase: Decodable, CustomTestStringConvertible {
        let name, ikm, salt, info, okm: String
        let length: Int
        var testDescription: String { name }
    }
    struct PasswordScalar: Decodable { let password, scalar: String }
    struct Exchange: Decodable, CustomTestStringConvertible {
        let name, identity, password_a, password_b, entropy_a, entropy_b: String
        let message_a, message_b, key_a, key_b: String
        let keys_match: Bool
        var testDescription: String { name }
    }
    struct BadMessage: Decodable, CustomTestStringConvertible {
        let name, message, expect: String
        var testDescription: String { name }
    }
    struct Derived: Decodable { let key, purpose, okm: String }
    struct Phase: Decodable { let key, side, phase, okm: String }
    struct Verifier: Decodable { let key, verifier: String }
    struct Box: Decodable { let key, nonce, plaintext, sealed: String }
    struct WordList: Decodable { let sha256_even_then_odd: String }
    struct File: Decodable {
        let hkdf: [HKDFCase]
        let blinding: String
        let password_scalar: [PasswordScalar]
        let exchanges: [Exchange]
        let bad_messages: [BadMessage]
        let derive_key: [Derived]
        let phase_key: [Phase]
        let verifier: Verifier
        let secretbox: [Box]
        let wordlist: WordList
    }

    static let file: File? = {
        let url = Repository.fixture("pake/vectors.json")
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(File.self, from: data)
    }()

    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// Entropy that returns the vector's fixed bytes once, as python-spake2's entropy_f was given.
    static func fixed(_ hexBytes: String) -> (Int) -> [UInt8] {
        let seed = bytes(hexBytes)
        return { count in
            #expect(count == 64)
            return Array(seed.prefix(count))
        }
    }

    @Test func fixtureIsPresentAndComplete() throws {
        let file = try #require(Self.file)
        #expect(file.hkdf.filter { $0.name.hasPrefix("rfc5869-") }.count == 3)
        #expect(file.exchanges.contains { $0.identity == Self.hex(Array("sealkit/key-transfer/v1".utf8)) && $0.keys_match })
        #expect(file.exchanges.contains { !$0.keys_match })
        #expect(file.bad_messages.count >= 10)
    }

    @Test(arguments: file?.hkdf ?? [])
    func hkdfMatches(_ vector: HKDFCase) {
        let okm = HKDF.deriveBytes(
            inputKeyMaterial: Self.bytes(vector.ikm), salt: Self.bytes(vector.salt), info: Self.bytes(vector.info),
            outputByteCount: vector.length)
        #expect(okm.withUnsafeBytes { Self.hex($0) } == vector.okm)
    }

    @Test func blindingElementIsPythonSpake2s() throws {
        let file = try #require(Self.file)
        #expect(Self.hex(SPAKE2Symmetric.blindingElement) == file.blinding)
    }

    @Test func passwordScalarsMatch() throws {
        let file = try #require(Self.file)
        #expect(file.password_scalar.count >= 5)
        for vector in file.password_scalar {
            let scalar = SPAKE2Symmetric.passwordScalar(Self.bytes(vector.password))
            #expect(scalar.withUnsafeBytes { Self.hex($0) } == vector.scalar, "password \(vector.password)")
        }
    }

    @Test(arguments: file?.exchanges ?? [])
    func exchangeMatchesPythonSpake2(_ vector: Exchange) throws {
        let identity = Self.bytes(vector.identity)
        let a = SPAKE2Symmetric(
            password: Self.bytes(vector.password_a), identity: identity, entropy: Self.fixed(vector.entropy_a))
        let b = SPAKE2Symmetric(
            password: Self.bytes(vector.password_b), identity: identity, entropy: Self.fixed(vector.entropy_b))
        #expect(Self.hex(a.message) == vector.message_a)
        #expect(Self.hex(b.message) == vector.message_b)
        let keyA = try a.finish(peerMessage: b.message)
        let keyB = try b.finish(peerMessage: a.message)
        #expect(keyA.withUnsafeBytes { Self.hex($0) } == vector.key_a)
        #expect(keyB.withUnsafeBytes { Self.hex($0) } == vector.key_b)
        #expect((keyA == keyB) == vector.keys_match)
    }

    @Test(arguments: file?.bad_messages ?? [])
    func badPeerMessageIsRefused(_ vector: BadMessage) {
        let spake = SPAKE2Symmetric(password: Array("7-guitarist-revenge".utf8), identity: Array("sealkit/key-transfer/v1".utf8))
        let outcome: String
        do {
            _ = try spake.finish(peerMessage: Self.bytes(vector.message))
            outcome = "accepted"
        } catch {
            switch error {
            case .wrongLength: outcome = "wrongLength"
            case .wrongSide: outcome = "wrongSide"
            case .invalidElement: outcome = "invalidElement"
            case .reflection: outcome = "reflection"
            case .alreadyFinished: outcome = "alreadyFinished"
            }
        }
        #expect(outcome == vector.expect)
    }

    @Test func keyScheduleMatchesMagicWormhole() throws {
        let file = try #require(Self.file)
        for vector in file.derive_key {
            let derived = WormholeKey(bytes: Self.bytes(vector.key)).derive(purpose: Self.bytes(vector.purpose))
            #expect(derived.withUnsafeBytes { Self.hex($0) } == vector.okm, "purpose \(vector.purpose)")
        }
        for vector in file.phase_key {
            let derived = WormholeKey(bytes: Self.bytes(vector.key)).phaseKey(side: vector.side, phase: vector.phase)
            #expect(derived.withUnsafeBytes { Self.hex($0) } == vector.okm, "side \(vector.side) phase \(vector.phase)")
        }
        #expect(Self.hex(WormholeKey(bytes: Self.bytes(file.verifier.key)).verifier) == file.verifier.verifier)
    }

    @Test func secretboxMatchesPyNaCl() throws {
        let file = try #require(Self.file)
        for vector in file.secretbox {
            let key = WormholeKey(bytes: Self.bytes(vector.key))
            let sealed = key.seal(Self.bytes(vector.plaintext), nonce: Self.bytes(vector.nonce))
            #expect(Self.hex(sealed) == vector.sealed)
            #expect(Self.hex(try key.open(Self.bytes(vector.sealed))) == vector.plaintext)
            var tampered = Self.bytes(vector.sealed)
            tampered[tampered.count - 1] ^= 1
            #expect(throws: WormholeKeyError.cannotOpen) { try key.open(tampered) }
            let other = WormholeKey(bytes: [UInt8](repeating: 7, count: 32))
            #expect(throws: WormholeKeyError.cannotOpen) { try other.open(Self.bytes(vector.sealed)) }
        }
    }

    @Test func wordListIsMagicWormholes() throws {
        let file = try #require(Self.file)
        let joined = (WormholeCode.wordLists.even + WormholeCode.wordLists.odd).joined(separator: "\n")
        #expect(Self.hex(SHA256.hash(Array(joined.utf8))) == file.wordlist.sha256_even_then_odd)
    }
}
