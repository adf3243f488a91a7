import SealCore
import SealKeystore
import SealTransfer

/// Every key of some ids, read from a keystore and unlocked, ready to send to another device.
///
/// Each id travels with its current key and every retired one, so the receiver opens the user's old
/// data too. The keys stay in guarded memory; ``offers`` shows ids and fingerprints only, and nothing
/// here prints key material.
public struct OutgoingKeys: Sendable {
    package let histories: [KeyHistory]

    package init(_ histories: [KeyHistory]) { self.histories = histories }

    /// Reads the keys of `ids` from `keystore`.
    /// - Parameters:
    ///   - ids: the ids to send, each once.
    ///   - keystore: where they are stored.
    ///   - passphrase: unlocks the protected ones.
    /// - Throws: `SealKitError`: `.invalidArgument` for no ids, `.keyNotFound`, `.passphraseRequired`,
    ///   `.wrongPassphrase`, or an unusable keystore.
    public init(_ ids: [KeyID], from keystore: Keystore, passphrase: Passphrase? = nil) throws(SealKitError) {
        guard !ids.isEmpty else { throw SealKitError(TransferError.nothingToSend) }
        do {
            histories = try ids.map { id throws(KeystoreError) in try keystore.storage.history(for: id, passphrase: passphrase) }
        } catch {
            throw SealKitError(error)
        }
    }

    /// What goes, for people to compare on both screens: each id with its current key's fingerprint.
    public var offers: [KeyOffer] { histories.map(KeyOffer.init) }
}
