// Receiving a user's keys on a new device, from async code: the app shows the code and the
// fingerprints, and stores the keys only once the person says they match.
import SealKitTransfer

func receiveUsersKeys(
    into keystore: Keystore, confirmOnScreen: @escaping @Sendable ([KeyHistory]) async -> Bool
) async throws {
    let receiver = try await KeyReceiver(timeout: .seconds(600))
    print("Type this code on the old device: \(receiver.code.text)")
    // Progress for the screen: peer joined, keys offered, stored or refused. The stream ends with the transfer.
    let events = receiver.events()
    Task {
        for await event in events { print(event) }
    }
    // The person compares the fingerprints with the old device's screen; true stores every key, false none.
    // The sender is told either way; cancelling this task ends the transfer as Ctrl-C does.
    let stored = try await receiver.receive(into: keystore, confirm: confirmOnScreen)
    print(stored.map { "\($0.id) \($0.fingerprint)" })
}

// The old device: the code the person typed, and the keys of the user.
func sendUsersKeys(_ user: KeyID, from keystore: Keystore, typedCode: String) async throws {
    let sender = try await KeySender(code: try TransferCode(typedCode))
    try await sender.send(try keystore.exportKeys([user], passphrase: nil))
}
