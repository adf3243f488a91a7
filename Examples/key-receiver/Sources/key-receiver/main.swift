// Receives a user's keys through a magic-wormhole mailbox relay, showing each event of the
// transfer, and stores them in a file keystore. On the other device:
// `sealkit transfer send ID --code CODE --relay URL`.
//
//     key-receiver --keystore DIR --relay ws://127.0.0.1:4000/v1
//
// The code is stdout's first line, then one line per event. Ctrl-C (or any Task cancellation)
// ends the transfer with its nameplate released and nothing stored.
import SealKit
import SealKitTransfer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a line at once, unbuffered: the code must reach a pipe before the transfer waits.
func say(_ text: String, to descriptor: Int32 = 1) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}

func fail(_ message: String, status: Int32 = 1) -> Never {
    say("key-receiver: \(message)", to: 2)
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 4, arguments[0] == "--keystore", arguments[2] == "--relay" else {
    fail("usage: key-receiver --keystore DIR --relay URL", status: 64)
}
do {
    let keystore = try Keystore(directory: arguments[1])
    let receiver = try await KeyReceiver(relay: try Relay(arguments[3]), timeout: .seconds(120))
    let events = receiver.events()
    let shown = Task {
        for await event in events {
            switch event {
            case .codeAllocated(let code): say(code.text)
            case .peerJoined: say("event: peer joined")
            case .keysOffered(let offers):
                say("event: keys offered: " + offers.map { "\($0.id) \($0.fingerprint)" }.joined(separator: ", "))
            case .stored: say("event: stored")
            case .refused(let reason): say("event: refused (\(reason))")
            }
        }
    }
    let keys = try await receiver.receive(into: keystore) { _ in
        // The app's decision: a real app shows the fingerprints and asks; this one stores them all.
        true
    }
    // The stream ended with the transfer: every event is shown before the result.
    await shown.value
    for key in keys { say("stored \(key.id) \(key.fingerprint)") }
} catch {
    fail("\(error)")
}
