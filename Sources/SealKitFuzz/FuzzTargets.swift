import SealCore
import SealKeystore
import SealTransfer

/// One parser or decoder under fuzzing. Each target feeds the input to the code that reads
/// untrusted bytes and traps when a property that must hold for every input fails, so
/// libFuzzer reports wrong answers as well as crashes.
enum FuzzTarget: String, CaseIterable {
    /// `FieldCipher.decode`, `decrypt` and `KeyRing.decrypt` on arbitrary ciphertext text.
    case ciphertext
    /// `Base64.decode`: strict and canonical, so every accepted text re-encodes to itself.
    case base64
    /// `KeyText.parseKey`: what `keys import` reads from stdin.
    case keytext
    /// `KeyFile.parse`: key files on disk; what parses must serialize and parse back the same.
    case keyfile

    nonisolated(unsafe) static var selected: FuzzTarget = .ciphertext

    static func runSelected(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        selected.run(bytes)
        return 0
    }

    /// Two fixed keys, so authentication can succeed for inputs libFuzzer learns to build.
    static let keys: [SymmetricKey] = [
        "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=", "+RCiJFwwS1QhC87mwjLZVopVCPERtT2rcjVAZm7MYno=",
    ].compactMap { try? SymmetricKey(base64Encoded: $0) }

    func run(_ bytes: [UInt8]) {
        switch self {
        case .ciphertext: Self.ciphertext(bytes)
        case .base64: Self.base64(bytes)
        case .keytext: _ = try? KeyText.parseKey(bytes)
        case .keyfile: Self.keyFile(bytes)
        }
    }

    private static func ciphertext(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            let sealed = try FieldCipher.decode(text)
            check(sealed.count >= FieldCipher.minimumByteCount, "decode accepted \(sealed.count) bytes")
            check(Base64.encode(sealed) == text, "decode accepted non-canonical text")
        } catch {
            check(error != .authenticationFailed && error != .notUTF8, "decode judged more than the shape")
        }
        if let opened = try? FieldCipher.decrypt(text, usingAnyOf: keys) {
            // Whatever opens must be what encrypting that plaintext under that key gives back.
            let again = FieldCipher.encrypt(opened.plaintext, using: keys[opened.keyIndex])
            check((try? FieldCipher.decrypt(again, using: keys[opened.keyIndex])) == opened.plaintext, "round trip")
        }
        let ring = KeyRing(current: keys[0], retired: [keys[1]])
        if let (plaintext, needsRotation) = try? ring.decrypt(text) {
            check(needsRotation == ((try? FieldCipher.decrypt(text, using: keys[0])) == nil), "needsRotation for \(plaintext.utf8.count) bytes")
        }
    }

    private static func base64(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let decoded = Base64.decode(text)
        if let decoded { check(Base64.encode(decoded) == text, "accepted a non-canonical encoding") }
        // The buffer API agrees with the String one on the same bytes.
        let viaBuffer: [UInt8]? = bytes.withUnsafeBytes { raw in
            guard let length = Base64.decodedLength(of: raw) else { return nil }
            var output = [UInt8](repeating: 0, count: length)
            let ok = output.withUnsafeMutableBytes { Base64.decode(raw, into: $0) }
            return ok ? output : nil
        }
        if Array(text.utf8) == bytes { check(viaBuffer == decoded, "the two decode entry points disagree") }
    }

    private static func keyFile(_ bytes: [UInt8]) {
        guard let file = try? KeyFile.parse(bytes) else { return }
        let serialized = file.serialized()
        let reparsed = serialized.withUnsafeBytes { try? KeyFile.parse(Array($0)) }
        check(reparsed != nil, "a parsed key file does not parse after serializing")
        guard let reparsed else { return }
        check(reparsed.id == file.id && reparsed.protection == file.protection, "id or protection changed")
        check(reparsed.entries.count == file.entries.count, "entries changed")
        for (a, b) in zip(reparsed.entries, file.entries) {
            check(a.fingerprint == b.fingerprint && a.created == b.created && a.retired == b.retired, "an entry changed")
        }
    }

    /// Traps when a property fails, which libFuzzer reports as a crash with the input.
    private static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("fuzz property failed: \(message())") }
    }
}
