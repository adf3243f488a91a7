import Foundation
import SealKit
import SealTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The fast share of Scripts/stress: a few SIGKILLs at random moments, and the race of eight
/// processes importing different keys under one id.
@Suite("Crash safety and races")
struct CrashSafetyTests {
    @Test func killedWritesLeaveEachIDWholeOrAbsentAndNeverBlocked() throws {
        let store = try TimedStore()
        var known: [String: String] = [:]
        var generator = SystemRandomNumberGenerator()
        // How long a run takes, so the kills land across it, the final write included.
        let begin = Date()
        #expect(try store.run(["keys", "generate", "warm-up"]).status == 0)
        let typical = Date().timeIntervalSince(begin)
        known["warm-up"] = try store.listing()?["warm-up"]
        var kills = 0
        var attempt = 0
        while kills < 20 && attempt < 200 {
            attempt += 1
            let id = "id-\(attempt)"
            let importing = attempt % 2 == 0
            let key = SymmetricKey.generate()
            let keyText = importing ? try exportedText(key) : ""
            let process = try ChildProcess(
                CLI.executable.path, importing ? ["keys", "import", id] : ["keys", "generate", id], environment: store.environment,
                killAfter: nil)
            process.write(Array(keyText.utf8))
            process.closeInput()
            usleep(UInt32(Double.random(in: 0...(typical * 1.2), using: &generator) * 1_000_000))
            process.kill()
            let outcome = process.finish(stdin: [], timeout: 10)
            if outcome.signal == SIGKILL { kills += 1 }

            let listing = try #require(try store.listing(), "the keystore does not open after killing \(id)")
            for (other, fingerprint) in known {
                #expect(listing[other] == fingerprint, "'\(other)' changed after killing \(id)")
            }
            if let fingerprint = listing[id] {
                // Whole: it encrypts, and an import holds exactly the key given.
                #expect(try store.run(["status", "--key", id]).status == 0, "'\(id)' is listed but not usable")
                if importing { #expect(fingerprint == key.fingerprint.description) }
                known[id] = fingerprint
            } else {
                // Absent: the next attempt at the same id is not blocked.
                let retry = try store.run(importing ? ["keys", "import", id] : ["keys", "generate", id], stdin: keyText)
                #expect(retry.status == 0, "after a kill, '\(id)' is blocked: \(retry.stderrText)")
                known[id] = try store.listing()?[id]
            }
        }
        #expect(kills >= 20, "only \(kills) of \(attempt) runs were killed mid-way")
        #expect(try store.run(["keys", "generate", "last"]).status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: store.home + "/keys/default").filter { $0.hasPrefix(".tmp-") }
        #expect(leftovers.isEmpty, "temporary files left after a write: \(leftovers)")
    }

    @Test func eightProcessesRacingForOneIDWithDifferentKeys() throws {
        let store = try TimedStore()
        let keys = (0..<8).map { _ in SymmetricKey.generate() }
        let processes = try keys.map { _ in
            try ChildProcess(CLI.executable.path, ["keys", "import", "raced"], environment: store.environment, killAfter: nil)
        }
        // All eight are running before any is given its key; then all get theirs at once.
        for (process, key) in zip(processes, keys) {
            process.write(Array(try exportedText(key).utf8))
            process.closeInput()
        }
        let outcomes = processes.map { $0.finish(stdin: [], timeout: 20) }

        let winners = outcomes.indices.filter { outcomes[$0].status == 0 }
        #expect(winners.count == 1, "\(winners.count) processes stored a key under one id")
        for (index, outcome) in outcomes.enumerated() where !winners.contains(index) {
            #expect(outcome.status == 73 && outcome.stdout.isEmpty, "exit \(outcome.signal == nil ? String(outcome.status) : "signal")")
            #expect(outcome.stderrText.hasPrefix("sealkit: a different key is already stored under 'raced'"), "\(outcome.stderrText)")
            #expect(outcome.stderrText.filter { $0 == "\n" }.count == 1)
        }
        let winner = try #require(winners.first)
        let listing = try #require(try store.listing())
        #expect(listing["raced"] == keys[winner].fingerprint.description)
        let list = try store.run(["keys", "list"]).stdoutText
        #expect(!list.contains("retired"), "the raced id holds more than one key: \(list)")
    }

    /// A key's base64 text, made here rather than read from the keystore: the test plays the
    /// person pasting a key into `keys import`.
    private func exportedText(_ key: SymmetricKey) throws -> String {
        key.base64EncodedBytes().withUnsafeBytes { String(decoding: $0, as: UTF8.self) } + "\n"
    }
}
