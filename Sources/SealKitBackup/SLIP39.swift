import SealKit

/// SLIP-39 (SatoshiLabs Improvement Proposal 39): a secret split into word shares, any K of N
/// restore it, optionally in groups (any G groups, each with its own K of N), and protected by an
/// optional passphrase. Written from the specification and pinned by its official vectors
/// (`Fixtures/slip39/vectors.json`) and by python-shamir-mnemonic in both directions.
///
/// Everything cryptographic is libsodium's through SealKit: PBKDF2 on HMAC-SHA256 for the
/// four-round Feistel cipher, HMAC-SHA256 for the digest share, and the randomness. GF(256) here is
/// constant time: multiplication by shifts and masks, no table indexed by a secret byte.
package enum SLIP39 {
    /// The most shares of one group, and the most groups.
    package static let maximumShareCount = 16
    static let radixBits = 10
    static let identifierBits = 15
    static let idExpWords = 2
    static let checksumWords = 3
    static let metadataWords = idExpWords + 2 + checksumWords
    /// 128 bits at least: 7 metadata words and 13 value words.
    static let minimumWordCount = metadataWords + 13
    static let digestByteCount = 4
    static let secretIndex: UInt8 = 255
    static let digestIndex: UInt8 = 254
    static let baseIterationCount = 10_000
    /// The highest iteration exponent a share may carry: SealKit writes 1, SLIP-39's official
    /// vectors use up to 3, and each step doubles the PBKDF2 work that recovery runs before any
    /// check can fail, so a crafted share with 15 (about three minutes here) is refused first.
    package static let maximumIterationExponent = 5
    static let roundCount = 4

    /// One share, parsed and checked on its own (length, words, checksum, padding, thresholds).
    package struct Share: Sendable, Equatable {
        /// The random identifier every share of one backup has.
        package let identifier: Int
        /// Whether the backup can gain shares later (SLIP-39's extendable flag).
        package let extendable: Bool
        /// The iteration exponent e: each of the four PBKDF2 rounds runs 2,500 × 2^e iterations.
        package let iterationExponent: Int
        /// 0-based, as in the words; people count from 1.
        package let groupIndex: Int
        /// How many groups restore the secret.
        package let groupThreshold: Int
        /// How many groups there are.
        package let groupCount: Int
        /// 0-based, as in the words; people count from 1.
        package let memberIndex: Int
        /// How many shares of this group restore it.
        package let memberThreshold: Int
        /// The share's value: secret material (K of them restore the secret).
        package let value: [UInt8]
        /// The share's first four words, which name it without revealing its value.
        package let prefix: String

        /// What every share of one backup has in common.
        var commonParameters: [Int] { [identifier, extendable ? 1 : 0, iterationExponent, groupThreshold, groupCount] }
        /// What every share of one group has in common.
        var groupParameters: [Int] { commonParameters + [groupIndex, memberThreshold] }
    }

    // MARK: Words

    /// Parses one share from its words (case and extra blanks ignored).
    ///
    /// Errors name the problem by word position only, never a word: a line that is not a share
    /// may hold anything (a passphrase pasted onto it, say).
    /// - Throws: `SLIP39Error` naming the problem: an unknown word (by position), the length, the
    ///   checksum (and the word to fix when exactly one word explains it), the padding, the thresholds,
    ///   an iteration exponent above `maximumIterationExponent`.
    package static func parse(_ text: String) throws(SLIP39Error) -> Share {
        let words = text.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
        var indices: [Int] = []
        indices.reserveCapacity(words.count)
        for (position, word) in words.enumerated() {
            guard let index = SLIP39Words.index[String(word)] else { throw .unknownWord(position: position + 1) }
            indices.append(index)
        }
        guard indices.count >= minimumWordCount else { throw .tooShort(wordCount: indices.count) }
        let paddingBits = (radixBits * (indices.count - metadataWords)) % 16
        guard paddingBits <= 8 else { throw .badLength(wordCount: indices.count) }

        let idExp = indices[0] << radixBits | indices[1]
        let identifier = idExp >> 5
        let extendable = (idExp >> 4) & 1 == 1
        let iterationExponent = idExp & 0xF
        guard RS1024.verify(indices, customization: customization(extendable)) else {
            throw .badChecksum(suspectWord: RS1024.singleWordFix(indices))
        }
        guard iterationExponent <= maximumIterationExponent else { throw .iterationExponentTooHigh(iterationExponent) }
        let parameters = indices[2] << radixBits | indices[3]
        let groupIndex = parameters >> 16 & 0xF
        let groupThreshold = (parameters >> 12 & 0xF) + 1
        let groupCount = (parameters >> 8 & 0xF) + 1
        let memberIndex = parameters >> 4 & 0xF
        let memberThreshold = (parameters & 0xF) + 1
        guard groupThreshold <= groupCount else { throw .groupThresholdExceedsCount }

        // The value: big-endian bits of its words, the first `paddingBits` of which must be zero.
        let valueWords = indices[(idExpWords + 2)..<(indices.count - checksumWords)]
        let valueBitCount = radixBits * valueWords.count - paddingBits
        guard valueBitCount % 8 == 0 else { throw .badLength(wordCount: indices.count) }
        var value = [UInt8](repeating: 0, count: valueBitCount / 8)
        var accumulator = 0
        var bits = 0
        var out = 0
        var skipped = 0
        for word in valueWords {
            accumulator = (accumulator << radixBits | word) & 0xFFFFF
            bits += radixBits
            // The padding leads: drop it first, checking that it is zero.
            if skipped < paddingBits {
                let drop = min(paddingBits - skipped, bits)
                guard accumulator >> (bits - drop) & ((1 << drop) - 1) == 0 else {
                    throw .badPadding
                }
                bits -= drop
                skipped += drop
                accumulator &= (1 << bits) - 1
            }
            while bits >= 8 {
                value[out] = UInt8(accumulator >> (bits - 8) & 0xFF)
                out += 1
                bits -= 8
                accumulator &= (1 << bits) - 1
            }
        }
        accumulator = 0
        let prefix = words.prefix(4).joined(separator: " ")
        return Share(
            identifier: identifier, extendable: extendable, iterationExponent: iterationExponent, groupIndex: groupIndex,
            groupThreshold: groupThreshold, groupCount: groupCount, memberIndex: memberIndex, memberThreshold: memberThreshold,
            value: value, prefix: prefix)
    }

    /// A share as people type it on a hardware wallet: each word that is the start, four letters or
    /// more, of exactly one list word (every SLIP-39 word is told apart by its first four) becomes that
    /// word; other words are left as they are, for `parse` to name.
    /// - Parameter text: the share as typed.
    /// - Returns: the words in lower case, separated by single spaces.
    package static func completingPrefixes(_ text: String) -> String {
        text.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }).map { word in
            guard SLIP39Words.index[String(word)] == nil, word.count >= 4 else { return String(word) }
            let matches = SLIP39Words.all.filter { $0.hasPrefix(word) }
            return matches.count == 1 ? matches[0] : String(word)
        }.joined(separator: " ")
    }

    /// The one share, a single word away from `text`, that parses: the checksum (three words of
    /// Reed-Solomon over GF(1024)) corrects any one wrong word, so a single typo, or one word not on
    /// the list, has exactly one correction.
    /// - Parameter text: a share that does not parse.
    /// - Returns: the corrected share, the 1-based position changed and the word put there; nil when
    ///   no single word, or more than one, makes a valid share.
    package static func correction(of text: String) -> (share: String, position: Int, word: String)? {
        let words = completingPrefixes(text).split(separator: " ").map(String.init)
        // Bounded as `RS1024.singleWordFix` is: 59 words at most, the longest share.
        guard words.count >= minimumWordCount, words.count <= 59 else { return nil }
        let unknown = words.indices.filter { SLIP39Words.index[words[$0]] == nil }
        guard unknown.count <= 1 else { return nil }
        let indices = words.map { SLIP39Words.index[$0] ?? 0 }
        var found: (share: String, position: Int, word: String)?
        for extendable in [false, true] {
            for (position, value) in RS1024.singleWordCorrections(indices, customization: customization(extendable), only: unknown.first)
            where found?.position != position + 1 || found?.word != SLIP39Words.all[value] {
                var fixed = indices
                fixed[position] = value
                let share = fixed.map { SLIP39Words.all[$0] }.joined(separator: " ")
                guard (try? parse(share)) != nil else { continue }
                if found != nil { return nil }
                found = (share, position + 1, SLIP39Words.all[value])
            }
        }
        return found
    }

    /// The words of a share.
    package static func words(
        identifier: Int, extendable: Bool, iterationExponent: Int, groupIndex: Int, groupThreshold: Int, groupCount: Int,
        memberIndex: Int, memberThreshold: Int, value: [UInt8]
    ) -> String {
        let idExp = identifier << 5 | (extendable ? 1 << 4 : 0) | iterationExponent
        let parameters = groupIndex << 16 | (groupThreshold - 1) << 12 | (groupCount - 1) << 8 | memberIndex << 4 | (memberThreshold - 1)
        var indices = [idExp >> radixBits, idExp & 0x3FF, parameters >> radixBits, parameters & 0x3FF]
        // The value's bits, big-endian, padded at the front to whole words.
        let valueWordCount = (value.count * 8 + radixBits - 1) / radixBits
        let paddingBits = valueWordCount * radixBits - value.count * 8
        var accumulator = 0
        var bits = paddingBits
        for byte in value {
            accumulator = (accumulator << 8 | Int(byte)) & 0x3FFFF
            bits += 8
            while bits >= radixBits {
                indices.append(accumulator >> (bits - radixBits) & 0x3FF)
                bits -= radixBits
            }
        }
        indices += RS1024.checksum(indices, customization: customization(extendable))
        return indices.map { SLIP39Words.all[$0] }.joined(separator: " ")
    }

    static func customization(_ extendable: Bool) -> [UInt8] { Array((extendable ? "shamir_extendable" : "shamir").utf8) }

    // MARK: Splitting

    /// Splits `secret` into groups of word shares.
    /// - Parameters:
    ///   - secret: 16 to 32 bytes... any even length of at least 16 bytes; SealKit uses 32.
    ///   - groupThreshold: how many groups restore the secret.
    ///   - groups: each group's member threshold and count.
    ///   - passphrase: SLIP-39's optional passphrase (empty allowed), as UTF-8 bytes.
    ///   - iterationExponent: PBKDF2 work, 10,000 × 2^e iterations in all.
    /// - Returns: the shares' words, group by group, and a tag of the encrypted secret they hold.
    package static func split(
        secret: SecureBytes, groupThreshold: Int, groups: [(threshold: Int, count: Int)], passphrase: [UInt8],
        iterationExponent: Int = 1
    ) throws(SLIP39Error) -> (groups: [[String]], encryptedSecretTag: [UInt8]) {
        guard secret.count >= 16, secret.count % 2 == 0 else { throw .invalidParameters("the secret must be an even number of bytes, at least 16") }
        guard (1...maximumShareCount).contains(groups.count), (1...groups.count).contains(groupThreshold) else {
            throw .invalidParameters("the group threshold must be 1 to the number of groups (1 to 16)")
        }
        for group in groups {
            guard (1...maximumShareCount).contains(group.count), (1...group.count).contains(group.threshold) else {
                throw .invalidParameters("each group needs 1 to 16 shares and a threshold of 1 to its share count")
            }
            guard !(group.threshold == 1 && group.count > 1) else {
                throw .invalidParameters("a group of several shares with threshold 1 is not allowed: use 1 of 1")
            }
        }
        guard (0...maximumIterationExponent).contains(iterationExponent) else {
            throw .invalidParameters("the iteration exponent must be 0 to \(maximumIterationExponent)")
        }
        let identifier = Int(SecureRandom.uniform(below: 1 << 15))
        let encrypted = Feistel.encrypt(secret, passphrase: passphrase, exponent: iterationExponent, identifier: identifier, extendable: true)
        let groupShares = Shamir.split(threshold: groupThreshold, count: groups.count, secret: encrypted)
        var result: [[String]] = []
        for (groupIndex, group) in groups.enumerated() {
            let members = Shamir.split(threshold: group.threshold, count: group.count, secret: groupShares[groupIndex].value)
            result.append(members.map { member in
                words(
                    identifier: identifier, extendable: true, iterationExponent: iterationExponent, groupIndex: groupIndex,
                    groupThreshold: groupThreshold, groupCount: groups.count, memberIndex: Int(member.x),
                    memberThreshold: group.threshold, value: member.value.withUnsafeBytes { Array($0) })
            })
        }
        return (result, tag(of: encrypted))
    }

    /// A tag of an encrypted secret: a bundle keeps it, so that shares of another backup are told
    /// apart from a wrong passphrase. Keyed BLAKE2b of a uniformly random value; it reveals nothing.
    static func tag(of encrypted: SecureBytes) -> [UInt8] {
        encrypted.withUnsafeBytes { GenericHash.hash(Array("SealKit SLIP-39 encrypted secret tag v1".utf8), key: Array($0), byteCount: 16) }
    }

    // MARK: Recovering

    /// The encrypted secret that enough shares hold, before the passphrase.
    package struct EncryptedSecret: Sendable {
        let value: SecureBytes
        let identifier: Int
        let extendable: Bool
        let iterationExponent: Int

        /// A tag to compare with the one `split` gave.
        package var tag: [UInt8] { SLIP39.tag(of: value) }

        /// The secret under `passphrase`. A wrong passphrase gives another secret, not an error:
        /// SLIP-39 cannot tell.
        package func decrypt(passphrase: [UInt8]) -> SecureBytes {
            Feistel.decrypt(value, passphrase: passphrase, exponent: iterationExponent, identifier: identifier, extendable: extendable)
        }
    }

    /// Combines shares (repeats count once; more than a threshold is fine).
    /// - Throws: `.mixedBackups` for shares of different backups, `.conflictingShares` for two
    ///   different shares with one index, `.needMore` saying how many more are needed per group,
    ///   `.badDigest` when the shares do not combine to a consistent secret.
    package static func recover(_ shares: [Share]) throws(SLIP39Error) -> EncryptedSecret {
        guard let first = shares.first else { throw .noShares }
        for share in shares where share.commonParameters != first.commonParameters {
            throw .mixedBackups(first.prefix, share.prefix)
        }
        // Group by group index, each share once.
        var groups: [Int: [Share]] = [:]
        for share in shares {
            var members = groups[share.groupIndex, default: []]
            if let same = members.first(where: { $0.memberIndex == share.memberIndex }) {
                guard ConstantTime.equals(same.value, share.value) else { throw .conflictingShares(same.prefix, share.prefix) }
                continue
            }
            if let other = members.first, other.groupParameters != share.groupParameters { throw .mixedBackups(other.prefix, share.prefix) }
            members.append(share)
            groups[share.groupIndex] = members
        }
        for members in groups.values {
            let lengths = Set(members.map(\.value.count))
            guard lengths.count == 1, let length = lengths.first, length >= 16, length % 2 == 0 else {
                throw .mixedBackups(members[0].prefix, members.last!.prefix)
            }
        }
        guard Set(groups.values.map { $0[0].value.count }).count == 1 else { throw .mixedBackups(first.prefix, shares.last!.prefix) }
        // Enough members in enough groups?
        let complete = groups.filter { $0.value.count >= $0.value[0].memberThreshold }
        if complete.count < first.groupThreshold {
            let short = groups.filter { $0.value.count < $0.value[0].memberThreshold }
                .map { (group: $0.key + 1, more: $0.value[0].memberThreshold - $0.value.count) }.sorted { $0.group < $1.group }
            throw .needMore(groups: first.groupThreshold - complete.count, members: short)
        }
        var groupShares: [(x: UInt8, value: SecureBytes)] = []
        for (index, members) in complete.sorted(by: { $0.key < $1.key }).prefix(first.groupThreshold) {
            let threshold = members[0].memberThreshold
            let chosen = members.prefix(threshold).map { (x: UInt8($0.memberIndex), value: SecureBytes(copying: $0.value)) }
            groupShares.append((UInt8(index), try Shamir.recover(threshold: threshold, shares: Array(chosen))))
        }
        let encrypted = try Shamir.recover(threshold: first.groupThreshold, shares: groupShares)
        return EncryptedSecret(
            value: encrypted, identifier: first.identifier, extendable: first.extendable, iterationExponent: first.iterationExponent)
    }
}

/// What is wrong with shares. A share that does not parse is named by nothing it holds (the
/// caller names its line), and a problem in it by word position only; shares that parsed are
/// named by their first four words (which hold the backup's identifier and the share's group and
/// member numbers, not its value), never a whole share.
package enum SLIP39Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// A word is not in the SLIP-39 word list.
    case unknownWord(position: Int)
    /// Fewer words than any share has.
    case tooShort(wordCount: Int)
    /// A word count no share has.
    case badLength(wordCount: Int)
    /// `suspectWord` is the 1-based position of the one word whose change makes the checksum
    /// right, when exactly one position can.
    case badChecksum(suspectWord: Int?)
    /// The share's padding bits are not zero.
    case badPadding
    /// The share asks for more groups than there are.
    case groupThresholdExceedsCount
    /// The share asks for more PBKDF2 work than `SLIP39.maximumIterationExponent` allows.
    case iterationExponentTooHigh(Int)
    /// No share was given at all.
    case noShares
    /// Two shares come from different backups.
    case mixedBackups(String, String)
    /// Two shares claim the same place with different values.
    case conflictingShares(String, String)
    /// `groups` more complete groups are needed; `members` lists the started groups (1-based) and
    /// how many more shares each needs.
    case needMore(groups: Int, members: [(group: Int, more: Int)])
    /// The recovered secret fails its digest: a share is wrong.
    case badDigest
    /// Split parameters that SLIP-39 does not allow.
    case invalidParameters(String)

    package static func == (lhs: SLIP39Error, rhs: SLIP39Error) -> Bool { lhs.description == rhs.description }

    package var description: String {
        switch self {
        case .unknownWord(let position):
            return "the share has a word that is not in the SLIP-39 word list (word \(position))"
        case .tooShort(let count):
            return "the share has \(count) words; a share has at least \(SLIP39.minimumWordCount) (33 for SealKit's)"
        case .badLength(let count):
            return "the share has \(count) words, a length no share has: a word is missing or extra"
        case .badChecksum(let word?):
            return "the share fails its checksum: word \(word) is most likely mistyped"
        case .badChecksum(nil):
            return "the share fails its checksum: it is mistyped in more than one word, or damaged"
        case .badPadding:
            return "the share is damaged (its padding bits are not zero)"
        case .groupThresholdExceedsCount:
            return "the share is damaged (its group threshold exceeds its group count)"
        case .iterationExponentTooHigh(let exponent):
            return "the share asks for PBKDF2 iteration exponent \(exponent); SealKit reads at most "
                + "\(SLIP39.maximumIterationExponent) (it writes 1), so it was not made by SealKit or a common wallet"
        case .noShares:
            return "no share was given: paste the shares after the bundle, one per line"
        case .mixedBackups(let a, let b):
            return "the shares \"\(a) ...\" and \"\(b) ...\" belong to different backups"
        case .conflictingShares(let a, let b):
            return "the shares \"\(a) ...\" and \"\(b) ...\" claim the same place with different values: one of them is damaged"
        case .needMore(1, let members) where members.count == 1 && members[0].group == 1:
            let more = members[0].more
            return "not enough shares: \(more) more share\(more == 1 ? "" : "s") needed"
        case .needMore(let groups, let members):
            var text = "not enough shares: \(groups) more group\(groups == 1 ? "" : "s") needed"
            if !members.isEmpty {
                text += " (" + members.map { "group \($0.group) needs \($0.more) more share\($0.more == 1 ? "" : "s")" }.joined(separator: ", ") + ")"
            }
            return text
        case .badDigest:
            return "the shares do not combine to a consistent secret: one of them is damaged or of another backup"
        case .invalidParameters(let reason):
            return reason
        }
    }
}

// MARK: RS1024

/// SLIP-39's checksum: a Reed-Solomon code over GF(1024), three words long.
enum RS1024 {
    private static let generator: [Int] = [
        0xE0E040, 0x1C1C080, 0x3838100, 0x7070200, 0xE0E0009, 0x1C0C2412, 0x38086C24, 0x3090FC48, 0x21B1F890, 0x3F3F120,
    ]

    static func polymod(_ values: some Sequence<Int>) -> Int {
        var check = 1
        for value in values {
            let top = check >> 20
            check = (check & 0xFFFFF) << 10 ^ value
            for i in 0..<10 where (top >> i) & 1 == 1 { check ^= generator[i] }
        }
        return check
    }

    static func checksum(_ data: [Int], customization: [UInt8]) -> [Int] {
        let mod = polymod(customization.map(Int.init) + data + [0, 0, 0]) ^ 1
        return [mod >> 20 & 0x3FF, mod >> 10 & 0x3FF, mod & 0x3FF]
    }

    static func verify(_ data: [Int], customization: [UInt8]) -> Bool {
        polymod(customization.map(Int.init) + data) == 1
    }

    /// Every (position, word index) that, put in place of one word, makes the checksum right. The
    /// checksum is affine in the words over GF(2), so changing word p by δ changes it by a linear map of δ:
    /// ten basis values per position, instead of a checksum run per candidate (words × 1,024 × words).
    /// - Parameters:
    ///   - only: the one position to try (a word not on the list, held as 0), else every position.
    static func singleWordCorrections(_ data: [Int], customization: [UInt8], only: Int? = nil) -> [(position: Int, value: Int)] {
        guard data.count <= 59 else { return [] }
        let residue = polymod(customization.map(Int.init) + data) ^ 1
        var found: [(position: Int, value: Int)] = []
        for position in only.map({ [$0] }) ?? Array(data.indices) {
            // The change a difference of 1 << bit at this position makes to the checksum.
            let basis = (0..<10).map { bit in
                var check = 1 << bit
                for _ in 0..<(data.count - 1 - position) { check = step(check, 0) }
                return check
            }
            // change(δ) = change(δ without its lowest bit) ^ basis[lowest bit]: one XOR per δ.
            var changes = [Int](repeating: 0, count: 1024)
            for delta in 1..<1024 {
                changes[delta] = changes[delta & (delta - 1)] ^ basis[delta.trailingZeroBitCount]
            }
            for delta in (only == nil ? 1 : 0)..<1024 where changes[delta] == residue {
                found.append((position, data[position] ^ delta))
            }
        }
        return found
    }

    private static func step(_ check: Int, _ value: Int) -> Int {
        let top = check >> 20
        var next = (check & 0xFFFFF) << 10 ^ value
        for i in 0..<10 where (top >> i) & 1 == 1 { next ^= generator[i] }
        return next
    }

    /// The 1-based position of the one word that, changed, makes the checksum right (in either
    /// customization), when exactly one position can; nil otherwise.
    static func singleWordFix(_ data: [Int]) -> Int? {
        let positions = Set([SLIP39.customization(false), SLIP39.customization(true)].flatMap { custom in
            singleWordCorrections(data, customization: custom).map { $0.position + 1 }
        })
        return positions.count == 1 ? positions.first : nil
    }
}

// MARK: GF(256) and Shamir

/// Arithmetic in GF(2^8) with Rijndael's polynomial x^8 + x^4 + x^3 + x + 1, in constant time.
package enum GF256 {
    @inline(__always)
    package static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var a = a, b = b, product: UInt8 = 0
        for _ in 0..<8 {
            product ^= a & (0 &- (b & 1))
            let carry = 0 &- (a >> 7)
            a = (a << 1) ^ (0x1B & carry)
            b >>= 1
        }
        return product
    }

    /// a^254 = a^-1 (and 0 for 0), by a fixed sequence of squarings and multiplications.
    package static func inverse(_ a: UInt8) -> UInt8 {
        var result: UInt8 = 1
        var power = a
        for bit in 0..<8 {
            if (254 >> bit) & 1 == 1 { result = multiply(result, power) }
            power = multiply(power, power)
        }
        return result
    }
}

enum Shamir {
    /// f(x) for the polynomials through `shares`, byte by byte (Lagrange).
    static func interpolate(_ shares: [(x: UInt8, value: SecureBytes)], at x: UInt8) -> SecureBytes {
        if let exact = shares.first(where: { $0.x == x }) { return exact.value }
        let length = shares[0].value.count
        return SecureBytes(count: length) { out in
            out.initializeMemory(as: UInt8.self, repeating: 0)
            for (i, share) in shares.enumerated() {
                // The basis polynomial's value at x: public, since the x coordinates are.
                var numerator: UInt8 = 1, denominator: UInt8 = 1
                for (j, other) in shares.enumerated() where j != i {
                    numerator = GF256.multiply(numerator, x ^ other.x)
                    denominator = GF256.multiply(denominator, share.x ^ other.x)
                }
                let basis = GF256.multiply(numerator, GF256.inverse(denominator))
                share.value.withUnsafeBytes { values in
                    for k in 0..<length { out[k] ^= GF256.multiply(basis, values[k]) }
                }
            }
        }
    }

    static func digest(random: UnsafeRawBufferPointer, secret: UnsafeRawBufferPointer) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: SHA256.byteCount)
        mac.withUnsafeMutableBytes { HKDF.hmac(key: random, parts: [secret], into: $0) }
        return Array(mac.prefix(SLIP39.digestByteCount))
    }

    /// `count` shares of `secret`, any `threshold` of which recover it; the digest share lets a
    /// recovery check itself.
    static func split(threshold: Int, count: Int, secret: SecureBytes) -> [(x: UInt8, value: SecureBytes)] {
        if threshold == 1 { return (0..<count).map { (UInt8($0), secret) } }
        let length = secret.count
        var shares: [(x: UInt8, value: SecureBytes)] = (0..<(threshold - 2)).map { index in
            (UInt8(index), SecureBytes(count: length) { SecureRandom.fill($0) })
        }
        let digestShare = SecureBytes(count: length) { out in
            let random = UnsafeMutableRawBufferPointer(rebasing: out[SLIP39.digestByteCount...])
            SecureRandom.fill(random)
            let digest = secret.withUnsafeBytes { Shamir.digest(random: UnsafeRawBufferPointer(random), secret: $0) }
            for i in 0..<SLIP39.digestByteCount { out[i] = digest[i] }
        }
        let base = shares + [(SLIP39.digestIndex, digestShare), (SLIP39.secretIndex, secret)]
        for index in (threshold - 2)..<count { shares.append((UInt8(index), interpolate(base, at: UInt8(index)))) }
        return shares
    }

    static func recover(threshold: Int, shares: [(x: UInt8, value: SecureBytes)]) throws(SLIP39Error) -> SecureBytes {
        if threshold == 1 { return shares[0].value }
        let secret = interpolate(shares, at: SLIP39.secretIndex)
        let digestShare = interpolate(shares, at: SLIP39.digestIndex)
        let matches = digestShare.withUnsafeBytes { digest in
            secret.withUnsafeBytes { secretBytes in
                ConstantTime.equals(
                    Array(digest.prefix(SLIP39.digestByteCount)),
                    Shamir.digest(random: UnsafeRawBufferPointer(rebasing: digest[SLIP39.digestByteCount...]), secret: secretBytes))
            }
        }
        guard matches else { throw .badDigest }
        return secret
    }
}

// MARK: Feistel

/// SLIP-39's passphrase encryption: a four-round Feistel network whose round function is
/// PBKDF2-HMAC-SHA256 of (round ‖ passphrase), salted with (customization ‖ identifier, or nothing
/// for extendable backups) ‖ the right half.
enum Feistel {
    static func encrypt(_ secret: SecureBytes, passphrase: [UInt8], exponent: Int, identifier: Int, extendable: Bool) -> SecureBytes {
        run(secret, rounds: Array(0..<SLIP39.roundCount), passphrase: passphrase, exponent: exponent, identifier: identifier, extendable: extendable)
    }

    static func decrypt(_ secret: SecureBytes, passphrase: [UInt8], exponent: Int, identifier: Int, extendable: Bool) -> SecureBytes {
        run(secret, rounds: (0..<SLIP39.roundCount).reversed(), passphrase: passphrase, exponent: exponent, identifier: identifier, extendable: extendable)
    }

    private static func run(
        _ input: SecureBytes, rounds: [Int], passphrase: [UInt8], exponent: Int, identifier: Int, extendable: Bool
    ) -> SecureBytes {
        let half = input.count / 2
        let salt = extendable ? [] : SLIP39.customization(false) + [UInt8(identifier >> 8), UInt8(identifier & 0xFF)]
        let iterations = (SLIP39.baseIterationCount << exponent) / SLIP39.roundCount
        return SecureBytes(count: input.count) { out in
            // out holds L ‖ R; each round: (L, R) = (R, L ⊕ F(i, R)); the result is R ‖ L.
            input.withUnsafeBytes { out.copyMemory(from: $0) }
            withUnsafeTemporaryAllocation(byteCount: half * 2 + passphrase.count + 1 + salt.count + half, alignment: 16) { scratch in
                defer { scratch.initializeMemory(as: UInt8.self, repeating: 0) }
                let f = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<half])
                let saved = UnsafeMutableRawBufferPointer(rebasing: scratch[half..<(2 * half)])
                let password = UnsafeMutableRawBufferPointer(rebasing: scratch[(2 * half)..<(2 * half + 1 + passphrase.count)])
                let saltStart = 2 * half + 1 + passphrase.count
                let saltAndRight = UnsafeMutableRawBufferPointer(rebasing: scratch[saltStart..<(saltStart + salt.count + half)])
                passphrase.withUnsafeBytes { if $0.count > 0 { UnsafeMutableRawBufferPointer(rebasing: password[1...]).copyMemory(from: $0) } }
                salt.withUnsafeBytes { if $0.count > 0 { UnsafeMutableRawBufferPointer(rebasing: saltAndRight[..<salt.count]).copyMemory(from: $0) } }
                for round in rounds {
                    password[0] = UInt8(round)
                    let left = UnsafeMutableRawBufferPointer(rebasing: out[..<half])
                    let right = UnsafeMutableRawBufferPointer(rebasing: out[half...])
                    UnsafeMutableRawBufferPointer(rebasing: saltAndRight[salt.count...]).copyMemory(from: UnsafeRawBufferPointer(right))
                    PBKDF2.sha256(password: UnsafeRawBufferPointer(password), salt: UnsafeRawBufferPointer(saltAndRight), iterations: iterations, into: f)
                    saved.copyMemory(from: UnsafeRawBufferPointer(right))
                    for k in 0..<half { right[k] = left[k] ^ f[k] }
                    left.copyMemory(from: UnsafeRawBufferPointer(saved))
                }
                // Swap the halves: R ‖ L.
                saved.copyMemory(from: UnsafeRawBufferPointer(rebasing: out[..<half]))
                UnsafeMutableRawBufferPointer(rebasing: out[..<half]).copyMemory(from: UnsafeRawBufferPointer(rebasing: out[half...]))
                UnsafeMutableRawBufferPointer(rebasing: out[half...]).copyMemory(from: UnsafeRawBufferPointer(saved))
            }
        }
    }
}
