// The SealKit library: one import for apps. Each capability lives in its own target;
// this one re-exports them and adds the Vault on top.
@_exported import SealCore
@_exported import SealJSON
@_exported import SealKeystore
@_exported import SealMailbox
@_exported import SealSecretService
@_exported import SealProfile
@_exported import SealQR
@_exported import SealTransfer
@_exported import SealAudit
@_exported import SealShares
@_exported import SealScan
