/// Why a SealKit operation failed: the one error type every SealKit product throws.
///
/// Switch on `reason`; `keyID` and `fields` say which key and which profile fields were involved.
/// `description` is one line naming the problem and what it concerns, and never holds a key, a passphrase,
/// a plaintext or a transfer code, so it is safe to log. `detail` and the other facts refine the reason; an app words
/// its own advice from them, as the `sealkit` command does after printing `description`.
///
/// ```swift
/// do {
///     let note = try vault.decrypt(ciphertext: stored, context: "billing-note")
///     print(note)
/// } catch let error where error.reason == .wrongPlace {
///     // sealed for another user or context: a value copied where it does not belong
/// }
/// ```
public struct SealKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for code to act on: compare with `==`, or switch with a `default:`.
    ///
    /// A struct of static values, not an enum (as swift-nio and grpc-swift do for their error codes): a later
    /// SealKit may add a reason in a minor release without breaking an app's `switch`, which must therefore have a
    /// `default:` case. `description` is the reason's name, such as `wrongPlace`.
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        /// The reason's name, as its static value is spelled.
        public let description: String

        private init(_ name: String) { description = name }

        // Arguments.
        /// A key id, namespace, passphrase or other argument is not acceptable.
        public static let invalidArgument = Reason("invalidArgument")
        // Keystores.
        /// No key is stored under the id.
        public static let keyNotFound = Reason("keyNotFound")
        /// A key is already stored under the id.
        public static let keyExists = Reason("keyExists")
        /// A different key is stored under the id; storing this one would orphan what the stored one sealed.
        public static let conflictingKey = Reason("conflictingKey")
        /// The key is passphrase-protected and no passphrase was given.
        public static let passphraseRequired = Reason("passphraseRequired")
        /// The passphrase does not unlock the key or backup.
        public static let wrongPassphrase = Reason("wrongPassphrase")
        /// A keystore file or folder is open to other users or not the user's own.
        public static let unsafeFile = Reason("unsafeFile")
        /// Another process holds the keystore's lock; try again.
        public static let keystoreBusy = Reason("keystoreBusy")
        /// The desktop keyring is locked.
        public static let keyringLocked = Reason("keyringLocked")
        /// The desktop keyring cannot be reached or failed.
        public static let keyringUnavailable = Reason("keyringUnavailable")
        /// A stored key or key file is damaged, or holds more keys than allowed.
        public static let damagedKey = Reason("damagedKey")
        /// The keys are sealed to a TPM that cannot be reached (or refused the operation).
        public static let tpmUnavailable = Reason("tpmUnavailable")
        /// The TPM refused the PIN the keys are sealed under.
        public static let wrongPIN = Reason("wrongPIN")
        /// The TPM is in dictionary-attack lockout after too many wrong PINs.
        public static let tpmLockout = Reason("tpmLockout")
        /// The keys are sealed to another machine's TPM: they open only there.
        public static let sealedToAnotherTPM = Reason("sealedToAnotherTPM")
        /// Reading or writing a file failed, or guarded memory for a key could not be had.
        public static let fileSystem = Reason("fileSystem")
        // Ciphertexts and keys as text.
        /// The text is not a ciphertext: not base64, too short, or stripped of its header.
        public static let notCiphertext = Reason("notCiphertext")
        /// The ciphertext is a SealKit format this version does not read.
        public static let unsupportedFormat = Reason("unsupportedFormat")
        /// No key of the user's opens the ciphertext (a v2 value names a key the keystore lacks).
        public static let unknownKey = Reason("unknownKey")
        /// A v2 ciphertext sealed for another user, field or context.
        public static let wrongPlace = Reason("wrongPlace")
        /// A v1 value where only v2 is accepted: v1 binds no place, so it could have been copied from anywhere.
        public static let notBound = Reason("notBound")
        /// The ciphertext was altered, or its key is not the one that sealed it.
        public static let authenticationFailed = Reason("authenticationFailed")
        /// Key text (a key, a key file, a backup) is malformed.
        public static let invalidKeyText = Reason("invalidKeyText")
        // Profiles.
        /// The text is not JSON, or not the JSON expected.
        public static let invalidJSON = Reason("invalidJSON")
        /// The app schema is malformed.
        public static let invalidSchema = Reason("invalidSchema")
        /// Profile fields failed; ``SealKitError/fields`` names them.
        public static let profileFields = Reason("profileFields")
        /// The user's data is sealed under keys this keystore lacks: receive the user's key instead of making one.
        public static let keyElsewhere = Reason("keyElsewhere")
        /// The user's keys are here, but some of their data still does not open.
        public static let unreadableData = Reason("unreadableData")
        /// The schema asks for profile seals and the profile has none (`sealkit_seal`): it may have been removed.
        public static let sealMissing = Reason("sealMissing")
        /// The profile's seal does not match its encrypted fields, user or keys: a field rolled back, dropped or added.
        public static let sealMismatch = Reason("sealMismatch")
        /// The profile's seal is older than one this device has written or verified: the profile was rolled back.
        public static let sealRolledBack = Reason("sealRolledBack")
        /// The profile's seal has the version of one this device has seen but another MAC: two devices wrote at once.
        public static let sealConflict = Reason("sealConflict")
        // Key transfer and backups.
        /// The transfer or backup is malformed, expired, or not for these keys.
        public static let invalidTransfer = Reason("invalidTransfer")
        /// The relay cannot be reached, refused the connection, or dropped it.
        public static let relayUnavailable = Reason("relayUnavailable")
        /// The other side is not a SealKit key transfer, or broke the protocol.
        public static let protocolViolation = Reason("protocolViolation")
        /// The other side declined, cancelled or timed out.
        public static let declined = Reason("declined")
        /// Too much to send or store at once.
        public static let tooLarge = Reason("tooLarge")
        /// Input a person must supply was missing (an empty file, a code not given).
        public static let missingInput = Reason("missingInput")
        /// An image holds no readable code, or several where one was expected, or it could not be read whole.
        public static let unreadableImage = Reason("unreadableImage")
        /// A system library the operation needs cannot be loaded (zbar, zxing-cpp or libjpeg, which reading an
        /// image opens on first use; tpm2-tss, which the first TPM call opens; libsecret and GLib, which the first
        /// call to the desktop keyring opens): the description names the library and the Debian package that
        /// provides it.
        public static let libraryUnavailable = Reason("libraryUnavailable")
        /// The transfer code is not the other side's: check it and start again.
        public static let wrongCode = Reason("wrongCode")
        /// Nobody joined, or the other side did not answer, in time; or an image could not be read whole within
        /// its time budget.
        public static let timedOut = Reason("timedOut")
        /// The operation was cancelled (Ctrl-C, or its task).
        public static let cancelled = Reason("cancelled")
        // Paper and share backups.
        /// The text is no backup of the kind expected: not SealKit text, or SealKit text of another kind.
        public static let notABackup = Reason("notABackup")
        /// The backup is damaged: cut short, mistyped, parts that do not fit, or Argon2id limits SealKit does not run.
        public static let damagedBackup = Reason("damagedBackup")
        /// Parts of the backup are missing, or none was given.
        public static let incompleteBackup = Reason("incompleteBackup")
        /// No keys were given to back up.
        public static let noKeys = Reason("noKeys")
        /// More keys than one backup or transfer carries, in all or for one id (``SealKitError/keyID``).
        public static let tooManyKeys = Reason("tooManyKeys")
        /// A passphrase chosen for a new backup is too short.
        public static let passphraseTooShort = Reason("passphraseTooShort")
        /// Argon2id could not run (not enough memory).
        public static let passphraseKDFFailed = Reason("passphraseKDFFailed")
        /// The backup holds no key for the id asked for (``SealKitError/keyID``).
        public static let keyNotInBackup = Reason("keyNotInBackup")
        /// Share groups or thresholds that SLIP-39 does not allow.
        public static let invalidShareLayout = Reason("invalidShareLayout")
        /// A share that does not read as one: a word not on the list, a length, a checksum.
        public static let invalidShare = Reason("invalidShare")
        /// Shares that do not belong together: of different backups, or one of them damaged.
        public static let mismatchedShares = Reason("mismatchedShares")
        /// More shares are needed.
        public static let notEnoughShares = Reason("notEnoughShares")
        /// The shares are whole but do not open this bundle: they belong to another backup.
        public static let sharesOfAnotherBackup = Reason("sharesOfAnotherBackup")
        // Sharing with other people.
        /// A shared value is addressed to none of the user's sharing identities (current or older).
        public static let notAddressed = Reason("notAddressed")
        /// A shared value's sender is neither the user, nor a contact, nor a member of the value's group: the
        /// description names the sender's fingerprint.
        public static let untrustedSender = Reason("untrustedSender")
        /// No contact, or no group, of that name.
        public static let contactNotFound = Reason("contactNotFound")
        /// A contact's identity does not match: another identity under a known name, or a fingerprint that differs.
        public static let contactConflict = Reason("contactConflict")
        /// A group's text was refused: altered, older than the epoch held, or signed by someone who is not a contact.
        public static let groupRefused = Reason("groupRefused")
        /// Only a group's creator changes it.
        public static let notGroupCreator = Reason("notGroupCreator")

        /// Every reason, in declaration order: the CLI's tests check that each has its exit status. (A reason
        /// added above must be added here too; a test compares this list with the declarations.)
        package static let all: [Reason] = [
            .invalidArgument, .keyNotFound, .keyExists, .conflictingKey, .passphraseRequired, .wrongPassphrase,
            .unsafeFile, .keystoreBusy, .keyringLocked, .keyringUnavailable, .damagedKey, .tpmUnavailable, .wrongPIN,
            .tpmLockout, .sealedToAnotherTPM, .fileSystem, .notCiphertext, .unsupportedFormat, .unknownKey, .wrongPlace,
            .notBound, .authenticationFailed, .invalidKeyText, .invalidJSON, .invalidSchema, .profileFields,
            .keyElsewhere, .unreadableData, .sealMissing, .sealMismatch, .sealRolledBack, .sealConflict,
            .invalidTransfer, .relayUnavailable, .protocolViolation, .declined, .tooLarge, .missingInput,
            .unreadableImage, .libraryUnavailable, .wrongCode, .timedOut, .cancelled, .notABackup, .damagedBackup, .incompleteBackup, .noKeys,
            .tooManyKeys, .passphraseTooShort, .passphraseKDFFailed, .keyNotInBackup, .invalidShareLayout, .invalidShare,
            .mismatchedShares, .notEnoughShares, .sharesOfAnotherBackup, .notAddressed, .untrustedSender, .contactNotFound,
            .contactConflict, .groupRefused, .notGroupCreator,
        ]
    }

    /// What went wrong.
    public let reason: Reason
    /// The key id involved, when one was.
    public let keyID: KeyID?
    /// The profile fields that failed, by name; empty unless `reason` is about a profile.
    public let fields: [String]
    /// One line naming the problem and what it concerns (the id, the field, the relay, the file). Never holds
    /// secret material, and never tells a person to type a command: an app words its own advice.
    public let description: String
    /// What exactly happened, when `reason` covers cases a person would set right differently (a PIN or a
    /// passphrase, a relay that cannot be reached or one that refused); nil when `reason` says it all.
    ///
    /// A detail refines the reason and never replaces it: `reason` stays what SealKit 1.0 threw for the case, so an
    /// app that switches on reasons sees no change, and the reason's exit status at the `sealkit` command stays too.
    public let detail: Detail?
    /// The keystore namespace of the entry involved, where the remedy depends on it: set with
    /// `.damagedKeyringItem`; nil otherwise.
    public let namespace: String?
    /// The most that fits, in bytes, when something was too long for it: set with
    /// `.qrPayloadTooLong` (what a QR code holds at the error correction asked for); nil otherwise.
    public let limit: Int?
    /// The keystore's own error beneath this one, when a profile's seal record could not be read or written:
    /// its reason and facts say what to do about the keystore; nil otherwise.
    public var underlying: SealKitError? { beneath.first }
    private let beneath: [SealKitError]

    /// What exactly happened, finer than ``Reason``: compare with `==`, or switch with a `default:`.
    ///
    /// Extensible as ``Reason`` is: a later SealKit may add a detail in a minor release. Each names a fact,
    /// never a remedy; an app words its own advice from the reason and the detail (see <doc:HandlingErrors>).
    public struct Detail: Sendable, Hashable, CustomStringConvertible {
        /// The detail's name, as its static value is spelled.
        public let description: String

        private init(_ name: String) { description = name }

        // Keystores.
        /// With `.passphraseRequired`: the keys are sealed to the TPM under a PIN, and no PIN was given.
        public static let pinRequired = Detail("pinRequired")
        /// With `.unsafeFile`: a symbolic link, or something other than a folder or file of the keystore's own,
        /// stands where the keystore expects its own folder or file.
        public static let notOwnFile = Detail("notOwnFile")
        /// With `.keystoreBusy` (or, for a profile's seal record, in ``underlying``): another process held the
        /// keystore's lock for longer than the wait.
        public static let lockTimedOut = Detail("lockTimedOut")
        /// With `.keyringUnavailable`: no desktop keyring answers on the session bus (not one that timed out or failed).
        public static let keyringNotRunning = Detail("keyringNotRunning")
        /// With `.damagedKey`: a desktop keyring item that no longer parses; ``namespace`` names its namespace.
        public static let damagedKeyringItem = Detail("damagedKeyringItem")
        /// With `.tpmUnavailable`: no TPM can be reached (no device, no TCTI library, nothing answering).
        public static let tpmUnreachable = Detail("tpmUnreachable")
        /// With `.tpmUnavailable`: the TPM did not answer within the time limit for a TPM call.
        public static let tpmTimedOut = Detail("tpmTimedOut")
        /// With `.tpmLockout`: the key has no PIN, but was sealed when keys without one still fell under the
        /// TPM's lockout, which other keys' wrong PINs set off; sealed again, it stays outside the lockout.
        public static let pinlessKeyInLockout = Detail("pinlessKeyInLockout")
        /// With `.tpmLockout`: the TPM takes one more wrong PIN before it locks out, so no PIN was asked for on a
        /// terminal; a PIN given without a prompt is still tried.
        public static let lastPINTry = Detail("lastPINTry")
        /// With `.invalidArgument`: the keys are sealed to this machine's TPM, which only the file keystore holds,
        /// so they cannot move to another keystore as they are.
        public static let sealedToTPM = Detail("sealedToTPM")
        /// With `.invalidArgument`: only the file keystore seals keys to a TPM, and another keystore was used.
        public static let tpmNeedsFileKeystore = Detail("tpmNeedsFileKeystore")
        // Profiles.
        /// With `.invalidArgument`: Rownd's mode was asked for with a schema that asks for profile seals.
        public static let rowndWithSeals = Detail("rowndWithSeals")
        /// With `.invalidSchema`: Rownd's mode was asked for with a field the schema makes v2.
        public static let rowndWithV2Field = Detail("rowndWithV2Field")
        /// With `.profileFields`: a field is sealed under a key this keystore lacks.
        public static let fieldsUnderUnknownKey = Detail("fieldsUnderUnknownKey")
        /// With `.profileFields`: no field is under an unknown key, but a field the schema makes v2 holds a v1 value.
        public static let v1InV2Field = Detail("v1InV2Field")
        /// With `.profileFields`: strict processing failed on fields for another reason (a value that is not a
        /// string, or that does not open), as on a profile a Rownd app wrote.
        public static let fieldsFailedStrictly = Detail("fieldsFailedStrictly")
        // Transfers and backups.
        /// With `.relayUnavailable`: no connection to the relay could be made.
        public static let relayUnreachable = Detail("relayUnreachable")
        /// With `.relayUnavailable`: the relay stopped taking messages.
        public static let relayStalled = Detail("relayStalled")
        /// With `.timedOut`: nobody completed the transfer in time (the other side never joined, or went quiet).
        public static let nobodyCompleted = Detail("nobodyCompleted")
        /// With `.declined`: the relay holds no transfer under the code: the receiver cancelled or timed out, or
        /// another sender used the code.
        public static let receiverGone = Detail("receiverGone")
        /// With `.wrongCode`: an offline reply that does not open with this receiver's code.
        public static let replyDoesNotOpen = Detail("replyDoesNotOpen")
        /// With `.invalidTransfer`: the offer already served a reply.
        public static let offerUsed = Detail("offerUsed")
        /// With `.invalidArgument`: a reply's lifetime outside what a reply may ask for.
        public static let lifetimeOutOfRange = Detail("lifetimeOutOfRange")
        /// With `.invalidTransfer` or `.notABackup`: the text is a paper backup.
        public static let paperBackupGiven = Detail("paperBackupGiven")
        /// With `.notABackup`: the text is a share backup's bundle, where a paper backup was expected.
        public static let shareBundleAsPaperBackup = Detail("shareBundleAsPaperBackup")
        /// With `.invalidTransfer`: the text is a transfer offer, where a reply was expected.
        public static let offerAsReply = Detail("offerAsReply")
        /// With `.invalidTransfer` or `.unsupportedFormat`: an offline transfer code of format v1, which SealKit no
        /// longer reads because a man in the middle could read its keys.
        public static let retiredFormat = Detail("retiredFormat")
        /// With `.invalidArgument` or `.noKeys`: no key id was named to send or back up.
        public static let noKeysNamed = Detail("noKeysNamed")
        // Audits and QR codes.
        /// With `.invalidArgument`: a line of facts does not start with its place (file and line).
        public static let untaggedLine = Detail("untaggedLine")
        /// With `.tooLarge`: a payload too long for one QR code at the error correction asked for; ``limit`` is
        /// what it holds.
        public static let qrPayloadTooLong = Detail("qrPayloadTooLong")
        // Sharing.
        /// With `.contactNotFound`: the name is a group's (`group:NAME`), and no group of that name is held.
        public static let noSuchGroup = Detail("noSuchGroup")
    }

    /// `text`, which someone else chose (an argument, a file name, a relay's message), as SealKit's own messages
    /// quote it: every character that could rewrite or split a terminal line (controls, bidi overrides, line
    /// separators) written as `\u{…}`, and at most 160 characters kept. For tools that print such text beside
    /// SealKit's messages, so both follow one rule.
    @_spi(CLI) public static func quoting(_ text: String) -> String { TextSafety.printable(text) }

    /// The name of `names` nearest to `text` within two edits (insertions, deletions, substitutions, swaps of
    /// neighbours), or equal to it but for case and the separators `_`, `-`, `.` and space (`SSN` and `ssn`,
    /// `home_address` and `homeAddress`), as SealKit's own "did you mean" messages choose it; nil when none is that near.
    @_spi(CLI) public static func nearest(to text: String, among names: [String]) -> String? {
        TextSafety.nearestName(to: text, among: names)
    }

    package init(
        _ reason: Reason, keyID: KeyID? = nil, fields: [String] = [], _ description: String, detail: Detail? = nil,
        namespace: String? = nil, limit: Int? = nil, underlying: SealKitError? = nil
    ) {
        self.reason = reason
        self.keyID = keyID
        self.fields = fields
        self.description = description
        self.detail = detail
        self.namespace = namespace
        self.limit = limit
        beneath = underlying.map { [$0] } ?? []
    }

    /// The same error, its description after `prefix` (a line number): every fact kept.
    package func prefixed(_ prefix: String) -> SealKitError {
        SealKitError(
            reason, keyID: keyID, fields: fields, prefix + description, detail: detail, namespace: namespace, limit: limit,
            underlying: underlying)
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
