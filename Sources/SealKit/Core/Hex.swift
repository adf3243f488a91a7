import CSodium

/// Lower-case hexadecimal through libsodium's constant-time codec: the one hex encoder and
/// decoder in SealKit (mailbox bodies, sides and ids, key-file fingerprints, escapes in pasted
/// key text). Neither direction branches on or indexes a table by the bytes, so secrets may
/// pass through it without leaking through timing.
package enum Hex {
    /// The bytes as lower-case hex, two characters per byte.
    /// - Parameter bytes: any bytes.
    /// - Returns: the hex text.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        if input.isEmpty { return "" }
        // sodium_bin2hex writes a terminating NUL after the 2n characters.
        var output = [UInt8](repeating: 0, count: input.count * 2 + 1)
        output.withUnsafeMutableBufferPointer { out in
            out.withMemoryRebound(to: CChar.self) { out in
                _ = sodium_bin2hex(out.baseAddress!, out.count, input, input.count)
            }
        }
        return String(decoding: output.dropLast(), as: UTF8.self)
    }

    /// The bytes hex text stands for (digits in either case), or nil unless the text is an
    /// even number of hex digits and nothing else.
    /// - Parameter text: the hex text, such as `ab0C`.
    /// - Returns: the bytes, or nil.
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let input = Array(text)
        guard input.count % 2 == 0 else { return nil }
        if input.isEmpty { return [] }
        var output = [UInt8](repeating: 0, count: input.count / 2)
        var written = 0
        // Without an end pointer, libsodium fails unless every character was a hex digit.
        let result = input.withUnsafeBufferPointer { hex in
            hex.withMemoryRebound(to: CChar.self) { hex in
                sodium_hex2bin(&output, output.count, hex.baseAddress, hex.count, nil, &written, nil)
            }
        }
        guard result == 0, written == output.count else {
            ConstantTime.wipe(&output)
            return nil
        }
        return output
    }

    /// The bytes hex text stands for (digits in either case), or nil unless it is whole hex.
    package static func decode(_ text: String) -> [UInt8]? {
        decode(Array(text.utf8))
    }
}
