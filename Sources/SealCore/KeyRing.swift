/// A user's keys: the current one, which encrypts, and retired ones kept so that
/// older ciphertexts still open after a rotation.
public struct KeyRing: Sendable {
    /// The key new ciphertexts are made with.
    public let current: SymmetricKey
    /// Earlier keys, newest first; they only decrypt.
    public let retired: [SymmetricKey]

    /// Makes a ring from a current key and retired keys (newest first).
    public init(current: SymmetricKey, retired: [SymmetricKey] = []) {
        self.current = current
        self.retired = retired
    }

    /// Every key, current first: the order decryption tries them in.
    public var all: [SymmetricKey] { [current] + retired }

    /// Encrypts with the current key.
    /// - Returns: the ciphertext as base64 text.
    public func encrypt(_ plaintext: String) -> String {
        FieldCipher.encrypt(plaintext, using: current)
    }

    /// Decrypts with the current key, then the retired ones.
    /// - Returns: the plaintext, and whether only a retired key opened it (so it should be re-encrypted).
    /// - Throws: `CiphertextError` when no key opens it or it is malformed.
    public func decrypt(_ ciphertext: String) throws(CiphertextError) -> (plaintext: String, needsRotation: Bool) {
        let (plaintext, index) =
            retired.isEmpty
            ? try FieldCipher.decrypt(ciphertext, usingAnyOf: CollectionOfOne(current))
            : try FieldCipher.decrypt(ciphertext, usingAnyOf: all)
        return (plaintext, index > 0)
    }
}

extension KeyRing: CustomStringConvertible {
    public var description: String {
        "KeyRing(current: \(current.fingerprint), retired: \(retired.count))"
    }
}
