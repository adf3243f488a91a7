import Foundation
@_spi(CLI) import SealKit
import SealTestSupport
import Testing

/// What a review broke in the keystore, each attack reproduced and now refused.
@Suite("Strict keystore")
struct StrictKeystoreTests {
    let base: String
    let root: String
    let store: FileKeystore

    init() throws {
        base = FileManager.default.temporaryDirectory.appendingPathComponent("sealkit-strict-\(UUID().uuidString)").path
        root = base + "/missing-parent/root"
        store = FileKeystore(root: root)
    }

    var lockPath: String { store.folder + "/.lock" }
    func path(_ id: KeyID) -> String { store.folder + "/" + id.fileName }

    // MARK: StrictModes

    @Test func aKeyFilePlantedByAnotherUserIsRefusedEvenByRoot() throws {
        let id = try KeyID("victim")
        try store.store(SymmetricKey.generate(), as: id, mode: .create, passphrase: nil)
        // As root (the tests run as root here and in CI) a 0600 file another user owns is
        // readable; it must still not be used, since that user chose the key in it.
        #expect(chown(path(id), 65534, 65534) == 0)
        let user = UInt32(geteuid())
        #expect(throws: KeystoreError.unsafeOwner(path: path(id), owner: 65534, user: user)) {
            try store.keyRing(for: id, passphrase: nil)
        }
        #expect(throws: KeystoreError.unsafeOwner(path: path(id), owner: 65534, user: user)) {
            try store.rotate(id, to: SymmetricKey.generate(), passphrase: nil)
        }
        #expect(try KeystoreError.unsafeOwner(path: path(id), owner: 65534, user: user).description.contains("chown"))
    }

    @Test func foldersOfAnotherUserOrWritableByOthersAreRefused() throws {
        let id = try KeyID("f")
        try store.store(SymmetricKey.generate(), as: id, mode: .create, passphrase: nil)
        for folder in [root, store.folder] {
            chmod(folder, 0o1777)
            #expect(throws: KeystoreError.insecurePermissions(path: folder, mode: UInt32(S_IFDIR) | 0o1777)) {
                try store.keyRing(for: id, passphrase: nil)
            }
            #expect(throws: KeystoreError.insecurePermissions(path: folder, mode: UInt32(S_IFDIR) | 0o1777)) {
                try store.store(SymmetricKey.generate(), as: KeyID("other"), mode: .create, passphrase: nil)
            }
            chmod(folder, 0o770)
            #expect(throws: KeystoreError.self) { try store.entries() }
            chmod(folder, 0o700)
            chown(folder, 65534, 65534)
            #expect(throws: KeystoreError.unsafeOwner(path: folder, owner: 65534, user: UInt32(geteuid()))) {
                try store.entry(for: id)
            }
            chown(folder, geteuid(), getegid())
        }
        // Readable by others is fine for a folder (as with ssh): only writing matters.
        chmod(root, 0o755)
        #expect(try store.keyRing(for: id, passphrase: nil).retired.isEmpty)
    }

    @Test func symbolicLinksAreRefusedNotFollowed() throws {
        let id = try KeyID("s")
        try store.store(SymmetricKey.generate(), as: id, mode: .create, passphrase: nil)
        // A key file that is a link to someone else's file.
        let elsewhere = base + "/elsewhere.key"
        try FileManager.default.moveItem(atPath: path(id), toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: path(id), withDestinationPath: elsewhere)
        #expect(throws: KeystoreError.notOwnFile(path: path(id), reason: "is a symbolic link")) {
            try store.keyRing(for: id, passphrase: nil)
        }
        // A namespace folder that is a link.
        let other = FileKeystore(root: root, namespace: try Namespace("linked"))
        try FileManager.default.createSymbolicLink(atPath: other.folder, withDestinationPath: store.folder)
        #expect(throws: KeystoreError.notOwnFile(path: other.folder, reason: "is a symbolic link")) {
            try other.entries()
        }
        // A lock file that is a link: creating through it could clobber another file.
        let third = FileKeystore(root: root, namespace: try Namespace("third"))
        try FileManager.default.createDirectory(atPath: third.folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: third.folder + "/.lock", withDestinationPath: base + "/target")
        #expect(throws: KeystoreError.notOwnFile(path: third.folder + "/.lock", reason: "is a symbolic link")) {
            try third.store(SymmetricKey.generate(), as: KeyID("x"), mode: .create, passphrase: nil)
        }
        #expect(!FileManager.default.fileExists(atPath: base + "/target"))
    }

    @Test func aLockFileOthersCanWriteOrOwnIsRefused() throws {
        try store.store(SymmetricKey.generate(), as: KeyID("l"), mode: .create, passphrase: nil)
        chmod(lockPath, 0o666)
        #expect(throws: KeystoreError.insecurePermissions(path: lockPath, mode: UInt32(S_IFREG) | 0o666)) {
            try store.rotate(KeyID("l"), to: SymmetricKey.generate(), passphrase: nil)
        }
        chmod(lockPath, 0o600)
        chown(lockPath, 65534, 65534)
        #expect(throws: KeystoreError.unsafeOwner(path: lockPath, owner: 65534, user: UInt32(geteuid()))) {
            try store.rotate(KeyID("l"), to: SymmetricKey.generate(), passphrase: nil)
        }
    }

    @Test func createdFoldersAndMissingParentsAre0700WhateverTheUmask() throws {
        let previous = umask(0)
        defer { umask(previous) }
        try store.store(SymmetricKey.generate(), as: KeyID("u"), mode: .create, passphrase: nil)
        for folder in [base + "/missing-parent", root, store.folder] {
            #expect(try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int == 0o700, "\(folder)")
        }
        #expect(try FileManager.default.attributesOfItem(atPath: lockPath)[.posixPermissions] as? Int == 0o600)
    }

    // MARK: The lock

    @Test func aLockHeldByAnotherProcessTimesOutWithOneError() throws {
        try store.store(SymmetricKey.generate(), as: KeyID("t"), mode: .create, passphrase: nil)
        // flock(1) holds the lock from another process for longer than we wait.
        let holder = try ChildProcess("/usr/bin/flock", [lockPath, "sleep", "3"])
        defer { holder.send(signal: SIGTERM); _ = holder.finish() }
        // Wait until the holder has the lock.
        let probe = open(lockPath, O_RDONLY)
        defer { close(probe) }
        let held = Waits.until(timeout: 2) {
            guard flock(probe, LOCK_EX | LOCK_NB) == 0 else { return true }
            flock(probe, LOCK_UN)
            return false
        }
        #expect(held)

        let impatient = FileKeystore(root: root, lockTimeout: .milliseconds(400))
        let started = ContinuousClock.now
        #expect(throws: KeystoreError.lockTimeout(path: lockPath, seconds: 0.4)) {
            try impatient.rotate(KeyID("t"), to: SymmetricKey.generate(), passphrase: nil)
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(400) && waited < .seconds(5), "waited \(waited)")
        // The library gives the fact; the command adds SEALKIT_LOCK_TIMEOUT to its plain line (`AdviceTests` pins it).
        let busy = SealKitError(KeystoreError.lockTimeout(path: lockPath, seconds: 10))
        #expect(busy.reason == .keystoreBusy && busy.detail == .lockTimedOut)
        // Reading needs no lock.
        #expect(try impatient.keyRing(for: KeyID("t"), passphrase: nil).retired.isEmpty)
    }

    // MARK: Authenticated key files

    /// The review's attack: with write access and no passphrase, swap two key lines so a
    /// retired key becomes current again. Each key used to be sealed on its own, so this worked.
    @Test func swappingKeyLinesInAProtectedFileIsRefused() throws {
        let id = try KeyID("swap")
        let passphrase = try Passphrase("correct horse battery staple")
        let old = SymmetricKey.generate(), new = SymmetricKey.generate()
        try store.store(old, as: id, mode: .create, passphrase: passphrase)
        try store.rotate(id, to: new, passphrase: passphrase)
        var lines = try String(contentsOfFile: path(id), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let keyLines = lines.indices.filter { lines[$0].hasPrefix("key ") }
        try #require(keyLines.count == 2)
        // Make the retired key current: swap the lines and move the retired time.
        var current = lines[keyLines[0]].split(separator: " ").map(String.init)
        var retired = lines[keyLines[1]].split(separator: " ").map(String.init)
        try #require(current.count > 2 && retired.count > 2, "key lines of \(current.count) and \(retired.count) fields")
        swap(&current[1], &retired[1])
        swap(&current[2], &retired[2])
        lines[keyLines[0]] = current.joined(separator: " ")
        lines[keyLines[1]] = retired.joined(separator: " ")
        try write(lines.joined(separator: "\n"), to: path(id))
        expectTamperRefused(id, passphrase)

        // Changing only public metadata (a creation time) is refused too.
        try store.delete(id)
        try store.store(old, as: id, mode: .create, passphrase: passphrase)
        let original = try String(contentsOfFile: path(id), encoding: .utf8)
        let keyLine = try #require(original.split(separator: "\n").first { $0.hasPrefix("key ") })
        var fields = keyLine.split(separator: " ").map(String.init)
        try #require(fields.count > 2, "a key line of \(fields.count) fields")
        fields[2] = String((Int64(fields[2]) ?? 0) - 86_400)
        try write(original.replacingOccurrences(of: String(keyLine), with: fields.joined(separator: " ")), to: path(id))
        expectTamperRefused(id, passphrase)

        // Dropping the protection header's check, or the id, is refused too.
        try write(original.replacingOccurrences(of: "sealkit-keyfile 2\n", with: "sealkit-keyfile 1\n"), to: path(id))
        #expect(throws: KeystoreError.self) { try store.keyRing(for: id, passphrase: passphrase) }
        try write(original, to: path(id))
        #expect(try store.keyRing(for: id, passphrase: passphrase).current == old)
    }

    private func expectTamperRefused(_ id: KeyID, _ passphrase: Passphrase, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try store.keyRing(for: id, passphrase: passphrase)
            Issue.record("a tampered key file was used", sourceLocation: sourceLocation)
        } catch {
            guard case .damagedKeyFile(_, let reason) = error else {
                Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(reason.contains("changed without the passphrase"), sourceLocation: sourceLocation)
        }
        #expect(throws: KeystoreError.self, sourceLocation: sourceLocation) {
            try store.rotate(id, to: SymmetricKey.generate(), passphrase: passphrase)
        }
    }

    @Test func aWrongPassphraseIsToldApartFromTampering() throws {
        let id = try KeyID("w")
        try store.store(SymmetricKey.generate(), as: id, mode: .create, passphrase: Passphrase("right one"))
        #expect(throws: KeystoreError.wrongPassphrase(id)) { try store.keyRing(for: id, passphrase: Passphrase("wrong one")) }
    }

    /// Files written before version 2 (each key sealed on its own) still open, and the
    /// next write stores them as one authenticated record.
    @Test func version1ProtectedFilesAreReadAndRewrittenAsVersion2() throws {
        let id = try KeyID("legacy")
        let passphrase = try Passphrase("legacy passphrase")
        let first = SymmetricKey.generate(), second = SymmetricKey.generate()
        let protection = KeyFile.Protection.fresh()
        let sealingKey = try protection.kdf.deriveKey(from: passphrase, salt: protection.salt)
        func line(_ key: SymmetricKey, _ created: Int, _ retired: String) -> String {
            let fingerprint = key.fingerprint.bytes.map { String(format: "%02x", $0) }.joined()
            return "key \(fingerprint) \(created) \(retired) \(Base64.encode(SecretWrap.seal(key.storage, using: sealingKey)))"
        }
        let text = """
            sealkit-keyfile 1
            id \(Base64.encode(Array(id.rawValue.utf8)))
            protection argon2id \(protection.kdf.opsLimit) \(protection.kdf.memLimit) \(Base64.encode(protection.salt))
            \(line(second, 2000, "-"))
            \(line(first, 1000, "2000"))

            """
        try FileManager.default.createDirectory(atPath: store.folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try write(text, to: path(id))
        let ring = try store.keyRing(for: id, passphrase: passphrase)
        #expect(ring.current == second && ring.retired == [first])
        #expect(try String(contentsOfFile: path(id), encoding: .utf8) == text, "reading must not rewrite")
        let third = SymmetricKey.generate()
        try store.rotate(id, to: third, passphrase: passphrase)
        let rewritten = try String(contentsOfFile: path(id), encoding: .utf8)
        #expect(rewritten.hasPrefix("sealkit-keyfile 2\n") && rewritten.contains("\nsealed "))
        #expect(try store.keyRing(for: id, passphrase: passphrase).all == [third, second, first])
    }

    // MARK: Many keys

    /// Key counts are capped, and a ring's keys share one guarded allocation: 10,000 keys
    /// used to take three memory mappings each, and a failing sodium_malloc crashed.
    @Test func tenThousandKeysAreRefusedAndTheMostAllowedShareOneAllocation() throws {
        let id = try KeyID("many")
        try FileManager.default.createDirectory(atPath: store.folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        func keyFile(count: Int) -> String {
            var text = "sealkit-keyfile 1\nid \(Base64.encode(Array(id.rawValue.utf8)))\nprotection none\n"
            for index in 0..<count {
                var bytes = SecureRandom.bytes(count: 32)
                let key = try! SymmetricKey(bytes: bytes)
                ConstantTime.wipe(&bytes)
                let fingerprint = key.fingerprint.bytes.map { String(format: "%02x", $0) }.joined()
                let material = String(decoding: key.base64EncodedBytes().withUnsafeBytes { Array($0) }, as: UTF8.self)
                text += "key \(fingerprint) \(100_000 - index) \(index == 0 ? "-" : String(100_000 - index + 1)) \(material)\n"
            }
            return text
        }
        try write(keyFile(count: 10_000), to: path(id))
        do {
            _ = try store.keyRing(for: id, passphrase: nil)
            Issue.record("10,000 keys were accepted")
        } catch {
            guard case .damagedKeyFile(_, let reason) = error else { Issue.record("unexpected \(error)"); return }
            #expect(reason.contains("10000 keys") && reason.contains("\(KeyFile.maximumKeyCount)"))
        }

        try write(keyFile(count: KeyFile.maximumKeyCount), to: path(id))
        let before = mappingCount()
        let ring = try store.keyRing(for: id, passphrase: nil)
        let during = mappingCount()
        #expect(ring.retired.count == KeyFile.maximumKeyCount - 1)
        #expect(during - before < 50, "\(during - before) new memory mappings for one ring of \(KeyFile.maximumKeyCount) keys")
        #expect(throws: KeystoreError.tooManyKeys(id, limit: KeyFile.maximumKeyCount)) {
            try store.rotate(id, to: SymmetricKey.generate(), passphrase: nil)
        }
        // Sealed under a passphrase, the same ring is one AEAD and opens the same way.
        let sealedID = try KeyID("many-sealed")
        let history = try store.history(for: id, passphrase: nil)
        let passphrase = try Passphrase("many keys")
        try store.store(KeyHistory(id: sealedID, versions: history.versions), passphrase: passphrase)
        let beforeSealed = mappingCount()
        let sealedRing = try store.keyRing(for: sealedID, passphrase: passphrase)
        #expect(mappingCount() - beforeSealed < 50)
        #expect(sealedRing.all == ring.all)
    }

    private func mappingCount() -> Int {
        (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8))?.split(separator: "\n").count ?? 0
    }

    // MARK: Passphrases

    @Test func changingThePassphraseAddsChangesAndRemovesItInOneWrite() throws {
        let id = try KeyID("pw")
        let key = SymmetricKey.generate()
        try store.store(key, as: id, mode: .create, passphrase: nil)
        try store.rotate(id, to: SymmetricKey.generate(), passphrase: nil)
        let first = try Passphrase("first passphrase"), second = try Passphrase("second passphrase")

        #expect(try store.changePassphrase(of: id, from: nil, to: first).isProtected)
        #expect(throws: KeystoreError.locked(id)) { try store.keyRing(for: id, passphrase: nil) }
        #expect(try store.keyRing(for: id, passphrase: first).retired == [key])

        let before = try Data(contentsOf: URL(fileURLWithPath: path(id)))
        #expect(throws: KeystoreError.wrongPassphrase(id)) { try store.changePassphrase(of: id, from: second, to: nil) }
        #expect(throws: KeystoreError.locked(id)) { try store.changePassphrase(of: id, from: nil, to: second) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path(id))) == before)

        try store.changePassphrase(of: id, from: first, to: second)
        #expect(throws: KeystoreError.wrongPassphrase(id)) { try store.keyRing(for: id, passphrase: first) }
        #expect(try store.keyRing(for: id, passphrase: second).retired == [key])
        // A new passphrase gets a new salt.
        let salt = { (text: String) in text.split(separator: "\n").first { $0.hasPrefix("protection ") } }
        #expect(try salt(String(contentsOfFile: path(id), encoding: .utf8)) != salt(String(decoding: before, as: UTF8.self)))

        let removed = try store.changePassphrase(of: id, from: second, to: nil)
        #expect(!removed.isProtected && removed.versions.count == 2)
        #expect(try store.keyRing(for: id, passphrase: nil).retired == [key])
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder).filter { $0.hasPrefix(".tmp-") }.isEmpty)
        #expect(throws: KeystoreError.notFound(try KeyID("none"), namespace: "default")) {
            try store.changePassphrase(of: KeyID("none"), from: nil, to: first)
        }
        let memory = InMemoryKeystore()
        try memory.store(key, as: id, mode: .create, passphrase: nil)
        #expect(try memory.changePassphrase(of: id, from: nil, to: first).current.fingerprint == key.fingerprint)
    }

    // MARK: Surveys

    @Test func aSurveyListsHealthyEntriesAndNamesTheBadOnes() throws {
        for name in ["a", "b", "c", "d"] { try store.store(SymmetricKey.generate(), as: KeyID(name), mode: .create, passphrase: nil) }
        chmod(path(try KeyID("b")), 0o644)
        chown(path(try KeyID("c")), 65534, 65534)
        try write("sealkit-keyfile 1\nid ZA==\nprotection none\nkey garbage\n", to: path(try KeyID("d")))
        try write("not a key file", to: store.folder + "/" + String(repeating: "0", count: 40) + ".key")
        let survey = try store.survey()
        #expect(survey.entries.map(\.id.rawValue) == ["a"])
        #expect(survey.problems.map { $0.id?.rawValue ?? "?" } == ["b", "c", "d", "?"])
        #expect(survey.problems.map { "\($0.error)".contains("chmod 600") } == [true, false, false, false])
        #expect(survey.problems.map { "\($0.error)".contains("chown") } == [false, true, false, false])
        #expect(throws: KeystoreError.self) { try store.entries() }
    }

    private func write(_ text: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        if FileManager.default.fileExists(atPath: path) {
            // Keep the file's owner and mode: only its content is the attack.
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(text.utf8))
            try handle.close()
        } else {
            _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        }
    }
}

@Suite("Key ids that could deceive")
struct DeceptiveKeyIDTests {
    @Test(arguments: [
        "admin\u{202E}gnp.exe", "a\u{202A}b", "a\u{202D}b", "a\u{2066}b", "a\u{2067}b", "a\u{2068}b", "a\u{2069}b",
        "a\u{200E}b", "a\u{200F}b", "a\u{061C}b", "ali\u{200B}ce", "a\u{200C}b", "a\u{200D}b", "\u{FEFF}alice",
        "a\u{2060}b", "a\u{00AD}b", "a\u{2028}b", "a\u{2029}b", "a\u{034F}b", "a\u{FE0F}b", "a\u{115F}b", "a\u{3164}b",
        "a\u{E0001}b",
    ])
    func invisibleAndFormattingCharactersAreRefused(_ text: String) {
        #expect(throws: KeyIDError.self) { try KeyID(validating: text) }
        do {
            _ = try KeyID(validating: text)
        } catch {
            guard case .containsInvisibleCharacter(let value) = error else { Issue.record("\(error)"); return }
            let first = text.unicodeScalars.first { !($0.properties.generalCategory == .lowercaseLetter) }!
            #expect(value == first.value)
            #expect(error.description.contains(String(format: "U+%04X", value)))
        }
    }

    @Test func visibleUnicodeStillWorks() throws {
        for id in ["ユーザー", "José", "user with spaces", "Ελένη", "משתמש", "مستخدم", "a-b_c.d@e"] {
            #expect(throws: Never.self) { try KeyID(id) }
        }
    }
}
