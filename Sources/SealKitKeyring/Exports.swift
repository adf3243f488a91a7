// The desktop keyring (freedesktop Secret Service, through libsecret) as a keystore, on top of SealKit.
@_exported import SealKit
// The Secret Service is a Linux (freedesktop) interface: elsewhere this product is SealKit alone
// (an Apple build would add a Keychain keystore here; see docs/platforms.md).
#if canImport(SealSecretService)
@_exported import SealSecretService
#endif
