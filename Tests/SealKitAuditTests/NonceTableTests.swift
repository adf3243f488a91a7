import SealKitAudit
import Testing

/// The nonce table compares whole keys wherever 32 bits of hash match: keys given the same hash
/// stay apart, across the table's growth, and each is found at the index it was recorded with.
@Suite("Nonce table")
struct NonceTableTests {
    @Test func keysWithEqualHashesStayApartAcrossGrowth() {
        var table = NonceTable()
        defer { table.deallocate() }
        // Three thousand keys with one hash: one run of slots, through two doublings; and as many with their own.
        let shared = (0..<3_000).map { NonceKey(high: UInt64($0), low: 0x5EA1) }
        let own = (0..<3_000).map { NonceKey(high: UInt64($0), low: 0x0DD) }
        for (index, key) in shared.enumerated() {
            #expect(table.firstSighting(of: key, hashValue: 42) == nil)
            #expect(table.count == index + 1)
        }
        for key in own {
            #expect(table.firstSighting(of: key, hashValue: NonceTable.hasher(of: key).finalize()) == nil)
        }
        for (index, key) in shared.enumerated() {
            #expect(table.firstSighting(of: key, hashValue: 42) == UInt32(index))
        }
        for (index, key) in own.enumerated() {
            #expect(table.firstSighting(of: key, hashValue: NonceTable.hasher(of: key).finalize()) == UInt32(3_000 + index))
        }
        // A key that differs from a recorded one in its last byte only, under the recorded one's hash.
        #expect(table.firstSighting(of: NonceKey(high: 7, low: 0x5EA1 ^ (1 << 56)), hashValue: 42) == nil)
        #expect(table.count == 6_001)
    }

    /// A table at its limit records no more and says so (the audit then stops with `tooManyNonces`), instead of
    /// losing count past 2^32 or stopping the process; what it holds is still found.
    @Test func aFullTableRecordsNothingMoreAndSaysSo() {
        var table = NonceTable(limit: 2_000)
        defer { table.deallocate() }
        let keys = (0..<2_001).map { NonceKey(high: UInt64($0), low: 1) }
        for key in keys.prefix(2_000) {
            #expect(table.firstSighting(of: key, hashValue: NonceTable.hasher(of: key).finalize()) == nil)
        }
        #expect(!table.isFull && table.count == 2_000)
        #expect(table.firstSighting(of: keys[2_000], hashValue: NonceTable.hasher(of: keys[2_000]).finalize()) == nil)
        #expect(table.isFull && table.count == 2_000)
    }
}
