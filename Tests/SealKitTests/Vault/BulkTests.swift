import Foundation
// Only the public API, as an app sees it.
import SealKit
import Testing

@Suite("Vault: many values and many profiles")
struct BulkTests {
    private static let schema = #"{"ssn": {"type": "string", "encryption": {"state": "enabled"}}, "score": {"type": "number", "encryption": {"state": "enabled"}}}"#

    private func vault(_ format: CiphertextFormat, user: String = "bulk") throws -> Vault {
        let vault = Vault(keystore: try .inMemory(), user: try KeyID(user), format: format)
        try vault.ensureKey(existing: "{}")
        return vault
    }

    /// Processes `text` as an app would, with the error typed.
    private func process(
        _ processor: ProfileProcessor, _ text: some Collection<UInt8>, with vault: Vault, line: Int? = nil,
        appendingTo output: inout [UInt8]
    ) throws(SealKitError) -> ProfileOutcome? {
        var result: Result<ProfileOutcome?, SealKitError> = .success(nil)
        Array(text).withUnsafeBufferPointer { buffer in
            result = Result { () throws(SealKitError) in try processor.process(buffer, with: vault, line: line, appendingTo: &output) }
        }
        return try result.get()
    }

    @Test(arguments: [CiphertextFormat.v1, .v2])
    func manyValuesRoundTripInOrderEachWithItsOwnNonce(format: CiphertextFormat) throws {
        let vault = try vault(format)
        let context = format == .v2 ? "note" : ""
        // More values than one draw of nonces holds, and one empty and one non-ASCII.
        let plaintexts = (0..<37).map { "value \($0)" } + ["", "ünïcödé ✓"]
        let sealed = try vault.encrypt(plaintexts: plaintexts, context: context)
        #expect(sealed.count == plaintexts.count)
        #expect(Set(sealed).count == sealed.count, "every value has its own nonce")
        for (value, ciphertext) in zip(plaintexts, sealed) {
            #expect(try vault.decrypt(ciphertext: ciphertext, context: context) == value)
            #expect(try vault.inspect(ciphertext: ciphertext).format == format)
        }
        let opened = try vault.decrypt(ciphertexts: sealed, context: context).map { try $0.get() }
        #expect(opened == plaintexts)
        #expect(try vault.encrypt(plaintexts: [], context: context).isEmpty)
    }

    @Test func aValueThatDoesNotOpenFailsAloneInItsOwnWords() throws {
        let vault = try vault(.v1)
        let good = try vault.encrypt(plaintexts: ["a", "b"])
        try #require(good.count == 2)
        let results = try vault.decrypt(ciphertexts: [good[0], "AAAA", good[1]])
        try #require(results.count == 3)
        #expect(try results[0].get() == "a")
        #expect(try results[2].get() == "b")
        guard case .failure(let error) = results[1] else {
            Issue.record("garbage opened")
            return
        }
        #expect(error.reason == .notCiphertext)
        // The caller says which value it was: the words name the problem alone.
        #expect(error.description == "too short to be a ciphertext (3 bytes, need at least 40)")
    }

    @Test func bulkCallsRefuseWhatSingleCallsRefuse() throws {
        let missing = Vault(keystore: try .inMemory(), user: try KeyID("nobody"), format: .v1)
        #expect { try missing.encrypt(plaintexts: ["x"]) } throws: { ($0 as? SealKitError)?.reason == .keyNotFound }
        #expect { try missing.decrypt(ciphertexts: ["x"]) } throws: { ($0 as? SealKitError)?.reason == .keyNotFound }
        let v1 = try vault(.v1)
        #expect { try v1.encrypt(plaintexts: ["x"], context: "ctx") } throws: { ($0 as? SealKitError)?.reason == .invalidArgument }
        // A v2 value opens only in its context.
        let v2 = try vault(.v2)
        let sealed = try v2.encrypt(plaintexts: ["x"], context: "here")
        guard case .failure(let error) = try #require(try v2.decrypt(ciphertexts: sealed, context: "there").first) else {
            Issue.record("opened in another context")
            return
        }
        #expect(error.reason == .wrongPlace)
    }

    @Test func theBytesEntryPointDoesWhatTheTextOneDoes() throws {
        let vault = try vault(.v1)
        let schema = try ProfileSchema(json: Array(Self.schema.utf8))
        let profile = #"{"name":"Ada","ssn":"078-05-1120","score":812}"#
        var sealed: [UInt8] = []
        let encrypting = try ProfileProcessor(.encrypt, schema: schema)
        let outcome = try process(encrypting, profile.utf8, with: vault, appendingTo: &sealed)
        #expect(outcome?.notes == [])
        #expect(outcome?.json == "", "the JSON went to the buffer")
        let sealedText = String(decoding: sealed, as: UTF8.self)
        #expect(!sealedText.contains("078-05-1120") && !sealedText.contains("812"))
        #expect(try ProfileProcessor(.decrypt, schema: schema).process(sealedText, with: vault).json == profile)

        var opened: [UInt8] = []
        let decrypting = try ProfileProcessor(.decrypt, schema: schema, options: .init(pretty: true))
        _ = try process(decrypting, sealed, with: vault, appendingTo: &opened)
        #expect(String(decoding: opened, as: UTF8.self).contains("\n  \"ssn\": \"078-05-1120\""))
        #expect(try decrypting.process(sealedText, with: vault).json == String(decoding: opened, as: UTF8.self))

        // Rotation names the fields it moved to the current key, from either entry point and in either mode.
        try vault.rotateKey()
        for options in [ProfileProcessor.Options(), .init(asRownd: true)] {
            let rotating = try ProfileProcessor(.rotate, schema: schema, options: options)
            var rotated: [UInt8] = []
            let fromBytes = try process(rotating, sealed, with: vault, appendingTo: &rotated)
            let fromText = try rotating.process(sealedText, with: vault)
            #expect(fromBytes?.rotatedFields == ["ssn", "score"])
            #expect(fromText.rotatedFields == fromBytes?.rotatedFields)
            #expect(fromText.fieldsUnderRetiredKeys.isEmpty)
            #expect(fromText.json.utf8.count == rotated.count)
        }
    }

    @Test func anOptionTheOperationDoesNotTakeIsRefused() throws {
        let schema = try ProfileSchema(json: Self.schema)
        for operation in [ProfileProcessor.Operation.encrypt, .decrypt] {
            #expect { try ProfileProcessor(operation, schema: schema, options: .init(migratingFromV1: true)) } throws: {
                ($0 as? SealKitError)?.reason == .invalidArgument
            }
        }
        for operation in [ProfileProcessor.Operation.encrypt, .rotate] {
            #expect { try ProfileProcessor(operation, schema: schema, options: .init(acceptingConflict: true)) } throws: {
                ($0 as? SealKitError)?.reason == .invalidArgument
            }
        }
        _ = try ProfileProcessor(.rotate, schema: schema, options: .init(migratingFromV1: true))
        _ = try ProfileProcessor(.decrypt, schema: schema, options: .init(acceptingConflict: true))
    }

    @Test func ndjsonLinesNameTheirLineAndBlankLinesHoldNoProfile() throws {
        let vault = try vault(.v1)
        let processor = try ProfileProcessor(.decrypt, schema: try ProfileSchema(json: Self.schema))
        var output: [UInt8] = []
        #expect(try process(processor, " \t\r".utf8, with: vault, line: 3, appendingTo: &output) == nil)
        do {
            _ = try process(processor, "{\"ssn\": }".utf8, with: vault, line: 7, appendingTo: &output)
            Issue.record("invalid JSON went through")
        } catch {
            #expect(error.reason == .invalidJSON)
            #expect(error.description.hasPrefix("the profile is invalid JSON at line 7, column "))
        }
        do {
            _ = try process(processor, #"{"ssn": 5}"#.utf8, with: vault, line: 2, appendingTo: &output)
            Issue.record("a plaintext number decrypted")
        } catch {
            #expect(error.reason == .profileFields)
            #expect(error.fields == ["ssn"])
            #expect(error.description.hasPrefix("line 2: 1 profile field failed: ssn holds a number, not a ciphertext"))
        }
        #expect(output.isEmpty, "a failure leaves the output as it was")
    }

    @Test func rowndModeLeavesWhatDoesNotOpenAndSaysWhere() throws {
        let vault = try vault(.v1)
        let schema = try ProfileSchema(json: Self.schema)
        let processor = try ProfileProcessor(.decrypt, schema: schema, options: .init(asRownd: true))
        var output: [UInt8] = []
        let outcome = try process(processor, #"{"data": {"ssn": "not sealed", "score": 5}}"#.utf8, with: vault, appendingTo: &output)
        #expect(String(decoding: output, as: UTF8.self) == #"{"data":{"ssn":"not sealed","score":5}}"#)
        #expect(outcome?.notes.count == 2)
        #expect(outcome?.notes.allSatisfy { $0.hasPrefix("data.") && !$0.contains("not sealed") } == true)
        // Rownd's SDKs read v1 only.
        let bound = try ProfileSchema(json: #"{"ssn": {"type": "string", "encryption": {"state": "enabled", "sealkit": {"format": 2}}}}"#)
        #expect { try ProfileProcessor(.encrypt, schema: bound, options: .init(asRownd: true)) } throws: {
            ($0 as? SealKitError)?.reason == .invalidSchema
        }
        #expect { try ProfileProcessor(.rotate, schema: schema, options: .init(asRownd: true, migratingFromV1: true)) } throws: {
            ($0 as? SealKitError)?.reason == .invalidArgument
        }
        let nothing = try ProfileSchema(json: #"{"ssn": {"type": "string"}}"#)
        #expect { try ProfileProcessor(.decrypt, schema: nothing) } throws: { ($0 as? SealKitError)?.reason == .invalidSchema }
    }

    @Test func keystoresSayTheirNamespace() throws {
        #expect(try Keystore.inMemory().namespace == "default")
        #expect(try Keystore.inMemory(namespace: "staging").namespace == "staging")
    }
}
