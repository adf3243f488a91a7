@_spi(CLI) import SealKit

// The example in `DurableFile`'s doc comment (the command line's API, which Snippets/ cannot import), line for line
// as it appears there, so that it compiles: Scripts/check-doc-examples fails on a doc comment's example that is not
// here or in Snippets/. Compiled, never run: it writes to a USB stick.
private enum DocCommentExamples {
    static func writeBackup(_ backup: String) throws {
        try DurableFile.write(Array(backup.utf8), to: "/media/usb/backup.txt", exclusive: true)
    }
}
