/// Rules for newline-delimited JSON shared by every reader of it (`profile --ndjson`, `audit`),
/// so that the same file is read the same way everywhere.
package enum NDJSON {
    /// Whether a line holds only spaces, tabs and carriage returns. Such lines (spacing between
    /// records, a stray CRLF) hold no record: readers skip them and count them.
    package static func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
        for byte in line where byte != 0x20 && byte != 0x09 && byte != 0x0D { return false }
        return true
    }
}
