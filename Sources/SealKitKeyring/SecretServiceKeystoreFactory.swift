// The desktop keyring (freedesktop Secret Service, through libsecret) as a keystore, on top of SealKit.
@_exported import SealKit
// The Secret Service is a Linux (freedesktop) interface: elsewhere this product is SealKit alone
// (an Apple build would add a Keychain keystore here; see docs/platforms.md).
#if os(Linux)

/// The desktop keyring as a place for keys.
extension Keystore {
    /// A keystore in the user's desktop keyring (GNOME Keyring, KWallet: the freedesktop Secret Service),
    /// through libsecret. Keys are items of their own, labelled with their id and namespace.
    ///
    /// It never asks the keyring to unlock, since that would pop up a prompt no script can answer: a
    /// locked keyring is reported as `SealKitError.Reason.keyringLocked`, and every call to the keyring
    /// is abandoned after `timeout`.
    ///
    /// libsecret and GLib are opened on the first call to the keyring, not when the app starts: on a machine
    /// without them, that call throws `SealKitError.Reason.libraryUnavailable`, naming the library and its
    /// Debian package.
    /// - Parameters:
    ///   - namespace: keeps the keys of different apps or environments apart, as with files.
    ///   - timeout: how long any one call to the keyring may take.
    /// - Throws: `SealKitError.Reason.invalidArgument` for a bad namespace.
    public static func secretService(namespace: String = "default", timeout: Duration = .seconds(10)) throws(SealKitError) -> Keystore {
        Keystore(SecretServiceKeystore(namespace: try Keystore.namespace(namespace), timeout: timeout))
    }
}
#endif
