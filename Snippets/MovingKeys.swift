// Receiving a user's keys on a new device, from async code: the app shows the code and the
// fingerprints, and stores the keys only once the person says they match.
import SealKitTransfer

func receiveUsersKeys(
    into keystore: Keystore, confirmOnScreen: @escaping @Sendable ([KeyOffer]) async -> Bool
) async throws {
    let (events, continuation) = AsyncStream<TransferEvent>.makeStream()
    Task {
        for await event in events {
            if case .codeAllocated(let code) = event { print("Type this code on the old device: \(code)") }
        }
    }
    // The person compares the fingerprints with the old device's screen; true stores every key, false none.
    let stored = try await KeyTransfer.receive(into: keystore, events: continuation, confirm: confirmOnScreen)
    continuation.finish()
    print(stored.map { "\($0.id) \($0.fingerprint)" })
}
