// Key transfer between devices (network through a magic-wormhole mailbox relay, with swift-nio; offline
// offers and replies; paper and SLIP-39 share backups), on top of SealKit.
@_exported import SealKit
@_exported import SealMailbox
@_exported import SealShares
@_exported import SealTransfer
