import Foundation
import SealKitAudit
import SealKitBackup
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitTransfer
import SealKitQR
@testable import SealKitCLI
import Testing

/// Library errors state the problem; the command adds its advice. For every error whose remedy is one of
/// the command's flags, commands or environment variables: the library's `description` names none of them, and the
/// command prints, byte for byte, the line it printed before the advice moved (each expected line is the old text).
@Suite("Library errors are plain, the command's advice is its own")
struct AdviceTests {
    static let relay = try! RelayURL(endpoint: "ws://relay.example:4000/v1")
    static let alice = try! KeyID("alice")
    static let quoted = try! KeyID("o'brien")

    /// Each error, and the line the command printed for it while the library's errors still held the advice.
    static let cases: [(SealKitError, String)] = [
        (SealKitError(KeystoreError.notFound(alice, namespace: "default")),
         "no key for 'alice' in namespace 'default': make one with 'sealkit keys generate alice', or bring it from "
            + "another device with 'sealkit transfer receive' (or 'keys restore' from a backup)"),
        (SealKitError(KeystoreError.notFound(quoted, namespace: "default")),
         "no key for 'o'brien' in namespace 'default': make one with 'sealkit keys generate 'o'\\''brien'', or bring it from "
            + "another device with 'sealkit transfer receive' (or 'keys restore' from a backup)"),
        (SealKitError(KeystoreError.alreadyExists(alice)),
         "a key for 'alice' already exists: use another id, or 'sealkit keys rotate' to replace it and keep the old one for decryption"),
        (SealKitError(KeystoreError.locked(alice)),
         "key 'alice' is passphrase-protected: give the passphrase with SEALKIT_PASSPHRASE or --passphrase-file, or run on a terminal to be asked"),
        (SealKitError(KeystoreError.pinRequired(alice)),
         "key 'alice' is sealed to the TPM under a PIN: give the PIN with SEALKIT_PASSPHRASE or --passphrase-file, or run on a terminal to be asked"),
        (SealKitError(KeystoreError.notOwnFile(path: "/k/default", reason: "is a symbolic link")),
         "cannot use /k/default: it is a symbolic link, and the keystore uses only real files and folders of its own; move it away or choose another SEALKIT_HOME"),
        (SealKitError(KeystoreError.lockTimeout(path: "/k/.lock", seconds: 10)),
         "the keystore is locked by another process (waited 10 s for /k/.lock): try again, or set SEALKIT_LOCK_TIMEOUT to the seconds to wait"),
        (SealKitError(KeystoreError.tpmUnavailable(tcti: "device:/dev/tpmrm0", detail: "no answer")),
         "cannot reach the TPM at 'device:/dev/tpmrm0' (no answer): check that the machine has a TPM 2.0 and that you may "
            + "use it (the 'tss' group for /dev/tpmrm0), or set SEALKIT_TPM_TCTI to the TPM to use"),
        (SealKitError(KeystoreError.sealedToTPMStaysHere(alice)),
         "key 'alice' is sealed to this machine's TPM, which only the file keystore does: nothing was moved; run "
            + "'sealkit keys passwd alice --remove' (or 'keys passwd alice' for a passphrase) first"),
        (SealKitError(KeystoreError.keyring(.unavailable(reason: "no session bus"))),
         "the Secret Service (desktop keyring) is not available (no session bus): run inside a desktop session "
            + "with GNOME Keyring or KWallet, or use the file keystore (--keystore file, the default)"),
        (SealKitError(KeystoreError.keyring(.damagedItem(alice, namespace: "default", reason: "bad JSON"))),
         "the keyring item for 'alice' in namespace 'default' no longer parses (bad JSON): someone else changed it; delete it "
            + "with 'sealkit keys delete --keystore secret-service --namespace default -- alice' and restore the key from a backup"),
        (SealKitError(transferFailure: MailboxError.unreachable(relay, reason: "connection refused")),
         "cannot reach the mailbox relay ws://relay.example:4000/v1 (connection refused): check the network, or choose another relay with --relay URL"),
        (SealKitError(transferFailure: MailboxError.stalled(relay, seconds: 1)),
         "the mailbox relay ws://relay.example:4000/v1 stopped taking messages (one waited 1 second to go out): "
            + "check the network, or choose another relay with --relay URL"),
        (SealKitError(transferFailure: MailboxError.timedOut(seconds: 600)),
         "nobody completed the transfer within 600 seconds: start again and enter the code on the other device sooner (or raise --timeout)"),
        (SealKitError(transferFailure: MailboxError.receiverGone(nameplate: "7")),
         "the receiver cancelled: the mailbox relay holds no transfer under this code's number (7), as when the receiver pressed "
            + "Ctrl-C or timed out (or another sender used the code); nothing was sent: start 'sealkit transfer receive' again and use its new code"),
        (SealKitError(TransferError.wrongCode),
         "wrong code: the reply does not open with this receiver's code (the sender typed another code, answered another offer, "
            + "or the reply was altered); nothing was stored; start again with a new 'sealkit transfer receive --offline'"),
        (SealKitError(TransferError.offerUsed),
         "this offer was already used (a reply was tried): start a new 'sealkit transfer receive --offline' for another transfer"),
        (SealKitError(TransferError.badLifetime(seconds: 0)),
         "a reply must expire within 1 to 86400 seconds, not 0: choose --expires-in in that range"),
        (SealKitError(TransferError.code(.wrongKind(found: .offer, expected: .reply))),
         "this is a transfer offer, not a reply: give it to the sender with 'sealkit transfer send ID --to OFFER --code CODE'"),
        (SealKitError(CodeError.wrongKind(found: .backup, expected: .reply)),
         "this is a paper backup, not a transfer reply: restore it with 'sealkit keys restore ID'"),
        (SealKitError(CodeError.wrongKind(found: .shares, expected: .backup)),
         "this is a share backup bundle, not a paper backup: add --shares ('sealkit keys restore --shares --all'), then paste the bundle and the shares"),
        (SealKitError(CodeError.retiredVersion(.offer)),
         "this transfer offer is format v1, retired because a man in the middle could read its keys: update sealkit on both sides "
            + "and start again with 'sealkit transfer receive --offline'"),
        (SealKitError(CodeError.nothingToSend), "no keys to send: name key ids, or use --all"),
        (SealKitError(ProfileError.seal(.missing)),
         "the profile's seal is missing: the schema asks for one (sealkit_seal), so a profile without it may have had it removed; "
            + "if it is the id's latest profile (one that predates the seal, or a new one), seal it with "
            + "'sealkit profile encrypt --reseal', "
            + "which vouches for every field as it stands"),
        (SealKitError(ProfileError.seal(.conflicting(version: 3))),
         "the profile's seal is a conflicting write: version 3 seen here has another seal, so two devices wrote at once; "
            + "read it with --accept-conflict, merge the changes, and write it again (a higher version)"),
        (SealKitError(AuditError.untaggedLine(4)),
         "line 4 of the input does not start with its place (FILE LINE, two numbers): --facts reads tagged lines"),
        // A seal record the keystore would not give: the keystore's own remedy, from the error beneath.
        (SealKitError(ProfileError.seal(.unrecorded(
            "cannot read this device's record of the profile versions of 'alice': the keystore is locked by another process "
                + "(waited 10 s for /k/.lock): try again",
            cause: SealKitError(KeystoreError.lockTimeout(path: "/k/.lock", seconds: 10))))),
         "cannot read this device's record of the profile versions of 'alice': the keystore is locked by another process "
            + "(waited 10 s for /k/.lock): try again, or set SEALKIT_LOCK_TIMEOUT to the seconds to wait"),
        (SealKitError(QRCodeError.payloadTooLong(byteCount: 3000, maximum: 2331, correction: .medium)),
         "too long for a QR code: 3000 bytes, but at error correction M a QR code holds at most 2331 bytes; "
            + "use lower error correction (--ecc L holds 2953 bytes) or split the data"),
    ]

    /// Ids someone else chose land in advice as one shell word, after `--` when they start with `-` (the review
    /// of this change pasted `a b$(id)` from the TPM and keyring advice into a shell and ran `id`).
    @Test func idsInAdviceAreOneShellWordAndNoOption() throws {
        let hostile = try KeyID("a b$(id);x")
        let dash = try KeyID("-rf")
        #expect(said(SealKitError(KeystoreError.sealedToTPMStaysHere(hostile))).hasSuffix(
            "; run 'sealkit keys passwd 'a b$(id);x' --remove' (or 'keys passwd 'a b$(id);x'' for a passphrase) first"))
        #expect(said(SealKitError(KeystoreError.sealedToTPMStaysHere(dash))).hasSuffix(
            "; run 'sealkit keys passwd --remove -- -rf' (or 'keys passwd -- -rf' for a passphrase) first"))
        #expect(said(SealKitError(KeystoreError.keyring(.damagedItem(hostile, namespace: "ns1", reason: "r")))).contains(
            "--namespace ns1 -- 'a b$(id);x'"))
        #expect(said(SealKitError(KeystoreError.notFound(dash, namespace: "default"))).contains("'sealkit keys generate -- -rf'"))
        #expect(said(SealKitError(KeystoreError.tpmLockout(dash, hasPIN: false))).hasSuffix(
            "; then run 'sealkit keys passwd --tpm -- -rf' to seal it again outside the lockout"))
        #expect(said(SealKitError(KeystoreError.tpmLockout(hostile, hasPIN: false))).contains("'sealkit keys passwd 'a b$(id);x' --tpm'"))
        #expect(said(SealKitError(KeystoreError.sealedToAnotherTPM(dash))).contains("run 'sealkit keys delete -- -rf', then"))
    }

    @Test func theTPMsNewRefusalsStateTheProblemAndTheCommandAddsTheRemedy() {
        let errors: [(KeystoreError, String)] = [
            (.tpmLockout(Self.alice, hasPIN: false), "; then run 'sealkit keys passwd alice --tpm' to seal it again outside the lockout"),
            (.lastPINTry(Self.alice, interval: 1000), ", or give the PIN with SEALKIT_PASSPHRASE or --passphrase-file"),
            (.tpmTimedOut(tcti: "swtpm:host=127.0.0.1,port=2321", seconds: 30),
             "; check that the TPM SEALKIT_TPM_TCTI names is running, or set SEALKIT_TPM_TIMEOUT to the seconds to wait"),
            (.sealedToAnotherTPM(Self.alice),
             "; to use it here, run 'sealkit keys delete alice', then 'sealkit keys restore' from a backup of it or 'sealkit transfer receive'"),
        ]
        for (keystoreError, advice) in errors {
            let error = SealKitError(keystoreError)
            #expect(said(error) == error.description + advice)
            for word in ["sealkit ", "SEALKIT_"] {
                #expect(!error.description.contains(word), "\(error.description)")
            }
        }
        #expect(SealKitError(KeystoreError.tpmTimedOut(tcti: "device:/dev/tpmrm0", seconds: 30)).reason == .tpmUnavailable)
        #expect(SealKitError(KeystoreError.lastPINTry(Self.alice, interval: 0)).reason == .tpmLockout)
    }

    @Test func theLibraryStatesTheProblemAndTheCommandPrintsWhatItDidBefore() {
        for (error, printed) in Self.cases {
            #expect(said(error) == printed)
            #expect(Advice(for: error) != nil, "\(error.description)")
            for word in ["sealkit ", "--", "SEALKIT_"] {
                #expect(!error.description.contains(word), "\(error.description)")
            }
        }
    }

    /// Rownd's mode leaves a value sealed under a key the keystore lacks; the library's note says to receive the key,
    /// the command's note names the command that does, as it did when the library named it.
    @Test func aNoteOfAMissingKeyNamesTheCommandOnlyAtTheCommand() throws {
        let vault = Vault(keystore: try .inMemory(), user: Self.alice, format: .v1)
        try vault.makeKey(existing: "{}")
        let schema = try ProfileSchema(json: #"{"schema": {"ssn": {"encryption": {"state": "enabled"}}}}"#)
        let sealed = String(repeating: "A", count: 64)
        let outcome = try ProfileProcessor(.encrypt, schema: schema, options: .init(asRownd: true))
            .process(#"{"ssn": "\#(sealed)"}"#, with: vault)
        let note = try #require(outcome.notes.first)
        #expect(outcome.notes.count == 1)
        #expect(!note.contains("sealkit "), "\(note)")
        #expect(outcome.notes(receiveHint: ProfileOptions.receiveHint) == [
            "ssn left as it is: it already looks like a ciphertext (padded base64 of 40 bytes or more, or SealKit's prefix) "
                + "that none of the user's keys opens, so it is not sealed twice; if it is one, it was sealed under a key this "
                + "keystore does not have: receive that key ('sealkit transfer receive') instead of making a new one"
        ])
    }

    /// The errors the vault and the profile processor throw with advice, through their public calls.
    @Test func vaultAndProcessorErrorsCarryTheirAdvice() throws {
        let vault = Vault(keystore: try .inMemory(), user: Self.alice, format: .v2)
        do {
            _ = try vault.encrypt(plaintext: "x")
            Issue.record("encrypted without a key")
        } catch {
            #expect(!error.description.contains("sealkit"), "\(error.description)")
            #expect(said(error) == error.description + ": make one with 'sealkit keys generate alice', or bring it from "
                + "another device with 'sealkit transfer receive' (or 'keys restore' from a backup)")
        }
        let schema = try ProfileSchema(json: #"{"schema": {"a": {"encryption": {"state": "enabled"}}}, "sealkit": {"seal": true}}"#)
        do {
            _ = try ProfileProcessor(.encrypt, schema: schema, options: .init(asRownd: true))
            Issue.record("Rownd's mode took a sealing schema")
        } catch {
            #expect(!error.description.contains("--rownd"), "\(error.description)")
            #expect(said(error).hasSuffix(": --rownd never writes or checks a seal, so drop --rownd or the schema's \"sealkit\" member"))
        }
        #expect(throws: SealKitError.self) { try Relay("http://relay.example") }
    }
}
