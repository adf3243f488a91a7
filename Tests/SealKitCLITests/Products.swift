// The CLI tests see every product, as the CLI does.
@_exported import SealKitAudit
@_exported import SealKitKeyring
@_exported import SealKitQR
@_exported import SealKitTransfer
