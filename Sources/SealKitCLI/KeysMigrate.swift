import ArgumentParser
import SealKit

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
        var to: KeystoreBackend
        @Flag(help: "Move every id in the namespace.") var all = false
        @Argument(help: "The key ids to move.") var ids: [String] = []
        @OptionGroup var keystoreOptions: KeystoreOptions

        func validate() throws {
            if all == !ids.isEmpty { throw ValidationError("give the key ids to move, or --all") }
            if let from = keystoreOptions.backend, from == to {
                throw ValidationError("--keystore and --to both name '\(to.rawValue)': keys move from the other keystore")
            }
        }

        func run() throws {
            let source = try keystoreOptions.keystore(to == .file ? .secretService : .file)
            let destination = try keystoreOptions.keystore(to)
            let ids = all ? try source.entries().map(\.id) : try self.ids.map(keyID)
            // One passphrase for every protected id, on either side, asked at most once.
            var passphrase: Passphrase?
            for id in ids {
                guard let entry = try source.entry(for: id) else { throw KeystoreError.notFound(id, namespace: source.namespace.name) }
                if try entry.isProtected || destination.entry(for: id)?.isProtected == true {
                    let protectedSide: any Keystore = entry.isProtected ? source : destination
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
                print("\(id)\t\(moved.current.fingerprint)\tmoved to \(to.rawValue)")
            }
        }
    }
}
