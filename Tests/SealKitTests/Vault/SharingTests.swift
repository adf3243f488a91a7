import Foundation
// Only the public API, as an app sees it.
import SealKit
import SealTestSupport
import Testing

/// Sharing through the library: each person's vault on a keystore of their own, as on their own device.
@Suite("Sharing values with other people (library)")
struct SharingTests {
    struct Person {
        let vault: Vault
        var keystore: Keystore { vault.keystore }

        init(_ name: String) throws {
            let folder = try TemporaryFolder.make()
            vault = Vault(keystore: try Keystore(directory: folder.appendingPathComponent("keys").path), user: try KeyID(name), format: .v2)
            try vault.ensureKey(existing: "{}")
        }

        /// Adds `other` under `name`, with the fingerprint they read aloud.
        func add(_ other: Person, as name: String) throws {
            let identity = try other.vault.sharingIdentity()
            let contact = try keystore.addContact(name, identityText: identity.text, fingerprint: identity.fingerprint)
            #expect(contact.name == name && contact.fingerprint == identity.fingerprint && contact.verification == "fingerprint")
        }
    }

    func reason(_ body: () throws -> Void) -> SealKitError.Reason? {
        do {
            try body()
            return nil
        } catch let error as SealKitError {
            return error.reason
        } catch {
            return .invalidArgument
        }
    }

    @Test func contactsShareAndOpenAndTheLibraryNamesEachRefusal() throws {
        let ann = try Person("ann"), ben = try Person("ben"), cat = try Person("cat")
        let identity = try ann.vault.sharingIdentity()
        #expect(identity.text.hasPrefix(Keystore.identityPrefix) && Keystore.isFingerprint(identity.fingerprint))
        #expect(try ann.vault.sharingIdentity() == identity)

        // A fingerprint that does not match stores nothing.
        let catIdentity = try cat.vault.sharingIdentity()
        #expect(reason { _ = try ann.keystore.addContact("cat", identityText: catIdentity.text, fingerprint: identity.fingerprint) } == .contactConflict)
        #expect(try ann.keystore.sharingContacts().isEmpty)
        try ann.add(ben, as: "ben")
        try ann.add(cat, as: "cat")
        // Another identity under a known name.
        #expect(reason { _ = try ann.keystore.addContact("ben", identityText: catIdentity.text) } == .contactConflict)

        let value = try ann.vault.share(plaintext: "for ben", with: ["ben"], context: "note")
        #expect(Vault.isShared(value))
        #expect(try ann.vault.openShared(value, context: "note").plaintext == "for ben")
        #expect(reason { _ = try ben.vault.openShared(value, context: "note") } == .untrustedSender)
        try ben.add(ann, as: "ann")
        let opened = try ben.vault.openShared(value, context: "note")
        #expect(opened.plaintext == "for ben" && opened.sender == "contact 'ann'")
        #expect(!String(describing: opened).contains("for ben") && !String(reflecting: opened).contains("for ben"))
        #expect(reason { _ = try ben.vault.openShared(value, context: "other") } == .authenticationFailed)
        try cat.add(ann, as: "ann")
        #expect(reason { _ = try cat.vault.openShared(value, context: "note") } == .notAddressed)
        #expect(reason { _ = try ann.vault.share(plaintext: "x", with: ["dan"]) } == .contactNotFound)
        try ann.keystore.deleteContact("cat")
        #expect(try ann.keystore.sharingContacts().map(\.name) == ["ben"])
        #expect(reason { try ann.keystore.deleteContact("cat") } == .contactNotFound)
    }

    @Test func groupsCarryTheirEpochAndARemovedMemberOpensNothingNew() throws {
        let ann = try Person("ann"), ben = try Person("ben"), cat = try Person("cat")
        try ann.add(ben, as: "ben")
        try ann.add(cat, as: "cat")
        try ben.add(ann, as: "ann")
        try cat.add(ann, as: "ann")
        let first = try ann.vault.createGroup("family", members: ["ben", "cat"])
        for member in [ben, cat] { _ = try member.vault.joinGroup(first) }
        #expect(try ben.keystore.sharingGroups().map(\.epoch) == [1])
        let before = try ben.vault.share(plaintext: "to all", with: ["group:family"])
        #expect(try cat.vault.openShared(before).plaintext == "to all")

        let second = try ann.vault.changeGroup("family", removing: "cat")
        for member in [ben, cat] { _ = try member.vault.joinGroup(second) }
        let group = try #require(try ben.keystore.sharingGroups().first)
        #expect(group.name == "family" && group.epoch == 2 && group.members == ["ann", "ben"])
        let after = try ben.vault.share(plaintext: "after", with: ["group:family"])
        #expect(reason { _ = try cat.vault.openShared(after) } == .notAddressed)
        #expect(try ann.vault.openShared(after).plaintext == "after")
        #expect(try cat.vault.openShared(before).plaintext == "to all")
        #expect(reason { _ = try ben.vault.joinGroup(first) } == .groupRefused)
        #expect(reason { _ = try ben.vault.changeGroup("family", adding: "ann") } == .notGroupCreator)
    }

    /// Profile fields shared through the public API: the recipient opens the field shared with them and nothing else;
    /// the owner opens it too; the same value moved into another user's profile is refused.
    @Test func profileFieldsAreSharedAndOpenedThroughTheLibrary() throws {
        let ann = try Person("ann"), doc = try Person("doc"), eve = try Person("eve")
        try ann.add(doc, as: "doc")
        try doc.add(ann, as: "ann")
        let profile = Array(#"{"name":"Ann","ssn":"078-05-1120","note":"private"}"#.utf8)
        let shared = try ann.vault.shareFields(of: profile, with: ["ssn": ["doc"]])
        let sharedJSON = try #require(try JSONSerialization.jsonObject(with: Data(shared)) as? [String: String])
        let value = try #require(sharedJSON["ssn"])
        #expect(Vault.isShared(value))
        #expect(sharedJSON["name"] == "Ann" && sharedJSON["note"] == "private")

        let forDoc = try doc.vault.openSharedFields(of: shared, onlyAddressedToMe: true)
        let docJSON = try #require(try JSONSerialization.jsonObject(with: Data(forDoc)) as? [String: String])
        #expect(docJSON == ["name": "Ann", "ssn": "078-05-1120", "note": "private"])
        let forAnn = try ann.vault.openSharedFields(of: shared)
        #expect((try JSONSerialization.jsonObject(with: Data(forAnn)) as? [String: String])?["ssn"] == "078-05-1120")
        // Someone the value is not addressed to, with the sender as a contact, gets the profile back as it was.
        try eve.add(ann, as: "ann")
        let forEve = try eve.vault.openSharedFields(of: shared, onlyAddressedToMe: true)
        #expect((try JSONSerialization.jsonObject(with: Data(forEve)) as? [String: String])?["ssn"] == value)

        // Ann's shared field moved into Eve's own profile does not open as Eve's.
        var moved = sharedJSON
        moved["name"] = "Eve"
        let movedProfile = try JSONSerialization.data(withJSONObject: moved)
        #expect(reason { _ = try eve.vault.openSharedFields(of: Array(movedProfile)) } != nil)
    }
}
