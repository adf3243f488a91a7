import Foundation
import SealKit
import Testing

@Suite("Guarded memory")
struct SecureMemoryTests {
    /// A failing sodium_malloc is an error the caller can report, not a crash.
    @Test func anAllocationThatFailsThrows() {
        #expect(throws: SecureMemoryError.outOfMemory(byteCount: Int.max / 2)) {
            try SecureBytes.allocate(count: Int.max / 2) { _ in Issue.record("initialised memory it does not have") }
        }
        #expect(throws: SecureMemoryError.self) { try SymmetricKey.batch(count: Int.max / 64) { _, _ in } }
    }

    /// Many keys, one allocation: three mappings per key would exhaust vm.max_map_count
    /// (65,530) at about 21,000 keys.
    @Test func aBatchOfKeysSharesOneAllocation() throws {
        let before = mappings()
        let keys = try SymmetricKey.batch(count: 20_000) { index, out in
            let random = SecureRandom.bytes(count: out.count)
            out.copyBytes(from: random)
            out.storeBytes(of: UInt32(index), as: UInt32.self)
        }
        #expect(mappings() - before < 20, "\(mappings() - before) new mappings for 20,000 keys")
        try #require(keys.count == 20_000)
        #expect(keys.allSatisfy { $0.storage.count == SymmetricKey.byteCount })
        #expect(keys[0] != keys[1] && keys[19_999] == keys[19_999])
        // A slice outlives the batch it came from: it keeps the allocation alive.
        let survivor = keys[12_345]
        let fingerprint = survivor.fingerprint
        _ = consume keys
        #expect(survivor.fingerprint == fingerprint)
    }

    private func mappings() -> Int {
        (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8))?.split(separator: "\n").count ?? 0
    }
}
