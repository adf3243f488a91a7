// Every SealKit product: the command line uses them all. (@_exported makes them visible in every file of
// this target; each product re-exports SealKit.)
@_exported import SealKitAudit
@_exported import SealKitBackup
@_exported import SealKitKeyring
@_exported import SealKitQR
@_exported import SealKitTransfer
