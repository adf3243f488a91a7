@_spi(CLI) import SealCore
import SealJSON
@_spi(CLI) import SealKeystore

// Sharing with other people, for the command line: identities, contacts, sk3 values, groups and shared profile
// fields, over SealCore's formats (Sharing/) and the namespace's book (SharingBook). The CLI reaches it through these
// `@_spi(CLI)` entry points only.

/// A sharing refusal: one line for people, and the exit status scripts see (64 usage, 65 refused input, 66 a missing
/// contact or group, 77 a value not addressed to this identity or a group only its creator changes).
@_spi(CLI) public struct SharingFailure: Error, CustomStringConvertible, Sendable {
    /// What went wrong and what to do; never a secret.
    public let description: String
    /// The exit status.
    public let status: Int32

    init(_ description: String, status: Int32) {
        self.description = description
        self.status = status
    }

    init(_ error: ShareError) {
        switch error {
        case .notAddressed: self.init(error.description, status: 77)
        default: self.init(error.description, status: 65)
        }
    }

    static func from(_ error: BookError) -> any Error {
        switch error {
        case .noContact, .noGroup: return SharingFailure(error.description, status: 66)
        case .unsupported, .badName: return SharingFailure(error.description, status: 64)
        case .keystore(let error): return SealKitError(error)
        case .share(let error): return SharingFailure(error)
        case .contactConflict, .sameIdentity, .groupConflict: return SharingFailure(error.description, status: 65)
        }
    }
}

/// A contact as `contacts list` shows it.
@_spi(CLI) public struct SharingContact: Sendable {
    /// The name it is known by.
    public let name: String
    /// Its safety number, six groups of five digits.
    public let fingerprint: String
    /// How it was verified: fingerprint, qr, exchange or unverified.
    public let verification: String
}

/// A group as `groups list` shows it.
@_spi(CLI) public struct SharingGroup: Sendable {
    /// The group's name.
    public let name: String
    /// The epoch held.
    public let epoch: UInt32
    /// The members' labels, the creator first.
    public let members: [String]
    /// The creator's safety number.
    public let creatorFingerprint: String
}

/// Runs `body`, turning the sharing errors into `SharingFailure` (a keystore's into `SealKitError`).
func sharing<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as ShareError {
        throw SharingFailure(error)
    } catch let error as BookError {
        throw SharingFailure.from(error)
    }
}

extension Keystore {
    /// The text that starts an identity's text.
    @_spi(CLI) public static let identityPrefix = PublicIdentity.prefix

    /// The file keystore behind this one, which keeps the contacts and groups.
    func sharingFiles() throws -> FileKeystore {
        guard let files = storage as? FileKeystore else { throw BookError.unsupported("the desktop keyring") }
        return files
    }

    /// The namespace's contacts and groups.
    func sharingBook() throws -> SharingBook { try sharingFiles().sharingBook() }

    /// The contacts, in the order added.
    @_spi(CLI) public func sharingContacts() throws -> [SharingContact] {
        try sharing {
            try sharingBook().contacts.map {
                SharingContact(name: $0.name, fingerprint: $0.identity.fingerprint.description, verification: $0.verification.rawValue)
            }
        }
    }

    /// The groups held.
    @_spi(CLI) public func sharingGroups() throws -> [SharingGroup] {
        try sharing {
            try sharingBook().groups.map {
                SharingGroup(name: $0.name, epoch: $0.epoch, members: $0.members.map(\.label), creatorFingerprint: $0.creator.fingerprint.description)
            }
        }
    }

    /// Whether `text` is 30 digits in any grouping, as `--fingerprint` takes them.
    @_spi(CLI) public static func isFingerprint(_ text: String) -> Bool { SafetyNumber(text: text) != nil }

    /// Adds a contact from its identity text, checked against `fingerprint` when given (a mismatch stores nothing).
    /// - Parameters:
    ///   - fromQR: the text was read from a QR code its owner showed.
    ///   - exchanged: the text came through a code-authenticated exchange (`ContactExchange`).
    @_spi(CLI) public func addContact(
        name: String, identityText: String, fingerprint: String?, fromQR: Bool, exchanged: Bool = false
    ) throws -> SharingContact {
        try sharing {
            try SharingBook.check(name: name, what: "a contact's name")
            let identity = try PublicIdentity(text: identityText)
            if let fingerprint, SafetyNumber(text: fingerprint) != identity.fingerprint {
                throw SharingFailure(
                    "the identity's fingerprint is \(identity.fingerprint), not the one given: ask its owner again; nothing was stored",
                    status: 65)
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
    @_spi(CLI) public func deleteContact(name: String) throws {
        try sharing {
            try sharingFiles().changeSharingBook { (book: inout SharingBook) throws(BookError) in
                guard book.contact(named: name) != nil else { throw .noContact(name) }
                book.contacts.removeAll { $0.name == name }
            }
        }
    }
}

extension Vault {
    /// Whether `text` is a shared value (`sk3:`), which `openShared` opens rather than `decrypt`.
    @_spi(CLI) public static func isShared(_ text: String) -> Bool { SharedValue.isShared(text) }

    /// The identities of the user's keys, current first.
    func sharingIdentities() throws -> [ShareIdentity] { ShareIdentity.all(of: try keyRing()) }

    /// The user's public identity text and its fingerprint (from the current key).
    @_spi(CLI) public func sharingIdentity() throws -> (text: String, fingerprint: String) {
        let identity = ShareIdentity(deriving: try keyRing().current).publicIdentity
        return (identity.text, identity.fingerprint.description)
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
                    throw SharingFailure("a value is shared with one group at most: give one --share-with group:GROUP", status: 64)
                }
                let me = try sharingIdentities()
                guard me.contains(where: { held.hasMember($0.publicIdentity) }) else {
                    throw SharingFailure("'\(user)' is not a member of group '\(held.name)': only members share with it", status: 77)
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

    /// `encrypt --share-with`: a shared value for the user's devices and each contact or group named.
    @_spi(CLI) public func share(plaintext: String, with names: [String], context: String) throws -> String {
        try sharing { try share(plaintext, with: names, place: .context(context)) }
    }

    /// Opens a shared value after checking its sender: the user, a contact, or a member of the value's group.
    /// - Returns: the plaintext, and who shared it, for people.
    func openShared(_ text: String, place: CiphertextPlace, identities: [ShareIdentity], book: SharingBook) throws -> (plaintext: String, sender: String) {
        let value = try SharedValue(text: text, place: place)
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

    /// `decrypt` of an sk3 value made with `context`.
    @_spi(CLI) public func openShared(_ text: String, context: String) throws -> (plaintext: String, sender: String) {
        try sharing { try openShared(text, place: .context(context), identities: try sharingIdentities(), book: try keystore.sharingBook()) }
    }

    // MARK: Groups

    /// The creator's identity among the user's (a rotation since the group was made keeps the old one).
    private func creatorIdentity(of group: GroupText) throws -> ShareIdentity {
        guard let identity = try sharingIdentities().first(where: { $0.publicIdentity == group.creator }) else {
            throw SharingFailure("group '\(group.name)' was made by another key: only its creator changes it", status: 77)
        }
        return identity
    }

    /// `groups create`: a group of contacts signed by the user; returns its text.
    @_spi(CLI) public func createGroup(_ name: String, members: [String]) throws -> String {
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

    /// `groups add` / `groups remove`: the next epoch of a group the user created; returns its text.
    @_spi(CLI) public func changeGroup(_ name: String, adding: String? = nil, removing: String? = nil) throws -> String {
        try sharing {
            let book = try keystore.sharingBook()
            guard let held = book.group(named: name) else { throw BookError.noGroup(name) }
            let creator = try creatorIdentity(of: held)
            var members = Array(held.members.dropFirst())
            if let adding {
                guard let contact = book.contact(named: adding) else { throw BookError.noContact(adding) }
                members.append((adding, contact.identity))
            }
            if let removing {
                let identity = book.contact(named: removing)?.identity
                let kept = members.filter { $0.identity != identity && $0.label != removing }
                guard kept.count < members.count else { throw SharingFailure("'\(removing)' is not a member of group '\(name)'", status: 66) }
                members = kept
            }
            let next = try GroupText.make(
                id: held.id, epoch: held.epoch + 1, name: held.name, creator: creator, creatorLabel: held.members[0].label, members: members)
            _ = try keystore.sharingFiles().changeSharingBook { (book: inout SharingBook) throws(BookError) in try book.hold(next) }
            return next.text
        }
    }

    /// `groups join`: takes a group's text signed by a contact (or the user), refusing an older epoch than the one held.
    /// - Returns: a line for people: the group, its epoch and members, and whether the user is one.
    @_spi(CLI) public func joinGroup(_ text: String) throws -> String {
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

    /// `profile encrypt --share`: each field `recipients` names (at the top level or in `data`) that holds text becomes
    /// a shared value bound to its name; one already shared stays as it is.
    @_spi(CLI) public func shareProfileFields(_ profile: [UInt8], recipients: [String: [String]]) throws -> [UInt8] {
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
                    throw SharingFailure("field '\(name)' holds a JSON \(value.kindName): a shared field holds text", status: 65)
                }
            }
            return Array(shared.serialized().utf8)
        }
    }

    /// Opens a profile's shared fields. The owner's decrypt (`onlyAddressed` false) opens every one, as its other
    /// fields; `profile decrypt --shared` (true) opens those addressed to the user and leaves the rest as they are.
    /// - Returns: `profile` itself when it holds no shared value, else the profile with them opened, and a newline.
    @_spi(CLI) public func openSharedProfileFields(_ profile: [UInt8], onlyAddressed: Bool, pretty: Bool) throws -> [UInt8] {
        guard onlyAddressed || String(decoding: profile, as: UTF8.self).contains(SharedValue.prefix) else { return profile }
        return try sharing {
            let book = try keystore.sharingBook()
            let identities = try sharingIdentities()
            let opened = try Self.mapFields(of: try Self.parse(profile)) { name, value in
                guard case .string(let text) = value, SharedValue.isShared(text) else { return value }
                do {
                    return .string(try openShared(text, place: .field(name), identities: identities, book: book).plaintext)
                } catch ShareError.notAddressed where onlyAddressed {
                    return value
                } catch ShareError.untrustedSender(let fingerprint) where onlyAddressed {
                    // Another person's field, shared with others by someone this key does not know: not this key's
                    // business, so left as it is. Refused only when it is addressed to this key.
                    guard (try? SharedValue(text: text, place: .field(name)).open(with: identities)) != nil else { return value }
                    throw ShareError.untrustedSender(fingerprint: fingerprint)
                }
            }
            return Array((opened.serialized(pretty: pretty) + "\n").utf8)
        }
    }

    private static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw SharingFailure("the profile is not JSON: \(error)", status: 65)
        }
    }

    /// The profile with `change` applied to each member of its top level and of its `data` object.
    private static func mapFields(of profile: JSONValue, _ change: (String, JSONValue) throws -> JSONValue) throws -> JSONValue {
        guard case .object(let members) = profile else { throw SharingFailure("the profile is not a JSON object", status: 65) }
        return .object(try members.map { member in
            if member.key == "data", case .object(let inner) = member.value {
                return (member.key, .object(try inner.map { ($0.key, try change($0.key, $0.value)) }))
            }
            return (member.key, try change(member.key, member.value))
        })
    }
}
