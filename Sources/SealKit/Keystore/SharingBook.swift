import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A person one shares with: a name chosen freely and the identity it stands for, kept per namespace.
package struct Contact: Sendable, Equatable {
    /// How the identity was checked when it was added.
    package enum Verification: String, Sendable, CaseIterable {
        /// Its safety number was given (`--fingerprint`) and matched.
        case fingerprint
        /// It was read from a QR code shown by its owner.
        case qr
        /// It came through a code-authenticated exchange over the mailbox.
        case exchange
        /// Its text was given with no fingerprint to check it against.
        case unverified
    }

    /// The name it is known by here.
    package let name: String
    /// Its public identity.
    package let identity: PublicIdentity
    /// How it was checked.
    package let verification: Verification

    package init(name: String, identity: PublicIdentity, verification: Verification) {
        self.name = name
        self.identity = identity
        self.verification = verification
    }
}

/// Why a contact or group change was refused.
package enum BookError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No contact of that name.
    case noContact(String)
    /// No group of that name.
    case noGroup(String)
    /// A different identity is known under this name already.
    case contactConflict(String, known: SafetyNumber)
    /// The identity is a contact already, under another name.
    case sameIdentity(String, as: String)
    /// A group of this name with another id (another group) is held already.
    case groupConflict(String)
    /// The name is not one this book keeps.
    case badName(String)
    /// This keystore keeps no contacts (the desktop keyring).
    case unsupported(String)
    /// Reading or writing the book failed.
    case keystore(KeystoreError)
    /// A group text failed its checks.
    case share(ShareError)

    package var description: String {
        // A name here may be an argument as given (a script's, from anywhere): quoted under the one escaping rule.
        func quoted(_ name: String) -> String { TextSafety.printable(name) }
        switch self {
        case .noContact(let name): return "no contact named '\(quoted(name))'"
        case .noGroup(let name): return "no group named '\(quoted(name))'"
        case .contactConflict(let name, let known):
            return "contact '\(quoted(name))' is known with another identity (fingerprint \(known)): an identity never changes silently; "
                + "delete the contact first if they really have a new one"
        case .sameIdentity(let name, let other):
            return "this identity is contact '\(quoted(other))' already, so it is not added as '\(quoted(name))'"
        case .groupConflict(let name): return "another group named '\(quoted(name))' is held already: refused"
        case .badName(let reason): return reason
        case .unsupported(let backend): return "\(backend) keeps no contacts or groups: use the file keystore"
        case .keystore(let error): return error.description
        case .share(let error): return error.description
        }
    }
}

/// The contacts and groups of one namespace: two files beside the key files, `contacts` and `groups`, written as the
/// keystore writes key files (`DurableFile`, 0600, under the namespace's lock) and read under the same checks.
package struct SharingBook: Sendable {
    /// The contacts, in the order added.
    package var contacts: [Contact] = []
    /// The groups held, each at the highest epoch seen.
    package var groups: [GroupText] = []

    static let contactsFile = "contacts"
    static let groupsFile = "groups"

    package init() {}

    /// The contact named `name`.
    package func contact(named name: String) -> Contact? { contacts.first { $0.name == name } }

    /// The contact whose identity is `identity`.
    package func contact(with identity: PublicIdentity) -> Contact? { contacts.first { $0.identity == identity } }

    /// The group named `name`.
    package func group(named name: String) -> GroupText? { groups.first { $0.name == name } }

    /// The group whose id is `id`.
    package func group(id: [UInt8]) -> GroupText? { groups.first { $0.id == id } }

    /// Adds a contact, refusing a different identity under a known name; the same identity under the same name is
    /// kept as it is (with the stronger of the two verifications).
    package mutating func add(_ contact: Contact) throws(BookError) {
        try Self.check(name: contact.name, what: "a contact's name")
        if let known = self.contact(named: contact.name) {
            guard known.identity == contact.identity else { throw .contactConflict(contact.name, known: known.identity.fingerprint) }
            if known.verification == .unverified, contact.verification != .unverified {
                contacts[contacts.firstIndex { $0.name == contact.name }!] = contact
            }
            return
        }
        if let other = self.contact(with: contact.identity) { throw .sameIdentity(contact.name, as: other.name) }
        contacts.append(contact)
    }

    /// Takes a group's text: a new group, or a newer epoch of one held. An older epoch, or another text for the
    /// epoch held, is refused. The caller has checked the signer.
    /// - Returns: whether the book changed.
    package mutating func hold(_ group: GroupText) throws(BookError) -> Bool {
        if let index = groups.firstIndex(where: { $0.id == group.id }) {
            let held = groups[index]
            guard held.creator == group.creator else { throw .share(.badSignature(what: "the text of group '\(group.name)'")) }
            if held == group { return false }
            guard group.epoch > held.epoch else { throw .share(.staleGroup(name: group.name, held: held.epoch, given: group.epoch)) }
            guard groups.allSatisfy({ $0.id == group.id || $0.name != group.name }) else { throw .groupConflict(group.name) }
            groups[index] = group
            return true
        }
        guard self.group(named: group.name) == nil else { throw .groupConflict(group.name) }
        groups.append(group)
        return true
    }

    /// Names are free text, but one line of it: no control characters, not empty, not `group:`-prefixed.
    package static func check(name: String, what: String) throws(BookError) {
        guard !name.isEmpty, name.utf8.count <= 256 else { throw .badName("\(what) must be 1 to 256 bytes") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badName("\(what) may not hold control characters (a tab, a newline)")
        }
        guard !name.hasPrefix("group:") else { throw .badName("\(what) may not start with 'group:', which names a group") }
    }

    // MARK: Files

    var contactsText: [UInt8] {
        Array(contacts.map { "\(Self.escape($0.name))\t\($0.identity.text)\t\($0.verification.rawValue)\n" }.joined().utf8)
    }

    var groupsText: [UInt8] { Array(groups.map { $0.text + "\n" }.joined().utf8) }

    static func escape(_ name: String) -> String {
        var out: [UInt8] = []
        for byte in name.utf8 {
            if byte == UInt8(ascii: "%") || byte < 0x20 || byte == 0x7F {
                out += Array(("%" + Hex.encode([byte])).utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads the two files' text; `path` names them in errors.
    init(contacts: [UInt8]?, groups: [UInt8]?, path: String) throws(BookError) {
        func damaged(_ file: String) -> BookError {
            .keystore(.damagedKeyFile(path: path + "/" + file, reason: "not a contacts or groups file SealKit reads"))
        }
        for line in (contacts ?? []).split(separator: 0x0A) {
            let fields = line.split(separator: 0x09, omittingEmptySubsequences: false)
            guard fields.count == 3, let nameBytes = PercentEncoding.decode(fields[0]),
                let name = String(validating: nameBytes, as: UTF8.self),
                let identity = try? PublicIdentity(text: String(decoding: fields[1], as: UTF8.self)),
                let verification = Contact.Verification(rawValue: String(decoding: fields[2], as: UTF8.self))
            else { throw damaged(Self.contactsFile) }
            self.contacts.append(Contact(name: name, identity: identity, verification: verification))
        }
        for line in (groups ?? []).split(separator: 0x0A) {
            guard let group = try? GroupText(text: String(decoding: line, as: UTF8.self)) else { throw damaged(Self.groupsFile) }
            self.groups.append(group)
        }
    }
}

extension FileKeystore {
    /// The namespace's contacts and groups; empty when it has none.
    package func sharingBook() throws(BookError) -> SharingBook {
        let folder: Folder?
        do throws(KeystoreError) {
            folder = try openNamespace(creating: false)
        } catch {
            throw .keystore(error)
        }
        guard let folder else { return SharingBook() }
        return try Self.readBook(in: folder)
    }

    /// Changes the book under the namespace's lock and writes what changed, whole or not at all.
    package func changeSharingBook<T>(_ change: (inout SharingBook) throws(BookError) -> T) throws(BookError) -> T {
        let folder: Folder
        do throws(KeystoreError) {
            guard let opened = try openNamespace(creating: true) else {
                throw .fileSystem(operation: "create folder", path: self.folder, errno: .noSuchFileOrDirectory)
            }
            folder = opened
        } catch {
            throw .keystore(error)
        }
        let keyFolder = KeyFolder(folder: folder, namespace: namespace, lockTimeout: lockTimeout)
        let outcome: Result<T, BookError>
        do throws(KeystoreError) {
            outcome = try keyFolder.withExclusiveAccess { () throws(KeystoreError) -> Result<T, BookError> in
                let before: SharingBook
                do throws(BookError) {
                    before = try Self.readBook(in: folder)
                } catch {
                    return .failure(error)
                }
                var book = before
                let result: T
                do throws(BookError) {
                    result = try change(&book)
                } catch {
                    return .failure(error)
                }
                if book.contactsText != before.contactsText {
                    try DurableFile.write(
                        book.contactsText, named: SharingBook.contactsFile, in: folder.fd, folderPath: folder.path, temporaryPrefix: ".tmp-")
                }
                if book.groupsText != before.groupsText {
                    try DurableFile.write(
                        book.groupsText, named: SharingBook.groupsFile, in: folder.fd, folderPath: folder.path, temporaryPrefix: ".tmp-")
                }
                return .success(result)
            }
        } catch {
            throw .keystore(error)
        }
        return try outcome.get()
    }

    private static func readBook(in folder: Folder) throws(BookError) -> SharingBook {
        let contacts: [UInt8]?
        let groups: [UInt8]?
        do throws(KeystoreError) {
            contacts = try readSmallFile(SharingBook.contactsFile, in: folder)
            groups = try readSmallFile(SharingBook.groupsFile, in: folder)
        } catch {
            throw .keystore(error)
        }
        return try SharingBook(contacts: contacts, groups: groups, path: folder.path)
    }

    /// Reads a file of the namespace under the key files' rules (the user's own, 0600 at most), up to 16 MiB.
    private static func readSmallFile(_ name: String, in folder: Folder) throws(KeystoreError) -> [UInt8]? {
        guard let (fd, _) = try folder.openOwnFile(name) else { return nil }
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try fd.read(into: $0) }
            } catch {
                throw .fileSystem(operation: "read", path: folder.path + "/" + name, errno: Errno(error))
            }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
            guard bytes.count <= 16 << 20 else { throw .damagedKeyFile(path: folder.path + "/" + name, reason: "larger than 16 MiB") }
        }
    }
}
