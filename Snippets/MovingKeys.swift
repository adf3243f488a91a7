// Receiving a user's keys on a new device, from async code: the store decision is the app's, and
// cancelling the task ends the transfer as Ctrl-C does (nameplate released, mailbox closed).
import SealKitTransfer

func receiveUsersKeys(into keystore: some Keystore) async throws {
    let (events, continuation) = AsyncStream<TransferEvent>.makeStream()
    Task {
        for await event in events {
            if case .codeAllocated(let code) = event { print("Type this code on the old device: \(code)") }
        }
    }
    _ = try await AsyncKeyTransfer.receive(relay: RelayURL.publicRelay, events: continuation) { offered in
        // Compare the fingerprints with the old device's screen, then store: all or nothing.
        _ = try keystore.storeAll(offered, passphrase: nil)
    }
    continuation.finish()
}
