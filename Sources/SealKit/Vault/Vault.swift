#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One user's field encryption, shaped like Rownd's SDK: `encrypt(plaintext:)`, `decrypt(ciphertext:)`,
/// `isEncryptionPossible()`, and `ensureKey(existing:)` after sign-in.
///
/// The format is chosen once, when the vault is made: `CiphertextFormat.v1` is Rownd's, which the
/// SDKs read and which binds nothing; `CiphertextFormat.v2` binds every value to the user and to its
/// context, and names the key that sealed it. A vault reads what it writes, and a v2 vault refuses v1
/// values, which could have been copied from anywhere. Profiles are not the vault's to format: a
/// ``ProfileProcessor`` writes each field in the format the app schema gives it.
///
/// ```swift
/// let vault = Vault(keystore: try Keystore(directory: folder), user: try KeyID("user-123"), format: .v2)
/// try vault.ensureKey(existing: profileFromServer)
/// let sealed = try vault.encrypt(plaintext: "A+ blood type", context: "blood-type")
/// let opened = try vault.decrypt(ciphertext: sealed, context: "blood-type")
/// ```
///
/// The user's keys are read once and kept, in guarded memory, for the vault's life; changes made
/// through the vault refresh them.
public final class Vault: Sendable {
    /// Where the user's keys live.
    public let keystore: Keystore
    /// The signed-in user, whose id names the key and, in v2, is bound into every value.
    public let user: KeyID
    /// The format `encrypt(plaintext:context:)` writes and `decrypt(ciphertext:context:)` reads: single
    /// values only. A profile's fields are written in the format their schema gives each one (see ``ProfileProcessor``).
    public let format: CiphertextFormat
    private let passphrase: Passphrase?
    private let state = Mutex(State())

    private struct State {
        var ring: KeyRing?
        /// The highest profile seal this device has written or verified for the user, once read.
        var mark: SealMark??
        var subscribers: [UUID: AsyncStream<VaultEvent>.Continuation] = [:]
    }

    /// Binds a keystore to a user and a format.
    /// - Parameters:
    ///   - keystore: where the user's keys live.
    ///   - user: the signed-in user.
    ///   - format: `.v1` for values Rownd's SDKs read, `.v2` for values bound to the user and their context
    ///     (single values; profiles follow their schema).
    ///   - passphrase: unlocks passphrase-protected keys, and protects the keys `ensureKey` makes.
    public init(keystore: Keystore, user: KeyID, format: CiphertextFormat, passphrase: Passphrase? = nil) {
        self.keystore = keystore
        self.user = user
        self.format = format
        self.passphrase = passphrase
    }

    deinit {
        for continuation in state.withLock({ $0.subscribers.values }) { continuation.finish() }
    }

    // MARK: Values

    /// Encrypts text with the user's current key, in the vault's format.
    /// - Parameters:
    ///   - plaintext: the text to protect.
    ///   - context: what the value is for (`"billing-note"`): a v2 value opens only with the same context.
    ///     A v1 value binds nothing, so a v1 vault takes only the empty context.
    /// - Returns: the ciphertext's text: standard base64 for v1, `sk2:` and base64 for v2.
    /// - Throws: `SealKitError` when the key is missing or locked, or a v1 vault is given a context.
    public func encrypt(plaintext: String, context: String = "") throws(SealKitError) -> String {
        try reporting(.encryptionFailed(user)) { () throws(SealKitError) in
            try requirePlace(context)
            let keys = try ring()
            do throws(SecureMemoryError) {
                return try keys.encrypt(plaintext, format: format, place: .context(context))
            } catch {
                throw SealKitError(error)
            }
        }
    }

    /// Decrypts a ciphertext with the user's current key, then their retired keys.
    ///
    /// A v1 vault opens v1 values, and v2 values sealed with the empty context; a v2 vault opens only
    /// v2 values sealed for this user and `context`.
    /// - Parameters:
    ///   - ciphertext: what `encrypt(plaintext:context:)` returned, here or on another device.
    ///   - context: the context it was sealed with.
    /// - Returns: the plaintext.
    /// - Throws: `SealKitError` whose reason tells a wrong place, an unknown key, tampering and a
    ///   v1 value in a v2 vault (`.notBound`) apart.
    public func decrypt(ciphertext: String, context: String = "") throws(SealKitError) -> String {
        try reporting(.decryptionFailed(user)) { () throws(SealKitError) in
            try requirePlace(context)
            let keys = try ring()
            do throws(CiphertextError) {
                return try keys.decrypt(ciphertext, place: .context(context), acceptsV1: format == .v1).plaintext
            } catch {
                throw SealKitError(error, keyID: user, prefix: "cannot decrypt with key '\(user)': ")
            }
        }
    }

    /// Encrypts many values at once, for exports and bulk jobs: the same as `encrypt(plaintext:context:)`
    /// on each, but the nonces of v1 values are drawn from the system together, which for short values
    /// is as costly as the encryption. None outlives the call.
    /// - Parameters:
    ///   - plaintexts: the texts to protect.
    ///   - context: what the values are for, as in `encrypt(plaintext:context:)`.
    /// - Returns: the ciphertexts, in order.
    /// - Throws: `SealKitError` when the key is missing or locked, or a v1 vault is given a context.
    public func encrypt(plaintexts: [String], context: String = "") throws(SealKitError) -> [String] {
        try reporting(.encryptionFailed(user)) { () throws(SealKitError) in
            try requirePlace(context)
            let keys = try ring()
            do throws(SecureMemoryError) {
                return try keys.encrypt(plaintexts, format: format, place: .context(context))
            } catch {
                throw SealKitError(error)
            }
        }
    }

    /// Encrypts many values given as lines of UTF-8 text (an export, a pipe), appending each ciphertext and a
    /// newline to `output`: what `encrypt(plaintexts:context:)` does, without a `String` per value in or out, which
    /// for short values costs as much as the encryption (`sealkit encrypt --lines` runs on this).
    ///
    /// A line ends at `\n`, which is no part of its value (a `\r` before it is); the last line's may be missing.
    /// The nonces of v1 values are drawn together, and none outlives the call: call it once per block of lines
    /// you hold, not for lines still to come.
    /// - Parameters:
    ///   - lines: the values' UTF-8 text, one per line: `[UInt8]`, `ArraySlice<UInt8>`, `Data`, a buffer.
    ///   - context: what the values are for, as in `encrypt(plaintext:context:)`.
    ///   - output: receives one line per value, in order; on failure it is as it was.
    /// - Throws: `SealKitError.Reason.invalidArgument` when a line is not UTF-8 text (the error names its number,
    ///   never its text); otherwise as `encrypt(plaintexts:context:)`.
    public func encrypt(
        lines: some Sequence<UInt8>, context: String = "", appendingTo output: inout [UInt8]
    ) throws(SealKitError) {
        let keys = try reporting(.encryptionFailed(user)) { () throws(SealKitError) -> KeyRing in
            try requirePlace(context)
            return try ring()
        }
        let place = CiphertextPlace.context(context)
        // Bytes in place when the sequence has them (an array, a slice, a buffer); a copy otherwise.
        var outcome = lines.withContiguousStorageIfAvailable { buffer in
            Result { () throws(SecureMemoryError) -> Int? in
                try keys.encrypt(lines: UnsafeRawBufferPointer(buffer), format: format, place: place, appendingTo: &output)
            }
        }
        if outcome == nil {
            outcome = Array(lines).withUnsafeBytes { bytes in
                Result { () throws(SecureMemoryError) -> Int? in
                    try keys.encrypt(lines: bytes, format: format, place: place, appendingTo: &output)
                }
            }
        }
        try reporting(.encryptionFailed(user)) { () throws(SealKitError) in
            let failed: Int?
            do throws(SecureMemoryError) {
                failed = try outcome!.get()
            } catch {
                throw SealKitError(error)
            }
            if let failed { throw SealKitError(.invalidArgument, keyID: user, "line \(failed) of the values given is not UTF-8 text") }
        }
    }

    /// Decrypts many values given as lines of text (an export, a pipe), appending each plaintext and a newline to
    /// `output`: the reverse of `encrypt(lines:context:appendingTo:)`, in its shape and with its limits, without a
    /// `String` per ciphertext in.
    ///
    /// A line ends at `\n`, which is no part of its value, nor is a `\r` before it (no ciphertext holds one); the last
    /// line's may be missing. The lines are one operation: the first that does not open fails the call, and a plaintext
    /// holding a newline does too, since it could not be told from two lines. Call it once per block of lines you hold;
    /// `decrypt(ciphertexts:context:)` opens each value alone instead.
    /// - Parameters:
    ///   - lines: the ciphertexts' text, one per line: `[UInt8]`, `ArraySlice<UInt8>`, `Data`, a buffer.
    ///   - context: the context they were sealed with, as in `decrypt(ciphertext:context:)`.
    ///   - output: receives one line per value, in order; on failure it is as it was (what was written is wiped).
    /// - Throws: `SealKitError` whose message starts with the failing line's number (never its text): the
    ///   reasons of `decrypt(ciphertext:context:)`, or `SealKitError.Reason.invalidArgument` for a plaintext holding a
    ///   newline; otherwise as `decrypt(ciphertexts:context:)`.
    public func decrypt(
        lines: some Sequence<UInt8>, context: String = "", appendingTo output: inout [UInt8]
    ) throws(SealKitError) {
        let keys = try reporting(.decryptionFailed(user)) { () throws(SealKitError) -> KeyRing in
            try requirePlace(context)
            return try ring()
        }
        let place = CiphertextPlace.context(context)
        let acceptsV1 = format == .v1
        let start = output.count
        // Bytes in place when the sequence has them (an array, a slice, a buffer); a copy otherwise.
        var failure = lines.withContiguousStorageIfAvailable { buffer in
            Self.open(lines: UnsafeRawBufferPointer(buffer), keys: keys, place: place, acceptsV1: acceptsV1, user: user, into: &output)
        }
        if failure == nil {
            failure = Array(lines).withUnsafeBytes { bytes in
                Self.open(lines: bytes, keys: keys, place: place, acceptsV1: acceptsV1, user: user, into: &output)
            }
        }
        if let error = failure ?? nil {
            // The plaintexts of the lines before the failing one do not outlive the call.
            output.withUnsafeMutableBytes { bytes in
                ConstantTime.wipe(UnsafeMutableRawBufferPointer(rebasing: bytes[start...]))
            }
            output.removeSubrange(start...)
            emit(.decryptionFailed(user))
            throw error
        }
    }

    /// Opens each line of `lines` into `output`; nil, or why the first that failed did.
    private static func open(
        lines: UnsafeRawBufferPointer, keys: KeyRing, place: CiphertextPlace, acceptsV1: Bool, user: KeyID,
        into output: inout [UInt8]
    ) -> SealKitError? {
        guard let base = lines.baseAddress else { return nil }
        var start = 0
        var number = 0
        while start < lines.count {
            number += 1
            let newline = memchr(base + start, 0x0A, lines.count - start).map { UnsafeRawPointer($0) - base } ?? lines.count
            let end = newline > start && lines[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
            do throws(CiphertextError) {
                let plaintext = try keys.open(
                    utf8: UnsafeRawBufferPointer(rebasing: lines[start..<end]), place: place, acceptsV1: acceptsV1
                ).plaintext
                guard !plaintext.utf8.contains(UInt8(ascii: "\n")) else {
                    return SealKitError(
                        .invalidArgument, keyID: user,
                        "line \(number): its plaintext holds a newline, which one line per value cannot hold: decrypt it alone")
                }
                output.append(contentsOf: plaintext.utf8)
                output.append(UInt8(ascii: "\n"))
            } catch {
                return SealKitError(error, keyID: user, prefix: "line \(number): cannot decrypt with key '\(user)': ")
            }
            start = newline + 1
        }
        return nil
    }

    /// Decrypts many values at once, for imports and bulk jobs. A value that does not open fails alone:
    /// its result says why, in words that name the problem but not the value, for the caller to say
    /// which value it was.
    /// - Parameters:
    ///   - ciphertexts: what `encrypt` returned.
    ///   - context: the context they were sealed with, as in `decrypt(ciphertext:context:)`.
    /// - Returns: each value's plaintext, or why it did not open, in order.
    /// - Throws: `SealKitError` when the key is missing or locked, or a v1 vault is given a context.
    public func decrypt(
        ciphertexts: [String], context: String = ""
    ) throws(SealKitError) -> [Result<String, SealKitError>] {
        let results = try reporting(.decryptionFailed(user)) { () throws(SealKitError) in
            try requirePlace(context)
            let keys = try ring()
            return ciphertexts.map { ciphertext -> Result<String, SealKitError> in
                do throws(CiphertextError) {
                    return .success(try keys.decrypt(ciphertext, place: .context(context), acceptsV1: format == .v1).plaintext)
                } catch {
                    return .failure(SealKitError(error, keyID: user))
                }
            }
        }
        if results.contains(where: { if case .failure = $0 { true } else { false } }) { emit(.decryptionFailed(user)) }
        return results
    }

    /// What a ciphertext says about itself: its format, and the key that sealed it, read from a v2
    /// header or, for v1, found by trying the user's keys.
    /// - Parameter ciphertext: a v1 or v2 ciphertext.
    /// - Throws: `SealKitError.Reason.notCiphertext` or `SealKitError.Reason.unsupportedFormat`
    ///   for text that is neither.
    public func inspect(ciphertext: String) throws(SealKitError) -> CiphertextInfo {
        switch CiphertextShape(of: ciphertext) {
        case .v2(let tag):
            return CiphertextInfo(format: .v2, keyFingerprint: tag)
        case .v1:
            guard let keys = try? ring() else { return CiphertextInfo(format: .v1, keyFingerprint: nil) }
            var text = ciphertext
            let index = text.withUTF8 { bytes in
                try? keys.open(utf8: UnsafeRawBufferPointer(bytes), place: .context(""), acceptsV1: true).keyIndex
            }
            return CiphertextInfo(format: .v1, keyFingerprint: index.map { keys.all[$0].fingerprint })
        case .unsupportedVersion:
            throw SealKitError(.unsupportedVersion)
        case nil:
            throw SealKitError(.notBase64)
        }
    }

    /// Whether `encrypt` and `decrypt` can work now: the user's key is present and usable
    /// (unlocked, when passphrase-protected).
    public func isEncryptionPossible() -> Bool {
        if case .possible = encryptionStatus() { return true }
        return false
    }

    /// Whether encryption is possible, and if not, why.
    ///
    /// Given the user's data, it also checks that the user's keys open every ciphertext in it: a device
    /// whose key differs from the one the data is sealed under (a second device that made a key of
    /// its own) gets `.notPossible` with `SealKitError.Reason.keyElsewhere`.
    /// - Parameters:
    ///   - profile: the user's profile as the server holds it, as JSON text; nil checks the key alone.
    ///   - schema: the app schema; nil counts every string that parses as a ciphertext.
    public func encryptionStatus(existing profile: String? = nil, schema: ProfileSchema? = nil) -> EncryptionStatus {
        do throws(SealKitError) {
            let keys = try ring()
            if let profile {
                let check = ProfileKeyCheck(profile: try Self.parse(profile), schema: schema, keys: keys)
                if !check.missingKeys.isEmpty { throw keyElsewhere(check.missingKeys) }
                if !check.unreadable.isEmpty {
                    throw SealKitError(
                        .unreadableData, keyID: user,
                        "the keys of '\(user)' are here, but " + check.unreadable.prefix(5).map(\.description).joined(separator: "; "))
                }
            }
            return .possible(keys.current.fingerprint)
        } catch {
            return .notPossible(error)
        }
    }

    // MARK: Keys

    /// Makes sure the user has a key, creating one on first use, but never when the user's data
    /// shows they already have one elsewhere: a second device that made its own key would fork the
    /// user's key, and each device would then seal fields the other cannot open. Safe to call after
    /// every sign-in; an existing key is left alone.
    /// - Parameters:
    ///   - profile: the user's profile as the server holds it (or any JSON holding their ciphertexts),
    ///     as JSON text; `"{}"` for a user with no data yet.
    ///   - schema: the app schema; nil counts every string that parses as a ciphertext.
    /// - Returns: the user's key entry.
    /// - Throws: `SealKitError.Reason.keyElsewhere` when no key is stored and the data holds
    ///   ciphertexts: receive the user's key (a transfer, a backup) instead.
    @discardableResult
    public func ensureKey(existing profile: String, schema: ProfileSchema? = nil) throws(SealKitError) -> KeyEntry {
        if let entry = try keystore.entry(for: user) { return entry }
        do {
            return try makeKey(existing: profile, schema: schema)
        } catch where error.reason == .keyExists {
            // Another process made it between our look and our write: theirs stands.
            guard let entry = try keystore.entry(for: user) else { throw error }
            return entry
        }
    }

    /// Makes the user's first key, as `ensureKey(existing:schema:)` does, but refuses when the user has a key
    /// here already (`SealKitError.Reason.keyExists`) instead of keeping it: for tools where a second
    /// "make" is a mistake to report, such as `sealkit keys generate`.
    /// - Parameters:
    ///   - profile: the user's profile as the server holds it, as JSON text; `"{}"` for a user with no data yet.
    ///   - schema: the app schema; nil counts every string that parses as a ciphertext.
    /// - Returns: the new key's entry.
    /// - Throws: `SealKitError.Reason.keyExists`, or `SealKitError.Reason.keyElsewhere` when the data holds
    ///   ciphertexts sealed under a key this keystore lacks.
    @discardableResult
    public func makeKey(existing profile: String, schema: ProfileSchema? = nil) throws(SealKitError) -> KeyEntry {
        let check = ProfileKeyCheck(profile: try Self.parse(profile), schema: schema, keys: nil)
        if !check.missingKeys.isEmpty, try keystore.entry(for: user) == nil { throw keyElsewhere(check.missingKeys) }
        do throws(KeystoreError) {
            try keystore.storage.store(SymmetricKey.generate(), as: user, mode: .create, passphrase: passphrase)
            emit(.keyGenerated(user))
            forgetRing()
            guard let entry = try keystore.storage.entry(for: user) else {
                throw KeystoreError.notFound(user, namespace: keystore.storage.namespace.name)
            }
            return entry
        } catch {
            throw SealKitError(error)
        }
    }

    /// Adds, changes or removes the passphrase protecting every key of the user, in one atomic write.
    /// The vault's own passphrase unlocks the keys when they are protected now.
    /// - Parameter new: the passphrase to protect them with; nil stores them unprotected.
    /// - Returns: the entry afterwards.
    /// - Throws: `SealKitError`: `.keyNotFound`, `.passphraseRequired`, `.wrongPassphrase`; nothing changes then.
    @discardableResult
    public func changePassphrase(to new: Passphrase?) throws(SealKitError) -> KeyEntry {
        do {
            let entry = try keystore.storage.changePassphrase(of: user, from: passphrase, to: new)
            forgetRing()
            return entry
        } catch {
            throw SealKitError(error)
        }
    }

    /// Makes a new current key and keeps the old ones to decrypt what they sealed.
    /// - Returns: the entry after rotation.
    @discardableResult
    public func rotateKey() throws(SealKitError) -> KeyEntry {
        do {
            let entry = try keystore.storage.rotate(user, to: SymmetricKey.generate(), passphrase: passphrase)
            forgetRing()
            emit(.keyRotated(user))
            return entry
        } catch {
            throw SealKitError(error)
        }
    }

    /// Deletes every key of the user. Ciphertexts made with them can no longer be opened.
    public func deleteKey() throws(SealKitError) {
        do {
            try keystore.storage.delete(user)
            forgetRing()
            emit(.keyDeleted(user))
        } catch {
            throw SealKitError(error)
        }
    }

    // MARK: Events

    /// A stream of key lifecycle events, like Rownd's: each subscriber gets the events that happen after it
    /// subscribed, none from before. Events carry the key id, never a key.
    ///
    /// The vault never waits for a subscriber: each stream keeps the newest 256 events not yet read, and a subscriber
    /// further behind loses the oldest. The stream finishes when the vault is released, and ends for a subscriber whose
    /// task is cancelled (which unsubscribes it); until then `for await` waits for the next event. So read it in a task
    /// you cancel, or bound the wait: <doc:WatchingKeyEvents> shows both.
    /// - Returns: a stream of its own for each call.
    public func events() -> AsyncStream<VaultEvent> {
        let (stream, continuation) = AsyncStream<VaultEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let token = UUID()
        state.withLock { $0.subscribers[token] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: token) }
        }
        return stream
    }

    /// Tells subscribers that an operation of the package's own (`ProfileProcessor`) failed for the user.
    package func report(_ failure: VaultEvent) { emit(failure) }

    private func emit(_ event: VaultEvent) {
        let continuations = state.withLock { Array($0.subscribers.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    // MARK: Internals

    /// Runs `body`, telling subscribers `failure` when it throws.
    private func reporting<T>(_ failure: VaultEvent, _ body: () throws(SealKitError) -> T) throws(SealKitError) -> T {
        do {
            return try body()
        } catch {
            emit(failure)
            throw error
        }
    }

    /// A v1 value binds no context, so a v1 vault cannot honour one.
    private func requirePlace(_ context: String) throws(SealKitError) {
        if format == .v1 && !context.isEmpty {
            throw SealKitError(
                .invalidArgument, keyID: user,
                "a v1 value binds no context, so it would open anywhere: make the vault with format .v2 to bind one")
        }
    }

    private func keyElsewhere(_ keys: [MissingKey]) -> SealKitError {
        SealKitError(
            .keyElsewhere, keyID: user,
            "the data of '\(user)' is sealed under " + keys.map(\.description).joined(separator: "; "))
    }

    /// Reads a profile's bytes (a file, a response body) as strict JSON: UTF-8, one value, no duplicate
    /// member, nesting within SealKit's limit.
    /// - Parameters:
    ///   - bytes: the profile's JSON.
    ///   - name: how errors name it (`"the profile alice.json"`).
    /// - Returns: the profile as compact JSON text, for `ProfileProcessor.process(_:with:)`.
    /// - Throws: `SealKitError` with reason `.invalidJSON`, naming the line and column, never the content.
    @_spi(CLI) public static func readProfile(_ bytes: some Collection<UInt8>, named name: String = "the profile") throws(SealKitError) -> String {
        do {
            return try JSONValue.parse(bytes).serialized()
        } catch {
            throw SealKitError(error, what: name)
        }
    }

    private static func parse(_ profile: String) throws(SealKitError) -> JSONValue {
        do {
            return try JSONValue.parse(profile)
        } catch {
            throw SealKitError(error, what: "the profile")
        }
    }

    /// The user's unlocked keys, read once.
    private func ring() throws(SealKitError) -> KeyRing {
        if let cached = state.withLock({ $0.ring }) { return cached }
        do {
            let ring = try keystore.storage.keyRing(for: user, passphrase: passphrase)
            state.withLock { $0.ring = ring }
            return ring
        } catch {
            throw SealKitError(error)
        }
    }

    /// The user's unlocked keys, for the package's own capabilities (the audit, `ProfileProcessor`).
    package func keyRing() throws(SealKitError) -> KeyRing { try ring() }

    // MARK: Profile seals

    /// The highest profile seal this device has written or verified for the user; nil when none. Read once,
    /// unless `fresh`: a write reads it again, so that another process's newer record gives the next version.
    func rememberedSeal(fresh: Bool = false) throws(ProfileError) -> SealMark? {
        if !fresh, let cached = state.withLock({ $0.mark }) { return cached }
        do {
            let mark = try keystore.storage.sealMark(for: user)
            state.withLock { $0.mark = .some(mark) }
            return mark
        } catch {
            throw .seal(.unrecorded(
                "cannot read this device's record of the profile versions of '\(user)': \(error)", cause: SealKitError(error),
                reason: Self.recordReason(error)))
        }
    }

    /// The version this device's record holds for the user's keys, when it holds one; nil without a record, for a
    /// record of another key's history, and where no record can be read (a keystore that keeps none).
    func recordedSealVersion(for keys: KeyRing) -> UInt64? {
        guard let mark = try? rememberedSeal(), mark.belongs(to: keys) else { return nil }
        return mark.version
    }

    /// Records `mark` as the highest this device has written or verified for the user, durably,
    /// before the profile it marks is handed on.
    /// - Parameters:
    ///   - keys: the fingerprints of the user's keys: a record of another key's history is replaced, not compared.
    /// - Throws: `ProfileError.seal` when, meanwhile, a higher seal or another of the same version was recorded.
    func rememberSeal(_ mark: SealMark, keys: [KeyFingerprint], acceptingConflict: Bool = false) throws(ProfileError) {
        let kept: SealMark?
        do {
            kept = try keystore.storage.recordSealMark(mark, for: user, keys: keys, acceptingConflict: acceptingConflict)
        } catch {
            throw .seal(.unrecorded(
                "cannot record the profile version of '\(user)' on this device: \(error)", cause: SealKitError(error),
                reason: Self.recordReason(error)))
        }
        state.withLock { $0.mark = .some(kept ?? mark) }
        guard let kept else { return }
        if kept.version > mark.version { throw .seal(.older(found: mark.version, seen: kept.version, wroteHere: kept.writtenOver != nil)) }
        throw .seal(.conflicting(version: mark.version))
    }

    /// A record that is not the user's own file (a link, readable by others, another owner) is refused as a key
    /// file is; any other failure to read or write it is the file system's.
    private static func recordReason(_ error: KeystoreError) -> SealKitError.Reason {
        SealKitError(error).reason == .unsafeFile ? .unsafeFile : .fileSystem
    }

    private func forgetRing() {
        state.withLock { $0.ring = nil }
    }
}

/// What a ciphertext says about itself.
public struct CiphertextInfo: Sendable, Equatable {
    /// The format it is in.
    public let format: CiphertextFormat
    /// The key that sealed it: from the header of a v2 value; for v1, the user's key that opens it,
    /// or nil when none does.
    public let keyFingerprint: KeyFingerprint?
}

/// Whether a vault can encrypt now.
public enum EncryptionStatus: Sendable, Equatable {
    /// It can, with the current key of this fingerprint.
    case possible(KeyFingerprint)
    /// It cannot, for this reason.
    case notPossible(SealKitError)
}

/// A key lifecycle event. Carries the key id, never key material.
public enum VaultEvent: Sendable, Equatable {
    /// A key was made for the user.
    case keyGenerated(KeyID)
    /// The user's key was rotated; the old one is kept to decrypt.
    case keyRotated(KeyID)
    /// Every key of the user was deleted.
    case keyDeleted(KeyID)
    /// Encryption for the user failed.
    case encryptionFailed(KeyID)
    /// Decryption for the user failed.
    case decryptionFailed(KeyID)
}
