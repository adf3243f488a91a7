
/// What went wrong with the desktop keyring (the freedesktop Secret Service: GNOME
/// Keyring, KWallet), with what to do about it. Never carries key material.
package enum KeyringProblem: Equatable, Sendable, CustomStringConvertible {
    /// No session bus, or nothing on it answers as the Secret Service.
    case unavailable(reason: String)
    /// The keyring is locked; SealKit never asks to unlock it (that would pop up a
    /// prompt that a script cannot answer).
    case locked
    /// The keyring did not answer within the time limit.
    case timedOut(operation: String, seconds: Int)
    /// The keyring refused or failed an operation.
    case failed(operation: String, reason: String)
    /// An item that no longer parses or opens: someone else changed it.
    case damagedItem(KeyID, namespace: String, reason: String)

    package var description: String {
        switch self {
        case .unavailable(let reason):
            return "the Secret Service (desktop keyring) is not available (\(reason))"
        case .locked:
            return "the keyring is locked: unlock it (log in to the desktop session, or unlock the 'login' keyring "
                + "in Passwords and Keys) and try again; nothing was changed"
        case .timedOut(let operation, let seconds):
            return "the keyring did not answer within \(seconds) s while trying to \(operation) (is it waiting "
                + "on an unlock prompt?): unlock the keyring and try again"
        case .failed(let operation, let reason):
            return "the keyring could not \(operation): \(reason)"
        case .damagedItem(let id, let namespace, let reason):
            return "the keyring item for '\(id)' in namespace '\(namespace)' no longer parses (\(reason)): "
                + "someone else changed it"
        }
    }

    /// What exactly happened, where the public reason covers cases a person would set right differently.
    package var detail: SealKitError.Detail? {
        switch self {
        case .unavailable: return .keyringNotRunning
        case .damagedItem: return .damagedKeyringItem
        case .locked, .timedOut, .failed: return nil
        }
    }
}
