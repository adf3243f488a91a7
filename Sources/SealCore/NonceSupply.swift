import CSodium

/// Nonces for the ciphertexts of one operation that makes several (the encrypted fields of one
/// profile), drawn from libsodium's generator with one `randombytes_buf` call instead of one each.
///
/// Why: on Linux, `randombytes_buf` is a `getrandom` system call of up to 256 bytes per call,
/// and for short values that call costs about as much as the encryption itself. One call for
/// a profile's six nonces costs what one call for one nonce does.
///
/// Why this is as safe as a call per nonce:
/// - The bytes are libsodium's CSPRNG output, unchanged; nothing is derived or stretched.
/// - Each 24-byte slice is handed out once and then zeroed; nonces within a supply come from
///   distinct output bytes, so they are as unique as separately drawn ones.
/// - A supply lives for one call only (it is made, used and released inside one profile
///   operation, whose inputs are fixed before it is made), so no nonce outlives the call: a
///   fork or a VM snapshot cannot carry unused nonces into another process or clone.
/// - Asking for more than were drawn draws afresh rather than reusing anything.
package final class NonceSupply {
    private let buffer: UnsafeMutableRawBufferPointer
    private var offset = 0

    /// Draws `count` nonces at once.
    package init(count: Int) {
        Sodium.ready
        buffer = .allocate(byteCount: Swift.max(count, 0) * FieldCipher.nonceByteCount, alignment: 16)
        if let base = buffer.baseAddress, buffer.count > 0 { randombytes_buf(base, buffer.count) }
    }

    deinit {
        if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(base, buffer.count) }
        buffer.deallocate()
    }

    /// Writes the next unused nonce to `destination` (24 bytes) and forgets it.
    func take(into destination: UnsafeMutableRawPointer) {
        let size = FieldCipher.nonceByteCount
        guard offset + size <= buffer.count, let base = buffer.baseAddress else {
            randombytes_buf(destination, size)
            return
        }
        destination.copyMemory(from: base + offset, byteCount: size)
        sodium_memzero(base + offset, size)
        offset += size
    }
}
