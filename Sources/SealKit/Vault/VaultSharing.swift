
// Sharing with other people: identities, contacts, sk3 values, groups and shared profile fields, over the formats in
// Sharing/ and the namespace's book (SharingBook).

/// A person one shares with, as the keystore holds them.
public struct SharingContact: Sendable, Equatable {
    /// The name they are known by here.
    public let name: String
    /// Their identity's safety number: six groups of five digits, to compare aloud.
    public let fingerprint: String
    /// How their identity was checked when it was added: `fingerprint` (given and matched), `qr`, `exchange` or
    /// `unverified`.
    public let verification: String
}

/// A group as the keystore holds it: at the highest epoch seen.
public struct SharingGroup: Sendable, Equatable {
    /// The group's name.
    public let name: String
    /// The epoch held: 1 when created, one more with each change.
    public let epoch: UInt32
    /// The members' labels, the creator first.
    public let members: [String]
    /// The creator's safety number.
    public let creatorFingerprint: String
}

/// A user's sharing identity in public: what others add as a contact.
public struct SharingIdentity: Sendable, Equatable {
    /// One line, `sealkit-identity-v1:` and URL-safe base64: give it to the other person (a message, a QR code).
    public let text: String
    /// Its safety number, six groups of five digits: read it aloud to the other person, who compares it.
    public let fingerprint: String
}

/// A shared value opened, and who shared it.
public struct SharedOpening: Sendable {
    /// The value's text.
    public let plaintext: String
    /// Who shared it, for people: `this key`, `contact 'NAME'`, or a member of a group with their fingerprint.
    public let sender: String
}

extension SharedOpening: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The plaintext's length and the sender: never the plaintext.
    public var description: String { "SharedOpening(\(plaintext.utf8.count) bytes of plaintext redacted, sender: \(sender))" }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// The sender only, so `dump` shows no plaintext.
    public var customMirror: Mirror { Mirror(self, children: ["sender": sender], displayStyle: .struct) }
}

extension SealKitError {
    /// A sharing format's refusal, by the reason it stands for.
    init(sharing error: ShareError) {
        let reason: Reason
        switch error {
        case .malformed(let what, _):
            reason = what.hasSuffix("identity") ? .invalidKeyText : what.contains("group") ? .groupRefused : .notCiphertext
        case .badSignature(let what): reason = what.contains("group") ? .groupRefused : .authenticationFailed
        case .notAddressed: reason = .notAddressed
        case .untrustedSender: reason = .untrustedSender
        case .staleGroup, .untrustedGroupSigner: reason = .groupRefused
        }
        self.init(reason, error.description)
    }

    /// A contact or group book's refusal.
    init(book error: BookError) {
        switch error {
        case .noContact: self.init(.contactNotFound, error.description)
        case .noGroup: self.init(.contactNotFound, error.description, detail: .noSuchGroup)
        case .contactConflict, .sameIdentity: self.init(.contactConflict, error.description)
        case .groupConflict: self.init(.groupRefused, error.description)
        case .unsupported, .badName: self.init(.invalidArgument, error.description)
        case .keystore(let error): self.init(error)
        case .share(let error): self.init(sharing: error)
        }
    }
}

/// Runs `body`, giving every error as a `SealKitError`.
func sharing<T>(_ body: () throws -> T) throws(SealKitError) -> T {
    do {
        return try body()
    } catch let error as SealKitError {
        throw error
    } catch let error as ShareError {
        throw SealKitError(sharing: error)
    } catch let error as BookError {
        throw SealKitError(book: error)
    } catch let error as KeystoreError {
        throw SealKitError(error)
    } catch let error as SecureMemoryError {
        throw SealKitError(error)
    } catch {
        throw SealKitError(.invalidArgument, String(describing: error))
    }
}

extension Keystore {
    /// The text that starts a sharing identity's text, to pick it out of a QR code's payloads.
    public static let identityPrefix = PublicIdentity.prefix

    /// The file keystore behind this one, which keeps the contacts and groups.
    func sharingFiles() throws -> FileKeystore {
        guard let files = storage as? FileKeystore else { throw BookError.unsupported("the desktop keyring") }
        return files
    }

    /// The namespace's contacts and groups.
    func sharingBook() throws -> SharingBook { try sharingFiles().sharingBook() }

    /// The namespace's contacts, in the order added.
    /// - Throws: `SealKitError`: `.invalidArgument` for the desktop keyring, which keeps none; a file's errors.
    public func sharingContacts() throws(SealKitError) -> [SharingContact] {
        try sharing {
            try sharingBook().contacts.map {
                SharingContact(name: $0.name, fingerprint: $0.identity.fingerprint.description, verification: $0.verification.rawValue)
            }
        }
    }

    /// The groups held in the namespace.
    /// - Throws: `SealKitError`, as ``sharingContacts()``.
    public func sharingGroups() throws(SealKitError) -> [SharingGroup] {
        try sharing {
            try sharingBook().groups.map {
                SharingGroup(name: $0.name, epoch: $0.epoch, members: $0.members.map(\.label), creatorFingerprint: $0.creator.fingerprint.description)
            }
        }
    }

    /// Whether `text` is a safety number: 30 digits, grouped by spaces or hyphens or not.
    public static func isFingerprint(_ text: String) -> Bool { SafetyNumber(text: text) != nil }

    /// Adds a contact from the identity text its owner gave (``Vault/sharingIdentity()`` on their side).
    ///
    /// Give the fingerprint the owner read to you: one that does not match stores nothing. A name known with another
    /// identity is refused: an identity never changes silently (delete the contact first).
    /// - Parameters:
    ///   - name: the name to know them by: free text on one line.
    ///   - identityText: their identity's text.
    ///   - fingerprint: their safety number as they read it, or nil (the contact is then `unverified`).
    /// - Returns: the contact as stored.
    /// - Throws: `SealKitError`: `.invalidKeyText` for text that is no identity, `.contactConflict` for a
    ///   fingerprint that does not match or a name known with another identity, `.invalidArgument` for a name.
    public func addContact(_ name: String, identityText: String, fingerprint: String? = nil) throws(SealKitError) -> SharingContact {
        try addContact(name: name, identityText: identityText, fingerprint: fingerprint, fromQR: false)
    }

    /// ``addContact(_:identityText:fingerprint:)`` saying how the text came: read from the owner's QR code, or through
    /// a code-authenticated exchange (`ContactExchange`).
    @_spi(CLI) public func addContact(
        name: String, identityText: String, fingerprint: String?, fromQR: Bool, exchanged: Bool = false
    ) throws(SealKitError) -> SharingContact {
        try sharing {
            try SharingBook.check(name: name, what: "a contact's name")
            let identity = try PublicIdentity(text: identityText)
            if let fingerprint, SafetyNumber(text: fingerprint) != identity.fingerprint {
                throw SealKitError(
                    .contactConflict,
                    "the identity's fingerprint is \(identity.fingerprint), not the one given: ask its owner again; nothing was stored")
            }
            let verification: Contact.Verification =
                fingerprint != nil ? .fingerprint : exchanged ? .exchange : fromQR ? .qr : .unverified
            try sharingFiles().changeSharingBook { (book: inout SharingBook) throws(BookError) in
                try book.add(Contact(name: name, identity: identity, verification: verification))
            }
            return SharingContact(name: name, fingerprint: identity.fingerprint.description, verification: verification.rawValue)
        }
    }

    /// Deletes a contact.
    /// - Throws: `SealKitError`: `.contactNotFound`.
    public func deleteContact(_ name: String) throws(SealKitError) {
        try sharing {
            try sharingFiles().changeSharingBook { (book: inout SharingBook) throws(BookError) in
                guard book.contact(named: name) != nil else { throw .noContact(name) }
                book.contacts.removeAll { $0.name == name }
            }
        }
    }
}

extension Vault {
    /// Whether `text` is a shared value (`sk3:`), which ``openShared(_:context:)`` opens rather than
    /// ``decrypt(ciphertext:context:)``.
    public static func isShared(_ text: String) -> Bool { SharedValue.isShared(text) }

    /// The identities of the user's keys, current first.
    func sharingIdentities() throws -> [ShareIdentity] { ShareIdentity.all(of: try keyRing()) }

    /// The user's sharing identity, derived from their current key: every device holding the key has the same one,
    /// and a rotation makes a new one (values shared with older ones still open).
    /// - Throws: `SealKitError` when the key is missing or locked.
    public func sharingIdentity() throws(SealKitError) -> SharingIdentity {
        let identity = ShareIdentity(deriving: try keyRing().current).publicIdentity
        return SharingIdentity(text: identity.text, fingerprint: identity.fingerprint.description)
    }

    /// The identities `--share-with` names: contacts by name, and every member of `group:GROUP` (one group at most).
    func recipients(_ names: [String], in book: SharingBook) throws -> (identities: [PublicIdentity], group: GroupText?) {
        var identities: [PublicIdentity] = []
        var group: GroupText?
        for name in names {
            if name.hasPrefix("group:") {
                let groupName = String(name.dropFirst("group:".count))
                guard let held = book.group(named: groupName) else { throw BookError.noGroup(groupName) }
                guard group == nil || group?.id == held.id else {
                    throw SealKitError(.invalidArgument, "a value is shared with one group at most")
                }
                let me = try sharingIdentities()
                guard me.contains(where: { held.hasMember($0.publicIdentity) }) else {
                    throw SealKitError(.invalidArgument, keyID: user, "'\(user)' is not a member of group '\(held.name)': only members share with it")
                }
                group = held
                identities += held.members.map(\.identity)
            } else {
                guard let contact = book.contact(named: name) else { throw BookError.noContact(name) }
                identities.append(contact.identity)
            }
        }
        return (identities, group)
    }

    /// A shared value (`sk3:`) of `plaintext` for the user's identity and each recipient `names` gives, bound to the
    /// user and `place`.
    func share(_ plaintext: String, with names: [String], place: CiphertextPlace) throws -> String {
        let (recipients, group) = try recipients(names, in: try keystore.sharingBook())
        return try SharedValue.seal(
            plaintext, from: ShareIdentity(deriving: try keyRing().current), to: recipients, owner: user.rawValue, place: place,
            group: group.map { ($0.id, $0.epoch) })
    }

    /// Shares a value: one `sk3:` text that every device of the user and each recipient opens, signed by the user
    /// and bound to them and `context` as a v2 value is.
    /// - Parameters:
    ///   - plaintext: the text to share.
    ///   - recipients: contacts by name, and `group:NAME` for every member of a group (one group at most).
    ///   - context: what the value is for; it opens only with the same context.
    /// - Returns: the shared value's text.
    /// - Throws: `SealKitError`: `.contactNotFound`, `.invalidArgument` (a group the user is not a member of), or
    ///   the key's errors.
    public func share(plaintext: String, with recipients: [String], context: String = "") throws(SealKitError) -> String {
        let names = recipients
        return try sharing { try share(plaintext, with: names, place: .context(context)) }
    }

    /// Opens a shared value after checking its sender: the user, a contact, or a member of the value's group.
    /// - Returns: the plaintext, and who shared it, for people.
    /// - Parameter belongs: checks the owner the value names (signed, so known once the signature holds) against the
    ///   record it was found in; it throws to refuse.
    func openShared(
        _ text: String, place: CiphertextPlace, identities: [ShareIdentity], book: SharingBook, belongs: (String) throws -> Void = { _ in }
    ) throws -> (plaintext: String, sender: String) {
        let value = try SharedValue(text: text, place: place)
        try belongs(value.owner)
        let sender: String
        if identities.contains(where: { $0.publicIdentity == value.sender }) {
            sender = "this key"
        } else if let contact = book.contact(with: value.sender) {
            sender = "contact '\(contact.name)'"
        } else if let reference = value.group, let group = book.group(id: reference.id), group.hasMember(value.sender) {
            sender = "a member of group '\(group.name)' (fingerprint \(value.sender.fingerprint))"
        } else {
            throw ShareError.untrustedSender(fingerprint: value.sender.fingerprint)
        }
        return (try value.open(with: identities), sender)
    }

    /// Opens a shared value made with `context`, once its sender is known: the user, a contact, or a member of the
    /// value's group.
    /// - Returns: the plaintext and who shared it.
    /// - Throws: `SealKitError`: `.untrustedSender` (the description names the sender's fingerprint),
    ///   `.authenticationFailed` for a value altered, re-addressed or moved, `.notAddressed`, `.notCiphertext`.
    public func openShared(_ value: String, context: String = "") throws(SealKitError) -> SharedOpening {
        try sharing {
            let opened = try openShared(value, place: .context(context), identities: try sharingIdentities(), book: try keystore.sharingBook())
            return SharedOpening(plaintext: opened.plaintext, sender: opened.sender)
        }
    }

    // MARK: Groups

    /// The creator's identity among the user's (a rotation since the group was made keeps the old one).
    private func creatorIdentity(of group: GroupText) throws -> ShareIdentity {
        guard let identity = try sharingIdentities().first(where: { $0.publicIdentity == group.creator }) else {
            throw SealKitError(.notGroupCreator, keyID: user, "group '\(group.name)' was made by another key: only its creator changes it")
        }
        return identity
    }

    /// Creates a group of contacts, signed by the user, who is its first member.
    /// - Returns: the group's text (`sealkit-group-v1:`), for the app to carry to every member, who joins it.
    /// - Throws: `SealKitError`: `.contactNotFound`, `.groupRefused` for a name held already, `.invalidArgument`.
    public func createGroup(_ name: String, members: [String]) throws(SealKitError) -> String {
        try sharing {
            try SharingBook.check(name: name, what: "a group's name")
            let book = try keystore.sharingBook()
            if book.group(named: name) != nil { throw BookError.groupConflict(name) }
            let chosen = try members.map { member -> (label: String, identity: PublicIdentity) in
                guard let contact = book.contact(named: member) else { throw BookError.noContact(member) }
                return (member, contact.identity)
            }
            let text = try GroupText.make(
                id: SecureRandom.bytes(count: 16), epoch: 1, name: name, creator: ShareIdentity(deriving: try keyRing().current),
                creatorLabel: user.rawValue, members: chosen)
            _ = try keystore.sharingFiles().changeSharingBook { (book: inout SharingBook) throws(BookError) in try book.hold(text) }
            return text.text
        }
    }

    /// Adds a contact to, or removes a member from, a group the user created: its next epoch. Values shared after a
    /// removal are closed to the removed member.
    /// - Returns: the group's new text, for every member to join.
    /// - Throws: `SealKitError`: `.contactNotFound`, `.notGroupCreator`.
    public func changeGroup(_ name: String, adding: String? = nil, removing: String? = nil) throws(SealKitError) -> String {
        try sharing {
            let book = try keystore.sharingBook()
            guard let held = book.group(named: name) else { throw BookError.noGroup(name) }
            let creator = try creatorIdentity(of: held)
            // A text the creator's key signed may carry any epoch, the last one too: the next would overflow.
            guard held.epoch < UInt32.max else {
                throw SealKitError(.groupRefused, "group '\(held.name)' is at its last epoch (\(held.epoch)): create a new group")
            }
            var members = Array(held.members.dropFirst())
            if let adding {
                guard let contact = book.contact(named: adding) else { throw BookError.noContact(adding) }
                members.append((adding, contact.identity))
            }
            if let removing {
                let identity = book.contact(named: removing)?.identity
                let kept = members.filter { $0.identity != identity && $0.label != removing }
                guard kept.count < members.count else { throw SealKitError(.contactNotFound, "'\(TextSafety.printable(removing))' is not a member of group '\(name)'") }
                members = kept
            }
            let next = try GroupText.make(
                id: held.id, epoch: held.epoch + 1, name: held.name, creator: creator, creatorLabel: held.members[0].label, members: members)
            _ = try keystore.sharingFiles().changeSharingBook { (book: inout SharingBook) throws(BookError) in try book.hold(next) }
            return next.text
        }
    }

    /// Takes a group's text, or its update, signed by a contact (or the user): an older epoch than the one held is
    /// refused, so a replayed text cannot put a removed member back.
    /// - Returns: a line for people: the group, its epoch and members, and whether the user is one.
    /// - Throws: `SealKitError`: `.groupRefused` (altered, replayed, or signed by someone who is not a contact).
    public func joinGroup(_ text: String) throws(SealKitError) -> String {
        try sharing {
            let group = try GroupText(text: text)
            let identities = try sharingIdentities()
            let changed = try keystore.sharingFiles().changeSharingBook { (book: inout SharingBook) throws(BookError) -> Bool in
                guard identities.contains(where: { $0.publicIdentity == group.creator }) || book.contact(with: group.creator) != nil else {
                    throw .share(.untrustedGroupSigner(name: group.name, fingerprint: group.creator.fingerprint))
                }
                return try book.hold(group)
            }
            let member = identities.contains { group.hasMember($0.publicIdentity) }
            return "group '\(group.name)' epoch \(group.epoch): \(group.members.count) members"
                + (changed ? "" : ", held already") + (member ? "" : "; '\(user)' is not one of them")
        }
    }

    // MARK: Profiles

    /// Shares fields of a profile with other people, before the profile is encrypted: each field `recipients` names
    /// (at the top level or in `data`) that holds text becomes a shared value bound to the user and to the field's
    /// name, which the user's devices and each recipient open; a field already shared stays as it is, and a null stays
    /// null. Encrypt the result as usual (``ProfileProcessor`` keeps shared values as they are).
    /// - Parameters:
    ///   - profile: the profile's JSON text, with the fields in plaintext.
    ///   - recipients: for each field to share, the contacts' names, and `group:NAME` for a group.
    /// - Returns: the profile's JSON text with those fields shared.
    /// - Throws: `SealKitError`: `.contactNotFound` for a name that is no contact or group, `.profileFields` for a
    ///   field that holds something other than text, `.invalidProfile` for text that is no JSON object.
    public func shareFields(of profile: [UInt8], with recipients: [String: [String]]) throws(SealKitError) -> [UInt8] {
        try sharing {
            let book = try keystore.sharingBook()
            let sender = ShareIdentity(deriving: try keyRing().current)
            var resolved: [String: (identities: [PublicIdentity], group: GroupText?)] = [:]
            for (field, names) in recipients { resolved[field] = try self.recipients(names, in: book) }
            let shared = try Self.mapFields(of: try Self.parse(profile)) { name, value in
                guard let (identities, group) = resolved[name] else { return value }
                switch value {
                case .null: return value
                case .string(let text) where SharedValue.isShared(text): return value
                case .string(let text):
                    return .string(try SharedValue.seal(
                        text, from: sender, to: identities, owner: user.rawValue, place: .field(name), group: group.map { ($0.id, $0.epoch) }))
                default:
                    throw SealKitError(.profileFields, fields: [name], "field '\(name)' holds a JSON \(value.kindName): a shared field holds text")
                }
            }
            return Array(shared.serialized().utf8)
        }
    }

    /// Opens a profile's shared fields. The owner opens every one (`onlyAddressedToMe` false), after decrypting the
    /// profile as usual; a recipient opens another user's profile with `onlyAddressedToMe`, which opens the fields
    /// shared with this user's identities or groups and leaves every other field exactly as it is.
    /// - Parameters:
    ///   - profile: the profile's JSON text.
    ///   - onlyAddressedToMe: open only what was shared with this user, leaving the rest (another person's profile).
    ///   - pretty: write the result indented.
    /// - Returns: `profile` itself when the owner opens a profile with no shared value, else the profile with its
    ///   shared fields opened, and a newline.
    /// - Throws: `SealKitError`: `.untrustedSender` for a value from someone who is not this user, a contact or a
    ///   member of its group; `.authenticationFailed` for a value altered, re-addressed or moved from another user's
    ///   profile; `.notAddressed` when the owner opens a value not addressed to them.
    public func openSharedFields(of profile: [UInt8], onlyAddressedToMe: Bool = false, pretty: Bool = false) throws(SealKitError) -> [UInt8] {
        guard onlyAddressedToMe || String(decoding: profile, as: UTF8.self).contains(SharedValue.prefix) else { return profile }
        return try sharing {
            let book = try keystore.sharingBook()
            let identities = try sharingIdentities()
            // The signature binds a value to its owner, not to the record holding it: a value moved from another
            // user's record still verifies. The owner's record holds only the owner's values; another person's
            // record holds one owner's, whoever it is.
            var owner: String? = onlyAddressedToMe ? nil : user.rawValue
            var untrustedStanzas = 0
            let opened = try Self.mapFields(of: try Self.parse(profile)) { name, value in
                guard case .string(let text) = value, SharedValue.isShared(text) else { return value }
                let belongs = { (named: String) throws in
                    if let owner, owner != named {
                        throw SealKitError(
                            .authenticationFailed, fields: [name],
                            "field '\(name)' holds a value shared in the record of '\(TextSafety.printable(named))', not of "
                                + "'\(TextSafety.printable(owner))' as the profile's other shared fields or its key say: it was moved "
                                + "from another user's record; refused")
                    }
                    owner = named
                }
                do {
                    return .string(try openShared(text, place: .field(name), identities: identities, book: book, belongs: belongs).plaintext)
                } catch ShareError.notAddressed where onlyAddressedToMe {
                    return value
                } catch ShareError.untrustedSender(let fingerprint) where onlyAddressedToMe {
                    // Another person's field, shared with others by someone this key does not know: not this key's
                    // business, so left as it is. Refused only when it is addressed to this key.
                    let shared = try SharedValue(text: text, place: .field(name))
                    // Knowing that takes a trial of every stanza with every identity of the key, on values anyone can
                    // make: bounded per profile, or a stranger's profile of 2,048-recipient values costs minutes.
                    untrustedStanzas += shared.recipientCount
                    guard untrustedStanzas <= Self.maximumUntrustedStanzas else {
                        throw SealKitError(
                            .untrustedSender, fields: [name],
                            "the profile's shared values from senders this key does not know (fingerprint \(fingerprint) among them) "
                                + "have more than \(Self.maximumUntrustedStanzas) recipients in all, more than are tried; refused")
                    }
                    guard (try? shared.open(with: identities)) != nil else { return value }
                    throw ShareError.untrustedSender(fingerprint: fingerprint)
                }
            }
            return Array((opened.serialized(pretty: pretty) + "\n").utf8)
        }
    }

    /// Recipients tried, in all, on one profile's values from unknown senders: two values of the most recipients a
    /// value holds.
    static let maximumUntrustedStanzas = 4096

    private static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw SealKitError(.invalidJSON, "the profile is not JSON: \(error)")
        }
    }

    /// The profile with `change` applied to each member of its top level and of its `data` object.
    private static func mapFields(of profile: JSONValue, _ change: (String, JSONValue) throws -> JSONValue) throws -> JSONValue {
        guard case .object(let members) = profile else { throw SealKitError(.invalidJSON, "the profile is not a JSON object") }
        return .object(try members.map { member in
            if member.key == "data", case .object(let inner) = member.value {
                return (member.key, .object(try inner.map { ($0.key, try change($0.key, $0.value)) }))
            }
            return (member.key, try change(member.key, member.value))
        })
    }
}
