import CSodium

/// A passphrase held in guarded memory. Its description never shows it.
public struct Passphrase: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package let storage: SecureBytes

    /// Takes a passphrase's UTF-8 bytes. The caller should wipe its own copy.
    /// - Throws: `PassphraseError.empty` for an empty passphrase.
    package init(bytes: some ContiguousByteSource) throws(PassphraseError) {
        guard bytes.withUnsafeBytes({ $0.count }) > 0 else { throw .empty }
        storage = SecureBytes(copying: bytes)
    }

    /// Takes a passphrase from a string (for example from an environment variable or a prompt).
    /// - Throws: ``SealKitError/Reason/invalidArgument`` for an empty passphrase.
    public init(_ text: String) throws(SealKitError) {
        var bytes = Array(text.utf8)
        defer { ConstantTime.wipe(&bytes) }
        do {
            try self.init(bytes: bytes)
        } catch {
            throw SealKitError(error)
        }
    }

    /// Takes a passphrase's UTF-8 bytes (read from a file or a terminal); the caller wipes its own copy.
    /// - Throws: ``SealKitError/Reason/invalidArgument`` for an empty passphrase.
    public init(utf8 bytes: UnsafeRawBufferPointer) throws(SealKitError) {
        do {
            try self.init(bytes: bytes)
        } catch {
            throw SealKitError(error)
        }
    }

    /// Calls `body` with the passphrase's UTF-8 bytes, as swift-crypto's `SymmetricKey.withUnsafeBytes` does:
    /// for showing a passphrase SealKit made (a paper backup's) to the person who must write it down.
    /// The bytes stay in guarded memory; copy none of them out.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes(body)
    }

    /// Whether two passphrases are the same (typed twice, say), compared in constant time.
    public static func == (lhs: Passphrase, rhs: Passphrase) -> Bool {
        ConstantTime.equals(lhs.storage, rhs.storage)
    }

    /// `Passphrase(redacted)`: never the passphrase.
    public var description: String { "Passphrase(redacted)" }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` shows nothing of the passphrase.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// What is wrong with a passphrase.
package enum PassphraseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The passphrase has no characters.
    case empty

    package var description: String { "the passphrase is empty: choose a non-empty passphrase" }
}

/// Argon2id (libsodium `crypto_pwhash`) turning a passphrase into a key.
package struct PassphraseKDF: Sendable, Equatable, Codable {
    /// Argon2id passes over memory.
    package let opsLimit: UInt64
    /// Memory used, in bytes.
    package let memLimit: UInt64

    /// Bytes of the random salt stored beside anything derived with it.
    package static let saltByteCount = Int(crypto_pwhash_SALTBYTES)

    /// libsodium's interactive limits (2 passes, 64 MiB): unlocking a keystore on each command.
    package static let interactive = PassphraseKDF(
        opsLimit: UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE), memLimit: UInt64(crypto_pwhash_MEMLIMIT_INTERACTIVE))
    /// libsodium's moderate limits (3 passes, 256 MiB): paper backups that may face offline guessing for years.
    package static let moderate = PassphraseKDF(
        opsLimit: UInt64(crypto_pwhash_OPSLIMIT_MODERATE), memLimit: UInt64(crypto_pwhash_MEMLIMIT_MODERATE))

    /// Limits as stored in a file.
    /// - Throws: `PassphraseKDFError.unsupportedLimits` when outside what libsodium accepts
    ///   or above the sensitive limits (so a forged file cannot make us allocate gigabytes).
    package init(opsLimit: UInt64, memLimit: UInt64) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// Whether these limits are ones SealKit will run: within libsodium's bounds and no
    /// more than its "sensitive" preset, so a forged file cannot demand gigabytes.
    package var isAcceptable: Bool {
        opsLimit >= UInt64(crypto_pwhash_OPSLIMIT_MIN) && opsLimit <= UInt64(crypto_pwhash_OPSLIMIT_SENSITIVE)
            && memLimit >= UInt64(crypto_pwhash_MEMLIMIT_MIN) && memLimit <= UInt64(crypto_pwhash_MEMLIMIT_SENSITIVE)
    }

    /// Fresh random salt.
    package static func makeSalt() -> [UInt8] { SecureRandom.bytes(count: saltByteCount) }

    /// Derives a 32-byte key from `passphrase` and `salt`.
    /// - Throws: `PassphraseKDFError` when the limits are unacceptable, the salt has the
    ///   wrong size, or the system lacks the memory.
    package func deriveKey(from passphrase: Passphrase, salt: [UInt8]) throws(PassphraseKDFError) -> SymmetricKey {
        Sodium.ready
        guard isAcceptable else { throw .unsupportedLimits }
        guard salt.count == Self.saltByteCount else { throw .badSalt }
        do {
            let storage = try SecureBytes.allocate(count: SymmetricKey.byteCount) { out in
                let status = passphrase.storage.withUnsafeBytes { pass in
                    crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(out.count),
                        pass.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(pass.count),
                        salt, opsLimit, Int(memLimit), crypto_pwhash_ALG_ARGON2ID13)
                }
                guard status == 0 else { throw PassphraseKDFError.outOfMemory }
            }
            return SymmetricKey(storage: storage)
        } catch {
            throw .outOfMemory
        }
    }
}

/// Why a passphrase could not be turned into a key.
package enum PassphraseKDFError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The stored Argon2id limits are outside what SealKit accepts.
    case unsupportedLimits
    /// The stored salt is not the length Argon2id needs.
    case badSalt
    /// Argon2id could not get the memory its limits ask for.
    case outOfMemory

    package var description: String {
        switch self {
        case .unsupportedLimits: return "unsupported Argon2id limits: the file is damaged or from an incompatible tool"
        case .badSalt: return "bad Argon2id salt: the file is damaged"
        case .outOfMemory: return "Argon2id could not run: not enough memory"
        }
    }
}
