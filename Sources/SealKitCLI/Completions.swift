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
            let typed = completionPrefix(prefix)
            let ids = entries.map(\.id.rawValue).filter { $0.hasPrefix(typed) }
            return ids.compactMap { completionWord($0, for: CompletionShell.requesting) }
        }
    }

    /// An id as the asking shell's completion script must receive it to offer the id itself; nil
    /// for an id that shell would change or expand however it is written, which is left out (it
    /// can still be typed, quoted).
    ///
    /// bash's script hands every word to `compgen -W`, which expands each one as shell text: an id
    /// such as `$(touch PWNED)` or `` `id` `` would run. Each id therefore goes in single quotes (a
    /// `'` inside as `'\''`), which `compgen` removes again, so bash offers the id itself and readline
    /// quotes it as it inserts it (the script completes with `-o filenames`). That same filename mode
    /// expands a leading `~` and a `$NAME` or `${...}` to look for a folder, and then inserts them
    /// unquoted (`~root` became `~root/`, `$HOME` became `$HOME/`); bash 5 does not run a `$(...)` or
    /// a backtick there, older versions are not all known not to. Ids starting with `~` or holding a
    /// `$` or a backtick are therefore left out for bash.
    ///
    /// zsh's script hands the words to `_describe`, where `:` starts a word's description and a
    /// leading `:` marks an empty word: `\` and `:` are escaped with `\`. zsh inserts `!` unquoted,
    /// where history expansion would replace `!x` or `!!` with an earlier command: ids with `!` are
    /// left out for zsh. fish takes each line as one word, but inserts a leading `~` unquoted: those
    /// ids are left out for fish. Ids hold no line breaks or tabs (`KeyID` refuses control
    /// characters), so one line is one id in every shell.
    static func completionWord(_ id: String, for shell: CompletionShell?) -> String? {
        if shell == .bash {
            guard !id.hasPrefix("~"), !id.contains("$"), !id.contains("`") else { return nil }
            return "'" + id.replacing("'", with: "'\\''") + "'"
        }
        if shell == .zsh {
            guard !id.contains("!") else { return nil }
            return id.replacing("\\", with: "\\\\").replacing(":", with: "\\:")
        }
        if shell == .fish, id.hasPrefix("~") { return nil }
        return id
    }

    /// The part of an id typed before the cursor, without the shell quoting a completed id was
    /// inserted with (`a\ b`, `'a b`, `"a b`), so typing on after a completion still completes.
    static func completionPrefix(_ typed: String) -> String {
        var result = "", quote: Character?, escaped = false
        for character in typed {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" && quote != "'" {
                escaped = true
            } else if let open = quote, character == open {
                quote = nil
            } else if quote == nil && (character == "'" || character == "\"") {
                quote = character
            } else {
                result.append(character)
            }
        }
        return result
    }
}
