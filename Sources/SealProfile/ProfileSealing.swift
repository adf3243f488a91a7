@_spi(CLI) import SealCore
import SealJSON

/// Why a profile's seal was refused (issue 38). Names versions, never values or MACs.
package enum SealProblem: Equatable, Sendable, CustomStringConvertible {
    /// The schema asks for a seal and the profile has none.
    case missing
    /// The seal is not one, or does not match the profile's flagged fields, the user or the keys;
    /// the detail says which.
    case mismatch(String)
    /// The seal's version is lower than the highest this device has written or verified.
    case older(found: UInt64, seen: UInt64)
    /// The seal's version is the one this device has seen, with another MAC.
    case conflicting(version: UInt64)
    /// This device's record of versions could not be read or written; the detail says why.
    case unrecorded(String, advice: SealKitError.Advice? = nil)

    package var description: String {
        switch self {
        case .missing:
            return "the profile's seal is missing: the schema asks for one (\(ProfileSchema.sealMember)), so a profile "
                + "without it may have had it removed"
        case .mismatch(let detail):
            return "the profile's seal does not match: \(detail)"
        case .older(let found, let seen):
            return "the profile's seal is version \(found), older than version \(seen) seen here: the profile was rolled "
                + "back, or a newer write of this device was not saved; re-read it, or write it again"
        case .unrecorded(let detail, _):
            return detail
        case .conflicting(let version):
            return "the profile's seal is a conflicting write: version \(version) seen here has another seal, so two "
                + "devices wrote at once"
        }
    }

    /// What the `sealkit` command adds after the description.
    package var advice: SealKitError.Advice? {
        switch self {
        case .missing: return .sealWithEncrypt
        case .conflicting: return .readConflictOnPurpose
        case .unrecorded(_, let advice): return advice
        case .mismatch, .older: return nil
        }
    }
}

extension ProfileEncryptor {
    /// What a sealed profile's flagged fields are, as the seal covers them: each flagged field
    /// present (where `mapEncryptedFields` finds them), by name, with its value; nil when one holds
    /// a value no sealed profile can hold (neither a string nor null).
    package func sealedFields(of profile: JSONValue) -> [(name: String, value: ProfileSeal.Value)]? {
        guard case .object(let members) = profile else { return nil }
        var fieldMembers = members
        if let dataIndex = schema.dataIndex(in: members), case .object(let data) = members[dataIndex].value {
            fieldMembers = data
        }
        var fields: [(name: String, value: ProfileSeal.Value)] = []
        for (key, value) in fieldMembers {
            guard let field = schema.field(named: key), field.isEncrypted else { continue }
            switch value {
            case .null: fields.append((key, .null))
            case .string(let text): fields.append((key, .string(Array(text.utf8))))
            default: return nil
            }
        }
        return fields
    }

    /// The seal a profile holds, unverified; nil when it has none.
    /// - Throws: `ProfileError.seal(.mismatch)` when `sealkit_seal` is there but is not a seal.
    package static func seal(of profile: JSONValue) throws(ProfileError) -> ProfileSeal? {
        guard case .object(let members) = profile, let member = members.first(where: { $0.key == ProfileSchema.sealMember })
        else { return nil }
        guard case .string(let text) = member.value, let seal = ProfileSeal(parsing: text) else {
            throw .seal(.mismatch("\(ProfileSchema.sealMember) is not a seal SealKit reads (sks1: and 49 bytes of base64)"))
        }
        return seal
    }

    /// Checks a profile's seal against its flagged fields, its user and the keys, and against
    /// what this device remembers (`mark`).
    /// - Parameters:
    ///   - profile: the profile as stored (encrypted).
    ///   - keys: the user's keys; `keys.id` is the user the seal covers.
    ///   - mark: the highest seal this device has written or verified for the user; nil for none
    ///     (or when the caller checks versions itself).
    /// - Returns: the seal, verified.
    /// - Throws: `ProfileError.seal` saying which: missing, does not match, older, conflicting.
    ///   - acceptingConflict: accept a seal of the remembered version with another MAC (a conflicting
    ///     write, read on purpose to merge it); an older one is still refused.
    package func verifySeal(
        of profile: JSONValue, with keys: KeyRing, against mark: SealMark?, acceptingConflict: Bool = false
    ) throws(ProfileError) -> ProfileSeal {
        guard let seal = try Self.seal(of: profile) else { throw .seal(.missing) }
        guard let key = keys.all.first(where: { $0.fingerprint == seal.keyTag }) else {
            throw .seal(.mismatch("it was made with key \(seal.keyTag), which is none of the user's keys here"))
        }
        guard let fields = sealedFields(of: profile) else {
            throw .seal(.mismatch("a flagged field holds a value no sealed profile holds (neither a ciphertext nor null)"))
        }
        let verifies: Bool
        do {
            verifies = try seal.verifies(key: key, user: keys.id ?? "", fields: fields)
        } catch {
            throw .fieldsFailed([FieldFailure(field: ProfileSchema.sealMember, reason: .outOfGuardedMemory)])
        }
        guard verifies else {
            throw .seal(.mismatch(
                "a flagged field was changed, rolled back, dropped or added, or the seal was made for another user or profile"))
        }
        if let mark {
            switch mark.compare(seal.mark) {
            case .newer, .same: break
            case .older: throw .seal(.older(found: seal.version, seen: mark.version))
            case .conflicting: if !acceptingConflict { throw .seal(.conflicting(version: seal.version)) }
            }
        }
        return seal
    }

    /// What a write checks of the seal its input already carries (issue 38): the input may be a sealed
    /// profile as the server holds it, and sealing it again unchecked would launder a field rolled back,
    /// a seal of another user, or a whole older profile into a fresh, valid seal.
    /// - When encryption changed no flagged field (each was a ciphertext of the user's keys, or null),
    ///   the input is a sealed profile: its seal must verify in full, as on reading.
    /// - When it changed some (plaintext in a flagged field: a profile edited after `decrypt`, whose
    ///   output keeps the seal), the seal cannot cover the new values; it must still be of the user's
    ///   keys and not older than what this device remembers.
    /// A profile without a seal is a new one: nothing to check.
    /// - Parameters:
    ///   - input: the profile as given.
    ///   - encrypted: the same profile after `encrypt`.
    ///   - mark: the highest seal this device remembers for the user; nil for none (or lines of many profiles).
    package func checkSealBeforeWriting(
        _ input: JSONValue, encrypted: JSONValue, with keys: KeyRing, against mark: SealMark?
    ) throws(ProfileError) {
        guard let seal = try Self.seal(of: input) else { return }
        let before = sealedFields(of: input)
        let after = sealedFields(of: encrypted)
        if let before, let after, before.count == after.count,
            zip(before, after).allSatisfy({ $0.name == $1.name && $0.value == $1.value })
        {
            _ = try verifySeal(of: input, with: keys, against: mark)
            return
        }
        guard keys.all.contains(where: { $0.fingerprint == seal.keyTag }) else {
            throw .seal(.mismatch("it was made with key \(seal.keyTag), which is none of the user's keys here"))
        }
        if let mark, seal.version < mark.lowestVersionToEdit { throw .seal(.older(found: seal.version, seen: mark.version)) }
    }

    /// The next version a write takes: one more than the highest of what this device remembers
    /// and the version of the profile being written over (its seal, if it has one that reads).
    package static func nextSealVersion(after mark: SealMark?, over profile: JSONValue) throws(ProfileError) -> UInt64 {
        let previous = max(mark?.version ?? 0, (try? seal(of: profile))??.version ?? 0)
        guard previous < UInt64.max else {
            throw .seal(.mismatch("its version is the highest there is, so no newer one can follow"))
        }
        return previous + 1
    }

    /// Seals an encrypted profile at `version` with the current key: sets `sealkit_seal` in place, or
    /// adds it at the end.
    /// - Returns: the sealed profile and its seal.
    package func sealing(_ profile: JSONValue, with keys: KeyRing, version: UInt64) throws(ProfileError) -> (profile: JSONValue, seal: ProfileSeal) {
        guard case .object = profile else { throw .notAnObject(found: profile.kindName) }
        guard let fields = sealedFields(of: profile) else {
            throw .seal(.mismatch("a flagged field holds a value no sealed profile holds (neither a ciphertext nor null)"))
        }
        let seal: ProfileSeal
        do {
            seal = try ProfileSeal.make(key: keys.current, user: keys.id ?? "", version: version, fields: fields)
        } catch {
            throw .fieldsFailed([FieldFailure(field: ProfileSchema.sealMember, reason: .outOfGuardedMemory)])
        }
        var sealed = profile
        sealed[ProfileSchema.sealMember] = .string(seal.text)
        return (sealed, seal)
    }
}
