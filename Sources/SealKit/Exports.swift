// The SealKit library: one import for apps that encrypt profile fields. It holds the Vault and
// re-exports the capabilities it builds on, which need libsodium and swift-system alone. Key
// transfer, the desktop keyring, QR codes and the audit are products of their own
// (SealKitTransfer, SealKitKeyring, SealKitQR, SealKitAudit), so an app pays only for what it adds.
@_exported import SealCore
@_exported import SealKeystore
@_exported import SealProfile
