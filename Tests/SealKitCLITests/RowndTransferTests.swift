import Foundation
import SealKit
import SealTestSupport
import Testing

/// `transfer send --rownd` read the way Rownd's apps read it.
@Suite("sealkit transfer send --rownd")
struct RowndTransferTests {
    /// What Rownd's iOS scanner does with a scanned code (rownd/ios 2.8.3,
    /// `KeyTransferViewController.receiveKeyTransfer` and `SignInLinks.signInWithLink`): the whole
    /// text through `URL(string:)` (a failure is "The key received was not valid."), the fragment as
    /// the key, the link without `#fragment` to sign in, and `Data(base64Encoded:)` of the key
    /// (`RowndEncryption.storeKey`). Returns the sign-in link and the key bytes.
    static func iOSScanner(_ scanned: String) -> (signInLink: String, key: [UInt8])? {
        guard let url = URL(string: scanned), let fragment = url.fragment else { return nil }
        let signIn = url.absoluteString.replacingOccurrences(of: "#\(fragment)", with: "")
        guard let key = Data(base64Encoded: fragment) else { return nil }
        return (signIn, Array(key))
    }

    @Test(.requires(.pyNaCl)) func theIOSScannerReadsTheTextAndItsKeyOpensWhatSealKitEncrypted() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "user-9"]).status == 0)
        let ciphertext = try cli.run(["encrypt", "--key", "user-9"], stdin: "for the app").output
        let shown = try cli.run(["transfer", "send", "user-9", "--rownd", "--link", KeyFixtures.rowndLink, "--format", "text"])
        #expect(shown.status == 0, "\(shown.stderr)")
        // Exactly one line.
        #expect(shown.stdout.hasSuffix("\n") && shown.output.split(separator: "\n", omittingEmptySubsequences: false).count == 1)

        let scanned = try #require(Self.iOSScanner(shown.output), "the iOS scanner rejects \(shown.output)")
        #expect(scanned.signInLink == KeyFixtures.rowndLink)
        #expect(scanned.key.count == 32)
        // Standard base64 with padding, as Rownd's "copy key" gives it.
        let fragment = String(shown.output.dropFirst(KeyFixtures.rowndLink.count + 1))
        #expect(fragment == Data(scanned.key).base64EncodedString())
        // The key is the stored one: PyNaCl, holding the scanned bytes, opens SealKit's ciphertext.
        let script = """
            import sys, base64, nacl.secret
            key = base64.b64decode(sys.stdin.readline().strip())
            print(nacl.secret.SecretBox(key).decrypt(base64.b64decode(sys.stdin.readline().strip())).decode())
            """
        let opened = try python(script, stdin: Data(scanned.key).base64EncodedString() + "\n" + ciphertext + "\n")
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == "for the app\n")
        // And `keys import` reads the same text back to the same key.
        let other = try CLI()
        #expect(try other.run(["keys", "import", "user-9"], stdin: shown.stdout).status == 0)
        #expect(try other.run(["decrypt", "--key", "user-9", "--", ciphertext]).stdout == "for the app\n")
    }

    @Test func aKeyWithPlusSlashAndPaddingTravelsUnescapedAndImportsInEveryForm() throws {
        let key = KeyFixtures.rowndKey
        let cli = try CLI()
        let stored = try cli.run(["keys", "import", "k"], stdin: key)
        #expect(stored.status == 0)
        let shown = try cli.run(["transfer", "send", "k", "--rownd", "--link", KeyFixtures.rowndLink, "--format", "text"])
        #expect(shown.stdout == "\(KeyFixtures.rowndLink)#\(key)\n")
        #expect(Self.iOSScanner(shown.output).map { Data($0.key).base64EncodedString() } == key)
        // Android's Uri.getFragment() would hand over the percent-decoded form; keys import reads both.
        let escaped = key.replacingOccurrences(of: "+", with: "%2B").replacingOccurrences(of: "/", with: "%2F")
            .replacingOccurrences(of: "=", with: "%3d")
        for text in [shown.stdout, "\(KeyFixtures.rowndLink)#\(escaped)", key, "{\"data\":\"\(KeyFixtures.rowndLink)#\(key)\"}"] {
            let other = try CLI()
            let imported = try other.run(["keys", "import", "k"], stdin: text)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.output == stored.output)
        }
    }

    @Test func theOldWrappedTextIsWhatTheIOSScannerRejected() {
        // Why the output changed: `{"data":...}` is not a URL, so the app said the key was not valid.
        #expect(Self.iOSScanner("{\"data\":\"\(KeyFixtures.rowndLink)#4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=\"}") == nil)
    }

    @Test func withoutALinkItRefusesAsAUsageError() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let result = try cli.run(["transfer", "send", "u", "--rownd", "--format", "text"])
        expectCleanFailure(result, containing: "sign-in link that the app's backend gets from Rownd")
        #expect(result.status == 64)
        for bad in ["not a url", "https://a.rownd.link/x#frag", "/relative/path", "https://a.rownd.link/x y", "https://a.rownd.link/é", ""] {
            let refused = try cli.run(["transfer", "send", "u", "--rownd", "--link", bad, "--format", "text"])
            expectCleanFailure(refused, containing: "--link")
            #expect(refused.status == 64)
        }
    }

    @Test func retiredKeysAreNamedBecauseOnlyTheCurrentKeyTravels() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "generate", "u"]).status == 0)
        let plain = try cli.run(["transfer", "send", "u", "--rownd", "--link", KeyFixtures.rowndLink, "--format", "text"])
        #expect(plain.status == 0)
        #expect(plain.stderr.contains("holds the raw key"))
        #expect(!plain.stderr.contains("retired"))

        #expect(try cli.run(["keys", "rotate", "u"]).status == 0)
        let rotated = try cli.run(["transfer", "send", "u", "--rownd", "--link", KeyFixtures.rowndLink, "--format", "text"])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(rotated.stderr.contains("holds the raw key"))
        #expect(rotated.stderr.contains("1 retired key; only the current key travels"))
        #expect(rotated.output != plain.output)
        #expect(Self.iOSScanner(rotated.output)?.key.count == 32)
    }
}
