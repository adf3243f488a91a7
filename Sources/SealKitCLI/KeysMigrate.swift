import ArgumentParser
@_spi(CLI) import SealKit

extension KeysCommand {
    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate",
            abstract: "Move keys between the file keystore and the desktop keyring (Secret Service).",
            discussion: """
                Keys move from the other keystore into the one --to names, one id at a time, current and retired \
                keys together. Each id is deleted from the source only after the destination has been read back \
                and holds every one of its keys; an id the destination holds with a different key is refused. \
                Every id is checked before any moves. Protected keys stay protected under the same passphrase.
                """)

        @Option(help: ArgumentHelp("The keystore to move keys into: 'secret-service' or 'file'.", valueName: "kind"))
        var to: KeystoreBackend?
        @Flag(help: ArgumentHelp(
            "Instead: move keys a SealKit before id normalization stored under a non-NFC form of their id (café typed as e + accent) to the NFC id, merging with an NFC twin that holds the same key.",
            discussion: "Asks on a terminal; --yes gives consent in scripts."))
        var normalize = false
        @Flag(help: "With --normalize: go ahead without asking.") var yes = false
        @Flag(name: .customLong("v1-only"), help: ArgumentHelp(
            "With --normalize: confirm that no v2 value was sealed for these ids under their old spelling.",
            discussion: "v2 binds an id's exact bytes, so such values would open under neither spelling afterwards; "
                + "--normalize refuses without this. v1 values are not affected."))
        var v1Only = false
        @Flag(help: "Move every id in the namespace.") var all = false
        @Argument(help: "The key ids to move.") var ids: [String] = []
        @OptionGroup var keystoreOptions: KeystoreOptions

        func validate() throws {
            if normalize {
                guard to == nil, ids.isEmpty, !all else { throw ValidationError("--normalize takes no --to, ids or --all: it normalizes every id that needs it") }
                return
            }
            guard to != nil else { throw ValidationError("give --to KIND (the keystore to move keys into), or --normalize") }
            if all == !ids.isEmpty { throw ValidationError("give the key ids to move, or --all") }
            if let from = keystoreOptions.backend, from == to {
                throw ValidationError("--keystore and --to both name '\(from.rawValue)': keys move from the other keystore")
            }
        }

        func run() throws {
            if normalize { return try normalizeIDs() }
            guard let to else { return }
            let source = try keystoreOptions.openKeystore(to == .file ? .secretService : .file)
            let destination = try keystoreOptions.openKeystore(to)
            let ids = all ? try source.entries().map(\.id) : try self.ids.map(keyID)
            // One passphrase for every protected id, on either side, asked at most once.
            var passphrase: Passphrase?
            for id in ids {
                guard let entry = try source.entry(for: id) else { throw missingKey(id, in: source) }
                // Before the other keystore is asked anything: the library refuses these too.
                if entry.isSealedToTPM {
                    throw CLIFailure(
                        "key '\(id)' is sealed to this machine's TPM, which only the file keystore does: nothing was moved; run "
                            + "'sealkit keys passwd \(id) --remove' (or 'keys passwd \(id)' for a passphrase) first", status: .usage)
                }
                if try entry.isProtected || destination.entry(for: id)?.isProtected == true {
                    let protectedSide = entry.isProtected ? source : destination
                    passphrase = try keystoreOptions.passphrase(toUnlockProtected: id, in: protectedSide)
                    break
                }
            }
            // Every id is checked before any moves, so a missing id, a conflict, a wrong
            // passphrase or a locked keyring leaves both keystores as they were.
            for id in ids { try source.checkMove(id, to: destination, passphrase: passphrase) }
            for id in ids {
                let moved = try source.move(id, to: destination, passphrase: passphrase)
                // Each line is printed as its id is done, so a later failure leaves an accurate record.
                print("\(id)\t\(moved.map { "\($0.fingerprint)" } ?? "")\tmoved to \(to.rawValue)")
            }
        }
    
        /// `--normalize`: each file stored under another Unicode form of its id moves to the NFC id.
        private func normalizeIDs() throws {
            guard try keystoreOptions.chosenBackend() == .file else {
                throw CLIFailure("--normalize is for the file keystore, where ids name files", status: .usage)
            }
            let keystore = try keystoreOptions.openKeystore()
            let files = try keystore.unnormalizedIDs()
            guard !files.isEmpty else {
                StandardError.write("no key id is stored under another Unicode form: nothing to do\n")
                return
            }
            if !yes && !(StandardInput.isTerminal && StandardError.isTerminal) {
                throw CLIFailure(
                    "give --yes to move \(files.map { "\($0.id.shown)" }.joined(separator: ", ")) to the NFC form of each id (no terminal to ask on)",
                    status: .usage)
            }
            // A v2 value binds the id's bytes. One an earlier SealKit sealed for the old spelling would
            // open under neither spelling once the old file is gone, and only the user knows whether
            // one exists: the move waits for them to say so.
            guard v1Only else {
                throw CLIFailure(
                    "\(files.map { "\($0.id.shown)" }.joined(separator: ", ")) \(files.count == 1 ? "is" : "are") stored under another Unicode "
                        + "form; v2 values sealed for \(files.count == 1 ? "it" : "them") under that spelling would no longer open after "
                        + "normalizing, so nothing was changed: decrypt such values first (with the SealKit that sealed them), or give "
                        + "--v1-only if none exist",
                    status: .usage)
            }
            if !yes {
                for file in files {
                    StandardError.write("\(file.id.shown) is stored under another Unicode form of its id: its keys move to the NFC id \(file.id.shown)"
                        + (try keystore.entry(for: file.id) != nil ? ", which holds keys too (the same key merges; a different one is refused)" : "") + "\n")
                }
                guard try TerminalPrompt.confirm("Go ahead? [y/N] ") else { throw CLIFailure("nothing was changed", status: .negative) }
            }
            // One passphrase, asked once, when a legacy file or its NFC twin is protected; `normalize` uses it
            // only where protection is involved.
            var needing: KeyID?
            for file in files where try file.isProtected || keystore.entry(for: file.id)?.isProtected == true {
                needing = file.id
                break
            }
            let passphrase = try needing.map { try keystoreOptions.passphrase(toUnlockProtected: $0, in: keystore) }
            for file in files {
                let merged = try keystore.normalize(file.id, passphrase: passphrase)
                let fingerprint = try keystore.entry(for: file.id)?.fingerprint.description ?? ""
                print("\(file.id)\t\(fingerprint)\t\(merged ? "merged" : "normalized")")
            }
        }
    }
}
