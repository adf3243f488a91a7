import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

extension CompletionKind {
    /// The key ids in the keystore, as `sealkit keys list` would show them, for shell completion
    /// (bash, zsh and fish call `sealkit` back to get them). Honours `--namespace` when it was
    /// typed before the cursor, else `$SEALKIT_NAMESPACE`, and `--keystore` likewise. Ids are not secret; a keystore that
    /// cannot be read completes nothing rather than printing an error into the shell.
    static var keyIDs: CompletionKind {
        .custom { words, _, prefix in
            var namespace: String?
            var backend = try? KeystoreOptions.backendFromEnvironment()
            for (index, word) in words.enumerated() {
                if word == "--namespace", index + 1 < words.count { namespace = words[index + 1] }
                if word.hasPrefix("--namespace=") { namespace = String(word.dropFirst("--namespace=".count)) }
                if word == "--keystore", index + 1 < words.count { backend = KeystoreBackend(rawValue: words[index + 1]) }
                if word.hasPrefix("--keystore=") { backend = KeystoreBackend(rawValue: String(word.dropFirst("--keystore=".count))) }
            }
            guard let backend, let entries = try? KeystoreOptions.openKeystore(backend, namespace: namespace).entries() else { return [] }
            return entries.map { "\($0.id)" }.filter { $0.hasPrefix(prefix) }
        }
    }
}
