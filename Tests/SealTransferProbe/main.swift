#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import SealCore
import SealKeystore
import SealMailbox
import SealTransfer

// The async transfer API (`AsyncKeyTransfer`) in a process of its own, for tests that time it with
// their own clock: in the test process, synchronous tests beside it can hold the cooperative pool.
//
//     sealtransfer-probe receive|send RELAY TIMEOUT [CANCEL_AFTER_MS]
//
// Prints how the transfer ended (`ok`, or the MailboxError's case: `interrupted`, `timedOut`,
// `stalled`, ...) and exits 0; CANCEL_AFTER_MS cancels the transfer's Task that long after the start.

let arguments = CommandLine.arguments
guard arguments.count >= 4, let timeout = Int(arguments[3]), let relay = try? RelayURL(arguments[2]) else {
    print("usage: sealtransfer-probe receive|send RELAY TIMEOUT [CANCEL_AFTER_MS]")
    exit(64)
}
let role = arguments[1]
let cancelAfter = arguments.count > 4 ? Int(arguments[4]) : nil

let transfer = Task { () async -> String in
    do {
        if role == "receive" {
            _ = try await AsyncKeyTransfer.receive(relay: relay, timeout: timeout) { _ in }
        } else {
            let keys = [try KeyHistory(id: KeyID("probe"), versions: [.init(key: .generate(), created: Date(), retired: nil)])]
            try await AsyncKeyTransfer.send(keys, code: try WormholeCode(parsing: "5-adroitness-aardvark"), relay: relay, timeout: timeout)
        }
        return "ok"
    } catch let error as MailboxError {
        switch error {
        case .interrupted: return "interrupted"
        case .timedOut: return "timedOut"
        case .stalled: return "stalled"
        case .connectionLost: return "connectionLost"
        case .unreachable: return "unreachable" + (CommandLine.arguments.count > 5 ? ": \(error)" : "")
        default: return "other: \(error)"
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
