/// Why a shared value, an identity text or a group text was refused. The command line maps each case
/// to its exit status; none carries a secret, only public identities' fingerprints and names.
package enum ShareError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not the thing it should be (`what` says which), or is damaged.
    case malformed(what: String, reason: String)
    /// The signature does not verify: the text was altered, re-addressed or made in someone else's name.
    case badSignature(what: String)
    /// No recipient of the value is one of the identities tried.
    case notAddressed
    /// The value's sender is neither the id itself, nor a contact, nor a member of the value's group.
    case untrustedSender(fingerprint: SafetyNumber)
    /// A group text older than the one held, or a different text for the epoch held.
    case staleGroup(name: String, held: UInt32, given: UInt32)
    /// A group text whose signer is not a contact (nor the id itself).
    case untrustedGroupSigner(name: String, fingerprint: SafetyNumber)

    package var description: String {
        switch self {
        case .malformed(let what, let reason): return "not \(what): \(reason)"
        case .badSignature(let what):
            return "\(what) does not verify: it was altered, re-addressed, moved from another field, context or user, or made in "
                + "another's name; ask its sender for it again"
        case .notAddressed: return "the shared value is not addressed to this identity (nor to any older one of the key)"
        case .untrustedSender(let fingerprint):
            return "the shared value's sender (fingerprint \(fingerprint)) is not this key, a contact, or a member of its group"
        case .staleGroup(let name, let held, let given):
            return given < held
                ? "the text of group '\(name)' is epoch \(given), older than the epoch \(held) held: a replayed text is refused"
                : "the text of group '\(name)' differs from the one held for epoch \(held): refused"
        case .untrustedGroupSigner(let name, let fingerprint):
            return "group '\(name)' is signed by \(fingerprint), who is not a contact: add its creator as a contact first"
        }
    }
}
