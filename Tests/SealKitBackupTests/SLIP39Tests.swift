import Foundation
import SealKit
import SealTestSupport
import Testing

@_spi(CLI) import SealKitBackup

/// SLIP-39 against its official vectors (every one, valid and invalid) and python-shamir-mnemonic.
@Suite("SLIP-39")
struct SLIP39Tests {
    struct Vector: CustomTestStringConvertible, Sendable {
        let description: String
        let mnemonics: [String]
        let secretHex: String
        var testDescription: String { description }
    }

    static let vectors: [Vector] = {
        guard let data = try? Data(contentsOf: Repository.fixture("slip39/vectors.json")),
            let array = try? JSONSerialization.jsonObject(with: data) as? [[Any]]
        else { return [] }
        return array.compactMap { entry in
            guard let description = entry[0] as? String, let mnemonics = entry[1] as? [String], let secret = entry[2] as? String
            else { return nil }
            return Vector(description: description, mnemonics: mnemonics, secretHex: secret)
        }
    }()

    /// Every vector uses the passphrase TREZOR.
    static let passphrase = Array("TREZOR".utf8)

    static func combine(_ mnemonics: [String], passphrase: [UInt8]) throws -> [UInt8] {
        let shares = try mnemonics.map { try SLIP39.parse($0) }
        let encrypted = try SLIP39.recover(shares)
        return encrypted.decrypt(passphrase: passphrase).withUnsafeBytes { Array($0) }
    }

    @Test func allFortyFiveVectorsArePresent() {
        #expect(Self.vectors.count == 45)
        #expect(Self.vectors.filter { $0.secretHex.isEmpty }.count > 20)
    }

    @Test(arguments: vectors)
    func vectorHasItsStatedOutcome(_ vector: Vector) throws {
        if vector.secretHex.isEmpty {
            #expect(throws: SLIP39Error.self, "\(vector.description)") {
                _ = try Self.combine(vector.mnemonics, passphrase: Self.passphrase)
                // python-shamir-mnemonic refuses more groups or members than the thresholds; the one
                // such vector family is "insufficient", so recovering must have thrown above.
            }
        } else {
            #expect(Hex.encode(try Self.combine(vector.mnemonics, passphrase: Self.passphrase)) == vector.secretHex)
        }
    }

    @Test func wordsRoundTripThroughParse() throws {
        for vector in Self.vectors where !vector.secretHex.isEmpty {
            for mnemonic in vector.mnemonics {
                let share = try SLIP39.parse(mnemonic)
                let again = SLIP39.words(
                    identifier: share.identifier, extendable: share.extendable, iterationExponent: share.iterationExponent,
                    groupIndex: share.groupIndex, groupThreshold: share.groupThreshold, groupCount: share.groupCount,
                    memberIndex: share.memberIndex, memberThreshold: share.memberThreshold, value: share.value)
                #expect(again == mnemonic)
            }
        }
    }

    @Test(.requires(.python)) func pbkdf2MatchesPython() throws {
        for (password, salt, iterations, length) in [("passwd", "salt", 1, 64), ("Password", "NaCl", 80_000, 64), ("", "", 3, 16), ("p", "s", 2, 33)] {
            let ours = PBKDF2.sha256(password: Array(password.utf8), salt: Array(salt.utf8), iterations: iterations, byteCount: length)
            let theirs = try Python.output(of: """
                import hashlib, sys
                print(hashlib.pbkdf2_hmac("sha256", \(password.debugDescription).encode(), \(salt.debugDescription).encode(), \(iterations), \(length)).hex())
                """)
            #expect(Hex.encode(ours) == String(decoding: theirs, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    @Test func gf256MultiplyAndInverseAreRight() {
        // Against the textbook carry-less multiply with reduction, for every pair.
        func slow(_ a: UInt8, _ b: UInt8) -> UInt8 {
            var product = 0
            for bit in 0..<8 where (b >> bit) & 1 == 1 { product ^= Int(a) << bit }
            for bit in stride(from: 15, through: 8, by: -1) where (product >> bit) & 1 == 1 { product ^= 0x11B << (bit - 8) }
            return UInt8(product)
        }
        for a in 0...255 {
            for b in 0...255 { #expect(GF256.multiply(UInt8(a), UInt8(b)) == slow(UInt8(a), UInt8(b))) }
            if a != 0 { #expect(GF256.multiply(UInt8(a), GF256.inverse(UInt8(a))) == 1) }
        }
    }

    /// Python's shares restore here, and ours combine in Python to the same secret, with and
    /// without a passphrase, and with groups.
    @Test(.requires(.shamirMnemonic), arguments: [("", 1, [[3, 5]]), ("correct horse", 1, [[3, 5]]), ("", 2, [[2, 3], [3, 5], [1, 1]]), ("pass", 2, [[1, 1], [2, 2]])])
    func interoperatesWithPythonShamirMnemonic(_ passphrase: String, _ groupThreshold: Int, _ groups: [[Int]]) throws {
        let secret = SecureRandom.bytes(count: 32)
        let request = try JSONSerialization.data(withJSONObject: [
            "secret": Hex.encode(secret), "passphrase": passphrase, "group_threshold": groupThreshold, "groups": groups,
        ])
        // Python splits; SealKit recovers from the first threshold groups, threshold members each.
        let made = try Python.output(of: """
            import json, sys
            from shamir_mnemonic import generate_mnemonics
            r = json.load(sys.stdin)
            print(json.dumps(generate_mnemonics(r["group_threshold"], [tuple(g) for g in r["groups"]], bytes.fromhex(r["secret"]), r["passphrase"].encode())))
            """, stdin: Array(request))
        let pythonGroups = try #require(try JSONSerialization.jsonObject(with: Data(made)) as? [[String]])
        var chosen: [String] = []
        for (index, group) in pythonGroups.prefix(groupThreshold).enumerated() { chosen += group.prefix(groups[index][0]) }
        #expect(try Self.combine(chosen.reversed(), passphrase: Array(passphrase.utf8)) == secret)

        // SealKit splits; Python combines.
        let (ours, _) = try SLIP39.split(
            secret: SecureBytes(copying: secret), groupThreshold: groupThreshold, groups: groups.map { ($0[0], $0[1]) },
            passphrase: Array(passphrase.utf8))
        var ourChoice: [String] = []
        for (index, group) in ours.prefix(groupThreshold).enumerated() { ourChoice += group.suffix(groups[index][0]) }
        let combined = try Python.output(of: """
            import json, sys
            from shamir_mnemonic import combine_mnemonics
            r = json.load(sys.stdin)
            print(combine_mnemonics(r["mnemonics"], r["passphrase"].encode()).hex())
            """, stdin: Array(try JSONSerialization.data(withJSONObject: ["mnemonics": ourChoice, "passphrase": passphrase])))
        #expect(String(decoding: combined, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == Hex.encode(secret))
        #expect(ours.allSatisfy { $0.allSatisfy { $0.split(separator: " ").count == 33 } })
    }

    @Test func threeOfFiveEverySubset() throws {
        let secret = SecureRandom.bytes(count: 32)
        let (groups, tag) = try SLIP39.split(
            secret: SecureBytes(copying: secret), groupThreshold: 1, groups: [(3, 5)], passphrase: [], iterationExponent: 0)
        try #require(groups.map(\.count) == [5], "\(groups.map(\.count)) shares")
        let shares = try groups[0].map { try SLIP39.parse($0) }
        for a in 0..<5 {
            for b in (a + 1)..<5 {
                #expect(throws: SLIP39Error.needMore(groups: 1, members: [(group: 1, more: 1)])) {
                    try SLIP39.recover([shares[a], shares[b], shares[a]])
                }
                for c in (b + 1)..<5 {
                    let recovered = try SLIP39.recover([shares[c], shares[a], shares[b]])
                    #expect(recovered.tag == tag)
                    #expect(recovered.decrypt(passphrase: []).withUnsafeBytes { Array($0) } == secret)
                }
            }
        }
        // Shares of another backup are refused, naming both.
        let other = try SLIP39.split(secret: SecureBytes(copying: secret), groupThreshold: 1, groups: [(3, 5)], passphrase: [], iterationExponent: 0)
        let foreign = try SLIP39.parse(try #require(other.groups.first?.first))
        #expect(throws: SLIP39Error.self) { try SLIP39.recover([shares[0], shares[1], foreign]) }
        // A one-word typo anywhere is caught, and the word named.
        let words = groups[0][2].split(separator: " ").map(String.init)
        for position in words.indices {
            var typo = words
            let index = SLIP39Words.index[typo[position]]!
            typo[position] = SLIP39Words.all[(index + 1) % 1024]
            do {
                _ = try SLIP39.parse(typo.joined(separator: " "))
                Issue.record("a typo in word \(position + 1) went unnoticed")
            } catch .badChecksum(let suspect) {
                #expect(suspect == position + 1, "typo in word \(position + 1), named \(String(describing: suspect))")
            } catch {
                // The typo can break the checksum's customization first only by changing word 2's
                // extendable bit, which is still a checksum failure; anything else is wrong.
                Issue.record("typo in word \(position + 1): \(error)")
            }
        }
    }

    @Test func hostileSharesFailCleanly() {
        let inputs = [
            "", "academic", String(repeating: "academic ", count: 19), String(repeating: "academic ", count: 33),
            String(repeating: "zzzz ", count: 33), String(repeating: "academic ", count: 5000),
            "duckling enlarge academic academic agency result length solution fridge kidney coal piece deal husband erode duke ajar critical decision kidney",
        ]
        for input in inputs { #expect(throws: SLIP39Error.self) { try SLIP39.parse(input) } }
        // A long line of words with a bad checksum is refused at once, without a search for the typo.
        let started = ContinuousClock.now
        #expect(throws: SLIP39Error.self) { try SLIP39.parse(String(repeating: "academic acid ", count: 2_500) + "academic") }
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(throws: SLIP39Error.self) { try SLIP39.recover([]) }
    }

    /// The exponent is checked when a share is parsed, before recovery could run any PBKDF2; the
    /// bound admits every official vector (up to 3) and what SealKit writes (1).
    @Test func iterationExponentsAboveTheBoundAreRefusedBeforeAnyWork() throws {
        func share(exponent: Int) -> String {
            SLIP39.words(
                identifier: 7, extendable: true, iterationExponent: exponent, groupIndex: 0, groupThreshold: 1, groupCount: 1,
                memberIndex: 0, memberThreshold: 1, value: [UInt8](repeating: 9, count: 32))
        }
        for exponent in 0...SLIP39.maximumIterationExponent {
            #expect(try SLIP39.parse(share(exponent: exponent)).iterationExponent == exponent)
        }
        for exponent in (SLIP39.maximumIterationExponent + 1)...15 {
            #expect(throws: SLIP39Error.iterationExponentTooHigh(exponent)) { try SLIP39.parse(share(exponent: exponent)) }
        }
        #expect(throws: SLIP39Error.self) {
            try SLIP39.split(
                secret: SecureBytes(copying: [UInt8](repeating: 1, count: 32)), groupThreshold: 1, groups: [(1, 1)], passphrase: [],
                iterationExponent: SLIP39.maximumIterationExponent + 1)
        }
    }
}
