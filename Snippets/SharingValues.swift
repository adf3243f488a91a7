// Sharing a value with another person, checked face to face: each side shows its identity, adds the other as a
// contact with the fingerprint read aloud, then shares; groups are signed member lists the app carries to members.
import SealKit

func shareANoteWithTheDoctor(keystoreFolder: String, doctorsIdentity: String, fingerprintReadAloud: String) throws {
    let keystore = try Keystore(directory: keystoreFolder)
    let vault = Vault(keystore: keystore, user: try KeyID("user-123"), format: .v2)
    // What the doctor adds on their side: the text (a message, a QR code) and the number read aloud.
    let mine: SharingIdentity = try vault.sharingIdentity()
    print(mine.text.hasPrefix(Keystore.identityPrefix), mine.fingerprint)
    // A fingerprint that does not match stores nothing (.contactConflict).
    guard Keystore.isFingerprint(fingerprintReadAloud) else { return }
    let doctor: SharingContact = try keystore.addContact("dr-lee", identityText: doctorsIdentity, fingerprint: fingerprintReadAloud)
    print(doctor.name, doctor.fingerprint, doctor.verification)
    let shared = try vault.share(plaintext: "blood type A+", with: ["dr-lee"], context: "blood-type")
    // The user's own devices open it too; the doctor's app opens it with its own vault.
    if Vault.isShared(shared) {
        let opened: SharedOpening = try vault.openShared(shared, context: "blood-type")
        print(opened.plaintext, opened.sender)
    }
    for contact in try keystore.sharingContacts() { print(contact.name, contact.verification) }
    try keystore.deleteContact("dr-lee")
}

func shareWithTheFamily(vault: Vault, textFromTheCreator: String) throws {
    // On the creator's device: a group of contacts, then a change; each prints a text every member joins.
    let family = try vault.createGroup("family", members: ["bob", "carol"])
    let withoutCarol = try vault.changeGroup("family", removing: "carol")
    print(family.count, withoutCarol.count)
    // On a member's device: the creator's text (an older epoch than the one held is refused, .groupRefused).
    print(try vault.joinGroup(textFromTheCreator))
    let groups: [SharingGroup] = try vault.keystore.sharingGroups()
    for group in groups { print(group.name, group.epoch, group.members, group.creatorFingerprint) }
    _ = try vault.share(plaintext: "12 St James's Square", with: ["group:family"])
}

func shareTheSSNWithTheDoctor(vault: Vault, profile: [UInt8]) throws -> [UInt8] {
    // Before the profile is encrypted: the field becomes a value the user's devices and the doctor open.
    let shared = try vault.shareFields(of: profile, with: ["ssn": ["dr-lee"]])
    // The owner, after decrypting the profile as usual, opens its shared fields too.
    print(try vault.openSharedFields(of: shared).count)
    return shared
}

func readWhatThePatientShared(doctorsVault: Vault, patientsProfile: [UInt8]) throws -> [UInt8] {
    // Only the fields shared with the doctor open; every other field is left exactly as it is.
    try doctorsVault.openSharedFields(of: patientsProfile, onlyAddressedToMe: true)
}

/// What each refusal of sharing means to a person.
func advice(for error: SealKitError) -> String {
    switch error.reason {
    case .notAddressed: return "this was not shared with you"
    case .untrustedSender: return "check the sender's fingerprint, then add them as a contact"
    case .contactNotFound: return "add the contact, or join the group"
    case .contactConflict: return "the fingerprint does not match: ask the person again"
    case .groupRefused: return "ask the group's creator for its newest text"
    case .notGroupCreator: return "only the group's creator changes it"
    default: return error.description
    }
}
