// The CLI tests read and build the package's own values (JSON trees, key files, shares) to check what the
// binary wrote: they are the package's, not an app's, so they see its internal modules.
@_exported import SealCore
@_exported import SealJSON
@_exported import SealKeystore
@_exported import SealMailbox
@_exported import SealProfile
@_exported import SealBackup
@_exported import SealTransfer
