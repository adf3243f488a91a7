import Foundation
import SealKit
import SealTestSupport
import Testing

/// Known-answer vectors made by PyNaCl (Scripts/make-secretbox-vectors.py), each
/// stating its expected outcome, failures included.
@Suite("PyNaCl secretbox vectors")
struct FixtureVectorTests {
    struct Vector: Decodable, CustomTestStringConvertible {
        let name: String
        let key: String
        let ciphertext: String
        let expect: String
        let plaintext: String?
        var testDescription: String { name }
    }

    struct File: Decodable {
        let vectors: [Vector]
    }

    static let vectors: [Vector] = {
        let url = Repository.fixture("secretbox/vectors.json")
        guard let data = try? Data(contentsOf: url), let file = try? JSONDecoder().decode(File.self, from: data) else {
            return []
        }
        return file.vectors
    }()

    @Test func vectorsArePresentAndCoverEveryOutcome() {
        #expect(Self.vectors.count >= 20)
        #expect(Set(Self.vectors.map(\.expect)) == ["ok", "not-base64", "too-short", "authentication-failed"])
        #expect(Self.vectors.contains { $0.name == "rownd-published-vector" })
    }

    @Test(arguments: vectors)
    func vectorHasItsStatedOutcome(_ vector: Vector) throws {
        let key = try SymmetricKey(base64Encoded: vector.key)
        let outcome: String
        do {
            let plaintext = try FieldCipher.decrypt(vector.ciphertext, using: key)
            #expect(plaintext == vector.plaintext)
            outcome = "ok"
        } catch .notBase64 {
            outcome = "not-base64"
        } catch .tooShort {
            outcome = "too-short"
        } catch .authenticationFailed {
            outcome = "authentication-failed"
        } catch {
            outcome = "other: \(error)"
        }
        #expect(outcome == vector.expect)
    }
}
