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

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a group of contacts, signed by ID; prints its text.")

        @Argument(help: "The group's name.") var group: String
        @Option(help: "The key id that creates and signs the group.", completion: .keyIDs) var key: String
        @Option(help: ArgumentHelp("A contact to make a member (repeatable).", valueName: "name"), completion: .contactNames)
        var member: [String] = []
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let vault = try keystoreOptions.unlockedVault(for: try keyID(key), format: .v1)
            print(try vault.createGroup(group, members: member))
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
            let vault = try keystoreOptions.unlockedVault(for: try keyID(key), format: .v1)
            print(try vault.changeGroup(group, adding: name))
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
            let vault = try keystoreOptions.unlockedVault(for: try keyID(key), format: .v1)
            print(try vault.changeGroup(group, removing: name))
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
            let given = text == "-" ? try StandardInput.readText(what: "group text", limit: InputLimits.code) : text
            let vault = try keystoreOptions.unlockedVault(for: try keyID(key), format: .v1)
            StandardError.write(try vault.joinGroup(given) + "\n")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the groups held: name, epoch, members and creator's fingerprint, tab-separated.")

        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let keystore = try keystoreOptions.openKeystore()
            for group in try keystore.sharingGroups() {
                print("\(group.name)\t\(group.epoch)\t\(group.members.joined(separator: ","))\t\(group.creatorFingerprint)")
            }
        }
    }
}
