
/// Whether one id's keys open the ciphertexts in a user's data: the check that stops a second
/// device from making a second key for a user who already has one (a key fork), and that
/// `sealkit status --profile` and `Vault.encryptionStatus(for:schema:)` report.
///
/// Which values count:
/// - with a schema, the values of the fields it flags encrypted (in `data` for Rownd's user-state
///   shape), each opened for its own field;
/// - without one, every string anywhere in the profile that parses as a SealKit ciphertext: v1
///   (padded standard base64 of at least 40 bytes) or v2 (`sk2:`). A v2 value's place is not known
///   then, so only its key tag is checked.
///
/// Plaintext values are not this check's business; `profile encrypt` seals them.
package struct ProfileKeyCheck: Sendable, Equatable {
    /// Keys the data is sealed under that the keys checked do not include.
    package let missingKeys: [MissingKey]
    /// Values under a key the keys include that still do not open: tampered, moved to another field
    /// or user (v2), or of a format this SealKit does not read. Paths and reasons, never values.
    package let unreadable: [UnreadableValue]
    /// How many ciphertexts the check looked at.
    package let ciphertextCount: Int

    /// Whether the keys open every ciphertext that counts.
    package var opensEverything: Bool { missingKeys.isEmpty && unreadable.isEmpty }

    /// Checks `profile` against `keys`.
    /// - Parameters:
    ///   - profile: the user's profile, as fields or in Rownd's user-state shape.
    ///   - schema: the app schema; nil counts every string that parses as a ciphertext.
    ///   - keys: the id's keys, or nil when the keystore has none for the id (then every ciphertext
    ///     is under a missing key).
    package init(profile: JSONValue, schema: ProfileSchema?, keys: KeyRing?) {
        var missing: [(tag: KeyFingerprint?, paths: [String])] = []
        var unreadable: [UnreadableValue] = []
        var count = 0

        func missingKey(_ tag: KeyFingerprint?, at path: String) {
            if let index = missing.firstIndex(where: { $0.tag == tag }) {
                missing[index].paths.append(path)
            } else {
                missing.append((tag, [path]))
            }
        }

        func check(_ text: String, place: CiphertextPlace?, at path: String) {
            // A shared value opens with sharing identities, not with the keys checked here (the audit checks it).
            guard !SharedValue.isShared(text), let shape = CiphertextShape(of: text) else { return }
            count += 1
            guard let keys else {
                switch shape {
                case .v1: missingKey(nil, at: path)
                case .v2(let tag): missingKey(tag, at: path)
                case .unsupportedVersion: unreadable.append(UnreadableValue(path: path, reason: .unsupportedVersion))
                }
                return
            }
            if case .v2(let tag) = shape, place == nil {
                if !keys.holdsKey(tagged: tag) { missingKey(tag, at: path) }
                return
            }
            do {
                _ = try keys.decrypt(text, place: place ?? .context(""))
            } catch .unknownKey(let tag) {
                missingKey(tag, at: path)
            } catch .authenticationFailed where shape == .v1 {
                // v1 names no key: one that none of the id's keys opens was sealed under another key
                // (or tampered with, which it cannot tell apart).
                missingKey(nil, at: path)
            } catch {
                unreadable.append(UnreadableValue(path: path, reason: error))
            }
        }

        if let schema {
            if let (prefix, members) = Self.fields(of: profile, schema: schema) {
                for (key, value) in members {
                    guard let field = schema.field(named: key), field.isEncrypted, case .string(let text) = value else { continue }
                    check(text, place: .field(field.name), at: prefix + key)
                }
            }
        } else {
            func walk(_ value: JSONValue, path: String) {
                switch value {
                case .string(let text): check(text, place: nil, at: path)
                case .object(let members):
                    for (key, member) in members { walk(member, path: path.isEmpty ? key : path + "." + key) }
                case .array(let elements):
                    for (index, element) in elements.enumerated() { walk(element, path: path + "[\(index)]") }
                case .null, .bool, .number: break
                }
            }
            walk(profile, path: "")
        }
        missingKeys = missing.map { MissingKey(fingerprint: $0.tag, paths: $0.paths) }
        self.unreadable = unreadable
        ciphertextCount = count
    }

    /// A profile's fields, and the path prefix that names them (`data.` or none); nil for a non-object.
    static func fields(of profile: JSONValue, schema: ProfileSchema) -> (prefix: String, members: [(key: String, value: JSONValue)])? {
        guard case .object(let members) = profile else { return nil }
        if let index = schema.dataIndex(in: members), case .object(let fields) = members[index].value { return ("data.", fields) }
        return ("", members)
    }
}

/// A key that a user's data is sealed under and the keys checked do not include.
package struct MissingKey: Sendable, Equatable, CustomStringConvertible {
    /// The key's fingerprint, from a v2 header; nil for v1 ciphertexts, which name no key.
    package let fingerprint: KeyFingerprint?
    /// The values sealed under it, by path (`data.ssn`, `ssn`), in profile order.
    package let paths: [String]

    /// Names a missing key and the values sealed under it.
    package init(fingerprint: KeyFingerprint?, paths: [String]) {
        self.fingerprint = fingerprint
        self.paths = paths
    }

    package var description: String {
        (fingerprint.map { "key \($0), which this keystore does not have" } ?? "a key this keystore does not have") + " ("
            + (paths.count == 1 ? "field " : "fields ") + paths.prefix(5).joined(separator: ", ")
            + (paths.count > 5 ? " and \(paths.count - 5) more" : "") + ")"
    }
}

/// A ciphertext under a known key that does not open, and why.
package struct UnreadableValue: Sendable, Equatable, CustomStringConvertible {
    /// The value's path.
    package let path: String
    /// Why it does not open.
    package let reason: CiphertextError

    package var description: String { "\(path): \(reason)" }
}
