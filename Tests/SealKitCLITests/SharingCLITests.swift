import Foundation
import SealTestSupport
import Testing

/// Sharing with other people: identities, contacts, sk3 values and groups, through the command line, against the
/// independent Python peer (Scripts/peer/share.py) and Debian's `age`.
@Suite("keys identity, contacts, encrypt --share-with, groups")
struct SharingCLITests {
    /// One keystore, one namespace per person: each person's keys and contacts apart, as on their own devices.
    struct People {
        let cli: CLI

        init(_ names: [String]) throws {
            cli = try CLI()
            for name in names { #expect(try cli.run(["keys", "generate", name, "--namespace", name]).status == 0) }
        }

        /// Runs `sealkit ARGS --namespace PERSON`.
        @discardableResult
        func run(_ person: String, _ arguments: [String], stdin: String = "") throws -> CLI.Result {
            try cli.run(arguments + ["--namespace", person], stdin: stdin)
        }

        /// PERSON's identity text and fingerprint, as `keys identity` prints them.
        func identity(_ person: String) throws -> (text: String, fingerprint: String) {
            let result = try run(person, ["keys", "identity", person])
            #expect(result.status == 0, "\(result.stderr)")
            let fingerprint = try #require(result.stderr.split(separator: "\n").last.map(String.init))
            return (result.output, fingerprint)
        }

        /// PERSON adds OTHER as a contact under OTHER's name, checking the fingerprint.
        func befriend(_ person: String, _ other: String) throws {
            let (text, fingerprint) = try identity(other)
            let added = try run(person, ["contacts", "add", other, text, "--fingerprint", fingerprint])
            #expect(added.status == 0, "\(added.stderr)")
        }

        func share(_ person: String, _ plaintext: String, with names: [String], context: String? = nil) throws -> String {
            let result = try run(
                person, ["encrypt", "--key", person] + names.flatMap { ["--share-with", $0] } + (context.map { ["--context", $0] } ?? []),
                stdin: plaintext)
            #expect(result.status == 0, "\(result.stderr)")
            return result.output
        }

        func open(_ person: String, _ value: String, context: String? = nil) throws -> CLI.Result {
            try run(person, ["decrypt", "--key", person] + (context.map { ["--context", $0] } ?? []), stdin: value)
        }
    }

    /// Runs Python with Scripts/ on its path and the peer imported as `share`; fails the test when Python fails.
    static func peer(_ script: String, stdin: String = "") throws -> String {
        let prelude = """
            import sys, json, base64, os, struct, subprocess, tempfile
            sys.path.insert(0, \(String(reflecting: Repository.root.appendingPathComponent("Scripts").path)))
            from peer import share
            from nacl import bindings

            """
        return String(decoding: try Python.output(of: prelude + script, stdin: Array(stdin.utf8)), as: UTF8.self)
            .trimmingCharacters(in: .newlines)
    }

    /// A fresh key's base64, made by Python, and the identity and fingerprint the peer derives from it.
    static func peerKey() throws -> (key: String, identity: String, fingerprint: String) {
        let lines = try peer("""
            k = os.urandom(32)
            ident = share.identity(k)[3]
            print(base64.b64encode(k).decode()); print(share.identity_text(ident)); print(share.safety_number(ident))
            """).split(separator: "\n").map(String.init)
        try #require(lines.count == 3)
        return (lines[0], lines[1], lines[2])
    }

    @Test func identityIsTheKeysAsThePeerDerivesItAndRotationMakesANewOne() throws {
        let people = try People([])
        let (key, identity, fingerprint) = try Self.peerKey()
        #expect(try people.run("ann", ["keys", "import", "ann"], stdin: key).status == 0)
        let printed = try people.run("ann", ["keys", "identity", "ann"])
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout == identity + "\n")
        #expect(printed.stderr.split(separator: "\n").last.map(String.init) == fingerprint)
        // The printed fingerprint is in the form --fingerprint takes: adding with it is verified.
        let added = try people.run("ben", ["contacts", "add", "ann", printed.output, "--fingerprint", fingerprint])
        #expect(added.status == 0 && added.output.hasSuffix("\tfingerprint"), "\(added.stderr)")
        // QR: the code holds the same line (zbarimg reads it back in the scan tests; here the image path is taken).
        #expect(try people.run("ann", ["keys", "identity", "ann", "--qr"]).status == 0)

        let before = try people.share("ann", "before rotation", with: [])
        #expect(try people.run("ann", ["keys", "rotate", "ann"]).status == 0)
        let rotated = try people.identity("ann")
        #expect(rotated.text.hasPrefix("sealkit-identity-v1:") && rotated.text != identity)
        // Shared with the old identity: it still opens on the id's devices.
        #expect(try people.open("ann", before).output == "before rotation")
        #expect(try people.run("ann", ["keys", "identity", "nobody"]).status == 66)
    }

    @Test func contactsAreCheckedAndNeverChangeSilently() throws {
        let people = try People(["ann", "ben", "cat"])
        let ben = try people.identity("ben"), cat = try people.identity("cat")
        let contacts = people.cli.home.appendingPathComponent("keys/ann/contacts").path

        let wrong = try people.run("ann", ["contacts", "add", "ben", ben.text, "--fingerprint", cat.fingerprint])
        expectCleanFailure(wrong, containing: ben.fingerprint)
        #expect(wrong.status == 65)
        #expect(!FileManager.default.fileExists(atPath: contacts))
        #expect(try people.run("ann", ["contacts", "list"]).stdout.isEmpty)

        #expect(try people.run("ann", ["contacts", "add", "ben", ben.text, "--fingerprint", ben.fingerprint.replacing(" ", with: "")]).status == 0)
        #expect(try people.run("ann", ["contacts", "add", "cat", cat.text]).status == 0)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: contacts)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(try people.run("ann", ["contacts", "list"]).stdout
            == "ben\t\(ben.fingerprint)\tfingerprint\ncat\t\(cat.fingerprint)\tunverified\n")

        // Another identity under a known name is refused, and the known one stays.
        let swapped = try people.run("ann", ["contacts", "add", "ben", cat.text])
        expectCleanFailure(swapped, containing: "ben")
        #expect(swapped.status == 65)
        #expect(try people.run("ann", ["contacts", "list"]).stdout.hasPrefix("ben\t\(ben.fingerprint)\t"))

        expectCleanFailure(try people.run("ann", ["contacts", "add", "eve", "sealkit-identity-v1:AAAA"]), containing: "identity")
        #expect(try people.run("ann", ["contacts", "add", "eve", "not an identity"]).status == 65)
        #expect(try people.run("ann", ["contacts", "delete", "eve"]).status == 66)
        #expect(try people.run("ann", ["contacts", "delete", "cat"]).status == 0)
        #expect(try people.run("ann", ["contacts", "list"]).stdout == "ben\t\(ben.fingerprint)\tfingerprint\n")
    }

    @Test func aSharedValueOpensForItsOwnerAndRecipientsOnlyAndNamesItsSender() throws {
        let people = try People(["ann", "ben", "cat"])
        try people.befriend("ann", "ben")
        try people.befriend("ann", "cat")
        let value = try people.share("ann", "for ben", with: ["ben"], context: "note")
        #expect(value.hasPrefix("sk3:"))

        // Ben has not added Ann: refused, naming the sender's fingerprint.
        let stranger = try people.open("ben", value, context: "note")
        expectCleanFailure(stranger, containing: try people.identity("ann").fingerprint)
        #expect(stranger.status == 65)

        try people.befriend("ben", "ann")
        try people.befriend("cat", "ann")
        #expect(try people.open("ben", value, context: "note").output == "for ben")
        #expect(try people.open("ann", value, context: "note").output == "for ben")
        // Cat knows Ann but is not a recipient.
        let other = try people.open("cat", value, context: "note")
        expectCleanFailure(other, containing: "not addressed")
        #expect(other.status == 77)
        // Moved to another context.
        #expect(try people.open("ben", value, context: "billing").status == 65)
        #expect(try people.open("ben", value).status == 65)

        // Unknown recipients: 66, and nothing on stdout.
        let unknown = try people.run("ann", ["encrypt", "--key", "ann", "--share-with", "dan"], stdin: "x")
        expectCleanFailure(unknown, containing: "dan")
        #expect(unknown.status == 66)
        #expect(try people.run("ann", ["encrypt", "--key", "ann", "--share-with", "group:none"], stdin: "x").status == 66)
    }

    @Test func aServerCannotReaddressForgeOrMoveAValue() throws {
        let people = try People(["ann", "ben", "cat"])
        for (a, b) in [("ann", "ben"), ("ben", "ann"), ("ann", "cat"), ("cat", "ann")] { try people.befriend(a, b) }
        let value = try people.share("ann", "only ben", with: ["ben"])
        let cat = try people.identity("cat").text
        // Each trick rewrites the body with the peer, keeping Ann's signature where it can.
        let tricks = try Self.peer("""
            value, cat = sys.stdin.read().split("\\n")[:2]
            body = base64.b64decode(value[4:])
            owner_len = struct.unpack(">H", body[65:67])[0]
            at = 67 + owner_len + 1
            length = struct.unpack(">I", body[at:at + 4])[0]
            head, envelope, sig = body[:at], body[at + 4:at + 4 + length], body[at + 4 + length:]
            def text(b): return "sk3:" + base64.b64encode(b).decode()
            def rebuilt(env): return text(head + struct.pack(">I", len(env)) + env + sig)
            lines = envelope.split(b"\\n")
            # Add Cat: a stanza for her with a fresh ephemeral key (its body cannot wrap the real file key).
            catx = share.read_identity(cat)[:32]
            eph = os.urandom(32)
            added = b"\\n".join(lines[:5] + [b"-> X25519 " + share.b64raw(bindings.crypto_scalarmult_base(eph)).encode(), share.b64raw(os.urandom(32)).encode()] + lines[5:])
            dropped = b"\\n".join(lines[:1] + lines[3:])
            swapped = b"\\n".join(lines[:3] + [b"-> X25519 " + share.b64raw(bindings.crypto_scalarmult_base(eph)).encode(), lines[4]] + lines[5:])
            other_owner = text(body[:65] + struct.pack(">H", 3) + b"cat" + body[67 + owner_len:])
            print(rebuilt(added)); print(rebuilt(dropped)); print(rebuilt(swapped)); print(other_owner)
            """, stdin: value + "\n" + cat + "\n")
            .split(separator: "\n").map(String.init)
        try #require(tricks.count == 4)
        for trick in tricks {
            let opened = try people.open("ben", trick)
            expectCleanFailure(opened, containing: "does not verify")
            #expect(opened.status == 65)
        }

        // A value made by Cat's key in Ann's name (Ann's identity as sender, Cat's signature), and one signed by a
        // stranger for Ben: both refused.
        let (strangerKey, _, strangerFingerprint) = try Self.peerKey()
        let ann = try people.identity("ann").text, ben = try people.identity("ben").text
        let forged = try Self.peer("""
            lines = sys.stdin.read().split("\\n")
            k, ann, ben = base64.b64decode(lines[0]), share.read_identity(lines[1]), share.read_identity(lines[2])
            honest = base64.b64decode(share.seal_shared(b"forged", k, [ben], b"ann", 2, b"")[4:])
            print("sk3:" + base64.b64encode(honest[:1] + ann + honest[65:]).decode())
            print(share.seal_shared(b"from a stranger", k, [ben], b"ann", 2, b""))
            """, stdin: [strangerKey, ann, ben].joined(separator: "\n") + "\n").split(separator: "\n").map(String.init)
        try #require(forged.count == 2)
        expectCleanFailure(try people.open("ben", forged[0]), containing: "does not verify")
        let stranger = try people.open("ben", forged[1])
        expectCleanFailure(stranger, containing: strangerFingerprint)
        #expect(stranger.status == 65)
    }

    @Test func ageAndThePythonPeerOpenWhatTheCommandLineShares() throws {
        let people = try People([])
        let ann = try Self.peerKey(), ben = try Self.peerKey()
        #expect(try people.run("ann", ["keys", "import", "ann"], stdin: ann.key).status == 0)
        #expect(try people.run("ben", ["keys", "import", "ben"], stdin: ben.key).status == 0)
        try people.befriend("ann", "ben")
        try people.befriend("ben", "ann")
        let plaintext = String(repeating: "é", count: 40_000)  // 80,000 bytes: two age chunks
        let value = try people.share("ann", plaintext, with: ["ben"], context: "note")
        // Ben's age identity from his key; the envelope cut out of the value by the peer; Debian's age opens it.
        let viaAge = try Self.peer("""
            lines = sys.stdin.read().split("\\n")
            value, key = lines[0], base64.b64decode(lines[1])
            sender, owner, group, envelope = share.read_shared(value, 2, b"note")
            assert owner == b"ann" and group is None
            plaintext, recipients = share.age_open(envelope, share.identity(key)[0], share.identity(key)[1])
            assert recipients == 2, recipients
            with tempfile.TemporaryDirectory() as d:
                open(d + "/id", "w").write(share.bech32_secret(share.identity(key)[0]) + "\\n")
                open(d + "/v.age", "wb").write(envelope)
                out = subprocess.run(["age", "-d", "-i", d + "/id", d + "/v.age"], capture_output=True, timeout=60)
                assert out.returncode == 0, out.stderr
                assert out.stdout == plaintext
            print(len(plaintext))
            """, stdin: value + "\n" + ben.key + "\n")
        #expect(viaAge == "80000")

        // The peer shares in Ann's name (her key), for Ben: the command line opens it.
        let fromPeer = try Self.peer("""
            lines = sys.stdin.read().split("\\n")
            print(share.seal_shared("from the peer".encode(), base64.b64decode(lines[0]), [share.read_identity(lines[1])], b"ann", 2, b""))
            """, stdin: ann.key + "\n" + ben.identity + "\n")
        #expect(try people.open("ben", fromPeer).output == "from the peer")
    }

    @Test func theVectorsOpen() throws {
        let data = try Data(contentsOf: Repository.fixture("sharing/vectors.json"))
        let vectors = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let identities = try #require(vectors["identities"] as? [[String: String]])
        let people = try People([])
        for identity in identities {
            let id = try #require(identity["id"])
            #expect(try people.run(id, ["keys", "import", id], stdin: try #require(identity["key"])).status == 0)
            let printed = try people.identity(id)
            #expect(printed.text == identity["identity"] && printed.fingerprint == identity["fingerprint"])
        }
        for person in ["bob", "carol"] { try people.befriend(person, "alice") }
        let values = try #require(vectors["values"] as? [[String: Any]])
        for value in values {
            let text = try #require(value["value"] as? String), context = try #require(value["context"] as? String)
            let plaintext = try #require(value["plaintext"] as? String)
            for recipient in try #require(value["recipients"] as? [String]) {
                let opened = try people.open(recipient, text, context: context)
                #expect(opened.status == 0 && opened.stdout == plaintext + "\n", "\(opened.stderr)")
            }
        }
        let group = try #require((vectors["groups"] as? [[String: Any]])?.first?["text"] as? String)
        let joined = try people.run("bob", ["groups", "join", "--key", "bob", group])
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(try people.run("bob", ["groups", "list"]).stdout.hasPrefix("family\t1\talice,bob,carol\t"))
    }

    @Test func groupsShareAndARemovedMemberOpensNothingNew() throws {
        let people = try People(["ann", "ben", "cat", "eve"])
        for (a, b) in [("ann", "ben"), ("ann", "cat"), ("ben", "ann"), ("cat", "ann"), ("eve", "ben"), ("ben", "eve")] {
            try people.befriend(a, b)
        }
        let created = try people.run("ann", ["groups", "create", "fam", "--key", "ann", "--member", "ben", "--member", "cat"])
        #expect(created.status == 0, "\(created.stderr)")
        let epoch1 = created.output
        #expect(epoch1.hasPrefix("sealkit-group-v1:"))
        for member in ["ben", "cat"] {
            #expect(try people.run(member, ["groups", "join", "--key", member, "-"], stdin: epoch1 + "\n").status == 0)
        }
        // Ben shares with the group: Cat opens it though Ben is not her contact, as the group names him.
        let before = try people.share("ben", "to the family", with: ["group:fam"])
        #expect(try people.open("cat", before).output == "to the family")
        #expect(try people.open("ann", before).output == "to the family")

        let removed = try people.run("ann", ["groups", "remove", "fam", "cat", "--key", "ann"])
        #expect(removed.status == 0, "\(removed.stderr)")
        let epoch2 = removed.output
        for member in ["ben", "cat"] { #expect(try people.run(member, ["groups", "join", "--key", member, epoch2]).status == 0) }
        let after = try people.share("ben", "after cat left", with: ["group:fam"])
        let closed = try people.open("cat", after)
        expectCleanFailure(closed, containing: "not addressed")
        #expect(closed.status == 77)
        #expect(try people.open("ann", after).output == "after cat left")
        // What Cat opened before, she keeps.
        #expect(try people.open("cat", before).output == "to the family")

        // A replayed epoch 1 cannot put Cat back.
        let replayed = try people.run("ben", ["groups", "join", "--key", "ben", epoch1])
        expectCleanFailure(replayed, containing: "epoch 1")
        #expect(replayed.status == 65)
        #expect(try people.run("ben", ["groups", "list"]).stdout.hasPrefix("fam\t2\tann,ben\t"))
        // An altered text, and one signed by someone who is not Cat's contact.
        var altered = Array(epoch2.utf8)
        try #require(altered.count > 40)
        altered[40] = altered[40] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(try people.run("ben", ["groups", "join", "--key", "ben", String(decoding: altered, as: UTF8.self)]).status == 65)
        let eves = try people.run("eve", ["groups", "create", "fam", "--key", "eve", "--member", "ben"])
        #expect(eves.status == 0)
        let unsigned = try people.run("cat", ["groups", "join", "--key", "cat", eves.output])
        expectCleanFailure(unsigned, containing: "not a contact")
        #expect(unsigned.status == 65)
        // Only the creator changes a group.
        #expect(try people.run("ben", ["groups", "add", "fam", "ann", "--key", "ben"]).status == 77)
    }

    @Test func damagedValuesGroupTextsAndIdentitiesFailCleanly() throws {
        let people = try People(["ann", "ben"])
        try people.befriend("ann", "ben")
        try people.befriend("ben", "ann")
        let value = try people.share("ann", "hostile", with: ["ben"])
        let group = try people.run("ann", ["groups", "create", "g", "--key", "ann", "--member", "ben"]).output
        let identity = try people.identity("ann").text
        // Truncations at every kind of boundary and single flipped bytes, each re-encoded so the text still parses as
        // far as it can.
        let damaged = try Self.peer("""
            import random
            value, group, identity = sys.stdin.read().split("\\n")[:3]
            rng = random.Random(48)
            body = base64.b64decode(value[4:])
            out = []
            for cut in [0, 1, 64, 65, 67, 70, 75, 100, len(body) - 65, len(body) - 1]:
                out.append("v " + "sk3:" + base64.b64encode(body[:cut]).decode())
            for _ in range(12):
                b = bytearray(body); b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
                out.append("v " + "sk3:" + base64.b64encode(bytes(b)).decode())
            out += ["v sk3:", "v sk3:not base64", "v sk4:AAAA"]
            gbody = share.unb64url(group[len(share.GROUP_PREFIX):])
            for cut in [0, 1, 17, 21, 23, 30, len(gbody) - 1]:
                out.append("g " + share.GROUP_PREFIX + share.b64url(gbody[:cut]))
            for _ in range(6):
                b = bytearray(gbody); b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
                out.append("g " + share.GROUP_PREFIX + share.b64url(bytes(b)))
            out += ["g sealkit-group-v1:", "g sealkit-group-v1:===="]
            ibody = share.unb64url(identity[len(share.IDENTITY_PREFIX):])
            for cut in [0, 1, 32, 63]:
                out.append("i " + share.IDENTITY_PREFIX + share.b64url(ibody[:cut]))
            out += ["i " + share.IDENTITY_PREFIX + share.b64url(bytes(64)), "i " + share.IDENTITY_PREFIX, "i " + identity + "A"]
            print("\\n".join(out))
            """, stdin: [value, group, identity].joined(separator: "\n") + "\n").split(separator: "\n").map(String.init)
        try #require(damaged.count > 40)
        for line in damaged {
            let text = String(line.dropFirst(2))
            let result: CLI.Result
            switch line.first {
            case "v": result = try people.open("ben", text)
            case "g": result = try people.run("ben", ["groups", "join", "--key", "ben", text])
            default: result = try people.run("ben", ["contacts", "add", "someone", text])
            }
            expectCleanFailure(result)
            #expect([65, 77].contains(result.status), "\(line.prefix(40)): \(result.status) \(result.stderr)")
        }
        #expect(try people.run("ben", ["contacts", "list"]).stdout.split(separator: "\n").count == 1)
    }

    @Test func profileFieldsSharedOpenForTheOwnerAndForTheirRecipientsOnly() throws {
        let people = try People(["ann", "ben", "cat", "dan"])
        for (a, b) in [("ann", "ben"), ("ben", "ann"), ("ann", "cat"), ("cat", "ann")] { try people.befriend(a, b) }
        let schema = CLI.profileFixtures.appendingPathComponent("schema.json").path
        let original = try String(contentsOf: CLI.profileFixtures.appendingPathComponent("profile.json"), encoding: .utf8)
        func data(_ json: String) throws -> [String: Any] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            return try #require(object["data"] as? [String: Any])
        }
        let encrypted = try people.run(
            "ann", ["profile", "encrypt", "--schema", schema, "--key", "ann", "--share", "ssn=ben", "--share", "favorite_color=ben,cat"],
            stdin: original)
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let sealed = try data(encrypted.output)
        let ssn = try #require(sealed["ssn"] as? String)
        let dateOfBirth = try #require(sealed["date_of_birth"] as? String)
        #expect(ssn.hasPrefix("sk3:") && (sealed["favorite_color"] as? String)?.hasPrefix("sk3:") == true)
        #expect(!dateOfBirth.hasPrefix("sk3:") && dateOfBirth != "1815-12-10")

        // The owner opens everything, shared fields included.
        let owner = try people.run("ann", ["profile", "decrypt", "--schema", schema, "--key", "ann"], stdin: encrypted.output)
        #expect(owner.status == 0, "\(owner.stderr)")
        let opened = try data(owner.output)
        #expect(opened["ssn"] as? String == "078-05-1120" && opened["favorite_color"] as? String == "green")
        #expect(opened["date_of_birth"] as? String == "1815-12-10" && opened["credit_score"] as? Int == 812)

        // Ben opens what was shared with him; every other field stays exactly as it was.
        let ben = try people.run("ben", ["profile", "decrypt", "--schema", schema, "--key", "ben", "--shared"], stdin: encrypted.output)
        #expect(ben.status == 0, "\(ben.stderr)")
        let bens = try data(ben.output)
        #expect(bens["ssn"] as? String == "078-05-1120" && bens["favorite_color"] as? String == "green")
        #expect(bens["date_of_birth"] as? String == dateOfBirth)
        // Cat opens the colour, not the ssn, and still exits 0.
        let cat = try people.run("cat", ["profile", "decrypt", "--schema", schema, "--key", "cat", "--shared"], stdin: encrypted.output)
        #expect(cat.status == 0, "\(cat.stderr)")
        let cats = try data(cat.output)
        #expect(cats["favorite_color"] as? String == "green" && cats["ssn"] as? String == ssn)

        // Dan knows nobody and nothing is addressed to him: every field stays as it was, exit 0.
        let dan = try people.run("dan", ["profile", "decrypt", "--schema", schema, "--key", "dan", "--shared"], stdin: encrypted.output)
        #expect(dan.status == 0, "\(dan.stderr)")
        #expect(try data(dan.output)["ssn"] as? String == ssn)

        // A server moving the shared ssn into another field: refused for everyone.
        let moved = encrypted.output.replacing(ssn, with: "PLACEHOLDER").replacing(dateOfBirth, with: ssn)
            .replacing("PLACEHOLDER", with: dateOfBirth)
        let refused = try people.run("ben", ["profile", "decrypt", "--schema", schema, "--key", "ben", "--shared"], stdin: moved)
        expectCleanFailure(refused, containing: "does not verify")
        #expect(refused.status == 65)
        #expect(try people.run("ann", ["profile", "decrypt", "--schema", schema, "--key", "ann"], stdin: moved).status == 65)
        // A plaintext that merely starts like a shared value is never left in plaintext.
        let lookalike = original.replacing("078-05-1120", with: "sk3:" + String(ssn.dropFirst(4).prefix(40)))
        let refusedPlain = try people.run("ann", ["profile", "encrypt", "--schema", schema, "--key", "ann"], stdin: lookalike)
        expectCleanFailure(refusedPlain, containing: "ssn")
        #expect(refusedPlain.status == 65)
    }

    @Test func theAuditKnowsSharedValues() throws {
        let people = try People(["ann", "ben", "cat"])
        for (a, b) in [("ann", "ben"), ("ann", "cat")] { try people.befriend(a, b) }
        let schema = CLI.profileFixtures.appendingPathComponent("schema.json").path
        let original = try String(contentsOf: CLI.profileFixtures.appendingPathComponent("profile.json"), encoding: .utf8)
        let encrypted = try people.run(
            "ann", ["profile", "encrypt", "--schema", schema, "--key", "ann", "--share", "ssn=ben"], stdin: original)
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(encrypted.output.utf8)) as? [String: Any])
        let ssn = try #require((object["data"] as? [String: Any])?["ssn"] as? String)
        func findings(_ profiles: [String], key: String? = nil) throws -> [(kind: String, field: String?, line: Int?)] {
            let file = try people.cli.write(profiles.joined(separator: "\n") + "\n", to: "export-\(profiles.count)-\(key ?? "").ndjson")
            let result = try people.run(
                key ?? "ann", ["audit", "--format", "json", "--schema", schema] + (key.map { ["--key", $0] } ?? []) + [file])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
            return try #require(report["findings"] as? [[String: Any]]).map {
                ($0["kind"] as? String ?? "", $0["field"] as? String, $0["line"] as? Int)
            }
        }
        let compact = encrypted.output.replacing("\n", with: "")
        // Alone: no finding about the shared ssn (the other fields are ordinary ciphertexts).
        #expect(try findings([compact]).filter { $0.field == "ssn" }.isEmpty)
        // The same sk3 value stored twice is a copy, as a copied v1 or v2 value is.
        #expect(try findings([compact, compact]).contains { $0.kind == "duplicate-ciphertext" && $0.field == "ssn" })
        // Moved to another field: its signature binds the field.
        let intoDate = try people.run("ann", ["profile", "encrypt", "--schema", schema, "--key", "ann"], stdin: original).output
            .replacing("\n", with: "")
        let dateValue = try #require((try JSONSerialization.jsonObject(with: Data(intoDate.utf8)) as? [String: Any]).flatMap {
            ($0["data"] as? [String: Any])?["date_of_birth"] as? String })
        #expect(try findings([intoDate.replacing(dateValue, with: ssn)]).contains { $0.kind == "malformed-ciphertext" && $0.field == "date_of_birth" })
        // A recipient's key opens it; another key's does not, and says so as for any value it cannot open.
        #expect(try findings([compact], key: "ben").filter { $0.field == "ssn" }.isEmpty)
        #expect(try findings([compact], key: "cat").contains { $0.kind == "undecryptable" && $0.field == "ssn" })
    }

    @Test func aBackupRestoresTheIdentitiesAndWhatWasSharedWithThem() throws {
        let people = try People(["ann", "ben"])
        try people.befriend("ben", "ann")
        let before = try people.share("ben", "for ann's first key", with: ["ann"])
        try people.befriend("ann", "ben")
        #expect(try people.run("ann", ["keys", "rotate", "ann"]).status == 0)
        try people.run("ben", ["contacts", "delete", "ann"])
        try people.befriend("ben", "ann")
        let after = try people.share("ben", "for ann's second key", with: ["ann"])
        let identity = try people.identity("ann")

        // Ann's keys go to a new device through a share backup: nothing about sharing travels but the keys.
        let made = try people.run("ann", ["keys", "backup", "ann", "--shares", "3", "--threshold", "2", "--format", "text"])
        #expect(made.status == 0, "\(made.stderr)")
        let lines = made.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 4)
        let device = try People([])
        let restored = try device.run("ann", ["keys", "restore", "--shares", "--all", "--format", "text"], stdin: lines[..<3].joined(separator: "\n") + "\n")
        #expect(restored.status == 0, "\(restored.stderr)")
        let moved = try device.identity("ann")
        #expect(moved.text == identity.text && moved.fingerprint == identity.fingerprint)
        #expect(try device.run("ann", ["contacts", "add", "ben", try people.identity("ben").text]).status == 0)
        #expect(try device.open("ann", after).output == "for ann's second key")
        #expect(try device.open("ann", before).output == "for ann's first key")
    }
}
