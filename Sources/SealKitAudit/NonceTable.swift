#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The distinct nonces an audit has seen, each to the index of its first sighting: with the sightings, the
/// memory that grows with the data.
///
/// The keys stand in the order they were first seen, in a flat array whose index is the sighting's. The table
/// is open addressing with linear probing over 8-byte slots: 32 bits of the key's hash, which also place it,
/// and its index plus one (0 for an empty slot), at most three quarters full and doubled when it would be
/// fuller. A key is compared only where its 32 bits match, so a new nonce, the common case, reads slots alone:
/// a table of a quarter of the size of 20-byte slots of keys and indexes, which stays in the caches far longer,
/// and grows without reading a key (a `[NonceKey: UInt32]`, its lookups and its growth were half of
/// an audit's time). At 16 bytes a key, a distinct nonce takes no more memory than in that dictionary.
/// A key is placed by the standard library's `Hasher`, seeded anew in every process, so crafted nonces cannot
/// pile into one run of slots; a match of 32 bits is checked against the whole key, so two nonces are one only
/// when all their tracked bytes are equal.
package struct NonceTable {
    private struct Slot {
        var tag: UInt32
        var index: UInt32
    }

    private var slots: UnsafeMutablePointer<Slot>
    /// The number of slots minus one (a power of two minus one, below 2^32: the tags place the keys).
    private var mask: Int
    /// The keys, by sighting index.
    private var keys = MappedArray<NonceKey>()

    static let initialCapacity = 1024

    /// How many nonces the table holds.
    package var count: Int { keys.count }

    /// Frees the table's memory; the table must not be used afterwards.
    package func deallocate() {
        Mapping.deallocate(slots, capacity: mask + 1)
        keys.deallocate()
    }

    /// A hasher that has taken `key`: finalized, it places the key in the table.
    package static func hasher(of key: NonceKey) -> Hasher {
        var hasher = Hasher()
        hasher.combine(key.high)
        hasher.combine(key.low)
        return hasher
    }

    /// The index of the first sighting of `key`; when it is new, records it as the next sighting (index
    /// `count` before the call) and returns nil.
    /// - Parameter hashValue: `NonceTable.hasher(of: key)`, finalized.
    /// The most nonces the table holds by default: indexes are stored plus one in 32 bits.
    package static let maximumCount = Int(UInt32.max) - 1
    /// The most nonces this table holds.
    private let limit: Int

    /// Whether the table could not take a nonce: it held `limit` of them, or the system gave no memory to grow.
    /// The audit then stops with an error (`AuditError.tooManyNonces`) rather than lose count or crash.
    package private(set) var isFull = false

    package init(limit: Int = NonceTable.maximumCount) {
        self.limit = min(limit, Self.maximumCount)
        // 24 KiB at the start of an audit: a system that cannot give it cannot run the audit at all.
        guard let slots = Mapping.allocate(Slot.self, capacity: Self.initialCapacity, hugePages: true) else {
            fatalError("out of memory at the start of an audit")
        }
        self.slots = slots
        mask = Self.initialCapacity - 1
    }

    /// - Precondition: `!isFull`.
    package mutating func firstSighting(of key: NonceKey, hashValue: Int) -> UInt32? {
        precondition(!isFull, "the audit checks isFull before it adds a nonce")
        let tag = UInt32(truncatingIfNeeded: hashValue)
        var slot = Int(tag) & mask
        while slots[slot].index != 0 {
            if slots[slot].tag == tag, keys[Int(slots[slot].index - 1)] == key { return slots[slot].index - 1 }
            slot = (slot &+ 1) & mask
        }
        // Not recorded when there is no room: the caller sees `isFull` and stops.
        guard keys.count < limit else {
            isFull = true
            return nil
        }
        if (keys.count + 1) * 4 > (mask + 1) * 3 {
            guard grow() else {
                isFull = true
                return nil
            }
            slot = Int(tag) & mask
            while slots[slot].index != 0 { slot = (slot &+ 1) & mask }
        }
        guard keys.append(key) else {
            isFull = true
            return nil
        }
        slots[slot] = Slot(tag: tag, index: UInt32(keys.count))
        return nil
    }

    /// Doubles the slots and places every key again, by its tag.
    /// - Returns: false, changing nothing, when the system gives no memory for the larger table.
    private mutating func grow() -> Bool {
        let old = slots, oldCapacity = mask + 1
        let capacity = oldCapacity * 2
        guard let larger = Mapping.allocate(Slot.self, capacity: capacity, hugePages: true) else { return false }
        slots = larger
        mask = capacity - 1
        for oldSlot in 0..<oldCapacity where old[oldSlot].index != 0 {
            var slot = Int(old[oldSlot].tag) & mask
            while slots[slot].index != 0 { slot = (slot &+ 1) & mask }
            slots[slot] = old[oldSlot]
        }
        Mapping.deallocate(old, capacity: oldCapacity)
        return true
    }
}

extension Hasher {
    /// The hash of what this hasher has taken so far, leaving it free to take more.
    func finalizedCopy() -> Int {
        let copy = self
        return copy.finalize()
    }
}

/// A growing array of plain values (keys, `FirstSight`s) in memory of its own, as `NonceTable`'s slots are.
struct MappedArray<Element: BitwiseCopyable> {
    private var elements: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init() {
        capacity = 1024
        // 16 to 20 KiB at the start of an audit, as `NonceTable`'s first slots.
        guard let elements = Mapping.allocate(Element.self, capacity: capacity, hugePages: false) else {
            fatalError("out of memory at the start of an audit")
        }
        self.elements = elements
    }

    subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count)
        return elements[index]
    }

    /// Appends `element`.
    /// - Returns: false, changing nothing, when the system gives no memory to grow.
    @discardableResult
    mutating func append(_ element: Element) -> Bool {
        if count == capacity {
            guard let larger = Mapping.allocate(Element.self, capacity: capacity * 2, hugePages: false) else {
                return false
            }
            larger.update(from: elements, count: count)
            Mapping.deallocate(elements, capacity: capacity)
            elements = larger
            capacity *= 2
        }
        elements[count] = element
        count += 1
        return true
    }

    /// Frees the memory; the array must not be used afterwards.
    func deallocate() {
        Mapping.deallocate(elements, capacity: capacity)
    }
}

/// Memory straight from the system for what grows with the data (the nonce table's slots, the keys, the
/// sightings). The allocator's heap would keep what the smaller arrays left behind as they grew, resident to
/// the end of the audit, and how much depended on its thresholds (tens of MiB at 4 million values); a mapping
/// goes back whole. Each lookup lands in a random place of a table that outgrows the caches; on Linux the table
/// asks for huge pages, so a lookup does not also miss the TLB (a page walk per value with 4 KiB pages).
enum Mapping {
    static let hugePagesFrom = 2 << 20

    /// Zeroed memory for `capacity` values of a plain type, or nil when the system gives none.
    /// - Parameter hugePages: whether to ask for huge pages when the memory is at least `hugePagesFrom` bytes:
    ///   for memory read at random. They cost more to hand over (the system clears 2 MiB at a time), so memory
    ///   read in order (the keys and sightings, read at random only for repeats) goes without.
    static func allocate<Element: BitwiseCopyable>(
        _: Element.Type, capacity: Int, hugePages: Bool
    ) -> UnsafeMutablePointer<Element>? {
        let length = capacity * MemoryLayout<Element>.stride
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            base != MAP_FAILED
        else { return nil }
        #if os(Linux)
        if hugePages, length >= hugePagesFrom { _ = madvise(base, length, MADV_HUGEPAGE) }
        #endif
        return base.bindMemory(to: Element.self, capacity: capacity)
    }

    static func deallocate<Element: BitwiseCopyable>(_ elements: UnsafeMutablePointer<Element>, capacity: Int) {
        munmap(elements, capacity * MemoryLayout<Element>.stride)
    }
}
