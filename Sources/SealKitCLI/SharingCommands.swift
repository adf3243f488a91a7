import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitQR
@_spi(CLI) import SealKitTransfer

#if canImport(Glibc)
import Glibc
#endif

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
            let vault = try keystoreOptions.unlockedVault(for: try keyID(id), format: .v1)
            let identity = try vault.sharingIdentity()
            let output = StandardOutput()
            if qr {
                let code = try QRCode(identity.text, correction: .medium)
                let rendered = try code.rendered(
                    as: StandardOutput.isTerminal && Terminal.allowsColor ? .ansi : .utf8, inverted: Terminal.invertsQR)
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
        subcommands: [Add.self, List.self, Delete.self, Exchange.self])

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
            if let fingerprint, !Keystore.isFingerprint(fingerprint) {
                throw ValidationError("--fingerprint takes 30 digits, as 'sealkit keys identity' prints them")
            }
        }

        func run() throws {
            let identityText: String
            if let qr {
                let texts = try ImageInput.payloads(in: qr).compactMap { String(validating: $0, as: UTF8.self) }
                    .filter { $0.hasPrefix(Keystore.identityPrefix) }
                guard texts.count == 1 else {
                    throw CLIFailure("\(ImageInput.name(qr)) holds no single identity's QR code (sealkit keys identity ID --qr)", status: .dataError)
                }
                identityText = texts[0]
            } else if text == "-" {
                identityText = try StandardInput.readText(what: "identity", limit: InputLimits.codeLine)
            } else {
                identityText = text ?? ""
            }
            let keystore = try keystoreOptions.openKeystore()
            let contact = try keystore.addContact(name: name, identityText: identityText, fingerprint: fingerprint, fromQR: qr != nil)
            print("\(contact.name)\t\(contact.fingerprint)\t\(contact.verification)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the contacts: name, fingerprint and how it was verified, tab-separated.")

        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let keystore = try keystoreOptions.openKeystore()
            for contact in try keystore.sharingContacts() {
                print("\(contact.name)\t\(contact.fingerprint)\t\(contact.verification)")
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a contact.")

        @Argument(help: "The contact's name.", completion: .contactNames) var name: String
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let keystore = try keystoreOptions.openKeystore()
            try keystore.deleteContact(name)
        }
    }
}

extension ContactsCommand {
    struct Exchange: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "exchange",
            abstract: "Swap identities with someone through the mailbox relay; the code authenticates both.",
            discussion: """
                Both people run it: the first without --code prints a code (such as 7-guitarist-revenge) on stdout                 and waits; the second gives it with --code. Each side stores the other's identity as contact NAME,                 verified by the exchange, and prints it as 'contacts list' does. A wrong code stores nothing (77).
                """)

        @Argument(help: "The name to know the other person by.") var name: String
        @Option(help: "The key id whose identity to send.", completion: .keyIDs) var key: String
        @Option(help: ArgumentHelp("The code the other side shows; without it, one is made and printed.", valueName: "code"))
        var code: String?
        @Option(help: ArgumentHelp("The mailbox relay (default: SEALKIT_RELAY, else ws://relay.magic-wormhole.io:4000/v1).", valueName: "url"))
        var relay: String?
        @Option(help: ArgumentHelp("Seconds to wait for the other side (default 600).", valueName: "seconds"))
        var timeout: Int?
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() async throws {
            let vault = try keystoreOptions.unlockedVault(for: try keyID(key), format: .v1)
            let identity = try vault.sharingIdentity()
            // Checked before anything goes over the network: a name the book refuses would waste the other side's code.
            if try vault.keystore.sharingContacts().contains(where: { $0.name == name }) {
                throw CLIFailure("a contact named '\(name)' exists already: delete it first, or choose another name", status: .dataError)
            }
            let exchange = try await ContactExchange(
                relay: try TransferNetwork.relay(relay), code: code, timeout: .seconds(timeout ?? TransferNetwork.defaultTimeout))
            if let shown = exchange.code {
                let output = StandardOutput()
                try output.writeLine(shown)
                try output.flush()
            }
            let received = try await exchange.exchange(identity.text)
            let contact = try vault.keystore.addContact(
                name: name, identityText: received, fingerprint: nil, fromQR: false, exchanged: true)
            print("\(contact.name)\t\(contact.fingerprint)\t\(contact.verification)")
        }
    }
}

extension EncryptCommand {
    /// `encrypt --share-with`: one sk3 value for ID's identity and each recipient, signed by ID.
    func encryptShared(fd: Int32, vault: Vault) throws {
        let plaintext = try StandardInput.readText(fd: fd, what: "text", limit: InputLimits.plaintext)
        let value = try vault.share(plaintext: plaintext, with: shareWith, context: options.boundContext)
        let output = StandardOutput()
        try output.writeLine(value)
        try output.flush()
    }
}

extension DecryptCommand {
    /// `decrypt` of an sk3 value: opened with any of ID's identities once its sender is known to ID.
    func openShared(_ text: String, vault: Vault) throws {
        let opened = try vault.openShared(text, context: options.boundContext)
        let output = StandardOutput()
        try output.writeLine(opened.plaintext)
        try output.flush()
        if StandardError.isTerminal { StandardError.write("sealkit: shared by \(opened.sender)\n") }
    }
}

extension CompletionKind {
    /// Contact names, for shell completion, escaped for the asking shell as ids are (`completionWord`).
    static var contactNames: CompletionKind { sharingNames { keystore in try keystore.sharingContacts().map(\.name) } }

    /// Group names.
    static var groupNames: CompletionKind { sharingNames { keystore in try keystore.sharingGroups().map(\.name) } }

    /// What `--share-with` takes: contact names and `group:GROUP`.
    static var recipientNames: CompletionKind {
        sharingNames { keystore in
            try keystore.sharingContacts().map(\.name) + keystore.sharingGroups().map { "group:" + $0.name }
        }
    }

    /// Names from the namespace's book (the `--namespace` typed before the cursor, else `$SEALKIT_NAMESPACE`); a
    /// book that cannot be read completes nothing.
    private static func sharingNames(_ names: @escaping @Sendable (Keystore) throws -> [String]) -> CompletionKind {
        .custom { words, _, prefix in
            var namespace: String?
            for (index, word) in words.enumerated() {
                if word == "--namespace", index + 1 < words.count { namespace = words[index + 1] }
                if word.hasPrefix("--namespace=") { namespace = String(word.dropFirst("--namespace=".count)) }
            }
            guard let keystore = try? KeystoreOptions.openKeystore(.file, namespace: namespace), let found = try? names(keystore)
            else { return [] }
            let typed = completionPrefix(prefix)
            return found.filter { $0.hasPrefix(typed) }.compactMap { completionWord($0, for: CompletionShell.requesting) }
        }
    }
}
