import Foundation
import SealTestSupport
import Testing

/// `encrypt --lines` writes ciphertexts straight from each line's bytes into the output
/// buffer; PyNaCl, an independent implementation, must read every one of them.
@Suite("sealkit encrypt --lines fast path")
struct LinesFastPathTests {
    static let key = "4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ="

    @Test(.requires(.pyNaCl)) func pynaclDecryptsEveryLineIncludingLongAndNonASCIIOnes() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "l"], stdin: Self.key).status == 0)
        // Short and long lines, an empty one, non-ASCII text, a line longer than the reader's
        // 64 KiB block and one over 1 MiB, and a last line without its newline.
        let lines = ["", "a", "exactly eight", "café ✓ 日本", String(repeating: "x", count: 70_000),
                     String(repeating: "0123456789", count: 110_000), "€", "last"]
        let input = lines.joined(separator: "\n")
        let sealed = try cli.run(["encrypt", "--key", "l", "--lines"], stdin: input)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let ciphertexts = sealed.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(ciphertexts.count == lines.count + 1 && ciphertexts.last == "")
        // The ciphertexts go through a file: `python` writes all of stdin before reading stdout.
        let file = cli.home.appendingPathComponent("ciphertexts")
        try Data(sealed.stdout.utf8).write(to: file)
        let script = """
            import sys, base64, nacl.secret
            box = nacl.secret.SecretBox(base64.b64decode(sys.stdin.readline()))
            for line in open(\(String(reflecting: file.path))):
                print(base64.b64encode(box.decrypt(base64.b64decode(line.strip(), validate=True))).decode())
            """
        let result = try python(script, stdin: Self.key + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        let opened = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .map { String(decoding: Data(base64Encoded: String($0)) ?? Data("?".utf8), as: UTF8.self) }
        #expect(opened.count == lines.count)
        for (index, (got, expected)) in zip(opened, lines).enumerated() {
            #expect(got == expected, "line \(index + 1) (\(expected.utf8.count) bytes) differs")
        }
    }

    @Test func nonUTF8LineFailsAndNamesTheLine() throws {
        let cli = try CLI()
        #expect(try cli.run(["keys", "import", "l"], stdin: Self.key).status == 0)
        for bad: [UInt8] in [[0xFF], [0xC3], Array("valid prefix".utf8) + [0xED, 0xA0, 0x80]] {
            let input = Array("fine\n".utf8) + bad + Array("\nafter\n".utf8)
            let result = try cli.run(["encrypt", "--key", "l", "--lines"], stdinBytes: input)
            expectCleanFailure(result, containing: "line 2: not UTF-8")
        }
    }
}
