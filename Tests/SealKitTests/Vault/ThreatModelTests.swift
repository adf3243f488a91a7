import Foundation
@_spi(CLI) import SealKit
import Testing

/// The claims of docs/threat-model.md that no other test states directly, the limits included:
/// a test here that starts failing means the threat model changed and the document must too.
@Suite("Threat model")
struct ThreatModelTests {
    static let schema = """
        {"app": {"schema": {
          "ssn": {"type": "string", "encryption": {"state": "enabled"}},
          "date_of_birth": {"type": "string", "encryption": {"state": "enabled"}}
        }}}
        """

    static func profile(_ ssn: String, _ dateOfBirth: String) -> JSONValue {
        .object([("data", .object([("ssn", .string(ssn)), ("date_of_birth", .string(dateOfBirth))]))])
    }

    static func fields(_ profile: JSONValue) -> (ssn: String?, dateOfBirth: String?) {
        (profile["data"]?["ssn"]?.stringValue, profile["data"]?["date_of_birth"]?.stringValue)
    }

    /// Not protected: one user's ciphertexts carry nothing binding them to their field, so a
    /// server can swap them and both still decrypt, each in the other's place.
    @Test func ciphertextsSwappedBetweenFieldsOfOneUserGoUnnoticed() throws {
        let encryptor = ProfileEncryptor(schema: try ProfileSchema(parsing: Self.schema))
        let ring = KeyRing(current: .generate())
        let sealed = try encryptor.encrypt(Self.profile("078-05-1120", "1815-12-10"), with: ring)
        let (ssn, dateOfBirth) = Self.fields(sealed)
        let swapped = Self.profile(try #require(dateOfBirth), try #require(ssn))
        let opened = try encryptor.decrypt(swapped, with: ring).profile
        #expect(Self.fields(opened).ssn == "1815-12-10")
        #expect(Self.fields(opened).dateOfBirth == "078-05-1120")
    }

    /// Protected with v2: the same swap fails on both fields, as "sealed for another field or
    /// user", told apart from tampering; and a v2 value moved to a user with the same key fails too.
    @Test func v2CiphertextsSwappedBetweenFieldsOrUsersAreRefused() throws {
        let encryptor = ProfileEncryptor(schema: try ProfileSchema(parsing: Self.schema).writing(.v2))
        let key = SymmetricKey.generate()
        let ring = KeyRing(current: key, id: "alice")
        let sealed = try encryptor.encrypt(Self.profile("078-05-1120", "1815-12-10"), with: ring)
        let (ssn, dateOfBirth) = Self.fields(sealed)
        let swapped = Self.profile(try #require(dateOfBirth), try #require(ssn))
        #expect(throws: ProfileError.self) { try encryptor.decrypt(swapped, with: ring) }
        do {
            _ = try encryptor.decrypt(swapped, with: ring)
        } catch .fieldsFailed(let failures) {
            #expect(failures.map(\.reason) == Array(repeating: .undecryptable(.sealedForAnotherPlace), count: 2))
        } catch {
            Issue.record("\(error)")
        }
        let sameKeyOtherUser = KeyRing(current: key, id: "bob")
        #expect(throws: ProfileError.self) { try encryptor.decrypt(sealed, with: sameKeyOtherUser) }
        #expect(try encryptor.decrypt(sealed, with: ring).profile == Self.profile("078-05-1120", "1815-12-10"))
    }

    /// Protected: a ciphertext moved into another user's profile does not open under that
    /// user's key, and the failure names the field, never the value.
    @Test func ciphertextsMovedBetweenUsersAreRefused() throws {
        let encryptor = ProfileEncryptor(schema: try ProfileSchema(parsing: Self.schema))
        let alice = KeyRing(current: .generate()), bob = KeyRing(current: .generate())
        let alicesSSN = Self.fields(try encryptor.encrypt(Self.profile("078-05-1120", "1815-12-10"), with: alice)).ssn
        let bobs = try encryptor.encrypt(Self.profile("219-09-9999", "1906-12-09"), with: bob)
        let planted = Self.profile(try #require(alicesSSN), try #require(Self.fields(bobs).dateOfBirth))
        do {
            _ = try encryptor.decrypt(planted, with: bob)
            Issue.record("another user's ciphertext decrypted")
        } catch {
            #expect(error.description.contains("ssn") && !error.description.contains("078-05-1120"))
        }
    }

    /// Protected: changing any bit of a stored ciphertext makes it fail authentication;
    /// it never decrypts to something else.
    @Test func everyBitFlipOfAStoredCiphertextIsDetected() throws {
        let key = SymmetricKey.generate()
        let stored = try #require(Base64.decode(FieldCipher.encrypt("078-05-1120", using: key)))
        for index in stored.indices {
            for bit in 0..<8 {
                var tampered = stored
                tampered[index] ^= 1 << bit
                #expect(throws: CiphertextError.authenticationFailed) {
                    try FieldCipher.decrypt(Base64.encode(tampered), using: key)
                }
            }
        }
    }

    /// Not protected: a ciphertext's length shows its plaintext's length (40 bytes more,
    /// then base64), and equal plaintexts are not linkable (fresh nonces).
    @Test func lengthShowsButEqualValuesDoNotLink() throws {
        let key = SymmetricKey.generate()
        for length in [0, 1, 11, 100] {
            let plaintext = String(repeating: "x", count: length)
            let first = FieldCipher.encrypt(plaintext, using: key), second = FieldCipher.encrypt(plaintext, using: key)
            #expect(Base64.decode(first)?.count == FieldCipher.minimumByteCount + length)
            #expect(first != second)
        }
    }
}
