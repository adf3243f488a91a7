import Foundation
import SealTestSupport
import Testing

/// A relay that lies: garbage, binary and oversized messages, errors with control characters,
/// silence, dropped connections, bad PAKE messages and floods (Scripts/lib/hostile_relay.py).
/// Whatever it sends, `transfer receive` and `transfer send` end with one line on stderr and
/// an exit status from 1 to 125, in bounded time, storing nothing.
@Suite("Network transfer against a hostile relay")
struct HostileRelayTests {
    static let modes = [
        "notjson", "binary", "huge", "deep", "unwelcome", "close", "silent", "servererror", "badnameplate",
        "badpake", "shortpake", "badhex", "missing", "flood", "dropafteropen",
    ]

    @Test func everyLieEndsInOneLineAndNothingStored() throws {
        let port = try MailboxServer.freePort()
        let relay = try RunningProgram(
            MailboxServer.python, [Repository.root.appendingPathComponent("Scripts/lib/hostile_relay.py").path, String(port)],
            limit: 240)
        defer {
            relay.send(signal: SIGKILL)
            _ = relay.finish()
        }
        #expect(relay.readLine() == "ready")
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let before = try cli.run(["keys", "list"]).stdout
        for mode in Self.modes {
            let url = "ws://127.0.0.1:\(port)/\(mode)"
            for command in [["transfer", "receive", "--format", "text"], ["transfer", "send", "u", "--code", "5-adroitness-aardvark"]] {
                let started = Date()
                let result = try cli.run(command + ["--relay", url, "--timeout", "3"])
                let label = "\(mode): \(command[1])"
                #expect(Date().timeIntervalSince(started) < 20, "\(label) took too long")
                #expect((1...125).contains(result.status), "\(label): exit \(result.status)")
                #expect(result.stderr.hasPrefix("sealkit: ") && result.stderr.split(separator: "\n").count == 1, "\(label): \(result.stderr)")
                #expect(!result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(label): control characters")
                // stdout holds at most the code, shown before the relay misbehaved.
                let lines = result.stdout.split(separator: "\n")
                #expect(lines.count <= 1 && lines.allSatisfy { $0.wholeMatch(of: /5-[a-z]+-[a-z]+/) != nil }, "\(label): \(result.stdout)")
                #expect(try cli.run(["keys", "list"]).stdout == before, "\(label) changed the keystore")
            }
        }
    }
}
