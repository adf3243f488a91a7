/// Why a SealKit operation failed: the one error type every SealKit product throws.
///
/// Switch on `reason`; `keyID` and `fields` say which key and which profile fields were involved.
/// `description` is one line naming the problem and the fix, and never holds a key, a passphrase, a
/// plaintext or a transfer code, so it is safe to log. The `sealkit` command prints it as it is.
///
/// ```swift
/// do {
///     let note = try vault.decrypt(ciphertext: stored, context: "billing-note")
/// } catch let error where error.reason == .wrongPlace {
///     // sealed for another user or context: a value copied where it does not belong
/// }
/// ```
public struct SealKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for code to act on.
    public enum Reason: Sendable, Hashable {
        // Arguments.
        /// No key id or user was given where one is needed.
        case noUser
        /// A key id, namespace, passphrase or other argument is not acceptable.
        case invalidArgument
        // Keystores.
        /// No key is stored under the id.
        case keyNotFound
        /// A key is already stored under the id.
        case keyExists
        /// A different key is stored under the id; storing this one would orphan what the stored one sealed.
        case conflictingKey
        /// The key is passphrase-protected and no passphrase was given.
        case passphraseRequired
        /// The passphrase does not unlock the key or backup.
        case wrongPassphrase
        /// A keystore file or folder is open to other users or not the user's own.
        case unsafeFile
        /// Another process holds the keystore's lock; try again.
        case keystoreBusy
        /// The desktop keyring is locked.
        case keyringLocked
        /// The desktop keyring cannot be reached or failed.
        case keyringUnavailable
        /// A stored key or key file is damaged, or holds more keys than allowed.
        case damagedKey
        /// The keys are sealed to a TPM that cannot be reached (or refused the operation).
        case tpmUnavailable
        /// The TPM refused the PIN the keys are sealed under.
        case wrongPIN
        /// The TPM is in dictionary-attack lockout after too many wrong PINs.
        case tpmLockout
        /// The keys are sealed to another machine's TPM: they open only there.
        case sealedToAnotherTPM
        /// Reading or writing a file failed, or guarded memory for a key could not be had.
        case fileSystem
        // Ciphertexts and keys as text.
        /// The text is not a ciphertext: not base64, too short, or stripped of its header.
        case notCiphertext
        /// The ciphertext is a SealKit format this version does not read.
        case unsupportedFormat
        /// No key of the user's opens the ciphertext (a v2 value names a key the keystore lacks).
        case unknownKey
        /// A v2 ciphertext sealed for another user, field or context.
        case wrongPlace
        /// A v1 value where only v2 is accepted: v1 binds no place, so it could have been copied from anywhere.
        case notBound
        /// The ciphertext was altered, or its key is not the one that sealed it.
        case authenticationFailed
        /// Key text (a key, a key file, a backup) is malformed.
        case invalidKeyText
        // Profiles.
        /// The text is not JSON, or not the JSON expected.
        case invalidJSON
        /// The app schema is malformed.
        case invalidSchema
        /// Profile fields failed; ``SealKitError/fields`` names them.
        case profileFields
        /// The user's data is sealed under keys this keystore lacks: receive the user's key instead of making one.
        case keyElsewhere
        /// The user's keys are here, but some of their data still does not open.
        case unreadableData
        /// The schema asks for profile seals and the profile has none (`sealkit_seal`): it may have been removed.
        case sealMissing
        /// The profile's seal does not match its encrypted fields, user or keys: a field rolled back, dropped or added.
        case sealMismatch
        /// The profile's seal is older than one this device has written or verified: the profile was rolled back.
        case sealRolledBack
        /// The profile's seal has the version of one this device has seen but another MAC: two devices wrote at once.
        case sealConflict
        // Key transfer and backups.
        /// The transfer or backup is malformed, expired, or not for these keys.
        case invalidTransfer
        /// The relay cannot be reached, refused the connection, or dropped it.
        case relayUnavailable
        /// The other side is not a SealKit key transfer, or broke the protocol.
        case protocolViolation
        /// The other side declined, cancelled or timed out.
        case declined
        /// Too much to send or store at once.
        case tooLarge
        /// Input a person must supply was missing (an empty file, a code not given).
        case missingInput
        /// An image holds no readable code, or several where one was expected.
        case unreadableImage
        /// The transfer code is not the other side's: check it and start again.
        case wrongCode
        /// Nobody joined, or the other side did not answer, in time.
        case timedOut
        /// The operation was cancelled (Ctrl-C, or its task).
        case cancelled
        // Paper and share backups.
        /// The text is no backup of the kind expected: not SealKit text, or SealKit text of another kind.
        case notABackup
        /// The backup is damaged: cut short, mistyped, parts that do not fit, or Argon2id limits SealKit does not run.
        case damagedBackup
        /// Parts of the backup are missing, or none was given.
        case incompleteBackup
        /// No keys were given to back up.
        case noKeys
        /// More keys than one backup or transfer carries, in all or for one id (``SealKitError/keyID``).
        case tooManyKeys
        /// A passphrase chosen for a new backup is too short.
        case passphraseTooShort
        /// Argon2id could not run (not enough memory).
        case passphraseKDFFailed
        /// The backup holds no key for the id asked for (``SealKitError/keyID``).
        case keyNotInBackup
        /// Share groups or thresholds that SLIP-39 does not allow.
        case invalidShareLayout
        /// A share that does not read as one: a word not on the list, a length, a checksum.
        case invalidShare
        /// Shares that do not belong together: of different backups, or one of them damaged.
        case mismatchedShares
        /// More shares are needed.
        case notEnoughShares
        /// The shares are whole but do not open this bundle: they belong to another backup.
        case sharesOfAnotherBackup
    }

    /// What went wrong.
    public let reason: Reason
    /// The key id involved, when one was.
    public let keyID: KeyID?
    /// The profile fields that failed, by name; empty unless `reason` is about a profile.
    public let fields: [String]
    /// One line naming the problem and the fix. Never holds secret material.
    public let description: String

    /// `text`, which someone else chose (an argument, a file name, a relay's message), as SealKit's own messages
    /// quote it: every character that could rewrite or split a terminal line (controls, bidi overrides, line
    /// separators) written as `\u{…}`, and at most 160 characters kept. For tools that print such text beside
    /// SealKit's messages, so both follow one rule.
    public static func quoting(_ text: String) -> String { TextSafety.printable(text) }

    /// The name of `names` nearest to `text` within two edits (insertions, deletions, substitutions, swaps of
    /// neighbours), or equal to it but for case and the separators `_`, `-`, `.` and space (`SSN` and `ssn`,
    /// `home_address` and `homeAddress`), as SealKit's own "did you mean" messages choose it; nil when none is that near.
    public static func nearest(to text: String, among names: [String]) -> String? {
        TextSafety.nearestName(to: text, among: names)
    }

    package init(_ reason: Reason, keyID: KeyID? = nil, fields: [String] = [], _ description: String) {
        self.reason = reason
        self.keyID = keyID
        self.fields = fields
        self.description = description
    }

    package init(_ error: KeyIDError) { self.init(.invalidArgument, String(describing: error)) }
    package init(_ error: PassphraseError) { self.init(.invalidArgument, String(describing: error)) }
    package init(_ error: SecureMemoryError) { self.init(.fileSystem, String(describing: error)) }
    package init(_ error: KeyFormatError) { self.init(.invalidKeyText, String(describing: error)) }

    /// A ciphertext that would not open for `keyID`; the message is `prefix` then the problem.
    package init(_ error: CiphertextError, keyID: KeyID? = nil, prefix: String = "") {
        let reason: Reason
        switch error {
        case .notBase64, .tooShort, .truncated, .headerStripped, .notUTF8: reason = .notCiphertext
        case .unsupportedVersion: reason = .unsupportedFormat
        case .unknownKey: reason = .unknownKey
        case .sealedForAnotherPlace: reason = .wrongPlace
        case .notBound: reason = .notBound
        case .authenticationFailed: reason = .authenticationFailed
        }
        self.init(reason, keyID: keyID, prefix + String(describing: error))
    }
}
