/// A group's signed text, `sealkit-group-v1:` then URL-safe unpadded base64 of
///
/// `0x01 ‖ group id (16) ‖ u32be epoch ‖ u16be(len name) ‖ name ‖ creator identity (64) ‖ u16be(member count) ‖
/// members, each u16be(len label) ‖ label ‖ identity (64) ‖ Ed25519 signature (64)`
///
/// signed by the creator over `"SealKit group v1" ‖ 0x00 ‖` every byte before the signature. Each change (a member
/// added or removed) makes a new text with the next epoch; members keep the highest epoch they have seen and refuse
/// older ones, so a server replaying an old text cannot put a removed member back.
package struct GroupText: Sendable, Equatable {
    /// The text that starts a group's text.
    package static let prefix = "sealkit-group-v1:"
    static let version: UInt8 = 1
    static let signingLabel = Array("SealKit group v1".utf8) + [0]
    static let maximumMembers = 1000
    static let maximumTextBytes = 1024

    /// A random id made when the group is created: two groups of one name stay apart.
    package let id: [UInt8]
    /// Starts at 1 and grows by one with each change.
    package let epoch: UInt32
    /// The group's name, as its creator chose it.
    package let name: String
    /// Who made and signs it; a member too.
    package let creator: PublicIdentity
    /// The members (the creator first), each with the label the creator gave them.
    package let members: [(label: String, identity: PublicIdentity)]
    /// The text as signed.
    package let text: String

    package static func == (lhs: GroupText, rhs: GroupText) -> Bool { lhs.text == rhs.text }

    /// Makes and signs the text of a group.
    package static func make(
        id: [UInt8], epoch: UInt32, name: String, creator: ShareIdentity, creatorLabel: String,
        members: [(label: String, identity: PublicIdentity)]
    ) throws(ShareError) -> GroupText {
        var all: [(label: String, identity: PublicIdentity)] = [(creatorLabel, creator.publicIdentity)]
        for member in members where !all.contains(where: { $0.identity == member.identity }) { all.append(member) }
        guard all.count <= maximumMembers else { throw .malformed(what: "a group", reason: "a group has at most \(maximumMembers) members") }
        var body: [UInt8] = [version] + id + bigEndian(epoch)
        func appendText(_ text: String) throws(ShareError) {
            let bytes = Array(text.utf8)
            guard !TextSafety.hasUnprintable(text) else {
                throw .malformed(what: "a group", reason: "a name or label may not hold control or format characters")
            }
            guard bytes.count <= maximumTextBytes else {
                throw .malformed(what: "a group", reason: "a name or label is longer than \(maximumTextBytes) bytes")
            }
            body += bigEndian(UInt16(bytes.count)) + bytes
        }
        try appendText(name)
        body += creator.publicIdentity.bytes + bigEndian(UInt16(all.count))
        for member in all {
            try appendText(member.label)
            body += member.identity.bytes
        }
        body += creator.sign(signingLabel + body)
        return try GroupText(text: prefix + UnpaddedBase64.encode(body, .urlSafe))
    }

    /// Reads a group's text and checks its creator's signature (not whether the creator is trusted: the caller's).
    /// - Throws: `ShareError.malformed`, or `.badSignature` for an altered text.
    package init(text: String) throws(ShareError) {
        func bad(_ reason: String) -> ShareError { .malformed(what: "a group text", reason: reason) }
        let trimmed = String(text.unicodeScalars.filter { !$0.properties.isWhitespace })
        guard trimmed.hasPrefix(Self.prefix), let body = UnpaddedBase64.decode(trimmed.utf8.dropFirst(Self.prefix.utf8.count), .urlSafe)
        else { throw bad("a group text starts with '\(Self.prefix)' and is URL-safe base64") }
        var at = 0
        func take(_ count: Int) throws(ShareError) -> ArraySlice<UInt8> {
            guard body.count - at >= count else { throw bad("it is truncated") }
            defer { at += count }
            return body[at..<(at + count)]
        }
        func takeText() throws(ShareError) -> String {
            let count = Int(readBigEndian(try take(2)))
            // As `make` writes them: a longer name would be held and printed with every value the group shares.
            guard count <= Self.maximumTextBytes else { throw bad("a name or label in it is longer than \(Self.maximumTextBytes) bytes") }
            guard let text = String(validating: try take(count), as: UTF8.self) else { throw bad("a name in it is not UTF-8") }
            // Its creator chose these names and they are printed (join, list, a value's sender line, the refusal of
            // an unknown signer): a terminal escape, a newline or a bidi override in one would act on the reader's
            // terminal or forge a line.
            guard !TextSafety.hasUnprintable(text) else { throw bad("a name in it holds control or format characters") }
            return text
        }
        guard try take(1).first == Self.version else { throw bad("its version byte is not 1") }
        let id = Array(try take(16))
        let epoch = UInt32(readBigEndian(try take(4)))
        let name = try takeText()
        guard let creator = PublicIdentity(bytes: try take(64)) else { throw bad("it is truncated") }
        let count = Int(readBigEndian(try take(2)))
        guard count >= 1, count <= Self.maximumMembers else { throw bad("it names \(count) members") }
        var members: [(label: String, identity: PublicIdentity)] = []
        for _ in 0..<count {
            let label = try takeText()
            guard let identity = PublicIdentity(bytes: try take(64)) else { throw bad("it is truncated") }
            members.append((label, identity))
        }
        let signed = Array(body[..<at])
        let signature = try take(64)
        guard at == body.count else { throw bad("it has bytes after its signature") }
        guard creator.verifies(signature, of: Self.signingLabel + signed) else { throw .badSignature(what: "the text of group '\(name)'") }
        guard members.first?.identity == creator else { throw bad("its creator is not its first member") }
        self.id = id
        self.epoch = epoch
        self.name = name
        self.creator = creator
        self.members = members
        self.text = trimmed
    }

    /// Whether `identity` is a member at this epoch.
    package func hasMember(_ identity: PublicIdentity) -> Bool { members.contains { $0.identity == identity } }
}
