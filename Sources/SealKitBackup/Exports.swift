// Paper backups under a passphrase and SLIP-39 share backups of keys, on top of SealKit: libsodium alone.
@_exported import SealBackup
@_exported import SealKit
