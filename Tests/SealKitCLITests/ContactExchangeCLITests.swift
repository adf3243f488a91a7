import Foundation
import SealTestSupport
import Testing

/// `sealkit contacts exchange` through magic-wormhole's own mailbox server: the code authenticates both identities.
@Suite("contacts exchange through a local mailbox server", .requires(.mailboxServer))
struct ContactExchangeCLITests {
    @Test func bothSidesStoreTheOthersIdentityAndAWrongCodeStoresNothing() throws {
        try MailboxServer.with { server in
            let people = try SharingCLITests.People(["ann", "ben"])
            let ann = try people.identity("ann"), ben = try people.identity("ben")
            let starter = try ChildProcess(
                CLI.executable.path, ["contacts", "exchange", "ben", "--key", "ann", "--relay", server.relay, "--timeout", "60", "--namespace", "ann"],
                environment: people.cli.environment)
            let code = try #require(starter.readLine())
            #expect(code.wholeMatch(of: /[1-9][0-9]*-[a-z]+-[a-z]+/) != nil, "code: \(code)")
            let joined = try people.run("ben", ["contacts", "exchange", "ann", "--key", "ben", "--code", code, "--relay", server.relay, "--timeout", "60"])
            #expect(joined.status == 0, "\(joined.stderr)")
            #expect(joined.stdout == "ann\t\(ann.fingerprint)\texchange\n")
            let started = starter.finish()
            #expect(started.status == 0, "\(started.stderrText)")
            // The code line was read above; then the contact stored, as `contacts list` shows it.
            #expect(started.stdoutText == "ben\t\(ben.fingerprint)\texchange\n")
            #expect(try people.run("ann", ["contacts", "list"]).stdout == "ben\t\(ben.fingerprint)\texchange\n")

            // A wrong code: both sides fail, and neither stores anything.
            let second = try ChildProcess(
                CLI.executable.path, ["contacts", "exchange", "cat", "--key", "ann", "--relay", server.relay, "--timeout", "30", "--namespace", "ann"],
                environment: people.cli.environment)
            let real = try #require(second.readLine())
            let nameplate = real.split(separator: "-")[0]
            let wrong = "\(nameplate)-adroitness-" + (real.hasSuffix("-aardvark") ? "absurd" : "aardvark")
            let refused = try people.run("ben", ["contacts", "exchange", "cat", "--key", "ben", "--code", wrong, "--relay", server.relay, "--timeout", "30"])
            expectCleanFailure(refused)
            #expect(refused.status == 77)
            #expect(second.finish().status == 77)
            #expect(try people.run("ann", ["contacts", "list"]).stdout.split(separator: "\n").count == 1)
            #expect(try people.run("ben", ["contacts", "list"]).stdout.split(separator: "\n").count == 1)
        }
    }
}
