#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SealKitAudit
import SealKit
import Testing

@Suite("Auditor over the fixture sets")
struct FixtureAuditTests {
    static let base = auditFixtures.path

    func keyRing() throws -> KeyRing {
        KeyRing(current: try fixtureKey("current"), retired: [try fixtureKey("retired")], id: "audit-user")
    }

    @Test func plantedSetYieldsExactlyThePlantedFindingsInEveryRun() throws {
        let runs = try ExpectedRun.all()
        #expect(runs.count == 4)
        for run in runs {
            let schema = try run.schema.map { try AuditSchema.load(path: Self.base + "/" + $0) }
            let auditor = Auditor(schema: schema, keys: run.key ? [try keyRing()] : [])
            let report = try auditor.audit(paths: [Self.base + "/planted"])
            let found = report.findings.map { ExpectedFinding($0, base: Self.base) }
            #expect(found == run.findings, "schema: \(run.schema ?? "none"), key: \(run.key)")
            #expect(report.fileCount == 5)
        }
    }

    @Test func everyKindIsPlanted() throws {
        // Seal kinds need a schema that asks for seals, so they are planted in a set of their own (SealAuditTests).
        let sealKinds = try SealAuditTests.plantedRun(withKey: true).map(\.kind.rawValue)
        let kinds = Set(try ExpectedRun.all().flatMap { $0.findings.map(\.kind) } + sealKinds)
        #expect(kinds == Set(FindingKind.allCases.map(\.rawValue)))
    }

    @Test func cleanSetHasNoFindingsWithSchemaAndKeys() throws {
        for schemaFile in [nil, "schema.json"] {
            for keys in [[], [try keyRing()]] {
                let schema = try schemaFile.map { try AuditSchema.load(path: Self.base + "/" + $0) }
                let report = try Auditor(schema: schema, keys: keys).audit(paths: [Self.base + "/clean"])
                #expect(report.findings.isEmpty, "\(report.findings.map(\.message))")
                #expect(report.fileCount == 3)
                #expect(report.valueCount > 10)
            }
        }
    }

    @Test func aKeyThatOpensNothingMakesEveryCiphertextUndecryptable() throws {
        let ring = KeyRing(current: try fixtureKey("foreign"))
        let report = try Auditor(keys: [ring]).audit(paths: [Self.base + "/clean"])
        #expect(report.findings.count == report.valueCount)
        #expect(report.findings.allSatisfy { $0.kind == .undecryptable })
    }

    @Test func missingPathIsAnErrorNotAFinding() {
        #expect(throws: SealKitError(AuditError.missingPath(Self.base + "/nope"))) {
            try Auditor().audit(paths: [Self.base + "/clean", Self.base + "/nope"])
        }
        #expect(throws: SealKitError(AuditError.unsupportedFile(Self.base + "/keys/current.key"))) {
            try Auditor().audit(paths: [Self.base + "/keys/current.key"])
        }
        // The public error: a reason to switch on, and the message naming the path.
        do {
            _ = try Auditor().audit(paths: [Self.base + "/nope"])
            Issue.record("a missing path was audited")
        } catch {
            #expect(error.reason == .invalidArgument)
            #expect(error.description == Self.base + "/nope: no such file or folder; give the files or folders to audit")
        }
    }
}

@Suite("Reading JSON and NDJSON")
struct ReadingTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealaudit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    static let key = SymmetricKey.generate()
    static func sealed(_ text: String) -> String { FieldCipher.encrypt(text, using: key) }

    /// A file whose name is not UTF-8 could be neither opened by its decoded name nor named in a finding: the
    /// audit names it (its odd bytes written as `\x{…}`) and stops, rather than pass the folder without it.
    @Test func aFileWhoseNameIsNotUTF8IsAnErrorNotSkipped() throws {
        let lake = folder.appendingPathComponent("lake")
        _ = try write("lake/a.ndjson", "{\"ssn\": \"\(Self.sealed("x"))\"}\n")
        let path = Array(lake.path.utf8) + Array("/x".utf8) + [0xFF] + Array(".ndjson".utf8) + [0]
        let descriptor = path.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o600) }
        }
        try #require(descriptor >= 0)
        let plaintext = Array("{\"ssn\": \"123-45-6789\"}\n".utf8)
        let written = plaintext.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        try #require(written == plaintext.count)
        let reason = "its name is not valid UTF-8; rename it to audit it"
        #expect(throws: SealKitError(AuditError.unreadable(path: lake.path + "/x\\x{ff}.ndjson", reason: reason))) {
            try Auditor().audit(paths: [lake.path])
        }
    }

    /// The name is shown escaped whole: an escape sequence or a carriage return beside the byte that is not
    /// UTF-8 would clear or rewrite the terminal the message is read on.
    @Test func aNameThatIsNotUTF8IsShownWithItsControlCharactersEscaped() throws {
        let lake = folder.appendingPathComponent("lake")
        _ = try write("lake/a.ndjson", "{\"ssn\": \"\(Self.sealed("x"))\"}\n")
        let path = Array(lake.path.utf8) + Array("/a".utf8) + [0xFF, 0x1B] + Array("[2J\r.ndjson".utf8) + [0]
        let descriptor = path.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o600) }
        }
        try #require(descriptor >= 0)
        close(descriptor)
        let reason = "its name is not valid UTF-8; rename it to audit it"
        #expect(throws: SealKitError(AuditError.unreadable(path: lake.path + "/a\\x{ff}\\u{1b}[2J\\u{d}.ndjson", reason: reason))) {
            try Auditor().audit(paths: [lake.path])
        }
    }

    @Test func arrayElementsSplitAroundTrickyStrings() throws {
        let copy = Self.sealed("x")
        // Brackets, commas and escaped quotes inside strings must not split elements.
        let text = "[ {\"a\": \"],[{\\\"\", \"c\": \"\(copy)\"} ,\n {\"b\": [1, {\"x\": \"}\"}], \"c\": \"\(copy)\"}\n]\n"
        let path = try write("tricky.json", text)
        let report = try Auditor().audit(paths: [path])
        let finding = try #require(report.findings.first)
        #expect(report.findings.count == 1 && finding.kind == .duplicateCiphertext)
        // Reported where it repeats, naming where it was first seen.
        #expect(finding.places.map(\.location) == [.pointer("/1/c"), .pointer("/0/c")])
        #expect(finding.places.map(\.line) == [2, 1])
    }

    @Test func errorsInLaterElementsKeepFilePositions() throws {
        var elements = (0..<50).map { "{\"n\": \($0), \"s\": \"\(Self.sealed("v\($0)"))\"}" }
        elements[40] = "{\"n\": 40, \"s\": tru}"
        let text = "[\n" + elements.joined(separator: ",\n") + "\n]"
        let path = try write("late-error.json", text)
        let report = try Auditor().audit(paths: [path])
        let finding = try #require(report.findings.first)
        #expect(report.findings.count == 1 && finding.kind == .unreadableFile)
        // The same position SealKit's JSON reader gives for the whole document.
        do {
            _ = try JSONValue.parse(text)
            Issue.record("the document should not parse")
        } catch {
            #expect(finding.message.contains("line \(error.line), column \(error.column)"), "\(finding.message) vs \(error)")
            #expect(finding.places.first?.line == error.line)
        }
        #expect(report.valueCount == 40)
    }

    @Test(arguments: ["", "   \n", "[", "[1,]", "[{}] x", "{\"a\": 1", "[{}]]"])
    func malformedJSONIsAnUnreadableFile(_ text: String) throws {
        let path = try write("bad.json", text)
        let report = try Auditor().audit(paths: [path])
        #expect(report.findings.map(\.kind) == [.unreadableFile], "\(text.debugDescription)")
    }

    @Test func wellFormedEdgeCasesAreFine() throws {
        for (index, text) in ["[]", " [ ] ", "{}", "[{}, {\"data\": {}}]", "\n[\n{\"a\":\"b\"}\n]\n"].enumerated() {
            let path = try write("fine-\(index).json", text)
            #expect(try Auditor().audit(paths: [path]).findings.isEmpty, "\(text.debugDescription)")
        }
    }

    @Test func ndjsonHandlesCRLFBlankLinesAndNoFinalNewline() throws {
        let a = Self.sealed("a")
        let text = "{\"s\": \"\(a)\"}\r\n\r\n   \n{\"t\": \"\(a)\"}"
        let path = try write("lines.ndjson", text)
        let report = try Auditor().audit(paths: [path])
        let finding = try #require(report.findings.first)
        #expect(finding.kind == .duplicateCiphertext)
        #expect(finding.places.map(\.location) == [.line(4), .line(1)])
        #expect(finding.places.map(\.field) == ["t", "s"])
        #expect(report.summary.blankLineCount == 2)
    }

    @Test func everyBadNDJSONLineIsCountedAndTheRestAudited() throws {
        let text = "{\"a\": 1}\nnot json\n{\"b\": \"\(Self.sealed("q"))\"}\n[1\n"
        let path = try write("mixed.jsonl", text)
        let report = try Auditor(keys: [KeyRing(current: SymmetricKey.generate())]).audit(paths: [path])
        // Values as they are met; the file's problem once it has been read to the end.
        try #require(report.findings.map(\.kind) == [.undecryptable, .unreadableFile])
        #expect(report.findings[1].location == .line(2))
        #expect(report.findings[1].message.contains("2 bad lines"))
        #expect(report.findings[0].location == .line(3))
    }

    @Test func nestingBeyondTheParserLimitIsAFindingNotACrash() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let json = try write("deep.json", "{\"a\": " + deep + "}")
        let lines = try write("deep.ndjson", "{\"a\": " + deep + "}\n")
        let report = try Auditor().audit(paths: [json, lines])
        #expect(report.findings.map(\.kind) == [.unreadableFile, .unreadableFile])
        // Within the limit, the recursive walk over values is fine.
        let allowed = String(repeating: "[", count: 500) + "\"\(Self.sealed("deep"))\"" + String(repeating: "]", count: 500)
        let ok = try write("allowed.json", "{\"a\": " + allowed + "}")
        let fine = try Auditor().audit(paths: [ok])
        #expect(fine.findings.isEmpty && fine.valueCount == 1)
    }

    @Test func withoutSchemaShortBase64AndWordsAreNotCiphertexts() throws {
        let path = try write("words.json", #"{"name": "abcd", "token": "QUJDREVGR0g=", "hex": "deadbeef", "n": 5}"#)
        let report = try Auditor(keys: [KeyRing(current: SymmetricKey.generate())]).audit(paths: [path])
        #expect(report.findings.isEmpty && report.valueCount == 0)
    }

    @Test func pointersEscapeTildeAndSlash() throws {
        let value = Self.sealed("x")
        let path = try write("escape.json", "[{\"data\": {\"a/b~c\": \"\(value)\", \"d\": \"\(value)\"}}]")
        let report = try Auditor().audit(paths: [path])
        #expect(report.findings.first?.places.map(\.location) == [.pointer("/0/data/d"), .pointer("/0/data/a~1b~0c")])
    }

    @Test func schemaFlaggingIdentifiersIsReportedNotRefused() throws {
        let schemaPath = try write(
            "schema.json",
            #"{"schema": {"email": {"type": "string", "encryption": {"state": "enabled"}}, "phone_number": {"encryption": {"state": "enabled"}}, "ssn": {"type": "string", "encryption": {"state": "enabled"}}}}"#)
        let schema = try AuditSchema.load(path: schemaPath)
        #expect(schema.encryptedFields == ["ssn"])
        let data = try write("p/one.json", #"{"email": "a@example.com", "ssn": "123"}"#)
        let report = try Auditor(schema: schema).audit(paths: [folder.path])
        // The schema's findings come first, before any file is read.
        try #require(report.findings.map(\.kind) == [.identifierEncrypted, .identifierEncrypted, .plaintextField])
        #expect(report.findings[2].file == data)
        #expect(report.findings[..<2].map(\.location) == [.pointer("/schema/email/encryption/state"), .pointer("/schema/phone_number/encryption/state")])
        #expect(report.fileCount == 1, "the schema file itself is not audited as a profile")
    }

    /// One pass: the progress total is every file's size from the first call, and repeats across
    /// files are reported as met, then summarised in groups.
    @Test func oneStreamingPassWithAFixedProgressTotalAndGroupedRepeats() throws {
        let copied = Self.sealed("copied")
        let first = try #require(Base64.decode(Self.sealed("one")))
        // Another ciphertext under the same nonce: the first 24 bytes kept, the rest changed.
        let reused = Base64.encode(Array(first[..<24]) + Array(try #require(Base64.decode(Self.sealed("two")))[24...]))
        let a = try write("copies/a.ndjson", "{\"s\": \"\(copied)\", \"n\": \"\(Base64.encode(first))\"}\n")
        let b = try write("copies/b.ndjson", "{\"s\": \"\(copied)\"}\n{\"s\": \"\(copied)\", \"n\": \"\(reused)\"}\n")
        var totals: Set<Int> = []
        var lastRead = 0
        var streamed: [FindingKind] = []
        let summary = try Auditor().audit(
            paths: [folder.appendingPathComponent("copies").path],
            progress: { totals.insert($0.bytesTotal); lastRead = $0.bytesRead },
            onFinding: { streamed.append($0.kind) })
        let size = { (path: String) in try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int }
        #expect(totals == [try size(a) + size(b)])
        #expect(lastRead == (try size(a) + size(b)))
        #expect(streamed == [.duplicateCiphertext, .duplicateCiphertext, .nonceReuse])
        #expect(summary.groups.copiedCiphertexts == 1 && summary.groups.sharedNonces == 1)
        #expect(summary.groups.largestGroup == 3 && summary.groups.largestGroupFirstPlace?.file == a)
        #expect(summary.findingCounts == [.duplicateCiphertext: 2, .nonceReuse: 1] && summary.valueCount == 5)
    }

    @Test func ignoredKindsAreNeitherReportedNorCounted() throws {
        let copied = Self.sealed("copied")
        let path = try write("ignored.ndjson", "{\"s\": \"\(copied)\"}\n{\"s\": \"\(copied)\"}\n")
        let report = try Auditor(ignoring: [.duplicateCiphertext]).audit(paths: [path])
        #expect(report.findings.isEmpty && report.summary.findingCount == 0 && report.valueCount == 2)
    }

    @Test func invalidSchemaIsAnError() throws {
        let path = try write("bad-schema.json", #"{"ssn": {"encryption": {"state": "maybe"}}}"#)
        do {
            _ = try AuditSchema.load(path: path)
            Issue.record("a bad schema loaded")
        } catch {
            #expect(error.reason == .invalidSchema)
        }
    }
}

@Suite("Auditor: mixed keys and unknown keys")
struct MixedKeyAuditTests {
    static let schema = #"{"schema": {"ssn": {"type": "string", "encryption": {"state": "enabled"}}, "notes": {"type": "string", "encryption": {"state": "enabled"}}}}"#

    func audit(_ profiles: [String], keys: [KeyRing], schema: Bool = true) throws -> [FindingKind] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sealaudit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("profiles.ndjson").path
        try Data(profiles.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        let schemaPath = folder.appendingPathComponent("schema.json").path
        try Data(Self.schema.utf8).write(to: URL(fileURLWithPath: schemaPath))
        let auditor = Auditor(schema: schema ? try AuditSchema.load(path: schemaPath) : nil, keys: keys)
        return try auditor.audit(paths: [path]).findings.map(\.kind)
    }

    @Test func oneIDsRetiredAndCurrentKeysAreOneHistory() throws {
        let old = SymmetricKey.generate(), new = SymmetricKey.generate()
        let ring = KeyRing(current: new, retired: [old], id: "alice")
        let before = try KeyRing(current: old, id: "alice").encrypt("1", format: .v2, place: .field("ssn"))
        let after = try ring.encrypt("2", format: .v2, place: .field("notes"))
        let v1Before = FieldCipher.encrypt("3", using: old)
        let profile = #"{"ssn":"\#(before)","notes":"\#(after)"}"#
        #expect(try audit([profile], keys: [ring]) == [.retiredKey])
        #expect(try audit([#"{"ssn":"\#(v1Before)","notes":"\#(after)"}"#], keys: [ring]) == [.retiredKey])
        // Without keys the audit cannot tell a rotation from a fork, and says mixed-keys.
        #expect(try audit([profile], keys: []) == [.mixedKeys])
    }

    @Test func aForkIsMixedAndAStrangersV2KeyIsUnknown() throws {
        let alice = KeyRing(current: .generate(), id: "alice")
        let fork = KeyRing(current: .generate(), id: "alice")
        let mine = try alice.encrypt("1", format: .v2, place: .field("ssn"))
        let theirs = try fork.encrypt("2", format: .v2, place: .field("notes"))
        let profile = #"{"ssn":"\#(mine)","notes":"\#(theirs)"}"#
        #expect(try audit([profile], keys: [alice]) == [.unknownKey, .mixedKeys])
        #expect(try audit([profile], keys: [alice], schema: false) == [.unknownKey, .mixedKeys])
        // v1 by which given key opens them: two ids' keys in one profile.
        let bob = KeyRing(current: .generate(), id: "bob")
        let v1 = #"{"ssn":"\#(alice.encrypt("1"))","notes":"\#(bob.encrypt("2"))"}"#
        #expect(try audit([v1], keys: [alice, bob]) == [.mixedKeys])
        // Each profile on its own: two users' profiles in one file are not mixed.
        #expect(try audit([#"{"ssn":"\#(alice.encrypt("1"))"}"#, #"{"ssn":"\#(bob.encrypt("2"))"}"#], keys: [alice, bob]).isEmpty)
        // A moved v2 value is caught with the schema.
        let moved = #"{"notes":"\#(mine)"}"#
        #expect(try audit([moved], keys: [alice]) == [.undecryptable])
    }
}
