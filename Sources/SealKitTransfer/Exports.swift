// Key transfer between devices (network through a magic-wormhole mailbox relay, with swift-nio; offline
// offers and replies), on top of SealKit. Backups are the SealKitBackup product's.
@_exported import SealKit
@_exported import SealMailbox
@_exported import SealTransfer
