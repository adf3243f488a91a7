// An export of many values, one per line, sealed and opened as bytes: no `String` per value either way.
import SealKit

func sealAndOpenExport(_ vault: Vault, values export: [UInt8]) throws -> [UInt8] {
    // One ciphertext line per value line, in order; a context binds them in v2.
    var sealed: [UInt8] = []
    try vault.encrypt(lines: export, context: "export", appendingTo: &sealed)

    // And back: one plaintext line per ciphertext line. The first line that does not open fails the call, names its
    // number (never its text), and leaves `opened` as it was.
    var opened: [UInt8] = []
    do {
        try vault.decrypt(lines: sealed, context: "export", appendingTo: &opened)
    } catch {
        print("the export did not open: \(error)")
        throw error
    }
    return opened
}
