import Foundation
import SealTestSupport
import Testing

/// Sharing attacked as a hostile contact, group creator or server would, through the command line: what each
/// attempt must leave behind (a clean refusal, nothing stored, nothing a terminal would act on).
@Suite("sharing under attack")
struct SharingAttackCLITests {
    typealias People = SharingCLITests.People

    /// A group creator is any contact, and the text they sign names the group and its members as they please: a
    /// name or label holding a terminal escape or a newline would reach `groups join`'s line, `groups list`, the
    /// "shared by" line and, from anyone at all, the refusal of an unknown signer; so would a name of kilobytes.
    @Test func groupTextsWithControlCharactersInNamesAreRefusedAndNeverPrinted() throws {
        let people = try People(["ben", "cat"])
        let (eveKey, eveIdentity, eveFingerprint) = try SharingCLITests.peerKey()
        #expect(try people.run("eve", ["keys", "import", "eve"], stdin: eveKey).status == 0)
        #expect(try people.run("ben", ["contacts", "add", "eve", eveIdentity, "--fingerprint", eveFingerprint]).status == 0)
        let ben = try people.identity("ben").text
        let hostile = try SharingCLITests.peer("""
            lines = sys.stdin.read().split("\\n")
            k, ben = base64.b64decode(lines[0]), share.read_identity(lines[1])
            gid = os.urandom(16)
            print(share.make_group(k, b"eve", gid, 1, b"fam\\x1b]0;owned\\x07\\x1b[2J", [(b"ben", ben)]))
            print(share.make_group(k, b"eve", os.urandom(16), 1, b"fam\\nsealkit: all is well", [(b"ben", ben)]))
            print(share.make_group(k, b"eve", os.urandom(16), 1, b"plain", [(b"ben\\x1b[8m", ben)]))
            print(share.make_group(k, b"eve\\r", os.urandom(16), 1, b"plain2", [(b"ben", ben)]))
            # Longer than any name `groups create` writes: held, it would be printed with every value shared.
            print(share.make_group(k, b"eve", os.urandom(16), 1, b"n" * 4000, [(b"ben", ben)]))
            """, stdin: eveKey + "\n" + ben + "\n").split(separator: "\n").map(String.init)
        try #require(hostile.count == 5)
        for text in hostile {
            // From a contact: refused before it is held.
            let joined = try people.run("ben", ["groups", "join", "--key", "ben", text])
            expectCleanFailure(joined)
            #expect(joined.status == 65, "\(joined.stderr)")
            #expect(!joined.stderr.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" })
            // From a stranger: the refusal does not print the name either.
            let stranger = try people.run("cat", ["groups", "join", "--key", "cat", text])
            expectCleanFailure(stranger)
            #expect(stranger.status == 65, "\(stranger.stderr)")
            #expect(!stranger.stderr.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" })
        }
        let listed = try people.run("ben", ["groups", "list"])
        #expect(listed.status == 0 && listed.stdout.isEmpty, "\(listed.stdout)")
        #expect(!FileManager.default.fileExists(atPath: people.cli.home.appendingPathComponent("keys/ben/groups").path))
    }
}

extension SharingAttackCLITests {
    /// A value names its owner (the profile's user) under the sender's signature, but nothing compared it with the
    /// profile it was found in: a server moving Ann's shared ssn into Bob's record had it opened as Bob's, for the
    /// doctor both share with and for Bob himself.
    @Test func aSharedFieldMovedIntoAnotherUsersProfileIsRefused() throws {
        let people = try People(["ann", "bob", "doc"])
        for (a, b) in [("ann", "doc"), ("bob", "doc"), ("doc", "ann"), ("doc", "bob"), ("ann", "bob"), ("bob", "ann")] {
            try people.befriend(a, b)
        }
        let schema = CLI.profileFixtures.appendingPathComponent("schema.json").path
        let original = try String(contentsOf: CLI.profileFixtures.appendingPathComponent("profile.json"), encoding: .utf8)
        try #require(original.contains("078-05-1120") && original.contains("green"))
        func fields(_ json: String) throws -> [String: Any] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            return try #require(object["data"] as? [String: Any])
        }
        func encrypt(_ person: String, _ profile: String, sharingWith names: String) throws -> String {
            let result = try people.run(
                person, ["profile", "encrypt", "--schema", schema, "--key", person, "--share", "ssn=\(names)", "--share", "favorite_color=\(names)"],
                stdin: profile)
            #expect(result.status == 0, "\(result.stderr)")
            return result.output
        }
        let anns = try encrypt("ann", original, sharingWith: "doc,bob")
        let bobs = try encrypt("bob", original.replacing("078-05-1120", with: "219-09-9999").replacing("green", with: "blue"), sharingWith: "doc")
        let annSSN = try #require(try fields(anns)["ssn"] as? String)
        let bobSSN = try #require(try fields(bobs)["ssn"] as? String)
        let moved = bobs.replacing(bobSSN, with: annSSN)
        try #require(moved != bobs)

        // Honest records open as before.
        let honest = try people.run("doc", ["profile", "decrypt", "--schema", schema, "--key", "doc", "--shared"], stdin: bobs)
        #expect(honest.status == 0, "\(honest.stderr)")
        #expect(try fields(honest.output)["ssn"] as? String == "219-09-9999")
        // The doctor reading Bob's record with Ann's ssn in it, and Bob reading his own: refused, nothing printed.
        let doctor = try people.run("doc", ["profile", "decrypt", "--schema", schema, "--key", "doc", "--shared"], stdin: moved)
        expectCleanFailure(doctor)
        #expect(doctor.status == 65, "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("078-05-1120"))
        let owner = try people.run("bob", ["profile", "decrypt", "--schema", schema, "--key", "bob"], stdin: moved)
        expectCleanFailure(owner)
        #expect(owner.status == 65, "\(owner.stdout)")
        #expect(!owner.stdout.contains("078-05-1120"))
    }
}

extension SharingAttackCLITests {
    /// `profile decrypt --shared` tries every stanza of a stranger's value with every identity of the key, to tell a
    /// value addressed to it (refused) from another person's (left alone): a stranger's 14.7 MB profile of 2,048-
    /// recipient values took 12 s with one key and 130 s with twenty (debug build). The trials on unknown senders'
    /// values are now bounded per profile.
    @Test func aStrangersProfileCannotMakeTheRecipientTryUnboundedStanzas() throws {
        let people = try People(["ben"])
        let schema = CLI.profileFixtures.appendingPathComponent("schema.json").path
        let fixture = CLI.profileFixtures.appendingPathComponent("profile.json").path
        let (strangerKey, _, strangerFingerprint) = try SharingCLITests.peerKey()
        let profile = try SharingCLITests.peer("""
            k = base64.b64decode(sys.stdin.readline())
            profile = json.load(open(\(String(reflecting: fixture))))
            for field in ["ssn", "favorite_color", "last_name"]:
                others = [share.identity(os.urandom(32))[3] for _ in range(2047)]
                profile["data"][field] = share.seal_shared(b"not for ben", k, others, b"eve", 1, field.encode())
            print(json.dumps(profile))
            """, stdin: strangerKey + "\n")
        let started = ContinuousClock.now
        let result = try people.run("ben", ["profile", "decrypt", "--schema", schema, "--key", "ben", "--shared"], stdin: profile)
        let elapsed = ContinuousClock.now - started
        expectCleanFailure(result, containing: strangerFingerprint)
        #expect(result.status == 65)
        // One value of few recipients from a stranger is still left as it is.
        let one = try SharingCLITests.peer("""
            k = base64.b64decode(sys.stdin.readline())
            profile = json.load(open(\(String(reflecting: fixture))))
            profile["data"]["ssn"] = share.seal_shared(b"not for ben", k, [share.identity(os.urandom(32))[3]], b"eve", 1, b"ssn")
            print(json.dumps(profile))
            """, stdin: strangerKey + "\n")
        let left = try people.run("ben", ["profile", "decrypt", "--schema", schema, "--key", "ben", "--shared"], stdin: one)
        #expect(left.status == 0, "\(left.stderr)")
        #expect(left.stdout.contains("sk3:"))
        // Three such values were 6,144 trials; refused after two, in well under the time all took.
        #expect(elapsed < .seconds(60))
    }
}

extension SharingAttackCLITests {
    /// `groups join` takes a text the key itself signed, whatever its epoch: at the last epoch, the next change
    /// overflowed and the process crashed (exit 70) instead of refusing.
    @Test func aGroupAtItsLastEpochIsRefusedNotACrash() throws {
        let people = try People(["ben"])
        let (annKey, _, _) = try SharingCLITests.peerKey()
        #expect(try people.run("ann", ["keys", "import", "ann"], stdin: annKey).status == 0)
        try people.befriend("ann", "ben")
        let last = try SharingCLITests.peer("""
            k = base64.b64decode(sys.stdin.readline())
            print(share.make_group(k, b"ann", os.urandom(16), 0xFFFFFFFF, b"g", []))
            """, stdin: annKey + "\n")
        #expect(try people.run("ann", ["groups", "join", "--key", "ann", last]).status == 0)
        let groups = people.cli.home.appendingPathComponent("keys/ann/groups")
        let before = try Data(contentsOf: groups)
        for change in [["groups", "add", "g", "ben", "--key", "ann"], ["groups", "remove", "g", "ann", "--key", "ann"]] {
            let result = try people.run("ann", change)
            expectCleanFailure(result)
            #expect(result.status == 65, "\(change): \(result.status) \(result.stderr)")
        }
        #expect(try Data(contentsOf: groups) == before)
    }
}

extension SharingAttackCLITests {
    /// A contact or group name given as an argument (a script's, taken from anywhere) was quoted raw in the refusal:
    /// a terminal escape in it reached the terminal. Every refusal quotes it under the one escaping rule.
    @Test func namesGivenAsArgumentsAreQuotedSafelyInRefusals() throws {
        let people = try People(["ann"])
        let hostile = "evil\u{1B}]0;owned\u{07}\u{1B}[2J\u{202E}"
        let attempts: [(arguments: [String], status: Int32)] = [
            (["encrypt", "--key", "ann", "--share-with", hostile], 66),
            (["encrypt", "--key", "ann", "--share-with", "group:" + hostile], 66),
            (["contacts", "delete", hostile], 66),
            (["groups", "add", hostile, "someone", "--key", "ann"], 66),
        ]
        for attempt in attempts {
            let result = try people.run("ann", attempt.arguments, stdin: "x")
            expectCleanFailure(result, containing: "evil")
            #expect(result.status == attempt.status, "\(attempt.arguments): \(result.stderr)")
            #expect(!result.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{202E}" }, "\(result.stderr)")
        }
    }
}
