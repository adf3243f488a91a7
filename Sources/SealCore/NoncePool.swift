import CSodium

#if canImport(Glibc)
import Glibc
#endif

/// Nonces for new ciphertexts, drawn from libsodium's generator a page at a time per thread.
///
/// Why a pool: on Linux, libsodium 1.0.18's `randombytes_buf` is one `getrandom` system call per
/// call, and for short values that call costs as much as the encryption. Drawing 168 nonces at a
/// time (10 on a thread's first use) makes the system's randomness a small part of each
/// ciphertext's cost.
///
/// Why this is as safe as a call per nonce:
/// - Every nonce is libsodium CSPRNG output, unchanged; nothing is derived or stretched.
/// - Each thread has its own page and its own cursor, so no slot is handed out twice and no lock
///   is needed. Nonces are public (they open every ciphertext), so what waits in the pool is not
///   a secret; what matters is that no nonce is ever used twice.
/// - The page is marked `MADV_WIPEONFORK`: a forked child sees it zeroed, reads that as empty and
///   draws afresh, so parent and child never share unused nonces. Where the kernel refuses the
///   mark (before Linux 4.14) or the platform has none, nothing is pooled: every nonce is its own
///   `randombytes_buf` call, as before.
/// - What no process can see is a copy of the whole machine (a VM snapshot restored twice);
///   docs/threat-model.md says so. At most the 167 nonces left on a thread's page are exposed.
package enum NoncePool {
    /// Writes a fresh 24-byte nonce to `destination`.
    package static func take(into destination: UnsafeMutableRawPointer) {
        #if os(Linux)
        if let page = threadPage() {
            var cursor = page.load(as: Int.self)
            var end = page.load(fromByteOffset: 8, as: Int.self)
            if cursor < dataStart || cursor > end - nonceSize || end > pageSize {
                // A new page, or one wiped by fork, reads 0: it starts with one system call's worth
                // (a thread that encrypts once pays little more than before); later fills take the page.
                end = end == 0 ? dataStart + firstFill : pageSize
                randombytes_buf(page + dataStart, end - dataStart)
                cursor = dataStart
                page.storeBytes(of: end, toByteOffset: 8, as: Int.self)
            }
            destination.copyMemory(from: page + cursor, byteCount: nonceSize)
            page.storeBytes(of: cursor + nonceSize, as: Int.self)
            return
        }
        #endif
        randombytes_buf(destination, nonceSize)
    }

    private static let nonceSize = Int(crypto_secretbox_NONCEBYTES)

    #if os(Linux)
    private static let pageSize = 4096
    /// The cursor (the offset of the next unused nonce) and the end of the drawn nonces sit in the
    /// first two words; nonces follow.
    private static let dataStart = 64
    /// What a fresh page draws first: ten nonces, within one `getrandom` call (libsodium asks for
    /// at most 256 bytes per call).
    private static let firstFill = 10 * nonceSize

    /// A thread's page, or nil when this thread cannot pool (no wipe-on-fork).
    private static func threadPage() -> UnsafeMutableRawPointer? {
        guard let key = pageKey else { return nil }
        if let existing = pthread_getspecific(key) {
            return existing == unpooled ? nil : existing
        }
        Sodium.ready
        let mapped = mmap(nil, pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != MAP_FAILED else {
            pthread_setspecific(key, unpooled)
            return nil
        }
        guard madvise(mapped, pageSize, MADV_WIPEONFORK) == 0 else {
            munmap(mapped, pageSize)
            pthread_setspecific(key, unpooled)
            return nil
        }
        // Nonces are public, but a core dump has no need of them either.
        _ = madvise(mapped, pageSize, MADV_DONTDUMP)
        pthread_setspecific(key, mapped)
        return mapped
    }

    /// Marks a thread that pools nothing; never a mapped address.
    nonisolated(unsafe) private static let unpooled = UnsafeMutableRawPointer(bitPattern: 1)!

    /// The thread-specific slot for each thread's page, unmapped when the thread ends.
    private static let pageKey: pthread_key_t? = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { page in
            guard let page, page != NoncePool.unpooled else { return }
            munmap(page, NoncePool.pageSize)
        }
        return status == 0 ? key : nil
    }()
    #endif
}
