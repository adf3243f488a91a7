import CSodium

/// Bytes held in libsodium guarded memory: `sodium_malloc` places them between
/// guard pages, locks them out of swap where the system allows, and
/// `sodium_free` wipes them when the last reference goes away.
///
/// Immutable after initialisation, so sharing across threads is safe.
package final class SecureBytes: @unchecked Sendable {
    private let pointer: UnsafeMutableRawPointer
    /// The number of bytes held.
    package let count: Int

    /// Allocates `count` guarded bytes and lets `initialize` fill them.
    /// If `initialize` throws, `deinit` still runs (every property is set), which wipes
    /// and frees the memory; freeing it here too would be a double free.
    package init(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        Sodium.ready
        precondition(count > 0, "SecureBytes needs at least one byte")
        guard let pointer = sodium_malloc(count) else {
            fatalError("sodium_malloc could not allocate \(count) guarded bytes")
        }
        self.pointer = pointer
        self.count = count
        try initialize(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// Copies `bytes` into guarded memory. The caller remains responsible for wiping its copy.
    package convenience init(copying bytes: some ContiguousByteSource) {
        let count = bytes.withUnsafeBytes { $0.count }
        self.init(count: count) { target in
            bytes.withUnsafeBytes { target.copyMemory(from: $0) }
        }
    }

    deinit { sodium_free(pointer) }

    /// Lends the bytes to `body`; the buffer must not escape it.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

extension SecureBytes: ContiguousByteSource {}
