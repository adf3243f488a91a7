/// A value shared with other people's identities, v3: `sk3:` and standard padded base64 of
///
/// `0x03 ‖ sender identity (64) ‖ u16be(len owner) ‖ owner id ‖ group flag (0, or 1 ‖ group id (16) ‖ u32be epoch)
/// ‖ u32be(len envelope) ‖ envelope ‖ Ed25519 signature (64)`
///
/// where the envelope is an age file (age-encryption.org/v1) with one X25519 stanza per recipient, the sender's own
/// identity among them, and the signature is the sender's, over `"SealKit shared value v1" ‖ 0x00 ‖ place encoding ‖`
/// every body byte before it. The place encoding is v2's (`u32be(len id) ‖ id ‖ kind ‖ u32be(len place) ‖ place`)
/// with the owner's id: so a server can neither re-address a value (add, drop or swap a stanza), nor make one in
/// someone's name, nor move one to another field, context or owner, without the signature failing.
package struct SharedValue: Sendable {
    /// The text that starts every shared value.
    package static let prefix = "sk3:"
    static let version: UInt8 = 3
    static let signingLabel = Array("SealKit shared value v1".utf8) + [0]

    /// Who made and signed it.
    package let sender: PublicIdentity
    /// The key id of its owner, as the sender gave it (the profile's user; `--key` of `sealkit encrypt`).
    package let owner: String
    /// The group it was shared with, if any: its id and the epoch the sender held.
    package let group: (id: [UInt8], epoch: UInt32)?
    /// How many recipients it has (the sender's own identity included): what a server can count.
    package var recipientCount: Int { envelope.stanzas.count }
    /// The age file, as it is: `age -d -i` opens it for a recipient.
    package let envelopeBytes: [UInt8]
    let envelope: AgeEnvelope.Parsed
    /// Where the age payload's 16-byte nonce starts in `envelopeBytes`: the audit tracks it as a value's nonce.
    package var payloadNonceOffset: Int { envelope.payload.startIndex }
    /// The body bytes the signature covers, after the place encoding, and the signature.
    let signed: [UInt8]
    let signature: [UInt8]

    /// Whether a text has the shared value's prefix (and so is not v1 or v2).
    package static func isShared(_ text: String) -> Bool { text.hasPrefix(prefix) }

    /// Makes a shared value of `plaintext`, signed by `sender`, for `recipients` and the sender's own identity.
    /// - Parameters:
    ///   - owner: the key id it belongs to (the sender's `--key`), bound by the signature.
    ///   - place: the field or context, bound by the signature as v2 binds it.
    ///   - group: the group's id and epoch when it is shared with a group.
    package static func seal(
        _ plaintext: String, from sender: ShareIdentity, to recipients: [PublicIdentity], owner: String,
        place: CiphertextPlace, group: (id: [UInt8], epoch: UInt32)? = nil
    ) throws(ShareError) -> String {
        var seen = Set<[UInt8]>()
        let agreementKeys = ([sender.publicIdentity] + recipients).map(\.agreement).filter { seen.insert($0).inserted }
        var plaintext = plaintext
        let envelope = try plaintext.withUTF8 { bytes in
            Result { () throws(ShareError) in try AgeEnvelope.seal(UnsafeRawBufferPointer(bytes), to: agreementKeys) }
        }.get()
        let ownerBytes = Array(owner.utf8)
        guard ownerBytes.count <= Int(UInt16.max) else { throw .malformed(what: "an owner id", reason: "it is too long") }
        var body: [UInt8] = [version] + sender.publicIdentity.bytes
        body += bigEndian(UInt16(ownerBytes.count)) + ownerBytes
        if let group {
            body += [1] + group.id + bigEndian(group.epoch)
        } else {
            body += [0]
        }
        body += bigEndian(UInt32(envelope.count)) + envelope
        body += sender.sign(signingLabel + BoundCipher.placeEncoding(id: owner, place: place) + body)
        return prefix + Base64.encode(body)
    }

    /// Reads a shared value's text and checks its signature for `place`. It is not decrypted yet: the caller first
    /// decides whether it trusts `sender`.
    /// - Throws: `ShareError.malformed` for a text that is not one, `.badSignature` when it was altered,
    ///   re-addressed, or signed for another place or owner.
    package init(text: String, place: CiphertextPlace) throws(ShareError) {
        func bad(_ reason: String) -> ShareError { .malformed(what: "a shared value", reason: reason) }
        guard text.hasPrefix(Self.prefix), let body = Base64.decode(String(text.dropFirst(Self.prefix.count))) else {
            throw bad("a shared value is 'sk3:' and standard base64")
        }
        var at = 0
        func take(_ count: Int) throws(ShareError) -> ArraySlice<UInt8> {
            guard count >= 0, body.count - at >= count else { throw bad("it is truncated") }
            defer { at += count }
            return body[at..<(at + count)]
        }
        guard try take(1).first == Self.version else { throw bad("its version byte is not 3") }
        guard let sender = PublicIdentity(bytes: try take(64)) else { throw bad("it is truncated") }
        let ownerLength = Int(readBigEndian(try take(2)))
        guard let owner = String(validating: try take(ownerLength), as: UTF8.self) else { throw bad("its owner is not UTF-8") }
        let group: (id: [UInt8], epoch: UInt32)?
        switch try take(1).first {
        case 0: group = nil
        case 1: group = (Array(try take(16)), UInt32(readBigEndian(try take(4))))
        default: throw bad("its group flag is neither 0 nor 1")
        }
        let envelopeLength = Int(readBigEndian(try take(4)))
        let envelopeBytes = Array(try take(envelopeLength))
        let signed = Array(body[..<at])
        let signature = Array(try take(64))
        guard at == body.count else { throw bad("it has bytes after its signature") }
        // The signature decides before anything else is believed: the envelope is not even parsed without it.
        guard sender.verifies(signature, of: Self.signingLabel + BoundCipher.placeEncoding(id: owner, place: place) + signed) else {
            throw .badSignature(what: "the shared value")
        }
        self.sender = sender
        self.owner = owner
        self.group = group
        self.envelopeBytes = envelopeBytes
        self.envelope = try AgeEnvelope.parse(envelopeBytes)
        self.signed = signed
        self.signature = signature
    }

    /// Decrypts with the first of `identities` the value is addressed to.
    /// - Throws: `ShareError.notAddressed` when none is a recipient; `.malformed` when the envelope is damaged.
    package func open(with identities: [ShareIdentity]) throws(ShareError) -> String {
        for identity in identities {
            guard let fileKey = try AgeEnvelope.fileKey(
                of: envelope, secret: identity.agreementSecret, publicKey: identity.publicIdentity.agreement)
            else { continue }
            var bytes = try AgeEnvelope.open(envelope, fileKey: fileKey)
            defer { ConstantTime.wipe(&bytes) }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw .malformed(what: "a shared value", reason: "its plaintext is not UTF-8 text")
            }
            return text
        }
        throw .notAddressed
    }
}

func bigEndian(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
func bigEndian(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
func readBigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
