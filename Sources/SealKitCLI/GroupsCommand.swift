import ArgumentParser
@_spi(CLI) import SealKit

/// `sealkit groups`: signed member lists with epochs, carried by the app to every member.
struct GroupsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups",
        abstract: "Create and change groups to share values with, and join the groups others made.",
        discussion: """
            create, add and remove print the group's new text (sealkit-group-v1:…) on stdout, signed by the group's \
            creator: carry it to every member, who runs 'sealkit groups join'. Each change starts a new epoch; a text \
            older than the one held is refused. Values shared after a member's removal are closed to them; what they \
            opened before, they keep.
            """,
        subcommands: [Create.self, Add.self, Remove.self, Join.self, List.self])

    /// The creator's identity among ID's identities (a rotation since the group was made keeps the old one).
    static func creatorIdentity(of group: GroupText, among identities: [ShareIdentity]) throws -> ShareIdentity {
        guard let identity = identities.first(where: { $0.publicIdentity == group.creator }) else {
            throw CLIFailure("group '\(group.name)' was made by another key: only its creator changes it", status: .noPermission)
        }
        return identity
    }

    /// Makes the next epoch of a group ID created, with `change` applied to its members, stores and prints it.
    static func change(
        _ name: String, key: String, options: KeystoreOptions,
        _ change: ([(label: String, identity: PublicIdentity)], SharingBook) throws -> [(label: String, identity: PublicIdentity)]
    ) throws {
        try Sharing.run {
            let id = try keyID(key)
            let keystore = try options.openKeystore()
            let files = try Sharing.fileKeystore(keystore)
            let identities = try Sharing.identities(of: id, options: options, in: keystore)
            let book = try files.sharingBook()
            guard let held = book.group(named: name) else { throw BookError.noGroup(name) }
            let creator = try creatorIdentity(of: held, among: identities)
            let members = try change(Array(held.members.dropFirst()), book)
            let next = try GroupText.make(
                id: held.id, epoch: held.epoch + 1, name: held.name, creator: creator, creatorLabel: held.members[0].label, members: members)
            _ = try files.changeSharingBook { (book: inout SharingBook) throws(BookError) in try book.hold(next) }
            print(next.text)
        }
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a group of contacts, signed by ID; prints its text.")

        @Argument(help: "The group's name.") var group: String
        @Option(help: "The key id that creates and signs the group.", completion: .keyIDs) var key: String
        @Option(help: ArgumentHelp("A contact to make a member (repeatable).", valueName: "name"), completion: .contactNames)
        var member: [String] = []
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            try Sharing.run {
                try SharingBook.check(name: group, what: "a group's name")
                let id = try keyID(key)
                let keystore = try keystoreOptions.openKeystore()
                let files = try Sharing.fileKeystore(keystore)
                let identities = try Sharing.identities(of: id, options: keystoreOptions, in: keystore)
                let book = try files.sharingBook()
                if book.group(named: group) != nil { throw BookError.groupConflict(group) }
                let members = try member.map { name -> (label: String, identity: PublicIdentity) in
                    guard let contact = book.contact(named: name) else { throw BookError.noContact(name) }
                    return (name, contact.identity)
                }
                let text = try GroupText.make(
                    id: SecureRandom.bytes(count: 16), epoch: 1, name: group, creator: identities[0], creatorLabel: id.rawValue,
                    members: members)
                _ = try files.changeSharingBook { (book: inout SharingBook) throws(BookError) in try book.hold(text) }
                print(text.text)
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a contact to a group ID created; prints the group's new text.")

        @Argument(help: "The group's name.", completion: .groupNames) var group: String
        @Argument(help: "The contact to add.", completion: .contactNames) var name: String
        @Option(help: "The key id that created the group.", completion: .keyIDs) var key: String
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            try GroupsCommand.change(group, key: key, options: keystoreOptions) { members, book in
                guard let contact = book.contact(named: name) else { throw BookError.noContact(name) }
                return members + [(name, contact.identity)]
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a member from a group ID created, starting a new epoch; prints the group's new text.")

        @Argument(help: "The group's name.", completion: .groupNames) var group: String
        @Argument(help: "The member to remove: a contact's name, or the label the group gives them.", completion: .contactNames)
        var name: String
        @Option(help: "The key id that created the group.", completion: .keyIDs) var key: String
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            try GroupsCommand.change(group, key: key, options: keystoreOptions) { members, book in
                let identity = book.contact(named: name)?.identity
                let kept = members.filter { $0.identity != identity && $0.label != name }
                guard kept.count < members.count else {
                    throw CLIFailure("'\(name)' is not a member of group '\(group)'", status: .noInput)
                }
                return kept
            }
        }
    }

    struct Join: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "join",
            abstract: "Take a group's text or its update, signed by a contact; an older epoch than the one held is refused.")

        @Option(help: "The key id joining (the group's creator must be its contact, or ID itself).", completion: .keyIDs) var key: String
        @Argument(help: "The group's text (sealkit-group-v1:…); '-' reads stdin.") var text: String

        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            try Sharing.run {
                let id = try keyID(key)
                let given = text == "-" ? try StandardInput.readText(what: "group text", limit: InputLimits.code) : text
                let group = try GroupText(text: given)
                let keystore = try keystoreOptions.openKeystore()
                let files = try Sharing.fileKeystore(keystore)
                let identities = try Sharing.identities(of: id, options: keystoreOptions, in: keystore)
                let changed = try files.changeSharingBook { (book: inout SharingBook) throws(BookError) -> Bool in
                    guard identities.contains(where: { $0.publicIdentity == group.creator }) || book.contact(with: group.creator) != nil else {
                        throw .share(.untrustedGroupSigner(name: group.name, fingerprint: group.creator.fingerprint))
                    }
                    return try book.hold(group)
                }
                let member = identities.contains { group.hasMember($0.publicIdentity) }
                StandardError.write(
                    "group '\(group.name)' epoch \(group.epoch): \(group.members.count) members"
                        + (changed ? "" : ", held already") + (member ? "" : "; \(id.shown) is not one of them") + "\n")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the groups held: name, epoch, members and creator's fingerprint, tab-separated.")

        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            try Sharing.run {
                let book = try Sharing.fileKeystore(try keystoreOptions.openKeystore()).sharingBook()
                for group in book.groups {
                    print("\(group.name)\t\(group.epoch)\t\(group.members.map(\.label).joined(separator: ","))\t\(group.creator.fingerprint)")
                }
            }
        }
    }
}
