import Foundation
import SealKit
import SealTestSupport
import Testing

/// v2 ciphertexts against Fixtures/v2/vectors.json and Scripts/sealkit_v2.py, an implementation
/// written from docs/format.md with PyNaCl.
@Suite("v2 bound ciphertexts")
struct BoundCipherTests {
    struct Vector: Decodable, CustomTestStringConvertible {
        struct Place: Decodable {
            let kind: String
            let name: String
        }
        let name: String
        let expect: String
        let keys: [String]
        let id: String
        let place: Place
        let ciphertext: String
        let plaintext: String?
        var testDescription: String { name }

        var ciphertextPlace: CiphertextPlace { place.kind == "field" ? .field(place.name) : .context(place.name) }
    }

    struct File: Decodable {
        let vectors: [Vector]
    }

    static let vectors: [Vector] = {
        guard let data = try? Data(contentsOf: Repository.fixture("v2/vectors.json")),
            let file = try? JSONDecoder().decode(File.self, from: data)
        else { return [] }
        return file.vectors
    }()

    @Test func vectorsCoverEveryOutcome() {
        #expect(Set(Self.vectors.map(\.expect)) == [
            "ok", "other-field", "other-user", "other-context", "unknown-key", "tampered", "truncated", "bad-version",
            "header-stripped",
        ])
    }

    @Test(arguments: vectors)
    func vectorHasItsStatedOutcome(_ vector: Vector) throws {
        let keys = try vector.keys.map { try SymmetricKey(base64Encoded: $0) }
        let ring = KeyRing(current: keys[0], retired: Array(keys.dropFirst()), id: vector.id)
        let outcome: String
        do {
            let (plaintext, _) = try ring.decrypt(vector.ciphertext, place: vector.ciphertextPlace)
            #expect(plaintext == vector.plaintext)
            outcome = "ok"
        } catch .sealedForAnotherPlace {
            outcome = vector.expect.hasPrefix("other-") ? vector.expect : "wrong-place"
        } catch .unknownKey(let tag) {
            #expect(!keys.contains { $0.fingerprint == tag })
            outcome = "unknown-key"
        } catch .authenticationFailed {
            outcome = "tampered"
        } catch .truncated {
            outcome = "truncated"
        } catch .unsupportedVersion {
            outcome = "bad-version"
        } catch .headerStripped {
            outcome = "header-stripped"
        } catch {
            outcome = "\(error)"
        }
        #expect(outcome == vector.expect)
    }

    @Test(.requires(.pyNaCl)) func pyNaClOpensSealKitAndSealKitOpensPyNaCl() throws {
        let key = SymmetricKey.generate()
        let keyText = String(decoding: key.base64EncodedBytes().withUnsafeBytes { Array($0) }, as: UTF8.self)
        let ring = KeyRing(current: key, id: "ada@example.com")
        for (plaintext, place) in [("078-05-1120", CiphertextPlace.field("ssn")), ("", .context("")), ("Zoë ✓", .context("note"))] {
            let peerPlace: PythonV2.Place
            switch place {
            case .field(let name): peerPlace = .field(name)
            case .context(let name): peerPlace = .context(name)
            }
            let ours = try ring.encrypt(plaintext, format: .v2, place: place)
            #expect(ours.hasPrefix("sk2:"))
            let opened = try PythonV2.open(ours, keys: [keyText], id: "ada@example.com", place: peerPlace)
            #expect(opened.outcome == "ok")
            #expect(opened.plaintext == plaintext)
            // The peer agrees that the same value is refused elsewhere.
            #expect(try PythonV2.open(ours, keys: [keyText], id: "bob", place: peerPlace).outcome == "wrong-place")

            let theirs = try PythonV2.seal(plaintext, keys: [keyText], id: "ada@example.com", place: peerPlace)
            #expect(try ring.decrypt(theirs, place: place).plaintext == plaintext)
        }
    }

    @Test func wrongPlaceTamperingAndUnknownKeyAreToldApart() throws {
        let key = SymmetricKey.generate()
        let alice = KeyRing(current: key, id: "alice")
        let sealed = try alice.encrypt("078-05-1120", format: .v2, place: .field("ssn"))
        #expect(try alice.decrypt(sealed, place: .field("ssn")).plaintext == "078-05-1120")
        #expect(throws: CiphertextError.sealedForAnotherPlace) { try alice.decrypt(sealed, place: .field("nickname")) }
        // One key under two ids: the value opens for the id it was sealed for only.
        let bob = KeyRing(current: key, id: "bob")
        #expect(throws: CiphertextError.sealedForAnotherPlace) { try bob.decrypt(sealed, place: .field("ssn")) }
        #expect(throws: CiphertextError.sealedForAnotherPlace) { try alice.decrypt(sealed, place: .context("ssn")) }
        let stranger = KeyRing(current: SymmetricKey.generate(), id: "alice")
        #expect(throws: CiphertextError.unknownKey(key.fingerprint)) { try stranger.decrypt(sealed, place: .field("ssn")) }

        var body = Base64.decode(String(sealed.dropFirst(4)))!
        body[body.count - 1] ^= 1
        #expect(throws: CiphertextError.authenticationFailed) {
            try alice.decrypt("sk2:" + Base64.encode(body), place: .field("ssn"))
        }
    }

    /// The header's place tag only says quickly where a value belongs; the associated data must bind the place
    /// itself. A value whose place tag is replaced by another field's (a server can copy header bytes between
    /// two values of the user) fails authentication. A planted bug: a sealing that leaves the place out
    /// of the associated data passed every library test, and only the vectors and PyNaCl saw it.
    @Test func theAssociatedDataBindsThePlaceNotOnlyTheHeaderTag() throws {
        let alice = KeyRing(current: SymmetricKey.generate(), id: "alice")
        let ssn = Base64.decode(String(try alice.encrypt("078-05-1120", format: .v2, place: .field("ssn")).dropFirst(4)))!
        let nickname = Base64.decode(String(try alice.encrypt("Ada", format: .v2, place: .field("nickname")).dropFirst(4)))!
        let placeTag = (1 + BoundCipher.tagByteCount)..<(1 + 2 * BoundCipher.tagByteCount)
        #expect(ssn[placeTag] != nickname[placeTag])
        var moved = ssn
        moved.replaceSubrange(placeTag, with: nickname[placeTag])
        #expect(throws: CiphertextError.authenticationFailed) {
            try alice.decrypt("sk2:" + Base64.encode(moved), place: .field("nickname"))
        }
        #expect(throws: CiphertextError.sealedForAnotherPlace) {
            try alice.decrypt("sk2:" + Base64.encode(moved), place: .field("ssn"))
        }
    }

    @Test func aStrippedHeaderNeverOpensAsV1() throws {
        let key = SymmetricKey.generate()
        let ring = KeyRing(current: key, id: "alice")
        let sealed = try ring.encrypt("secret", format: .v2, place: .field("ssn"))
        let body = Base64.decode(String(sealed.dropFirst(4)))!
        // The body as a v1 text, and the nonce and AEAD output alone as one.
        #expect(throws: CiphertextError.headerStripped) { try ring.decrypt(Base64.encode(body)) }
        #expect(throws: CiphertextError.authenticationFailed) { try ring.decrypt(Base64.encode(Array(body[17...]))) }
        #expect(throws: CiphertextError.authenticationFailed) { try FieldCipher.decrypt(Base64.encode(Array(body[17...])), using: key) }
    }

    /// Where only v2 opens, a v1 value is refused for what it is.
    @Test func whereOnlyV2OpensAV1ValueIsNotBound() throws {
        let key = SymmetricKey.generate()
        let ring = KeyRing(current: key, retired: [SymmetricKey.generate()], id: "alice")
        let v1 = ring.encrypt("secret")
        #expect(try ring.decrypt(v1, place: .field("ssn")).plaintext == "secret")
        for place in [CiphertextPlace.field("ssn"), .context(""), .context("billing")] {
            #expect(throws: CiphertextError.notBound) { try ring.decrypt(v1, place: place, acceptsV1: false) }
        }
        // Whatever is not a well-formed v1 value keeps its own error; a v2 value opens as before.
        #expect(throws: CiphertextError.notBase64) { try ring.decrypt(" " + v1, acceptsV1: false) }
        #expect(throws: CiphertextError.tooShort(byteCount: 3)) { try ring.decrypt("AAAA", acceptsV1: false) }
        let sealed = try ring.encrypt("secret", format: .v2, place: .field("ssn"))
        #expect(try ring.decrypt(sealed, place: .field("ssn"), acceptsV1: false).plaintext == "secret")
        let body = Base64.decode(String(sealed.dropFirst(4)))!
        #expect(throws: CiphertextError.headerStripped) { try ring.decrypt(Base64.encode(body), place: .field("ssn"), acceptsV1: false) }
    }

    /// The place cache once keyed on `String` equality, which holds NFC and
    /// NFD equal, so a ring that sealed for one spelling sealed the other with the first's bytes.
    @Test(.requires(.pyNaCl)) func thePlaceCacheKeysOnExactBytes() throws {
        let key = SymmetricKey.generate()
        let nfd = "cafe\u{301}", nfc = "caf\u{E9}"
        #expect(nfd == nfc && Array(nfd.utf8) != Array(nfc.utf8))
        let longLived = KeyRing(current: key, id: "alice")
        _ = try longLived.encrypt("first", format: .v2, place: .context(nfd))
        let sealed = try longLived.encrypt("second", format: .v2, place: .context(nfc))
        // A fresh reader (another process) binds the bytes it is given.
        let reader = KeyRing(current: key, id: "alice")
        #expect(try reader.decrypt(sealed, place: .context(nfc)).plaintext == "second")
        #expect(throws: CiphertextError.sealedForAnotherPlace) { try reader.decrypt(sealed, place: .context(nfd)) }
        let keyText = String(decoding: key.base64EncodedBytes().withUnsafeBytes { Array($0) }, as: UTF8.self)
        #expect(try PythonV2.open(sealed, keys: [keyText], id: "alice", place: .context(nfc)).outcome == "ok")
    }

    @Test func aRetiredKeyOpensWithOneLookupAndAsksForRotation() throws {
        let old = SymmetricKey.generate()
        let sealed = try KeyRing(current: old, id: "alice").encrypt("x", format: .v2, place: .context(""))
        var retired = (0..<40).map { _ in SymmetricKey.generate() }
        retired.insert(old, at: 20)
        let ring = KeyRing(current: SymmetricKey.generate(), retired: retired, id: "alice")
        let (plaintext, needsRotation) = try ring.decrypt(sealed)
        #expect(plaintext == "x")
        #expect(needsRotation)
        #expect(ring.holdsKey(tagged: old.fingerprint))
    }

    @Test func shapesAreToldWithoutAKey() throws {
        let ring = KeyRing(current: SymmetricKey.generate(), id: "alice")
        let v2 = try ring.encrypt("x", format: .v2, place: .context(""))
        #expect(CiphertextShape(of: v2) == .v2(keyTag: ring.current.fingerprint))
        #expect(CiphertextShape(of: ring.encrypt("x")) == .v1)
        #expect(CiphertextShape(of: "sk3:" + String(v2.dropFirst(4))) == .unsupportedVersion)
        #expect(CiphertextShape(of: "078-05-1120") == nil)
        #expect(CiphertextShape(of: "aGVsbG8=") == nil)  // base64, but shorter than any ciphertext
        #expect(CiphertextShape(of: "sk2:not base64") == nil)
    }

    @Test func hostileV2TextsFailCleanly() {
        let ring = KeyRing(current: SymmetricKey.generate(), id: "alice")
        for text in ["sk2:", "sk2:AAAA", "sk2:====", "sk:AAAA", "sk9999:AAAA", "sk2:" + String(repeating: "A", count: 76), "sk02:AAAA"] {
            #expect(throws: CiphertextError.self) { try ring.decrypt(text) }
        }
    }
}
