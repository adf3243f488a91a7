// Watching a vault's key events in ways that end for sure: a watcher task cancelled when the work is done, and a wait
// for one event bounded by a deadline.
import SealKit

// Shows each event while `work` runs. Subscribe before acting: a stream holds only what happens after `events()`.
func showingKeyEvents(of vault: Vault, during work: () throws -> Void) async rethrows {
    let events = vault.events()
    let watcher = Task {
        for await event in events { print("key event: \(event)") }
    }
    defer { watcher.cancel() }   // ends the loop and unsubscribes, however `work` ends
    try work()
}

// The first event after `action`, or nil when none came within `limit`.
func firstKeyEvent(of vault: Vault, within limit: Duration, after action: () throws -> Void) async rethrows -> VaultEvent? {
    let events = vault.events()
    try action()
    return await withTaskGroup(of: VaultEvent?.self) { group in
        group.addTask {
            for await event in events { return event }
            return nil   // the vault was released
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()   // the loser ends: the sleep wakes, the stream unsubscribes
        return first
    }
}

func rotateAndConfirm(_ vault: Vault) async throws {
    let event = try await firstKeyEvent(of: vault, within: .seconds(5)) { try vault.rotateKey() }
    print(event.map { "rotated: \($0)" } ?? "no event within 5 s")
}
