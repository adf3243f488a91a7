import SealKit

/// How the command shows a key id, which someone else may have chosen (a peer's transfer, a backup,
/// a Rownd app's user id): `KeyID` refuses controls and invisible characters, which
/// `SealKitError.quoting` would escape, but allows quotes, spaces and every shell metacharacter.
extension KeyID {
    /// The id in single quotes, as prompts and messages show it, with each `\` and `'` inside written
    /// `\\` and `\'`: an id such as `alice' key 5F2A... and 'bob` cannot pass for two ids in a consent
    /// prompt. Otherwise the id as it is: what `SealKitError.quoting` escapes (controls, bidi and
    /// invisible characters) `KeyID` refuses, and its 160-character cut would hide the tail of a long id.
    var shown: String {
        "'" + rawValue.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    /// The id as one POSIX shell word, for a command a message tells a person to run: plain when it
    /// holds only characters no shell treats specially, else in single quotes (a `'` as `'\''`).
    var shellWord: String { Self.shellWord(rawValue) }

    /// `text` as one POSIX shell word (see `shellWord`).
    static func shellWord(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "@%+=,./_-".unicodeScalars.contains(scalar))
        }
        return plain ? text : "'" + text.replacing("'", with: "'\\''") + "'"
    }
}
