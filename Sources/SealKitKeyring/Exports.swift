// The desktop keyring (freedesktop Secret Service, through libsecret) as a keystore, on top of SealKit.
@_exported import SealKit
@_exported import SealSecretService
