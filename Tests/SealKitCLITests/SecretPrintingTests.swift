import Foundation
import SealKitBackup
import SealKit
import SealKitAudit
import SealKitQR
import SealKitTransfer
import SealTestSupport
import Testing

/// Every public type that holds a secret redacts itself: `print(share)`,
/// `"\(link)"`, `String(reflecting:)` and `dump` showed a share's value bytes and a link's code.
/// api/secrets.txt classifies every public type of the six products (Scripts/check-api compares it
/// with the symbol graphs, so a new type cannot arrive unclassified); this test prints one value of
/// each `secret` type four ways and looks for its secret in every form it could take.
@Suite("secrets never print")
struct SecretPrintingTests {
    static let key = SecretHygieneTests.key
    static let keyBytes = Base64.decode(SecretHygieneTests.key)!
    static let passphrase = "printing passphrase 5d2f"
    static let plaintext = "plaintext value 0c7e41"
    static let code = "7-guitarist-revenge"

    /// One value of a secret-holding type, and its secret as text and as bytes.
    struct Sample {
        let type: String
        let value: Any
        var texts: [String] = []
        var bytes: [[UInt8]] = []
    }

    /// api/secrets.txt: type name to `secret` or `free`.
    static func classification() throws -> [String: String] {
        let text = try String(contentsOf: InstallTests.repository.appendingPathComponent("api/secrets.txt"), encoding: .utf8)
        var found: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            if words.count >= 2 { found[String(words[1])] = String(words[0]) }
        }
        return found
    }

    static func samples() async throws -> [Sample] {
        let id = try KeyID("printing-user")
        let keystore = try Keystore.inMemory()
        try PastedKey(parsing: Array(key.utf8)).store(as: id, in: keystore, passphrase: nil)
        let passphrase = try Passphrase(Self.passphrase)
        let history = try keystore.exportKeys([id], passphrase: nil)
        try #require(history.count == 1, "\(history.count) histories")
        let keyTexts = SecretHygieneTests.keyForms
        let vault = Vault(keystore: keystore, user: id, format: .v1, passphrase: passphrase)
        // The vault reads the keys into memory when it first uses them.
        let schema = try ProfileSchema(json: #"{"ssn": {"type": "string", "encryption": {"state": "enabled"}}}"#)
        let sealed = try ProfileProcessor(.encrypt, schema: schema).process(#"{"ssn": "\#(plaintext)"}"#, with: vault).json
        let decrypted = try ProfileProcessor(.decrypt, schema: schema).process(sealed, with: vault)

        // A shared value opened: contacts and groups live in a file keystore.
        let folder = try TemporaryFolder.make()
        let files = try Keystore(directory: folder.appendingPathComponent("keys").path)
        try PastedKey(parsing: Array(key.utf8)).store(as: id, in: files, passphrase: nil)
        let sharing = Vault(keystore: files, user: id, format: .v1)
        let opened = try sharing.openShared(try sharing.share(plaintext: plaintext, with: []))

        let made = try ShareBackup.make(history, groups: [.init(threshold: 2, count: 3)])
        try #require(made.shares.count == 1 && made.shares[0].count == 3, "\(made.shares.map(\.count)) shares")
        let shareText = made.shares[0][0]
        let share = try ShareBackup.Share(shareText)
        let contents = try ShareBackup.restore(bundle: made.bundle, shares: try made.shares[0].prefix(2).map(ShareBackup.Share.init))
        let codeWords = ["guitarist-revenge", "guitarist", "revenge"]
        let link = try TransferLink(parsing: "sealkit-transfer:\(code)?rendezvous=ws%3A%2F%2F127.0.0.1%3A4000%2Fv1")
        let offline = OfflineKeyReceiver()
        let offlineCode = offline.code.text
        let offlineWords = offlineCode.split(separator: "-").dropFirst().map(String.init)

        // The network sessions, on the tests' shared mailbox server.
        let relay = try MailboxServer.shared { $0.relay }
        let receiver = try await KeyReceiver(relay: try Relay(relay), timeout: .seconds(30))
        let sender = try await KeySender(code: receiver.code, relay: try Relay(relay), timeout: .seconds(30))
        let networkWords = receiver.code.text.split(separator: "-").dropFirst().map(String.init)

        return [
            Sample(type: "Auditor", value: try Auditor(vaults: [vault]), texts: keyTexts, bytes: [keyBytes]),
            Sample(type: "KeyHistory", value: history[0], texts: keyTexts, bytes: [keyBytes]),
            Sample(type: "KeyReceiver", value: receiver, texts: [receiver.code.text] + networkWords),
            Sample(type: "KeySender", value: sender, texts: [receiver.code.text] + networkWords),
            Sample(type: "Keystore", value: keystore, texts: keyTexts, bytes: [keyBytes]),
            Sample(type: "OfflineKeyReceiver", value: offline, texts: [offlineCode] + offlineWords),
            Sample(type: "PaperBackup.Contents", value: contents, texts: keyTexts, bytes: [keyBytes]),
            Sample(type: "Passphrase", value: passphrase, texts: [Self.passphrase], bytes: [Array(Self.passphrase.utf8)]),
            Sample(type: "PastedKey", value: try PastedKey(parsing: Array(key.utf8)), texts: keyTexts, bytes: [keyBytes]),
            Sample(type: "ProfileOutcome", value: decrypted, texts: [plaintext]),
            Sample(
                type: "QRChoice",
                value: try QRScanner.choose(
                    QRCodeKind(name: "transfer code", prefixes: [TransferLink.scheme]),
                    from: [Array(("sealkit-transfer:" + code).utf8), Array("another code".utf8)]),
                texts: codeWords + ["another code"]),
            // Its modules spell the payload: no module may show (`true`/`false` in a default dump).
            Sample(type: "QRCode", value: try QRCode("sealkit-transfer:" + code), texts: codeWords + ["true", "false"]),
            Sample(
                type: "RowndKeyText", value: try RowndKeyText(for: id, in: keystore, passphrase: nil, link: "https://example.com/signin"),
                texts: keyTexts, bytes: [keyBytes]),
            Sample(
                type: "ShareBackup.Made", value: made, texts: made.shares.flatMap { $0 } + [made.bundle, String(made.bundle.suffix(40))]),
            Sample(type: "ShareBackup.Share", value: share, texts: [shareText], bytes: [share.slip39.value]),
            Sample(type: "SharedOpening", value: opened, texts: [plaintext]),
            Sample(type: "TransferCode", value: try TransferCode(code), texts: codeWords),
            Sample(type: "TransferEvent", value: TransferEvent.codeAllocated(try TransferCode(code)), texts: codeWords),
            Sample(type: "TransferLink", value: link, texts: codeWords),
            Sample(type: "Vault", value: vault, texts: keyTexts + [Self.passphrase], bytes: [keyBytes, Array(Self.passphrase.utf8)]),
        ]
    }

    /// The secrets of `sample` found in `text`: as text, as hex or base64 of bytes, or as the decimal
    /// numbers `dump` writes for a byte array, in order.
    static func leaks(of sample: Sample, in text: String) -> [String] {
        var found = sample.texts.filter { text.contains($0) }
        let numbers = text.matches(of: /\d+/).compactMap { Int($0.output) }
        for bytes in sample.bytes {
            let hex = bytes.map { String(format: "%02x", $0) }.joined()
            let base64 = Data(bytes).base64EncodedString()
            for form in [hex, hex.uppercased(), base64, String(base64.prefix(16))] where text.contains(form) { found.append(form) }
            let values = bytes.map(Int.init)
            if numbers.count >= values.count,
                (0...(numbers.count - values.count)).contains(where: { numbers[$0..<($0 + values.count)].elementsEqual(values) })
            {
                found.append("its \(bytes.count) bytes as numbers")
            }
        }
        return found
    }

    /// The samples include a network receiver, which needs a relay: the mailbox server.
    @Test(.requires(.mailboxServer)) func everySecretHoldingTypeRedactsItselfFourWays() async throws {
        let classes = try Self.classification()
        let samples = try await Self.samples()
        // One sample per `secret` type, no more, no fewer.
        let secretTypes = Set(classes.filter { $0.value == "secret" }.keys)
        #expect(Set(samples.map(\.type)) == secretTypes)
        #expect(samples.count == secretTypes.count)

        for sample in samples {
            var dumped = ""
            dump(sample.value, to: &dumped)
            let ways = [
                ("description", (sample.value as? CustomStringConvertible)?.description),
                ("debugDescription", (sample.value as? CustomDebugStringConvertible)?.debugDescription),
                ("String(reflecting:)", String(reflecting: sample.value)),
                ("dump", dumped),
                ("interpolation", "\(sample.value)"),
            ]
            for (way, text) in ways {
                let text = try #require(text, "\(sample.type) has no \(way) of its own")
                let leaked = Self.leaks(of: sample, in: text)
                #expect(leaked.isEmpty, "\(sample.type)'s \(way) shows \(leaked): \(text.prefix(400))")
            }
            #expect(sample.value is CustomReflectable, "\(sample.type) has no mirror of its own")
            #expect(!sample.texts.isEmpty || !sample.bytes.isEmpty)
        }
        if let receiver = samples.first(where: { $0.type == "KeyReceiver" })?.value as? KeyReceiver { await receiver.abandon() }
        if let sender = samples.first(where: { $0.type == "KeySender" })?.value as? KeySender { await sender.abandon() }
    }

    /// The list covers every public type of the committed API (api/1.0.0.json); Scripts/check-api
    /// checks it against the symbol graphs as they are now, new types included.
    @Test func everyPublicTypeIsClassified() throws {
        let classes = try Self.classification()
        #expect(Set(classes.values).isSubset(of: ["secret", "free"]))
        let data = try Data(contentsOf: InstallTests.repository.appendingPathComponent("api/1.0.0.json"))
        let api = try JSONSerialization.jsonObject(with: data) as! [String: [[String: String]]]
        let declarations = #/^(?:final )?(?:struct|class|enum|actor|protocol|typealias) /#
        var types: Set<String> = []
        for symbols in api.values {
            for symbol in symbols where symbol["declaration"]!.contains(declarations) { types.insert(symbol["name"]!) }
        }
        #expect(types.subtracting(classes.keys).isEmpty, "unclassified in api/secrets.txt: \(types.subtracting(classes.keys).sorted())")
    }
}
