import CSodium

/// Bytes held in libsodium guarded memory: `sodium_malloc` places them between
/// guard pages, locks them out of swap where the system allows, and
/// `sodium_free` wipes them when the last reference goes away.
///
/// Each allocation costs its own memory mappings (the bytes and two guard pages), and
/// a process may hold only so many (`vm.max_map_count`, 65,530 by default). Many small
/// secrets that live together, such as the keys of one ring, therefore share one
/// allocation: `slice(_:)` hands out views of it that keep it alive.
///
/// `@unchecked Sendable`: immutable after initialisation (the pointer and count never change, and
/// nothing writes the bytes once `initialize` returns), so sharing across threads is safe.
package final class SecureBytes: @unchecked Sendable {
    private let pointer: UnsafeMutableRawPointer
    /// The number of bytes held.
    package let count: Int
    /// The allocation a slice lives in; nil when this object owns (and frees) its memory.
    private let owner: SecureBytes?

    private init(pointer: UnsafeMutableRawPointer, count: Int, owner: SecureBytes?) {
        self.pointer = pointer
        self.count = count
        self.owner = owner
    }

    /// Allocates `count` guarded bytes and lets `initialize` fill them.
    ///
    /// A failed allocation is an error, never a crash: the system may be out of memory or
    /// of memory mappings, which hostile input (a key file or reply of many keys) must not
    /// be able to turn into a crash.
    /// - Throws: `SecureMemoryError.outOfMemory` when libsodium cannot allocate, or what
    ///   `initialize` throws (the memory is then wiped and freed).
    package static func allocate(
        count: Int, initialize: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws -> SecureBytes {
        Sodium.ready
        guard count > 0, let pointer = sodium_malloc(count) else { throw SecureMemoryError.outOfMemory(byteCount: count) }
        // From here `deinit` wipes and frees the memory, also when `initialize` throws.
        let bytes = SecureBytes(pointer: pointer, count: count, owner: nil)
        try initialize(UnsafeMutableRawBufferPointer(start: pointer, count: count))
        return bytes
    }

    /// Allocates `count` guarded bytes and lets `initialize` fill them; for the package's
    /// single small secrets (one key, one passphrase) where an error path has no caller
    /// to report to. Paths whose size or number of allocations depends on input use
    /// `allocate(count:initialize:)`, which throws instead.
    package convenience init(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        Sodium.ready
        precondition(count > 0, "SecureBytes needs at least one byte")
        guard let pointer = sodium_malloc(count) else {
            fatalError("sodium_malloc could not allocate \(count) guarded bytes")
        }
        self.init(pointer: pointer, count: count, owner: nil)
        try initialize(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// Copies `bytes` into guarded memory. The caller remains responsible for wiping its copy.
    package convenience init(copying bytes: some ContiguousByteSource) {
        let count = bytes.withUnsafeBytes { $0.count }
        self.init(count: count) { target in
            bytes.withUnsafeBytes { target.copyMemory(from: $0) }
        }
    }

    /// Copies `bytes` into guarded memory, throwing instead of trapping when it cannot.
    /// - Throws: `SecureMemoryError.outOfMemory`.
    package static func copying(_ bytes: some ContiguousByteSource) throws(SecureMemoryError) -> SecureBytes {
        do {
            return try allocate(count: max(1, bytes.withUnsafeBytes { $0.count })) { target in
                bytes.withUnsafeBytes { source in
                    if source.count > 0 { target.copyMemory(from: source) }
                }
            }.slice(0..<bytes.withUnsafeBytes { $0.count })
        } catch let error as SecureMemoryError {
            throw error
        } catch {
            throw .outOfMemory(byteCount: bytes.withUnsafeBytes { $0.count })
        }
    }

    /// A view of `range` of these bytes that shares this allocation and keeps it alive:
    /// no new memory mapping.
    package func slice(_ range: Range<Int>) -> SecureBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return SecureBytes(pointer: pointer + range.lowerBound, count: range.count, owner: owner ?? self)
    }

    deinit { if owner == nil { sodium_free(pointer) } }

    /// Lends the bytes to `body`; the buffer must not escape it.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

extension SecureBytes: ContiguousByteSource {}

/// Guarded memory could not be had.
package enum SecureMemoryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system could not give this many bytes of guarded memory.
    case outOfMemory(byteCount: Int)

    package var description: String {
        switch self {
        case .outOfMemory(let count):
            return "cannot allocate \(count) bytes of guarded memory: the system is out of memory or of memory mappings"
        }
    }
}
