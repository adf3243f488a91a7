import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
import SealKitTPM

#if canImport(Glibc)
import Glibc
#endif

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, import, list, rotate, protect, delete, migrate, back up and restore per-user keys.",
        subcommands: [
            Generate.self, Import.self, List.self, Rotate.self, Passwd.self, Delete.self, Backup.self, Restore.self,
            Migrate.self, Identity.self,
        ])

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Make a new random key for ID; prints the id and the key's fingerprint, never the key.")

        @Argument(help: "The key id (in Rownd's model, the user id).") var id: String
        @Flag(help: "Protect the key with a passphrase (asked on the terminal unless given).") var protect = false
        @OptionGroup var tpmOptions: TPMOptions
        @OptionGroup(title: "The user's data: refuse to make a key when it is sealed under another") var data: UserDataOptions
        @OptionGroup var keystoreOptions: KeystoreOptions

        func validate() throws { try tpmOptions.validate(protect: protect) }

        func run() throws {
            let id = try keyID(id)
            tpmOptions.apply()
            let keystore = try keystoreOptions.openKeystore()
            let profile = try data.readProfile()
            let schema = try data.readSchema()
            let secret = try keystoreOptions.passphrase(toProtect: tpmOptions.needsSecret(protect: protect))
            let vault = Vault(keystore: keystore, user: id, format: .v1, passphrase: secret)
            do {
                // A second device must not fork the user's key: data sealed under a key this keystore
                // lacks means the user has one already, elsewhere.
                let entry = try vault.makeKey(existing: profile ?? "{}", schema: schema)
                print("\(id)\t\(entry.fingerprint)")
            } catch {
                // (A `catch where` on the typed error crashes Swift 6.3's SIL ownership verifier here.)
                guard error.reason == .keyElsewhere else { throw error }
                throw CLIFailure("not making a key for \(id.shown): \(said(error))", status: .conflict)
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Store a key read from stdin under ID.",
            discussion: """
                Stdin holds a bare base64 key, Rownd's key-transfer text <link>#<key> (percent-encoded or not), or the \
                older {"data":"<link>#<key>"}. Importing the key already stored under ID changes nothing; a different \
                one is refused.
                """)

        @Argument(help: "The key id to store the key under.") var id: String
        @Flag(help: "Protect the key with a passphrase (asked on the terminal unless given).") var protect = false
        @Option(help: ArgumentHelp(
            "Read the key from a QR code in this image instead of stdin: a Rownd app's key-transfer QR (<link>#<key>) or SealKit's.",
            valueName: "image"), completion: .file())
        var qr: String?
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let id = try keyID(id)
            let keystore = try keystoreOptions.openKeystore()
            if StandardInput.isTerminal && qr == nil {
                StandardError.write("Paste the key, or Rownd's key text <link>#<key>, then press Enter and Ctrl-D:\n")
            }
            // Ctrl-C at the paste stores nothing, and says so.
            var text = try PromptInterrupt.guarding(.nothingStored) {
                try qr.map { Array(try ImageInput.single(.key, in: $0).utf8) }
                    ?? StandardInput.readAll(limit: InputLimits.keyMaterial, what: "key material")
            }
            defer { wipe(&text) }
            let key = try PastedKey(parsing: text)
            let passphrase: Passphrase?
            if let existing = try keystore.entry(for: id) {
                if protect && !existing.isProtected { throw protectExisting(id) }
                passphrase = try keystoreOptions.passphrase(toUnlock: id, in: keystore)
            } else {
                passphrase = try keystoreOptions.passphrase(toProtect: protect)
            }
            let imported = try key.store(as: id, in: keystore, passphrase: passphrase)
            print("\(id)\t\(key.fingerprint)\t\(imported ? "imported" : "unchanged")")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List key ids: id, fingerprint, creation time, and whether protected or rotated.",
            discussion: """
                Every usable id gets one line on stdout; a keystore that does not exist yet is an error (66) naming \
                its folder. Then each damaged or unsafe entry gets one line on stderr, \
                naming its id where it can be read, and the fix; the exit status is then 65 (damaged) or 77 (unsafe \
                owner or permissions) instead of 0.
                """)

        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let keystore = try keystoreOptions.openKeystore()
            // A keystore that was never made is said so (66), apart from one that holds no keys (0).
            if try keystoreOptions.chosenBackend() == .file, access(keystore.location, F_OK) != 0, errno == ENOENT {
                throw CLIFailure(
                    "no keystore at \(keystore.location): no key was ever stored in namespace '\(keystore.namespace)' here; make one "
                        + "with 'sealkit keys generate ID' or receive one with 'sealkit transfer receive' (or check SEALKIT_HOME)",
                    status: .noInput)
            }
            let survey = try keystore.survey()
            let output = StandardOutput()
            for entry in survey.entries {
                var flags: [String] = []
                if entry.isSealedToTPM {
                    flags.append("tpm")
                    if entry.isProtected { flags.append("pin") }
                } else if entry.isProtected {
                    flags.append("protected")
                }
                if !entry.retiredFingerprints.isEmpty { flags.append("\(entry.retiredFingerprints.count) retired") }
                let created = entry.created.formatted(.iso8601)
                try output.write("\(entry.id)\t\(entry.fingerprint)\t\(created)\t\(flags.isEmpty ? "-" : flags.joined(separator: ","))\n")
            }
            try output.flush()
            guard !survey.problems.isEmpty else { return }
            for problem in survey.problems {
                let name = problem.keyID.map { "key '\($0)'" } ?? "an entry whose id cannot be read"
                StandardError.write("sealkit: \(name): \(said(problem))\n")
            }
            let damaged = survey.problems.contains { ExitStatus($0.reason) == .dataError }
            Glibc.exit(damaged ? ExitStatus.dataError.rawValue : ExitStatus(survey.problems[0].reason).rawValue)
        }
    }

    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passwd",
            abstract: "Add, change or remove the passphrase of all of ID's keys, or seal them to the TPM, in one atomic write.",
            discussion: """
                The current passphrase (or TPM PIN, for keys protected now) comes from --passphrase-file or SEALKIT_PASSPHRASE, \
                else it is asked on the terminal. The new one comes from --new-passphrase-file, else it is asked twice \
                on the terminal. --remove stores the keys unprotected, whatever protects them now. --tpm seals them to this \
                machine's TPM (SEALKIT_TPM_TCTI, default device:/dev/tpmrm0) instead; with --tpm-pin, the TPM asks for a PIN: \
                from --new-passphrase-file, else (for keys not protected now) --passphrase-file or SEALKIT_PASSPHRASE, else \
                asked twice on the terminal. --tpm on keys sealed with a PIN seals them again with the same PIN unless \
                --no-tpm-pin is given; keys without a PIN are sealed outside the TPM's dictionary-attack lockout, so \
                'keys passwd ID --tpm' also moves keys sealed before that out of it.
                """)

        @Argument(help: "The key id whose passphrase to set.") var id: String
        @Flag(help: "Remove the protection (a passphrase, or the TPM): store the keys unprotected.") var remove = false
        @Flag(help: "Seal the keys to this machine's TPM instead of a passphrase.") var tpm = false
        @Flag(
            inversion: .prefixedNo,
            help: ArgumentHelp(
                "With --tpm: the TPM asks for a PIN before it unseals the keys, and locks out guessing (--no-tpm-pin: no PIN). "
                    + "Keys sealed with a PIN now keep it unless --no-tpm-pin is given."))
        var tpmPin: Bool?
        @Option(help: ArgumentHelp(
            "Read the new passphrase (or TPM PIN) from this file (first line); pipes, FIFOs and /dev/fd/N work.", valueName: "path"))
        var newPassphraseFile: String?
        @OptionGroup var keystoreOptions: KeystoreOptions

        func validate() throws {
            if remove && newPassphraseFile != nil { throw ValidationError("give --remove or --new-passphrase-file, not both") }
            if remove && tpm { throw ValidationError("give --remove or --tpm, not both") }
            if let tpmPin, !tpm { throw ValidationError("\(tpmPin ? "--tpm-pin" : "--no-tpm-pin") goes with --tpm") }
            if tpm && tpmPin != true && newPassphraseFile != nil {
                throw ValidationError("--new-passphrase-file with --tpm reads a PIN: add --tpm-pin")
            }
        }

        func run() throws {
            let id = try keyID(id)
            let keystore = try keystoreOptions.openKeystore()
            guard let before = try keystore.entry(for: id) else { throw missingKey(id, in: keystore) }
            if tpm {
                let current = try keystoreOptions.passphrase(toUnlock: id, in: keystore)
                // Sealing again (to reseal a key outside the TPM's lockout, or to another TPM) keeps a PIN it has:
                // dropping it takes --no-tpm-pin.
                let keepsPIN = tpmPin == nil && before.isSealedToTPM && before.isProtected
                var pin: Passphrase?
                if keepsPIN {
                    pin = current
                } else if tpmPin == true {
                    if let newPassphraseFile {
                        pin = try KeystoreOptions.readPassphrase(from: newPassphraseFile, option: "--new-passphrase-file")
                    } else if !before.isProtected, let given = try keystoreOptions.givenPassphrase() {
                        pin = given
                    } else {
                        pin = try KeystoreOptions.askTwice(
                            prompt: "New TPM PIN for key \(id.shown): ",
                            missing: "keys passwd --tpm-pin needs the PIN: use --new-passphrase-file, or run on a terminal",
                            abandoned: "nothing was changed")
                    }
                }
                let entry = try keystore.sealKeys(of: id, to: try KeystoreOptions.tpm(), pin: pin, unlockingWith: current)
                print("\(id)\t\(entry.fingerprint)\t\(pin == nil ? "sealed to the TPM" : "sealed to the TPM with a PIN")")
                return
            }
            if remove && !before.isProtected && !before.isSealedToTPM {
                print("\(id)\t\(before.fingerprint)\tnot protected (unchanged)")
                return
            }
            let current = try keystoreOptions.passphrase(toUnlock: id, in: keystore)
            let new: Passphrase?
            if remove {
                new = nil
            } else if let newPassphraseFile {
                new = try KeystoreOptions.readPassphrase(from: newPassphraseFile, option: "--new-passphrase-file")
            } else {
                new = try KeystoreOptions.askTwice(
                    prompt: "New passphrase for key \(id.shown): ",
                    missing: "keys passwd needs the new passphrase: use --new-passphrase-file, or run on a terminal",
                    abandoned: "nothing was changed")
            }
            let entry = try Vault(keystore: keystore, user: id, format: .v1, passphrase: current).changePassphrase(to: new)
            let what = new == nil ? "unprotected" : before.isProtected && !before.isSealedToTPM ? "passphrase changed" : "protected"
            print("\(id)\t\(entry.fingerprint)\t\(what)")
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Make a new current key for ID, keeping the old ones to decrypt older ciphertexts.")

        @Argument(help: "The key id to rotate.", completion: .keyIDs) var id: String
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let id = try keyID(id)
            let keystore = try keystoreOptions.openKeystore()
            let passphrase = try keystoreOptions.passphrase(toUnlock: id, in: keystore)
            let entry = try Vault(keystore: keystore, user: id, format: .v1, passphrase: passphrase).rotateKey()
            print("\(id)\t\(entry.fingerprint)\t\(entry.retiredFingerprints.count) retired")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete every key stored under ID. Ciphertexts made with them can no longer be opened.")

        @Argument(help: "The key id to delete.", completion: .keyIDs) var id: String
        @Flag(name: .shortAndLong, help: "Do not ask for confirmation on a terminal.") var force = false
        @OptionGroup var keystoreOptions: KeystoreOptions

        func run() throws {
            let id = try keyID(id)
            let keystore = try keystoreOptions.openKeystore()
            if !force {
                // Ask only people: a script (stdin not a terminal) deletes as it always did.
                let shown = (try? keystore.entry(for: id)).flatMap { $0 }.map { " (current key \($0.fingerprint))" } ?? ""
                let question = "Delete every key of \(id.shown)\(shown)? Ciphertexts made with them can no longer be opened."
                if TerminalPrompt.confirm(question) == false {
                    throw CLIFailure("nothing was deleted: answer 'y' to delete, or use --force", status: .negative)
                }
            }
            try Vault(keystore: keystore, user: id, format: .v1).deleteKey()
            print("\(id)\tdeleted")
        }
    }
}

/// `--protect` meeting an id that is stored unprotected: it would store nothing (the keys are
/// there already) and leave them unprotected, so it is refused, pointing to the command that protects.
func protectExisting(_ id: KeyID) -> CLIFailure {
    CLIFailure(
        "\(id.shown) is already stored without a passphrase, and --protect does not change stored keys: nothing was changed; run 'sealkit keys passwd \(id.shellWord)' to protect them",
        status: .usage)
}

/// The error for an id with no keys in `keystore`, as the keystore says it: the one a vault for it gives.
func missingKey(_ id: KeyID, in keystore: Keystore) -> any Error {
    if case .notPossible(let error) = Vault(keystore: keystore, user: id, format: .v1).encryptionStatus(), error.reason == .keyNotFound {
        return error
    }
    return CLIFailure("no key for \(id.shown) in namespace '\(keystore.namespace)'", status: .noInput)
}
