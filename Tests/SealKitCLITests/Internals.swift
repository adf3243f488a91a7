// The CLI tests read and build the package's own values (JSON trees, key files, shares) to check what the
// binary wrote: they are the package's, not an app's, so they see its internal modules.
@_exported import SealKit
@_exported import SealKitTransfer
@_exported import SealKitBackup
