import SealKit
import Testing

/// Duplicate keys are found whether the parser compares keys one by one (small objects)
/// or through a set (large ones), on both sides of the switch.
@Suite("Duplicate keys around the linear-check limit")
struct DuplicateKeyThresholdTests {
    @Test(arguments: [2, 5, 16, 17, 31, 32, 33, 34, 100])
    func everyDuplicateIsFound(memberCount: Int) throws {
        let keys = (0..<memberCount).map { "field_\($0)" }
        let unique = "{" + keys.map { "\"\($0)\":0" }.joined(separator: ",") + "}"
        #expect(try JSONValue.parse(unique).objectValue?.count == memberCount)
        for repeated in [keys[0], keys[memberCount / 2], keys[memberCount - 1]] {
            let text = String(unique.dropLast()) + ",\"\(repeated)\":1}"
            #expect(throws: JSONError.self) { try JSONValue.parse(text) }
            do {
                _ = try JSONValue.parse(text)
            } catch {
                #expect(error.reason == .duplicateKey(repeated))
            }
        }
        // Canonically equivalent keys count as the same key on both paths.
        let decomposed = String(unique.dropLast()) + ",\"caf\\u00e9\":1,\"cafe\\u0301\":2}"
        #expect(throws: JSONError.self) { try JSONValue.parse(decomposed) }
    }
}
