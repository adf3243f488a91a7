import SealTestSupport
import Testing

import SealKit

/// Names compared for spelling fold full-width and half-width forms as NFKC does, checked against Python's
/// `unicodedata`, another implementation of the Unicode tables.
@Suite struct NameFoldingTests {
    @Test(.requires(.python)) func widthFoldsAsNFKCDoes() throws {
        let script = """
            import unicodedata
            for c in range(0x110000):
                if unicodedata.decomposition(chr(c)).startswith(('<wide>', '<narrow>')):
                    print('%X %s' % (c, ' '.join('%X' % ord(x) for x in unicodedata.normalize('NFKC', chr(c)))))
            """
        let lines = String(decoding: try Python.output(of: script), as: UTF8.self).split(separator: "\n")
        #expect(lines.count > 200, "Python listed \(lines.count) forms")
        var listed: Set<UInt32> = []
        for line in lines {
            let scalars = line.split(separator: " ").compactMap { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
            let form = try #require(scalars.first, "\(line)")
            var nfkc = ""
            nfkc.unicodeScalars.append(contentsOf: scalars.dropFirst())
            #expect(TextSafety.widthFolding(form) == nfkc, "U+\(String(form.value, radix: 16, uppercase: true))")
            listed.insert(form.value)
        }
        // Nothing else in or around the block changes.
        for value in Array(0x2FF0...0x3010) + Array(0xFE00...0xFFFF) where !listed.contains(UInt32(value)) {
            #expect(TextSafety.widthFolding(Unicode.Scalar(UInt32(value))!) == nil, "U+\(String(value, radix: 16))")
        }
    }

    @Test func foldingLeavesOutCaseSeparatorsAndWidth() {
        #expect(TextSafety.foldedName("ＨＯＭＥ＿Ａｄｄｒｅｓｓ") == "homeaddress")
        #expect(TextSafety.foldedName("Home-Address") == "homeaddress")
        #expect(TextSafety.foldedName("ÉTAT civil") == "étatcivil")
        #expect(TextSafety.foldedName("ｓｓｎ") == TextSafety.foldedName("SSN"))
    }
}
