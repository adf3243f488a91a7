import CSodium

/// Nonces for the ciphertexts of ONE operation (one profile, one block of `--lines`), drawn from
/// libsodium where they are used and wiped when the operation ends.
///
/// Why no pool between operations: a nonce drawn ahead and kept is replayed by anything that
/// copies the process (a restored VM snapshot, a CRIU checkpoint), and XSalsa20-Poly1305 under a
/// repeated nonce leaks the XOR of two plaintexts and allows forgeries. So nothing is kept: a
/// batch lives in scratch memory owned by its operation, hands each nonce out once, and
/// `discard()` (run at the end of `withBatch`, and by `--lines` before every read that may block)
/// zeroes whatever it drew and did not use.
///
/// Why batch at all: on Linux libsodium's `randombytes_buf` is one `getrandom` system call per 256
/// bytes, and for short values that call costs as much as the encryption. Within one operation up
/// to `maximumDraw` nonces share one call; that is the most one call can give, so a larger batch
/// would save nothing.
package struct NonceBatch: ~Copyable {
    /// The bytes of one nonce.
    package static let nonceByteCount = Int(crypto_secretbox_NONCEBYTES)
    /// The most nonces one draw takes: what fits in libsodium's 256-byte `getrandom` request.
    package static let maximumDraw = 256 / nonceByteCount

    private let storage: UnsafeMutableRawBufferPointer
    /// Nonces the batch can hold.
    private let capacity: Int
    /// Offset of the next unused nonce, and the end of what was drawn.
    private var cursor = 0
    private var drawn = 0
    /// Nonces the operation still expects to use, when it knows: a draw takes no more than that.
    private var expected: Int?

    /// A batch over scratch memory the caller owns and wipes no later than the batch does.
    /// - Parameters:
    ///   - storage: room for at least one nonce; only whole nonces are used.
    ///   - expecting: how many nonces the operation will take, when it knows, so none is drawn in vain.
    package init(storage: UnsafeMutableRawBufferPointer, expecting: Int? = nil) {
        precondition(storage.count >= Self.nonceByteCount, "a nonce batch needs room for one nonce")
        Sodium.ready
        self.storage = storage
        capacity = storage.count / Self.nonceByteCount
        expected = expecting
    }

    /// Runs `body` with a batch in scratch memory (on the stack) that is wiped when `body` returns or throws.
    /// - Parameters:
    ///   - expecting: how many nonces `body` will take, when known; unknown draws `maximumDraw` at a time.
    ///   - body: the operation.
    /// - Returns: what `body` returns.
    package static func withBatch<R, E: Error>(
        expecting: Int? = nil, _ body: (inout NonceBatch) throws(E) -> R
    ) throws(E) -> R {
        let count = Swift.min(Swift.max(expecting ?? maximumDraw, 1), maximumDraw)
        return try withUnsafeTemporaryAllocation(byteCount: count * nonceByteCount, alignment: 16) {
            (storage) throws(E) -> R in
            var batch = NonceBatch(storage: storage, expecting: expecting)
            defer { batch.discard() }
            return try body(&batch)
        }
    }

    /// Writes the next fresh nonce to `destination`, drawing from libsodium when the batch is empty.
    package mutating func take(into destination: UnsafeMutableRawPointer) {
        if cursor == drawn {
            var count = capacity
            if let expected { count = Swift.min(count, Swift.max(expected, 1)) }
            randombytes_buf(storage.baseAddress!, count * Self.nonceByteCount)
            cursor = 0
            drawn = count * Self.nonceByteCount
        }
        let source = storage.baseAddress! + cursor
        destination.copyMemory(from: source, byteCount: Self.nonceByteCount)
        // A nonce handed out is not kept either.
        sodium_memzero(source, Self.nonceByteCount)
        cursor += Self.nonceByteCount
        if let remaining = expected { expected = Swift.max(remaining - 1, 0) }
    }

    /// Nonces drawn and not yet handed out.
    package var unusedCount: Int { (drawn - cursor) / Self.nonceByteCount }

    /// Zeroes every nonce drawn and not handed out; the next `take` draws afresh.
    package mutating func discard() {
        if drawn > 0 { sodium_memzero(storage.baseAddress!, drawn) }
        cursor = 0
        drawn = 0
    }

    deinit {
        if drawn > 0 { sodium_memzero(storage.baseAddress!, drawn) }
    }
}
