/// The keys of every open object, to refuse a duplicate exactly as `parse` does. `parse` compares
/// keys as Swift strings, which are equal when canonically equivalent, so two keys that are not both
/// ASCII are compared that way here too; ASCII keys compare as bytes, which for them is the same.
struct KeyLedger {
    /// A key: where its bytes are (in the input, or in `decoded` when it held escapes), and a
    /// fingerprint of them, or nil when they are not ASCII.
    private struct Key {
        var start: Int
        var count: Int
        var isDecoded: Bool
        var fingerprint: UInt64?
    }

    /// An open object: its first entry in `keys`, a 128-bit filter of its ASCII keys' fingerprints,
    /// whether it has a key that is not ASCII, and its keys as strings once it has many.
    private struct Object {
        var firstKey: Int
        var firstDecoded: Int
        var filter: (UInt64, UInt64) = (0, 0)
        var hasNonASCIIKey = false
        var index: Set<String>?
    }

    private var input: UnsafeBufferPointer<UInt8>
    private var decoded: [UInt8] = []
    private var keys: [Key] = []
    private var objects: [Object] = []

    init(input: UnsafeBufferPointer<UInt8>) {
        self.input = input
        keys.reserveCapacity(64)
        objects.reserveCapacity(8)
    }

    /// Forgets every key and object, keeping the memory, to read `input` next.
    mutating func removeAll(input: UnsafeBufferPointer<UInt8>) {
        self.input = input
        decoded.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        objects.removeAll(keepingCapacity: true)
    }

    mutating func openObject() {
        objects.append(Object(firstKey: keys.count, firstDecoded: decoded.count))
    }

    mutating func closeObject() {
        let object = objects.removeLast()
        keys.removeSubrange(object.firstKey...)
        decoded.removeSubrange(object.firstDecoded...)
    }

    /// Adds a key that sits in the input, with no escapes, to the innermost open object.
    /// - Returns: false when the object already has an equal key.
    mutating func insert(inputRange range: Range<Int>) -> Bool {
        insert(Key(start: range.lowerBound, count: range.count, isDecoded: false, fingerprint: nil))
    }

    /// Adds a key that held escapes, decoded, to the innermost open object.
    /// - Returns: false when the object already has an equal key.
    mutating func insert(decoded key: [UInt8]) -> Bool {
        let start = decoded.count
        decoded.append(contentsOf: key)
        guard insert(Key(start: start, count: key.count, isDecoded: true, fingerprint: nil)) else {
            decoded.removeSubrange(start...)
            return false
        }
        return true
    }

    private mutating func insert(_ new: Key) -> Bool {
        var key = new
        key.fingerprint = withBytes(of: key) { Self.fingerprint(ofASCII: $0) }
        let top = objects.count - 1
        let first = objects[top].firstKey
        // As `parse` does: compare one by one while few, then through a set of strings.
        if objects[top].index == nil, keys.count - first >= JSONParser.linearKeyCheckLimit {
            objects[top].index = Set(keys[first...].map { string(of: $0) })
        }
        if objects[top].index != nil {
            guard objects[top].index!.insert(string(of: key)).inserted else { return false }
        } else if let fingerprint = key.fingerprint {
            // An ASCII key whose filter bit is clear equals no earlier ASCII key; only a key that is
            // not ASCII could still equal it as a string.
            let bit = (fingerprint &* 0x9E37_79B9_7F4A_7C15) &>> 57
            let mask: UInt64 = 1 &<< (bit & 63)
            let isSet = bit < 64 ? objects[top].filter.0 & mask != 0 : objects[top].filter.1 & mask != 0
            if isSet || objects[top].hasNonASCIIKey, isDuplicate(key, from: first) { return false }
            if bit < 64 { objects[top].filter.0 |= mask } else { objects[top].filter.1 |= mask }
        } else {
            if isDuplicate(key, from: first) { return false }
            objects[top].hasNonASCIIKey = true
        }
        keys.append(key)
        return true
    }

    /// Whether one of the keys from `first` on equals `key`.
    private func isDuplicate(_ key: Key, from first: Int) -> Bool {
        withBytes(of: key) { bytes in
            for earlier in keys[first...] {
                if let fingerprint = key.fingerprint, let earlierFingerprint = earlier.fingerprint {
                    // Both ASCII: equal as strings exactly when equal as bytes.
                    if earlierFingerprint == fingerprint, earlier.count == key.count,
                        withBytes(of: earlier, { $0.elementsEqual(bytes) })
                    {
                        return true
                    }
                } else if string(of: earlier) == String(decoding: bytes, as: UTF8.self) {
                    return true
                }
            }
            return false
        }
    }

    private func withBytes<Result>(of key: Key, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        guard key.isDecoded else { return body(UnsafeBufferPointer(rebasing: input[key.start..<(key.start + key.count)])) }
        return decoded.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[key.start..<(key.start + key.count)])) }
    }

    private func string(of key: Key) -> String {
        withBytes(of: key) { String(decoding: $0, as: UTF8.self) }
    }

    /// The length and first and last eight bytes mixed into one word, or nil when `key` is not ASCII:
    /// equal keys have equal fingerprints, so most unequal ones are told apart without a comparison.
    private static func fingerprint(ofASCII key: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard let base = key.baseAddress else { return 0 }
        let count = key.count
        var i = 0
        var high: UInt64 = 0
        while i &+ 8 <= count {
            high |= UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            i &+= 8
        }
        var tail: UInt64 = 0
        while i < count {
            tail = tail << 8 | UInt64(base[i])
            i &+= 1
        }
        guard (high | tail) & 0x8080_8080_8080_8080 == 0 else { return nil }
        let head = count >= 8 ? UnsafeRawPointer(base).loadUnaligned(as: UInt64.self) : tail
        let last = count >= 8 ? UnsafeRawPointer(base + count - 8).loadUnaligned(as: UInt64.self) : 0
        return (head ^ (last &* 0x9E37_79B9_7F4A_7C15)) &+ UInt64(count)
    }
}
