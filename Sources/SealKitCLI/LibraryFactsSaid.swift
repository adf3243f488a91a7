import SealKit
@_spi(CLI) import SealKitAudit

// The command's words for what the library reports as facts: where a remedy is one of the command's own commands or
// flags, it is worded here, so the library's text names none (an app words its own).

extension FindingKind {
    /// The remedy as the command words it in its reports: the library's, or, where the fix is one of the
    /// command's own commands or flags, that command.
    var said: String {
        switch self {
        case .plaintextField:
            return "Encrypt the field (sealkit profile encrypt) and check how the value was written unencrypted."
        case .retiredKey:
            return "Rotate the value to the current key (sealkit profile rotate)."
        case .mixedKeys:
            return "Give the device that made the other key the user's key (sealkit transfer), then re-encrypt its values."
        case .unknownKey:
            return "Give the key id that holds the key (--key), or receive the key from the device that made it."
        case .v1InBoundField:
            return "Migrate data you trust (sealkit profile rotate --from-v1), then rotate the key; otherwise restore the field."
        case .sealMissing:
            return "Restore the profile from a source that has its seal; a profile from before seals gets one from sealkit profile encrypt."
        default:
            return remedy
        }
    }
}

extension AuditSummary {
    /// Why nothing was audited, when no value was: an audit that read nothing is not a pass.
    /// - Parameter flaggedBySchema: whether a schema said which fields to audit.
    /// - Returns: the reason, or nil when at least one value was audited.
    func nothingAuditedReason(flaggedBySchema: Bool) -> String? {
        guard valueCount == 0 else { return nil }
        if fileCount == 0 { return "no .json, .ndjson or .jsonl file was found in the paths given" }
        if profileCount == 0 {
            return "the \(fileCount == 1 ? "file holds" : "\(fileCount) files hold") no profile (a JSON object)"
        }
        let profiles = profileCount == 1 ? "1 profile" : "\(profileCount) profiles"
        if flaggedBySchema { return "\(profiles) read, with no flagged field set in any; check the schema's field names" }
        return "\(profiles) read, with no value that looks like a ciphertext; give --schema to say which fields must be encrypted"
    }
}

extension ProfileOptions {
    /// Where a note says to receive a missing key: the command that does.
    static let receiveHint = " ('sealkit transfer receive')"
}
