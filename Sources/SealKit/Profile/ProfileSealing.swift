
/// Why a profile's seal was refused. Names versions, never values or MACs.
package enum SealProblem: Equatable, Sendable, CustomStringConvertible {
    /// The schema asks for a seal and the profile has none.
    case missing
    /// A write's input holds no seal, on a device whose record holds sealed profiles of the user (`seen`, the version
    /// recorded): the seal may have been removed, and sealing it would vouch for every field.
    case removed(seen: UInt64)
    /// The seal is not one, or does not match the profile's flagged fields, the user or the keys;
    /// the detail says which.
    case mismatch(String)
    /// A write's input carries a seal this device cannot check over it and has not verified or written itself;
    /// the detail says why, so no version is taken from it.
    case unverifiable(String)
    /// The seal's version is lower than the highest this device has written or verified; `wroteHere` when that
    /// one is a write of this device not read back yet.
    case older(found: UInt64, seen: UInt64, wroteHere: Bool = false)
    /// The seal's version is the one this device has seen, with another MAC.
    case conflicting(version: UInt64)
    /// This device's record of versions could not be read or written; the detail says why, `cause` is the
    /// keystore's own error, `reason` what kind of failure it was (an unsafe record is refused as a key file is).
    case unrecorded(String, cause: SealKitError? = nil, reason: SealKitError.Reason = .fileSystem)

    package var description: String {
        switch self {
        case .missing:
            return "the profile's seal is missing: the schema asks for one (\(ProfileSchema.sealMember)), so a profile "
                + "without it may have had it removed"
        case .removed(let seen):
            return "the profile's seal is missing: this device has seen the profiles of this user sealed (version \(seen)), "
                + "so its seal may have been removed: it is sealed anew only on purpose"
        case .mismatch(let detail):
            return "the profile's seal does not match: \(detail)"
        case .unverifiable(let detail):
            return "the profile's seal cannot be checked: \(detail)"
        case .older(let found, let seen, let wroteHere):
            return "the profile's seal is version \(found), older than version \(seen) seen here: the profile was rolled "
                + (wroteHere
                    ? "back, or a newer write of this device was not saved; re-read it, or write it again"
                    : "back (version \(seen) was read here); re-read it")
        case .unrecorded(let detail, _, _):
            return detail
        case .conflicting(let version):
            return "the profile's seal is a conflicting write: version \(version) seen here has another seal, so two "
                + "devices wrote at once"
        }
    }
}

extension ProfileEncryptor {
    /// What a sealed profile's flagged fields are, as the seal covers them: each flagged field
    /// present (where `mapEncryptedFields` finds them), by the member's and the schema's name, with its
    /// value, and whether they sit in `data`; nil when one holds a value no sealed profile can hold
    /// (neither a string nor null), or two members are one field.
    package func sealedFields(of profile: JSONValue) -> (fields: [ProfileSeal.Entry], inData: Bool)? {
        guard let members = flaggedMembers(of: profile) else { return nil }
        var fields: [ProfileSeal.Entry] = []
        for member in members.members {
            switch member.value {
            case .null: fields.append(ProfileSeal.Entry(member: member.name, field: member.field, value: .null))
            case .string(let text): fields.append(ProfileSeal.Entry(member: member.name, field: member.field, value: .string(Array(text.utf8))))
            default: return nil
            }
        }
        guard Set(fields.map { Array($0.field.utf8) }).count == fields.count else { return nil }
        return (fields, members.inData)
    }

    /// The flagged members of a profile, where `mapEncryptedFields` finds them (in `data` for Rownd's
    /// user-state shape, else at the top level), each with the schema's name of its field.
    private func flaggedMembers(of profile: JSONValue) -> (members: [(name: String, field: String, value: JSONValue)], inData: Bool)? {
        guard case .object(let members) = profile else { return nil }
        var fieldMembers = members
        var inData = false
        if let dataIndex = schema.dataIndex(in: members), case .object(let data) = members[dataIndex].value {
            fieldMembers = data
            inData = true
        }
        var found: [(name: String, field: String, value: JSONValue)] = []
        for (key, value) in fieldMembers {
            guard let field = schema.field(named: key), field.isEncrypted else { continue }
            found.append((key, field.name, value))
        }
        return (found, inData)
    }

    /// The seal a profile holds, unverified; nil when it has none.
    /// - Throws: `ProfileError.seal(.mismatch)` when `sealkit_seal` is there but is not a seal.
    package static func seal(of profile: JSONValue) throws(ProfileError) -> ProfileSeal? {
        guard case .object(let members) = profile, let member = members.first(where: { $0.key == ProfileSchema.sealMember })
        else { return nil }
        guard case .string(let text) = member.value, let seal = ProfileSeal(parsing: text) else {
            throw .seal(.mismatch("\(ProfileSchema.sealMember) is not a seal SealKit reads (sks2: or sks1: and 49 bytes of base64)"))
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
        guard let (fields, inData) = sealedFields(of: profile) else {
            throw .seal(.mismatch("a flagged field holds a value no sealed profile holds (neither a ciphertext nor null)"))
        }
        let verifies: Bool
        do {
            verifies = try seal.verifies(key: key, user: keys.id ?? "", fields: fields, inData: inData)
        } catch {
            throw .fieldsFailed([FieldFailure(field: ProfileSchema.sealMember, reason: .outOfGuardedMemory)])
        }
        guard verifies else {
            throw .seal(.mismatch(
                "a flagged field was changed, rolled back, dropped, added or moved, or the seal was made for another user or profile"))
        }
        if let mark {
            switch mark.compare(seal.mark) {
            case .newer, .same: break
            case .older: throw .seal(.older(found: seal.version, seen: mark.version, wroteHere: mark.writtenOver != nil))
            case .conflicting: if !acceptingConflict { throw .seal(.conflicting(version: seal.version)) }
            }
        }
        return seal
    }

    /// What a write takes from the seal its input already carries, trusting only what this
    /// device verified: the input may be a stored profile the server changed, and sealing it again
    /// unchecked would launder a field rolled back, a seal of another user, a forged version, or a whole
    /// older profile into a fresh, valid seal.
    /// - When encryption changed no flagged field (each held a ciphertext of the user's keys, or null),
    ///   the input is a sealed profile as stored: its seal must verify in full, as on reading.
    /// - When it changed some and others hold ciphertexts, the seal covers ciphertexts the input no
    ///   longer holds, so it cannot be checked over the ones it does: refused (after the check for an
    ///   older version, which names the likelier cause).
    /// - When every flagged value is new (a profile decrypted, then edited, whose output keeps the seal), the
    ///   seal must be of the user's keys, not older than the record, and be the one this device last verified
    ///   or wrote (or the version its unread write was made over, whose retry this is); a seal it cannot tell
    ///   from a forged one gives no version.
    /// - An input without a seal, on a device whose record holds sealed profiles of the user, may have had its seal
    ///   removed: refused unless `resealing`, whether it holds ciphertexts or not (a server that strips the seal and
    ///   the ciphertexts, or puts its own plaintext there, would otherwise get its choice sealed above the record).
    ///   On a device without a record it is a new profile.
    /// - Parameters:
    ///   - input: the profile as given.
    ///   - encrypted: the same profile after `encrypt`.
    ///   - mark: the highest seal this device remembers for the user's keys; nil for none. A line of many profiles
    ///     is held to it as one profile is: a batch fed an older profile would otherwise seal it anew at a newer
    ///     version, which every device then accepts.
    ///   - resealing: the caller means to seal a stored profile without a seal anew, vouching for its fields.
    /// - Returns: the version of the input's seal, verified or this device's own, that the write is made over;
    ///   nil for an input without a seal.
    package func sealBeforeWriting(
        _ input: JSONValue, encrypted: JSONValue, with keys: KeyRing, against mark: SealMark?, resealing: Bool = false
    ) throws(ProfileError) -> UInt64? {
        let seal = try Self.seal(of: input)
        var ciphertexts = 0
        var changed = 0
        if let before = flaggedMembers(of: input), let after = flaggedMembers(of: encrypted), before.members.count == after.members.count {
            for (old, new) in zip(before.members, after.members) {
                if old.value == .null && new.value == .null { continue }
                if case .string = old.value, old.name == new.name, old.value == new.value { ciphertexts += 1 } else { changed += 1 }
            }
        } else {
            changed += 1
        }
        guard let seal else {
            if !resealing, let mark { throw .seal(.removed(seen: mark.version)) }
            return nil
        }
        if changed == 0 { return try verifySeal(of: input, with: keys, against: mark).version }
        guard keys.all.contains(where: { $0.fingerprint == seal.keyTag }) else {
            throw .seal(.mismatch("it was made with key \(seal.keyTag), which is none of the user's keys here"))
        }
        if let mark, seal.version < mark.lowestVersionToEdit {
            throw .seal(.older(found: seal.version, seen: mark.version, wroteHere: mark.writtenOver != nil))
        }
        if ciphertexts > 0 {
            throw .seal(.unverifiable(
                "some flagged fields hold plaintext and others ciphertexts, and the seal covers ciphertexts the profile no "
                    + "longer holds, so the ones it holds may be older; decrypt the whole profile, edit it, and encrypt that"))
        }
        guard let mark else {
            throw .seal(.unverifiable(
                "this device has no record of the user's profile versions, so it cannot tell this seal from a forged one; "
                    + "decrypt the stored profile on this device first (one profile alone: lines of many are not remembered)"))
        }
        if mark.compare(seal.mark) == .same || seal.version == mark.writtenOver { return seal.version }
        throw .seal(.unverifiable(
            "it is not the seal this device last verified or wrote (version \(mark.version)), and a decrypted profile cannot "
                + "show that it is genuine; decrypt the stored profile on this device first"))
    }

    /// Whether a write left a profile's flagged fields as they were: the same members, values and place.
    package func keepsFlaggedFields(of input: JSONValue, in output: JSONValue) -> Bool {
        guard let before = sealedFields(of: input), let after = sealedFields(of: output) else { return false }
        return before.inData == after.inData && before.fields == after.fields
    }

    /// The next version a write takes: one more than the highest of what this device remembers
    /// and the version `base` of the profile being written over (verified, or this device's own).
    package static func nextSealVersion(after mark: SealMark?, over base: UInt64?) throws(ProfileError) -> UInt64 {
        let previous = max(mark?.version ?? 0, base ?? 0)
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
        guard let (fields, inData) = sealedFields(of: profile) else {
            throw .seal(.mismatch("a flagged field holds a value no sealed profile holds (neither a ciphertext nor null)"))
        }
        let seal: ProfileSeal
        do {
            seal = try ProfileSeal.make(key: keys.current, user: keys.id ?? "", version: version, fields: fields, inData: inData)
        } catch {
            throw .fieldsFailed([FieldFailure(field: ProfileSchema.sealMember, reason: .outOfGuardedMemory)])
        }
        var sealed = profile
        sealed[ProfileSchema.sealMember] = .string(seal.text)
        return (sealed, seal)
    }
}
