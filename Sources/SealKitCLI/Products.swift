// Every SealKit product: the command line uses them all. (@_exported makes them visible in every file of
// this target; each product re-exports SealKit.)
@_exported import SealKitAudit
@_exported import SealKitBackup
@_exported import SealKitKeyring
@_exported import SealKitQR
@_exported import SealKitTransfer

// Debt (issue 32): the command line still reaches into the package's internal modules for the steps the
// products do not export yet. Scripts/check-cli-public lists every such use; the list only shrinks.
@_exported import SealCore
@_exported import SealJSON
@_exported import SealKeystore
@_exported import SealMailbox
@_exported import SealProfile
@_exported import SealBackup
@_exported import SealTransfer
#if canImport(SealSecretService)
@_exported import SealSecretService
#endif
