#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The distinct nonces an audit has seen, each to the index of its first sighting: the one table that
/// grows with the data.
///
/// Open addressing with linear probing over one flat array of 20-byte slots (a key and its sighting index
/// plus one, 0 for an empty slot), at most three quarters full and doubled when it would be fuller: the
/// same 20 bytes a slot and the same load as `[NonceKey: UInt32]`, without a generic dictionary's work per
/// value, and one cache line to read per lookup instead of two (issue 40: the dictionary, its lookups and
/// its growth were half of an audit's time).
/// A slot is found by the standard library's `Hasher` of the key, seeded anew in every process, so
/// crafted nonces cannot pile into one run of slots; a lookup compares whole keys, so two nonces are one
/// only when all their tracked bytes are equal.
struct NonceTable {
    /// A key as four 32-bit words, so a slot packs into 20 bytes, and its sighting index plus one.
    private struct Slot {
        var words: (UInt32, UInt32, UInt32, UInt32)
        var index: UInt32

        init(_ key: NonceKey, index: UInt32) {
            words = (
                UInt32(truncatingIfNeeded: key.high), UInt32(truncatingIfNeeded: key.high >> 32),
                UInt32(truncatingIfNeeded: key.low), UInt32(truncatingIfNeeded: key.low >> 32))
            self.index = index
        }

        var key: NonceKey {
            NonceKey(high: UInt64(words.0) | UInt64(words.1) << 32, low: UInt64(words.2) | UInt64(words.3) << 32)
        }

        func holds(_ key: NonceKey) -> Bool {
            words.0 == UInt32(truncatingIfNeeded: key.high) && words.1 == UInt32(truncatingIfNeeded: key.high >> 32)
                && words.2 == UInt32(truncatingIfNeeded: key.low) && words.3 == UInt32(truncatingIfNeeded: key.low >> 32)
        }
    }

    private var slots: UnsafeMutablePointer<Slot>
    /// The number of slots minus one (a power of two minus one).
    private var mask: Int
    /// How many nonces the table holds.
    private(set) var count = 0

    static let initialCapacity = 1024

    init() {
        slots = Mapping.allocate(Slot.self, capacity: Self.initialCapacity)
        mask = Self.initialCapacity - 1
    }

    /// Frees the table's memory; the table must not be used afterwards.
    func deallocate() {
        Mapping.deallocate(slots, capacity: mask + 1)
    }

    /// The index of the first sighting of `key`; when it is new, records `index` as its first sighting
    /// and returns nil.
    /// - Parameter hashValue: `NonceTable.hasher(of: key)`, finalized.
    mutating func firstSighting(of key: NonceKey, hashValue: Int, orRecord index: Int) -> UInt32? {
        // Indexes are stored plus one in 32 bits: 4 billion distinct nonces, more than memory holds at 20 bytes each.
        precondition(index < Int(UInt32.max), "an audit tracks fewer than 4 billion distinct nonces")
        var slot = hashValue & mask
        while slots[slot].index != 0 {
            if slots[slot].holds(key) { return slots[slot].index - 1 }
            slot = (slot &+ 1) & mask
        }
        if (count + 1) * 4 > (mask + 1) * 3 {
            grow()
            slot = hashValue & mask
            while slots[slot].index != 0 { slot = (slot &+ 1) & mask }
        }
        slots[slot] = Slot(key, index: UInt32(index + 1))
        count += 1
        return nil
    }

    /// A hasher that has taken `key`: finalized, it places the key in the table.
    static func hasher(of key: NonceKey) -> Hasher {
        var hasher = Hasher()
        hasher.combine(key.high)
        hasher.combine(key.low)
        return hasher
    }

    private static func slot(of key: NonceKey, mask: Int) -> Int {
        hasher(of: key).finalize() & mask
    }

    /// Doubles the slots and places every key again.
    private mutating func grow() {
        let old = slots, oldCapacity = mask + 1
        let capacity = oldCapacity * 2
        slots = Mapping.allocate(Slot.self, capacity: capacity)
        mask = capacity - 1
        for oldSlot in 0..<oldCapacity where old[oldSlot].index != 0 {
            var slot = Self.slot(of: old[oldSlot].key, mask: mask)
            while slots[slot].index != 0 { slot = (slot &+ 1) & mask }
            slots[slot] = old[oldSlot]
        }
        Mapping.deallocate(old, capacity: oldCapacity)
    }
}

extension Hasher {
    /// The hash of what this hasher has taken so far, leaving it free to take more.
    func finalizedCopy() -> Int {
        let copy = self
        return copy.finalize()
    }
}

/// A growing array of plain values (`FirstSight`s) in memory of its own, as `NonceTable`'s slots are.
struct MappedArray<Element: BitwiseCopyable> {
    private var elements: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init() {
        capacity = 1024
        elements = Mapping.allocate(Element.self, capacity: capacity)
    }

    subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count)
        return elements[index]
    }

    mutating func append(_ element: Element) {
        if count == capacity {
            let larger = Mapping.allocate(Element.self, capacity: capacity * 2)
            larger.update(from: elements, count: count)
            Mapping.deallocate(elements, capacity: capacity)
            elements = larger
            capacity *= 2
        }
        elements[count] = element
        count += 1
    }

    /// Frees the memory; the array must not be used afterwards.
    func deallocate() {
        Mapping.deallocate(elements, capacity: capacity)
    }
}

/// Memory straight from the system for the audit's two tables that grow with the data. The allocator's heap
/// would keep what the smaller tables left behind as they grew, resident to the end of the audit, and
/// how much depended on its thresholds (tens of MiB at 4 million values); a mapping goes back whole.
/// Each lookup lands in a random place of a table that outgrows the caches; on Linux a large mapping asks
/// for huge pages, so a lookup does not also miss the TLB (a page walk per value with 4 KiB pages).
enum Mapping {
    private static let hugePageSize = 2 << 20

    /// Zeroed memory for `capacity` values of a plain type.
    static func allocate<Element: BitwiseCopyable>(_: Element.Type, capacity: Int) -> UnsafeMutablePointer<Element> {
        let length = capacity * MemoryLayout<Element>.stride
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            base != MAP_FAILED
        else {
            fatalError("out of memory for the audit's tables (\(length) bytes)")
        }
        #if os(Linux)
        if length >= hugePageSize { _ = madvise(base, length, MADV_HUGEPAGE) }
        #endif
        return base.bindMemory(to: Element.self, capacity: capacity)
    }

    static func deallocate<Element: BitwiseCopyable>(_ elements: UnsafeMutablePointer<Element>, capacity: Int) {
        munmap(elements, capacity * MemoryLayout<Element>.stride)
    }
}
