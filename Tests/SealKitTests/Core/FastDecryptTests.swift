import Foundation
import SealKit
import SealTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The decrypt fast path (decode to scratch, open straight into the string, UTF-8 checked on
/// the bytes) against PyNaCl, and the `into:` encrypt path that `--lines` uses.
@Suite("Fast decrypt and encrypt-into")
struct FastDecryptTests {
    /// Plaintexts PyNaCl seals: sizes around the word loops and the stack/heap scratch switch,
    /// non-ASCII text, and bytes that are not UTF-8.
    @Test(.requires(.pyNaCl)) func decryptsWhatPyNaClEncrypts() throws {
        let key = SymmetricKey.generate()
        let keyText = key.base64EncodedBytes().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let script = """
            import sys, base64, nacl.secret
            box = nacl.secret.SecretBox(base64.b64decode(sys.stdin.readline()))
            cases = [b"", b"a", b"x" * 7, b"x" * 8, b"x" * 15, b"x" * 16, b"y" * 1000, b"z" * 5000, b"w" * 300000,
                     "caf\\u00e9 \\u2713 \\u65e5\\u672c \\U0001F600".encode(), ("\\u00e9" * 3000).encode(),
                     b"ascii then \\xff", b"\\xc3", b"\\xed\\xa0\\x80", b"abcdefgh\\xe2\\x82"]
            for plain in cases:
                print(base64.b64encode(plain).decode(), base64.b64encode(box.encrypt(plain)).decode())
            """
        let result = try Python.run(script, stdin: Array((keyText + "\n").utf8))
        #expect(result.status == 0, "\(result.stderrText)")
        let rows = result.stdoutText.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        }
        #expect(rows.count == 15)
        for row in rows {
            try #require(row.count == 2)
            let plain = try #require(Base64.decode(row[0]))
            let expected = String(validating: plain, as: UTF8.self)
            do {
                let text = try FieldCipher.decrypt(row[1], using: key)
                #expect(text == expected, "\(plain.count) bytes")
            } catch {
                #expect(expected == nil && error == .notUTF8, "\(plain.count) bytes: \(error)")
            }
            #expect(try FieldCipher.decryptBytes(row[1], usingAnyOf: [key]).bytes == plain)
        }
    }

    @Test func tamperingAndWrongKeysFailOnTheFastPath() throws {
        let key = SymmetricKey.generate()
        let other = SymmetricKey.generate()
        for size in [0, 1, 64, 2000] {
            let sealed = FieldCipher.encrypt(String(repeating: "q", count: size), using: key)
            #expect(throws: CiphertextError.authenticationFailed) { try FieldCipher.decrypt(sealed, using: other) }
            #expect(try FieldCipher.decrypt(sealed, usingAnyOf: [other, key]).keyIndex == 1)
            var bytes = Array(sealed.utf8)
            // Flip one bit of the last full character before any padding: still base64, wrong tag.
            let index = bytes.lastIndex { $0 != UInt8(ascii: "=") }! - 1
            bytes[index] = bytes[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(throws: CiphertextError.authenticationFailed) {
                try FieldCipher.decrypt(String(decoding: bytes, as: UTF8.self), using: key)
            }
        }
        #expect(throws: CiphertextError.notBase64) { try FieldCipher.decrypt("not base64!", using: key) }
        #expect(throws: CiphertextError.tooShort(byteCount: 3)) { try FieldCipher.decrypt("AAAA", using: key) }
    }

    @Test func utf8ValidationAgreesWithTheStandardLibrary() {
        var samples: [[UInt8]] = [
            [], Array("plain ascii, long enough to span words".utf8), Array("é".utf8), Array("日本語 text ✓".utf8),
            [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF], [0xFF], [0x80],
        ]
        for prefix in 0..<10 {
            samples.append(Array(repeating: UInt8(ascii: "a"), count: prefix) + [0xE2, 0x9C, 0x93] + Array("tail".utf8))
            samples.append(Array(repeating: UInt8(ascii: "a"), count: prefix) + [0xE2, 0x9C])
        }
        for _ in 0..<500 { samples.append(SecureRandom.bytes(count: Int.random(in: 0..<24)).map { $0 & 0xC7 }) }
        for bytes in samples {
            let expected = String(validating: bytes, as: UTF8.self) != nil
            #expect(bytes.withUnsafeBytes { UTF8Validation.isValid($0) } == expected, "\(bytes)")
        }
    }
}

@Suite("Nonce batches")
struct NonceBatchTests {
    private static let size = FieldCipher.nonceByteCount

    /// Every ciphertext gets a nonce never seen before, one by one and within batches.
    @Test func noncesNeverRepeat() throws {
        let key = SymmetricKey.generate()
        var nonces = Set<[UInt8]>()
        for index in 0..<1_000 {
            let sealed = FieldCipher.encrypt("value \(index)", using: key)
            #expect(try FieldCipher.decrypt(sealed, using: key) == "value \(index)")
            let nonce = Array(try #require(Base64.decode(sealed)).prefix(Self.size))
            #expect(nonce != [UInt8](repeating: 0, count: Self.size))
            #expect(nonces.insert(nonce).inserted, "a nonce repeated")
        }
        for expecting in [nil, 1, 3, 10, 25] as [Int?] {
            NonceBatch.withBatch(expecting: expecting) { batch in
                for _ in 0..<(expecting ?? 40) {
                    var nonce = [UInt8](repeating: 0, count: Self.size)
                    nonce.withUnsafeMutableBytes { batch.take(into: $0.baseAddress!) }
                    #expect(nonces.insert(nonce).inserted, "a nonce repeated in a batch")
                }
            }
        }
    }

    /// Threads encrypting at once never share a nonce.
    @Test func threadsNeverShareANonce() async {
        let perThread = 700
        let batches = await withTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    NonceBatch.withBatch { batch in
                        (0..<perThread).map { _ in
                            [UInt8](unsafeUninitializedCapacity: Self.size) { buffer, count in
                                batch.take(into: buffer.baseAddress!)
                                count = Self.size
                            }
                        }
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(batches.joined()).count == 4 * perThread)
    }

    /// What a batch drew and did not hand out is zeroed when the operation ends (and when
    /// `--lines` is about to wait for input): a snapshot of the process taken then holds no nonce
    /// that a later ciphertext will carry. Handed-out nonces are not kept either.
    @Test func unusedNoncesDoNotOutliveTheOperation() {
        let capacity = NonceBatch.maximumDraw
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity * Self.size, alignment: 16)
        defer { storage.deallocate() }
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        func isZero() -> Bool { storage.allSatisfy { $0 == 0 } }
        var handedOut: [[UInt8]] = []
        func take(_ batch: inout NonceBatch) {
            handedOut.append([UInt8](unsafeUninitializedCapacity: Self.size) { buffer, count in
                batch.take(into: buffer.baseAddress!)
                count = Self.size
            })
        }
        do {
            var batch = NonceBatch(storage: storage)
            take(&batch)
            #expect(batch.unusedCount == capacity - 1)
            #expect(!isZero(), "the batch drew nothing ahead")
            batch.discard()
            #expect(batch.unusedCount == 0)
            #expect(isZero(), "unused nonces outlived discard()")
            // After a discard the batch draws afresh: never a zeroed or repeated nonce.
            take(&batch)
            take(&batch)
            #expect(!isZero())
        }
        // The batch ended (deinit) with unused nonces: they are gone too.
        #expect(isZero(), "unused nonces outlived the batch")
        #expect(Set(handedOut).count == handedOut.count)
        #expect(!handedOut.contains([UInt8](repeating: 0, count: Self.size)))

        // An operation that says how many it needs draws no more than that, so nothing is left over.
        do {
            var batch = NonceBatch(storage: storage, expecting: 3)
            for _ in 0..<3 { take(&batch) }
            #expect(batch.unusedCount == 0)
            #expect(isZero(), "a batch drew more nonces than its operation said it needs")
        }
    }

    /// A profile's fields are encrypted with nonces of one batch: all distinct, all opening.
    @Test func profileFieldsGetDistinctNonces() throws {
        let key = SymmetricKey.generate()
        var nonces = Set<[UInt8]>()
        let values = (0..<12).map { "field \($0)" }
        NonceBatch.withBatch(expecting: values.count) { batch in
            for value in values {
                var value = value
                let length = FieldCipher.ciphertextLength(forPlaintextByteCount: value.utf8.count)
                let text = String(unsafeUninitializedCapacity: length) { output in
                    value.withUTF8 {
                        FieldCipher.encrypt(
                            bytes: UnsafeRawBufferPointer($0), using: key, nonces: &batch,
                            into: UnsafeMutableRawBufferPointer(output))
                    }
                    return length
                }
                #expect((try? FieldCipher.decrypt(text, using: key)) == value)
                nonces.insert(Array(Base64.decode(text)!.prefix(Self.size)))
            }
        }
        #expect(nonces.count == values.count)
    }
}
