import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitBackup

#if canImport(Glibc)
import Glibc
#endif

extension KeysCommand {
    struct Backup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "backup",
            abstract: "Print keys sealed under a passphrase (Argon2id), to keep on paper.",
            discussion: """
                Prints one line, or numbered parts when long, holding each id's current and retired keys. By default \
                SealKit makes the backup passphrase: \(PaperBackup.generatedWordCount) words from the EFF large word \
                list (77 bits), shown on stderr apart from the backup, to write down and keep apart from it: at a \
                terminal the backup's QR is shown alone until Enter, then cleared, then the passphrase alone until Enter. A \
                passphrase you choose (SEALKIT_PASSPHRASE or --passphrase-file, which also unlock protected keys) \
                needs at least \(PaperBackup.minimumChosenLength) characters and is kept byte-exact: type it back exactly. The \
                words SealKit makes may be written in any case, joined by spaces, hyphens, dots or commas. Restore with 'sealkit keys restore ID'.
                """)

        @Argument(help: "Key ids to back up.", completion: .keyIDs) var ids: [String] = []
        @Flag(help: "Back up every key id in the namespace.") var all = false
        @Option(help: "text: backup lines alone on stdout; qr: QR codes and text on stderr (default on a terminal).")
        var format: TransferFormat?
        @Option(help: ArgumentHelp(
            "Instead of a passphrase, split the backup's key into N SLIP-39 shares of 33 words (with --threshold).",
            valueName: "N"))
        var shares: Int?
        @Option(help: ArgumentHelp("How many of the shares restore the backup.", valueName: "K")) var threshold: Int?
        @Option(help: ArgumentHelp(
            "A group of shares, K of N restore the group; repeat for several groups (with --group-threshold).",
            valueName: "K/N"))
        var group: [ShareBackupCommands.Group] = []
        @Option(help: ArgumentHelp("With --group: how many groups restore the backup.", valueName: "G")) var groupThreshold: Int?
        @Option(help: ArgumentHelp(
            "With shares: write each share as a 0600 text file and a PNG QR code into this folder instead of showing it.",
            valueName: "dir"), completion: .directory)
        var sharesDir: String?
        @Flag(help: "With shares shown on the terminal: do not ask the keeper to type back two words of each share.")
        var noCheck = false
        @OptionGroup var keystoreOptions: KeystoreOptions

        func validate() throws {
            if all && !ids.isEmpty { throw ValidationError("give key ids or --all, not both") }
            if !all && ids.isEmpty { throw ValidationError("name a key id to back up, or use --all") }
            if (shares == nil) != (threshold == nil) { throw ValidationError("--shares N goes with --threshold K") }
            if shares != nil && !group.isEmpty { throw ValidationError("give --shares N --threshold K, or --group K/N (repeated), not both") }
            if !group.isEmpty && groupThreshold == nil && group.count > 1 {
                throw ValidationError("several --group options need --group-threshold G")
            }
            if groupThreshold != nil && group.isEmpty { throw ValidationError("--group-threshold goes with --group K/N") }
            if sharesDir != nil && shares == nil && group.isEmpty { throw ValidationError("--shares-dir goes with --shares or --group") }
        }

        func run() throws {
            let format = TransferFormat.resolve(format)
            let keystore = try keystoreOptions.openKeystore()
            let histories = try keystoreOptions.exportKeys(keystoreOptions.idsToExport(ids, all: all, in: keystore), from: keystore)
            if let shares, let threshold {
                return try ShareBackupCommands.backup(
                    histories, groups: [ShareBackupCommands.Group(argument: "\(threshold)/\(shares)")!], groupThreshold: 1,
                    format: format, sharesDirectory: sharesDir, check: !noCheck, options: keystoreOptions)
            }
            if !group.isEmpty {
                return try ShareBackupCommands.backup(
                    histories, groups: group, groupThreshold: groupThreshold ?? 1, format: format, sharesDirectory: sharesDir,
                    check: !noCheck, options: keystoreOptions)
            }
            let (passphrase, made) = try backupPassphrase()
            let lines = try PaperBackup.make(histories, passphrase: passphrase)
            TransferDisplay.describe(histories, "Backed up")
            if format == .qr && made && StandardError.isTerminal { return try Self.showApart(lines, passphrase) }
            if format == .qr {
                StandardError.write("Print this or write it down, and keep the passphrase apart from it. Restore with 'sealkit keys restore ID'.\n")
            }
            try TransferDisplay.show(lines, format: format)
            if made { Self.show(passphrase) }
        }

        /// The chosen passphrase when one is given (long enough), else one made here.
        private func backupPassphrase() throws -> (Passphrase, made: Bool) {
            guard let chosen = try keystoreOptions.givenPassphrase() else { return (PaperBackup.makePassphrase(), true) }
            do {
                try PaperBackup.checkChosen(chosen)
            } catch {
                throw CLIFailure("\(said(error)): no backup was made", status: .usage)
            }
            return (chosen, false)
        }

        /// At a terminal, where the backup is photographed, it and its passphrase never share a screen:
        /// the backup is shown on the alternate screen until Enter, then cleared with the scrollback,
        /// then the passphrase alone until Enter, then cleared and the screen left. A photo of the
        /// screen holds one or the other.
        private static func showApart(_ lines: [String], _ passphrase: Passphrase) throws {
            try PromptInterrupt.guarding {
                try PromptInterrupt.onAlternateScreen {
                    StandardError.write(
                        "Photograph or print this backup. Its passphrase comes next, on a screen of its own: keep the two apart.\n")
                    try TransferDisplay.show(lines, format: .qr)
                    StandardError.write("\nOnce the backup is photographed, press Enter to clear it and show its passphrase.")
                    try TerminalPrompt.line()
                    StandardError.write(PromptInterrupt.clearScreen)
                    show(passphrase)
                    StandardError.write("Once the passphrase is written down, press Enter to clear it.")
                    try TerminalPrompt.line()
                }
            }
            StandardError.write(
                "The backup and its passphrase were shown, each on a screen of its own. Restore with 'sealkit keys restore ID'.\n")
        }

        /// Shows a made passphrase on stderr, after the backup and apart from it (the backup alone
        /// goes to stdout with --format text), straight from guarded memory.
        private static func show(_ passphrase: Passphrase) {
            StandardError.write(
                "\nBackup passphrase (made for this backup and not shown again; write it down and keep it apart from the backup):\n\n    ")
            passphrase.withUnsafeBytes { StandardError.write(bytes: $0) }
            StandardError.write("\n\n")
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Store keys from a paper backup read from stdin, or list the ids it holds.",
            discussion: """
                Stdin holds the backup: one line, or one line per part in any order. The backup passphrase comes from \
                SEALKIT_PASSPHRASE or --passphrase-file, else it is asked on the terminal (three tries). A passphrase \
                SealKit made opens however its words are written: any case, separated by spaces, hyphens, dots or \
                commas. A passphrase you chose must be typed exactly, byte for byte. With no id and no --all, \
                prints the ids the backup holds, one per line, and stores nothing. Otherwise stores the ids named (or \
                --all) and prints id, fingerprint, imported|unchanged per id. An id already stored with the same key \
                is fine; a different one is refused, and nothing is stored.
                """)

        @Argument(help: "The key ids to restore; none lists the ids the backup holds.") var ids: [String] = []
        @Flag(help: "Restore every id the backup holds.") var all = false
        @Flag(help: "A share backup: stdin holds the sealed bundle line, then enough SLIP-39 shares, one per line.")
        var shares = false
        @Option(help: "Accepted for symmetry with keys backup; restore prints text.") var format: TransferFormat?
        @Option(parsing: .upToNextOption, help: ArgumentHelp(
            "Read the backup (its parts, or the bundle and shares) from QR codes in these images instead of stdin.",
            valueName: "image"), completion: .file())
        var qr: [String] = []
        @Flag(help: "Protect the keys with a passphrase (asked on the terminal unless given).") var protect = false
        @OptionGroup var tpmOptions: TPMOptions
        @OptionGroup var keystoreOptions: KeystoreOptions

        func validate() throws {
            if all && !ids.isEmpty { throw ValidationError("give key ids or --all, not both") }
            try tpmOptions.validate(protect: protect)
        }

        func run() throws {
            let named = try ids.map(keyID)
            tpmOptions.apply()
            let keystore = try keystoreOptions.openKeystore()
            try KeystoreOptions.checkSealingToTPM(named, in: keystore)
            // The PIN, like --protect's passphrase, comes from the passphrase sources.
            let protect = tpmOptions.needsSecret(protect: protect)
            if protect {
                for id in named {
                    if let existing = try keystore.entry(for: id), !existing.isProtected { throw protectExisting(id) }
                }
            }
            // Ctrl-C while the backup is pasted or its passphrase typed stores nothing, and says so.
            let contents = try PromptInterrupt.guarding(.nothingStored) { try readBackup() }
            try Self.restore(contents, ids: named, all: all, protect: protect, keystore: keystore, options: keystoreOptions)
        }

        /// The backup from its images or stdin, opened.
        private func readBackup() throws -> PaperBackup.Contents {
            let scanned = qr.isEmpty ? nil : try ImageInput.codes(of: shares ? .shareBackup : .paperBackup, in: qr)
            if shares { return try ShareBackupCommands.open(options: keystoreOptions, lines: scanned) }
            let code: String
            if let scanned {
                var assembler = PaperBackup.Assembler()
                var whole: String?
                for line in scanned where whole == nil { whole = try assembler.add(line) }
                guard let assembled = whole else { throw assembler.incompleteError }
                code = assembled
            } else {
                if isatty(0) == 1 { StandardError.write("Paste the backup (one line per part), then press Enter:\n") }
                // One line, or one line per part in any order.
                let reader = LineReader(fd: 0, what: "the backup on stdin")
                var assembler = PaperBackup.Assembler()
                var whole: String?
                while whole == nil, try reader.nextLine({ line in whole = try assembler.add(String(decoding: line, as: UTF8.self)) }) {}
                guard let assembled = whole else { throw assembler.incompleteError }
                code = assembled
            }
            // A share bundle or damaged text is refused before any passphrase is asked.
            try PaperBackup.check(code)
            return try Self.open(code, options: keystoreOptions)
        }

        /// Opens the backup with the given passphrase, else one typed on the terminal, with three tries.
        /// A generated passphrase opens however it was written down (`PaperBackup.listForm(of:)`);
        /// a word not on the list is named by its position, with the list's closest words on the terminal.
        static func open(_ code: String, options: KeystoreOptions) throws -> PaperBackup.Contents {
            if let given = try options.givenPassphrase() {
                do {
                    return try PaperBackup.restore(code, passphrase: given)
                } catch {
                    guard error.reason == .wrongPassphrase else { throw error }
                    let unlisted = PaperBackup.unlistedWords(in: given).map { "word \($0.position)" }
                    guard !unlisted.isEmpty else { throw error }
                    throw CLIFailure(
                        "\(said(error)) (\(unlisted.joined(separator: ", ")) of the passphrase "
                            + "\(unlisted.count == 1 ? "is" : "are") not on SealKit's word list)", status: .noPermission)
                }
            }
            var wrong: SealKitError?
            for attempt in 1...KeystoreOptions.tries {
                guard let typed = try KeystoreOptions.ask("Backup passphrase: ") else {
                    throw CLIFailure(
                        "restoring needs the backup passphrase: set SEALKIT_PASSPHRASE, use --passphrase-file, or run on a terminal",
                        status: .usage)
                }
                do {
                    return try PaperBackup.restore(code, passphrase: typed)
                } catch {
                    guard error.reason == .wrongPassphrase else { throw error }
                    wrong = error
                    guard attempt < KeystoreOptions.tries else { break }
                    for (position, _, near) in PaperBackup.unlistedWords(in: typed) {
                        let closest = near.joined(separator: ", ")
                        let hint = closest.isEmpty ? "." : "; the closest list words: " + closest + "."
                        TerminalPrompt.say("Word \(position) is not on SealKit's word list" + hint)
                    }
                    TerminalPrompt.say("Wrong passphrase, try again (case, hyphens and extra spaces do not matter for one SealKit made).")
                }
            }
            throw wrong!
        }

        /// Lists the ids a backup holds (no ids, no `--all`), or stores the ids chosen, all or none,
        /// and prints one line per id. Shared by passphrase and share backups.
        static func restore(
            _ contents: PaperBackup.Contents, ids named: [KeyID], all: Bool, protect: Bool, keystore: Keystore,
            options: KeystoreOptions
        ) throws {
            let keys = contents.keys
            let output = StandardOutput()
            guard all || !named.isEmpty else {
                for history in keys { try output.write("\(history.id)\n") }
                try output.flush()
                return
            }
            let chosen: [KeyHistory]
            if all {
                chosen = keys
            } else {
                chosen = try named.map { try contents.history(for: $0) }
                let others = keys.map(\.id).filter { !named.contains($0) }
                if !others.isEmpty {
                    StandardError.write(
                        "the backup also holds \(others.map { "'\($0)'" }.joined(separator: ", ")); "
                            + "restore them by id or with --all\n")
                }
            }
            // The passphrase given here is the backup's. It protects the restored keys at rest
            // only with --protect, so a restore yields usable keys rather than quietly locking
            // them; an existing protected id still needs unlocking to compare.
            let ids = chosen.map(\.id)
            try KeystoreOptions.checkSealingToTPM(ids, in: keystore)
            let storing = try protect || ids.contains(where: { try keystore.entry(for: $0)?.isProtected == true })
                ? options.passphrase(forStoring: ids, protect: protect, in: keystore) : nil
            let outcomes = try keystore.importKeys(chosen, passphrase: storing)
            if outcomes.contains(true) && storing == nil && !KeystoreOptions.sealNewKeysToTPM {
                StandardError.write("the keys are stored without passphrase protection; restore with --protect to protect them at rest\n")
            }
            for (history, outcome) in zip(chosen, outcomes) {
                try output.write("\(history.id)\t\(history.fingerprint)\t\(outcome ? "imported" : "unchanged")\n")
            }
            try output.flush()
        }
    }
}
