import ArgumentParser
@_spi(CLI) import SealKit

#if canImport(Glibc)
import Glibc
#endif

/// Shared fields of a profile: `profile encrypt --share FIELD=NAME[,NAME...]` and `profile decrypt [--shared]`.
enum ProfileSharing {
    /// The change `--share` makes to a profile's JSON text before it is encrypted.
    static func sharing(_ specs: [String], with vault: Vault) throws -> ([UInt8]) throws -> [UInt8] {
        var recipients: [String: [String]] = [:]
        for spec in specs {
            guard let equals = spec.firstIndex(of: "="), equals != spec.startIndex else {
                throw CLIFailure("--share takes FIELD=NAME[,NAME...], as in --share ssn=bob,group:family", status: .usage)
            }
            let names = spec[spec.index(after: equals)...].split(separator: ",").map(String.init)
            guard !names.isEmpty else { throw CLIFailure("--share \(spec): name a contact or group:GROUP after '='", status: .usage) }
            recipients[String(spec[..<equals]), default: []] += names
        }
        return { bytes in try vault.shareFields(of: bytes, with: recipients) }
    }

    /// The owner's decrypt: the processor's output with its shared fields opened too.
    static func openingShared(_ output: [UInt8], with vault: Vault, pretty: Bool) throws -> [UInt8] {
        try vault.openSharedFields(of: output, pretty: pretty)
    }

    /// `profile decrypt --shared`: another person's profile, with only the fields shared with the key's identity (or
    /// its groups) opened; everything else exactly as it was.
    static func openShared(_ options: ProfileOptions) throws {
        let vault = try options.keystoreOptions.unlockedVault(for: try keyID(options.key), format: .v1)
        let fd = try options.openInput()
        defer { if fd != 0 { _ = close(fd) } }
        let bytes = try StandardInput.readAll(
            fd: fd, limit: InputLimits.profile, what: "the profile \(options.inputName)", advice: "give one profile")
        let opened = try vault.openSharedFields(of: bytes, onlyAddressedToMe: true, pretty: options.pretty)
        let output = StandardOutput()
        try opened.withUnsafeBytes { try output.write(bytes: $0) }
        try output.flush()
    }
}
