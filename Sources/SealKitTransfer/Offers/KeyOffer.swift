import SealKit

/// One id's keys as a transfer's events show them (``TransferEvent/keysOffered(_:)``): never key material.
///
/// The receivers return `KeyHistory` values, which show the same id, fingerprint and count, and can be stored.
public struct KeyOffer: Sendable, Equatable {
    /// The id the keys belong to.
    public let id: KeyID
    /// The current key's fingerprint, for people to compare on both screens.
    public let fingerprint: KeyFingerprint
    /// How many keys travel: the current one and retired ones.
    public let keyCount: Int

    /// What a person is shown of `history`: its id, its current key's fingerprint, and how many keys it holds.
    public init(_ history: KeyHistory) {
        id = history.id
        fingerprint = history.current.fingerprint
        keyCount = history.versions.count
    }
}
