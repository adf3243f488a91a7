import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitQR

#if canImport(Glibc)
import Glibc
#endif

/// What the sharing commands have in common: the namespace's book, the id's identities, and the exit status of
/// each refusal (65 refused input, 66 a missing contact or group, 77 a value not addressed to this identity).
enum Sharing {
    /// The file keystore behind `keystore`, which keeps the contacts and groups.
    static func fileKeystore(_ keystore: Keystore) throws -> FileKeystore {
        guard let files = keystore.storage as? FileKeystore else {
            throw CLIFailure("the desktop keyring keeps no contacts or groups: use the file keystore (--keystore file)", status: .usage)
        }
        return files
    }

    /// Runs `body`, turning the sharing errors into one line and their exit status.
    static func run<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ShareError {
            throw failure(error)
        } catch let error as BookError {
            switch error {
            case .noContact, .noGroup: throw CLIFailure(error.description, status: .noInput)
            case .unsupported, .badName: throw CLIFailure(error.description, status: .usage)
            case .keystore(let error): throw SealKitError(error)
            case .share(let error): throw failure(error)
            case .contactConflict, .sameIdentity, .groupConflict: throw CLIFailure(error.description, status: .dataError)
            }
        }
    }

    static func failure(_ error: ShareError) -> CLIFailure {
        switch error {
        case .notAddressed: return CLIFailure(error.description, status: .noPermission)
        default: return CLIFailure(error.description, status: .dataError)
        }
    }

    /// The identities of `id`'s keys, current first (asking for the passphrase of protected keys).
    static func identities(of id: KeyID, options: KeystoreOptions, in keystore: Keystore) throws -> [ShareIdentity] {
        let vault = try options.unlockedVault(for: id, format: .v1, in: keystore)
        return ShareIdentity.all(of: try vault.keyRing())
    }

    /// The recipients `--share-with` names: contacts by name, and every member of `group:GROUP`.
    static func recipients(
        _ names: [String], in book: SharingBook
    ) throws -> (identities: [PublicIdentity], group: GroupText?) {
        var identities: [PublicIdentity] = []
        var group: GroupText?
        for name in names {
            if name.hasPrefix("group:") {
                let groupName = String(name.dropFirst("group:".count))
                guard let held = book.group(named: groupName) else { throw BookError.noGroup(groupName) }
                guard group == nil || group?.id == held.id else {
                    throw CLIFailure("a value is shared with one group at most: give one --share-with group:GROUP", status: .usage)
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

    /// Opens a shared value for `identities`, after checking who made it: the id itself, a contact, or (for a
    /// group's value) a member of the group as held.
    static func open(
        _ text: String, place: CiphertextPlace, identities: [ShareIdentity], book: SharingBook
    ) throws -> (plaintext: String, sender: String) {
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
}

extension KeysCommand {
    struct Identity: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "identity",
            abstract: "Print ID's public sharing identity, for others to add as a contact.",
            discussion: """
                Prints one line beginning 'sealkit-identity-v1:' on stdout, and the identity's fingerprint (six groups \
                of five digits, to compare aloud) alone on the last line of stderr, in the form 'contacts add \
                --fingerprint' accepts. The identity is derived from ID's current key: every device holding the key \
                has it, and a rotation makes a new one (values shared with the old one still open).
                """)

        @Argument(help: "The key id whose identity to print.", completion: .keyIDs) var id: String
        @Flag(help: "Show the identity as a QR code instead of a line of text.") var qr = false
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let id = try keyID(id)
            let keystore = try keystoreOptions.openKeystore()
            let identity = try Sharing.identities(of: id, options: keystoreOptions, in: keystore)[0].publicIdentity
            let output = StandardOutput()
            if qr {
                let code = try QRCode(Array(identity.text.utf8), correction: .medium)
                let rendered = try code.rendered(as: StandardOutput.isTerminal && Terminal.allowsColor ? .ansi : .utf8, inverted: Terminal.invertsQR)
                try rendered.withUnsafeBytes { try output.write(bytes: $0) }
            } else {
                try output.writeLine(identity.text)
            }
            try output.flush()
            StandardError.write("\(identity.fingerprint)\n")
        }
    }
}

struct ContactsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts",
        abstract: "Add, list and delete the people you share values with, per namespace.",
        subcommands: [Add.self, List.self, Delete.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a contact from the identity text or QR code its owner gave you.",
            discussion: """
                Check the fingerprint with its owner (they see it with 'sealkit keys identity ID') and give it with \
                --fingerprint: a fingerprint that does not match is refused (65) and nothing is stored. A name already \
                known with another identity is refused: an identity never changes silently.
                """)

        @Argument(help: "The name to know the contact by.") var name: String
        @Argument(help: "The contact's identity text (sealkit-identity-v1:…); '-' reads stdin.") var text: String?
        @Option(help: ArgumentHelp("Read the identity from the QR code in this image ('-' is stdin).", valueName: "image"), completion: .file())
        var qr: String?
        @Option(help: ArgumentHelp("The fingerprint its owner read to you: 30 digits, spaces optional.", valueName: "fp"))
        var fingerprint: String?
        @OptionGroup var keystoreOptions: KeystoreOptions

        func validate() throws {
            if (text == nil) == (qr == nil) { throw ValidationError("give the identity TEXT or --qr IMAGE, one of them") }
            if let fingerprint, SafetyNumber(text: fingerprint) == nil {
                throw ValidationError("--fingerprint takes 30 digits, as 'sealkit keys identity' prints them")
            }
        }

        func run() throws {
            try Sharing.run {
                try SharingBook.check(name: name, what: "a contact's name")
                let identityText: String
                if let qr {
                    let payloads = try ImageInput.payloads(in: qr)
                    let texts = payloads.compactMap { String(validating: $0, as: UTF8.self) }.filter { $0.hasPrefix(PublicIdentity.prefix) }
                    guard texts.count == 1 else {
                        throw CLIFailure("\(ImageInput.name(qr)) holds no single identity's QR code (sealkit keys identity ID --qr)", status: .dataError)
                    }
                    identityText = texts[0]
                } else if text == "-" {
                    identityText = try StandardInput.readText(what: "identity", limit: InputLimits.codeLine)
                } else {
                    identityText = text!
                }
                let identity = try PublicIdentity(text: identityText)
                if let fingerprint, let given = SafetyNumber(text: fingerprint), given != identity.fingerprint {
                    throw CLIFailure(
                        "the identity's fingerprint is \(identity.fingerprint), not the one given: ask its owner again; nothing was stored",
                        status: .dataError)
                }
                let verification: Contact.Verification = fingerprint != nil ? .fingerprint : qr != nil ? .qr : .unverified
                let files = try Sharing.fileKeystore(try keystoreOptions.openKeystore())
                try files.changeSharingBook { (book: inout SharingBook) throws(BookError) in
                    try book.add(Contact(name: name, identity: identity, verification: verification))
                }
                print("\(name)\t\(identity.fingerprint)\t\(verification.rawValue)")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the contacts: name, fingerprint and how it was verified, tab-separated.")

        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            try Sharing.run {
                let book = try Sharing.fileKeystore(try keystoreOptions.openKeystore()).sharingBook()
                for contact in book.contacts {
                    print("\(contact.name)\t\(contact.identity.fingerprint)\t\(contact.verification.rawValue)")
                }
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a contact.")

        @Argument(help: "The contact's name.", completion: .contactNames) var name: String
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            try Sharing.run {
                let files = try Sharing.fileKeystore(try keystoreOptions.openKeystore())
                try files.changeSharingBook { (book: inout SharingBook) throws(BookError) in
                    guard book.contact(named: name) != nil else { throw .noContact(name) }
                    book.contacts.removeAll { $0.name == name }
                }
            }
        }
    }
}

extension EncryptCommand {
    /// `encrypt --share-with`: one sk3 value for ID's identity and each recipient, signed by ID.
    func encryptShared(fd: Int32, vault: Vault) throws {
        try Sharing.run {
            let files = try Sharing.fileKeystore(vault.keystore)
            let (recipients, group) = try Sharing.recipients(shareWith, in: try files.sharingBook())
            let sender = ShareIdentity(deriving: try vault.keyRing().current)
            if let group, !group.hasMember(sender.publicIdentity) {
                throw CLIFailure("\(vault.user.shown) is not a member of group '\(group.name)': only members share with it", status: .noPermission)
            }
            let plaintext = try StandardInput.readText(fd: fd, what: "text", limit: InputLimits.plaintext)
            let value = try SharedValue.seal(
                plaintext, from: sender, to: recipients, owner: vault.user.rawValue, place: .context(options.boundContext),
                group: group.map { ($0.id, $0.epoch) })
            let output = StandardOutput()
            try output.writeLine(value)
            try output.flush()
        }
    }
}

extension DecryptCommand {
    /// `decrypt` of an sk3 value: opened with any of ID's identities once its sender is known to ID.
    func openShared(_ text: String, vault: Vault) throws {
        try Sharing.run {
            let book = try Sharing.fileKeystore(vault.keystore).sharingBook()
            let identities = ShareIdentity.all(of: try vault.keyRing())
            let (plaintext, sender) = try Sharing.open(text, place: .context(options.boundContext), identities: identities, book: book)
            let output = StandardOutput()
            try output.writeLine(plaintext)
            try output.flush()
            if StandardError.isTerminal { StandardError.write("sealkit: shared by \(sender)\n") }
        }
    }
}

extension CompletionKind {
    /// Contact names, for shell completion, escaped for the asking shell as ids are (`completionWord`).
    static var contactNames: CompletionKind { sharingNames { book in book.contacts.map(\.name) } }

    /// Group names.
    static var groupNames: CompletionKind { sharingNames { book in book.groups.map(\.name) } }

    /// What `--share-with` takes: contact names and `group:GROUP`.
    static var recipientNames: CompletionKind {
        sharingNames { book in book.contacts.map(\.name) + book.groups.map { "group:" + $0.name } }
    }

    /// Names from the namespace's book (the `--namespace` typed before the cursor, else `$SEALKIT_NAMESPACE`); a
    /// book that cannot be read completes nothing.
    private static func sharingNames(_ names: @escaping @Sendable (SharingBook) -> [String]) -> CompletionKind {
        .custom { words, _, prefix in
            var namespace: String?
            for (index, word) in words.enumerated() {
                if word == "--namespace", index + 1 < words.count { namespace = words[index + 1] }
                if word.hasPrefix("--namespace=") { namespace = String(word.dropFirst("--namespace=".count)) }
            }
            guard let keystore = try? KeystoreOptions.openKeystore(.file, namespace: namespace),
                let files = keystore.storage as? FileKeystore, let book = try? files.sharingBook()
            else { return [] }
            let typed = completionPrefix(prefix)
            return names(book).filter { $0.hasPrefix(typed) }.compactMap { completionWord($0, for: CompletionShell.requesting) }
        }
    }
}
