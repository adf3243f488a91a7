import ArgumentParser
import FoundationEssentials
import SealKit

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, import, list, rotate, delete, back up and restore per-user keys.",
        subcommands: [Generate.self, Import.self, List.self, Rotate.self, Delete.self, Backup.self, Restore.self])

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Make a new random key for ID; prints the id and the key's fingerprint, never the key.")

        @Argument(help: "The key id (in Rownd's model, the user id).") var id: String
        @Flag(help: "Protect the key with a passphrase (asked on the terminal unless given).") var protect = false
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let id = try keyID(id)
            let keystore = try keystoreOptions.keystore()
            let key = SymmetricKey.generate()
            try keystore.store(key, as: id, mode: .create, passphrase: try keystoreOptions.passphrase(toProtect: protect))
            print("\(id)\t\(key.fingerprint)")
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Store a key read from stdin under ID.",
            discussion: """
                Stdin holds a bare base64 key, Rownd's key-transfer QR text {"data":"<link>#<key>"}, or the link \
                alone. Importing the key already stored under ID changes nothing; a different one is refused.
                """)

        @Argument(help: "The key id to store the key under.") var id: String
        @Flag(help: "Protect the key with a passphrase (asked on the terminal unless given).") var protect = false
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let id = try keyID(id)
            let keystore = try keystoreOptions.keystore()
            if StandardInput.isTerminal {
                StandardError.write("Paste the key, Rownd's QR text or its link, then press Enter and Ctrl-D:\n")
            }
            var text = try StandardInput.readAll(limit: InputLimits.keyMaterial, what: "key material")
            defer { ConstantTime.wipe(&text) }
            let key = try KeyText.parseKey(text)
            let passphrase: Passphrase?
            if try keystore.entry(for: id) != nil {
                passphrase = try keystoreOptions.passphrase(toUnlock: id, in: keystore)
            } else {
                passphrase = try keystoreOptions.passphrase(toProtect: protect)
            }
            let outcome = try keystore.store(key, as: id, mode: .import, passphrase: passphrase)
            print("\(id)\t\(key.fingerprint)\t\(outcome == .stored ? "imported" : "unchanged")")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List key ids: id, fingerprint, creation time, and whether protected or rotated.")

        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let entries = try keystoreOptions.keystore().entries()
            let output = StandardOutput()
            for entry in entries {
                var flags: [String] = []
                if entry.isProtected { flags.append("protected") }
                if !entry.retired.isEmpty { flags.append("\(entry.retired.count) retired") }
                let created = entry.current.created.formatted(.iso8601)
                try output.write("\(entry.id)\t\(entry.current.fingerprint)\t\(created)\t\(flags.isEmpty ? "-" : flags.joined(separator: ","))\n")
            }
            try output.flush()
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Make a new current key for ID, keeping the old ones to decrypt older ciphertexts.")

        @Argument(help: "The key id to rotate.") var id: String
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let id = try keyID(id)
            let keystore = try keystoreOptions.keystore()
            let passphrase = try keystoreOptions.passphrase(toUnlock: id, in: keystore)
            let entry = try keystore.rotate(id, to: SymmetricKey.generate(), passphrase: passphrase)
            print("\(id)\t\(entry.current.fingerprint)\t\(entry.retired.count) retired")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete every key stored under ID. Ciphertexts made with them can no longer be opened.")

        @Argument(help: "The key id to delete.") var id: String
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let id = try keyID(id)
            try keystoreOptions.keystore().delete(id)
            print("\(id)\tdeleted")
        }
    }
}
