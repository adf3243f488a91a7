#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
@_spi(CLI) import SealKit
import SealKitTransfer

// The async transfer API (SealKitTransfer's `KeyReceiver` and `KeySender`) in a process of its own, for tests
// that time it with their own clock: in the test process, synchronous tests beside it can hold the cooperative pool.
//
//     sealtransfer-probe receive|send RELAY TIMEOUT [CANCEL_AFTER_MS]
//
// Prints how the transfer ended (`ok`, or the SealKitError's reason: `cancelled`, `timedOut`,
// `relayUnavailable(chooseAnotherRelay)` for a relay that stalled or could not be reached, ...) and exits 0;
// CANCEL_AFTER_MS cancels the transfer's Task that long after the start.

let arguments = CommandLine.arguments
guard arguments.count >= 4, let seconds = Int(arguments[3]) else {
    print("usage: sealtransfer-probe receive|send RELAY TIMEOUT [CANCEL_AFTER_MS]")
    exit(64)
}
let relay = arguments[2], timeout = Duration.seconds(seconds)
let role = arguments[1]
let cancelAfter = arguments.count > 4 ? Int(arguments[4]) : nil

let transfer = Task { () async -> String in
    do {
        if role == "receive" {
            let receiver = try await KeyReceiver(relay: try Relay(relay), timeout: timeout)
            _ = try await receiver.receive(into: try Keystore.inMemory()) { _ in true }
        } else {
            let keys = [try KeyHistory(id: KeyID("probe"), versions: [.init(key: .generate(), created: Date(), retired: nil)])]
            let sender = try await KeySender(code: try TransferCode("5-adroitness-aardvark"), relay: try Relay(relay), timeout: timeout)
            try await sender.send(keys)
        }
        return "ok"
    } catch let error as SealKitError {
        switch error.reason {
        // The facts the command words "choose another relay" from: a relay that cannot be reached, or stalled.
        case .relayUnavailable where error.detail == .relayUnreachable || error.detail == .relayStalled: return "relayUnavailable(chooseAnotherRelay)"
        case .cancelled, .timedOut: return "\(error.reason)"
        default: return "other: \(error.reason): \(error)"
        }
    } catch {
        return "other: \(error)"
    }
}
if let cancelAfter {
    Task {
        try await Task.sleep(for: .milliseconds(cancelAfter))
        transfer.cancel()
    }
}
print(await transfer.value)
