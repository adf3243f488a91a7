import Foundation
@testable import SealKitCLI
import SealKit
import Testing

/// `SealKitError.Reason` is open (a struct of static values), so the CLI's switch from reasons to exit
/// statuses has a `default:` the compiler cannot rule out: these tests do. Every reason of this library has its
/// status listed, and each status is the one scripts have always seen (the table is main's before the change).
@Suite("Exit statuses by reason")
struct ExitStatusTests {
    /// The status of every reason as rc.1's exhaustive switch gave it.
    static let statusByReason: [String: Int32] = [
        "declined": 1,
        "invalidArgument": 64,
        "invalidShareLayout": 64,
        "noKeys": 64,
        "passphraseTooShort": 64,
        "tooLarge": 64,
        "tooManyKeys": 64,
        "authenticationFailed": 65,
        "damagedBackup": 65,
        "damagedKey": 65,
        "invalidJSON": 65,
        "invalidKeyText": 65,
        "invalidSchema": 65,
        "invalidShare": 65,
        "invalidTransfer": 65,
        "mismatchedShares": 65,
        "notABackup": 65,
        "notBound": 65,
        "notCiphertext": 65,
        "notEnoughShares": 65,
        "passphraseKDFFailed": 65,
        "profileFields": 65,
        "sharesOfAnotherBackup": 65,
        "untrustedSender": 65,
        "contactConflict": 65,
        "groupRefused": 65,
        "contactNotFound": 66,
        "notAddressed": 77,
        "notGroupCreator": 77,
        "unknownKey": 65,
        "unreadableData": 65,
        "unreadableImage": 65,
        "unsupportedFormat": 65,
        "wrongPlace": 65,
        "incompleteBackup": 66,
        "keyNotFound": 66,
        "keyNotInBackup": 66,
        "missingInput": 66,
        "relayUnavailable": 69,
        // The TPM cannot be reached (69); a wrong PIN, lockout or another TPM, as a wrong passphrase (77).
        "tpmUnavailable": 69,
        // A library that reads images (opened on first use) cannot be loaded (69, as a missing service).
        "libraryUnavailable": 69,
        "wrongPIN": 77,
        "tpmLockout": 77,
        "sealedToAnotherTPM": 77,
        // A profile seal missing, not matching, rolled back or from a conflicting write (65).
        "sealMissing": 65,
        "sealMismatch": 65,
        "sealRolledBack": 65,
        "sealConflict": 65,
        "conflictingKey": 73,
        "keyElsewhere": 73,
        "keyExists": 73,
        "fileSystem": 74,
        "keyringUnavailable": 74,
        "keystoreBusy": 75,
        "timedOut": 75,
        "protocolViolation": 76,
        "keyringLocked": 77,
        "passphraseRequired": 77,
        "unsafeFile": 77,
        "wrongCode": 77,
        "wrongPassphrase": 77,
        "cancelled": 130,
    ]

    @Test func everyReasonHasItsStatusListed() {
        for reason in SealKitError.Reason.all {
            #expect(ExitStatus.listed(for: reason) != nil, "no exit status listed for .\(reason)")
        }
    }

    @Test func everyStatusIsTheOneScriptsHaveAlwaysSeen() {
        #expect(Set(SealKitError.Reason.all.map(\.description)) == Set(Self.statusByReason.keys))
        for reason in SealKitError.Reason.all {
            #expect(ExitStatus(reason).rawValue == Self.statusByReason[reason.description], ".\(reason)")
        }
    }
}
