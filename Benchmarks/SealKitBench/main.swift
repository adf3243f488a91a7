// The SealKit peer for Scripts/bench: times the library in-process with the same
// warm-up and repetitions as the C and Python peers, and prints one JSON line per
// benchmark with every repetition's ns/op (Scripts/bench takes the medians).
//
//   SealKitBench ops SIZE KEYFILE                  Vault.encrypt(plaintext:) / decrypt(ciphertext:)
//   SealKitBench profile SCHEMA PROFILE KEYFILE    one profile, JSON text in and out: ProfileProcessor.process(_:with:)
//   SealKitBench shared SIZE KEYFILE               sk3 values for 1, 10 and 100 recipients: seal, and open as the
//                                                  last recipient; against plain v2 of the same value
//   SealKitBench json PERCENT                      JSONValue.parse of 1 MiB of strings, PERCENT% of their bytes escapes
//                                                  (0, 10, 20, 40, 50 or 100)
//
// KEYFILE holds the key as standard base64 on its first line.
import Foundation
import SealKit

#if canImport(Glibc)
import Glibc
#endif

let warmupNanoseconds = 200_000_000.0
let repetitionNanoseconds = 250_000_000.0
let repetitions = 7

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("SealKitBench: \(message)\n".utf8))
    exit(2)
}

/// Writes one line to stdout at once, so Scripts/bench sees each result as it comes.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func nowNanoseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}

/// Keeps results alive so the optimizer cannot drop the work.
nonisolated(unsafe) var sink = 0

/// Warms up, sizes each repetition to about `repetitionNanoseconds`, prints ns/op per repetition.
func measure(_ name: String, size: Int, extra: String = "", _ body: (Int) throws -> Void) rethrows {
    var warm = 0
    var spent = 0.0
    while spent < warmupNanoseconds {
        let start = nowNanoseconds()
        try body(1)
        spent += nowNanoseconds() - start
        warm += 1
    }
    let iterations = max(3, Int(Double(warm) * repetitionNanoseconds / spent))
    var samples: [String] = []
    for _ in 0..<repetitions {
        let start = nowNanoseconds()
        try body(iterations)
        samples.append(String(format: "%.1f", (nowNanoseconds() - start) / Double(iterations)))
    }
    emit(#"{"peer":"sealkit","bench":"\#(name)","size":\#(size),\#(extra)"iterations":\#(iterations),"ns_per_op":[\#(samples.joined(separator: ","))]}"#)
}

func readKey(_ path: String) -> SymmetricKey {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8),
        let line = text.split(separator: "\n").first,
        let key = try? SymmetricKey(base64Encoded: String(line))
    else { fail("the key file does not hold a base64 32-byte key") }
    return key
}

func vault(with key: SymmetricKey) throws -> Vault {
    // The package's own door to the keystore: the bench needs the C peer's key, which no public call takes.
    let keystore = InMemoryKeystore()
    let id = try KeyID("bench")
    try keystore.store(key, as: id, mode: .create, passphrase: nil)
    return Vault(keystore: Keystore(keystore), user: id, format: .v1)
}

/// `Vault.encrypt(plaintext:)` and `decrypt(ciphertext:)`: Rownd's surface, as an app calls it.
func ops(size: Int, key: SymmetricKey) throws {
    let vault = try vault(with: key)
    let plaintext = String(decoding: (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) }, as: UTF8.self)
    let ciphertext = try vault.encrypt(plaintext: plaintext)
    try measure("encrypt", size: size) { iterations in
        for _ in 0..<iterations { sink &+= try vault.encrypt(plaintext: plaintext).utf8.count }
    }
    try measure("decrypt", size: size) { iterations in
        for _ in 0..<iterations { sink &+= try vault.decrypt(ciphertext: ciphertext).utf8.count }
    }
}

/// One profile at a time, JSON text in and out, as an app or backend would handle it:
/// `ProfileProcessor.process(_:with:)`, the call for profiles held as text, prepared once as an app prepares it.
func profile(schemaPath: String, profilePath: String, key: SymmetricKey) throws {
    let vault = try vault(with: key)
    guard let schemaBytes = FileManager.default.contents(atPath: schemaPath),
        let profileBytes = FileManager.default.contents(atPath: profilePath)
    else { fail("cannot read the schema or profile file") }
    let schema = try ProfileSchema(parsing: Array(schemaBytes))
    let text = try JSONValue.parse(Array(profileBytes)).serialized()
    let encrypting = try ProfileProcessor(.encrypt, schema: schema)
    try measure("profile encrypt", size: 0) { iterations in
        for _ in 0..<iterations {
            sink &+= try encrypting.process(text, with: vault).json.utf8.count
        }
    }
}

/// v2 against v1 through the same call (`KeyRing.encrypt(_:format:place:)`, `decrypt(_:place:)`),
/// and decryption under a ring of 255 retired keys with the value under the oldest: v1 tries the
/// keys one by one, v2 opens once with the key its header names.
func formats(size: Int, key: SymmetricKey) throws {
    let ring = KeyRing(current: key, id: "bench")
    let plaintext = String(decoding: (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) }, as: UTF8.self)
    let place = CiphertextPlace.field("ssn")
    for format in CiphertextFormat.allCases {
        let ciphertext = try ring.encrypt(plaintext, format: format, place: place)
        try measure("\(format.rawValue) encrypt", size: size) { iterations in
            for _ in 0..<iterations { sink &+= try ring.encrypt(plaintext, format: format, place: place).utf8.count }
        }
        try measure("\(format.rawValue) decrypt", size: size) { iterations in
            for _ in 0..<iterations { sink &+= try ring.decrypt(ciphertext, place: place).plaintext.utf8.count }
        }
    }
    guard size == 64 else { return }
    let retired = (0..<255).map { _ in SymmetricKey.generate() }
    let history = KeyRing(current: key, retired: retired, id: "bench")
    let oldest = KeyRing(current: retired[254], id: "bench")
    for format in CiphertextFormat.allCases {
        let ciphertext = try oldest.encrypt(plaintext, format: format, place: place)
        try measure("\(format.rawValue) decrypt, 255 retired", size: size) { iterations in
            for _ in 0..<iterations { sink &+= try history.decrypt(ciphertext, place: place).plaintext.utf8.count }
        }
    }
}

/// A JSON document of 1 MiB: an array of 1,024 strings of 1 KiB each whose bytes are `percent`% escapes
/// (`\\` and `\n`, two bytes each, spread evenly), the rest plain ASCII text. `percent` is one of
/// `escapePercentages`, which fill a block of 20 bytes exactly.
let escapePercentages = [0, 10, 20, 40, 50, 100]

func escapedDocument(percent: Int) -> [UInt8] {
    let escapesPerBlock = percent / 10  // in each block of 20 bytes
    let plainPerEscape = escapesPerBlock == 0 ? 20 : (20 - 2 * escapesPerBlock) / escapesPerBlock
    var content: [UInt8] = []
    var escapes = 0
    while content.count < 1024 - 2 - 20 {
        for _ in 0..<max(escapesPerBlock, 1) {
            if escapesPerBlock > 0 {
                content += escapes % 2 == 0 ? Array(#"\\"#.utf8) : Array(#"\n"#.utf8)
                escapes += 1
            }
            content += (0..<plainPerEscape).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        }
    }
    content += Array(repeating: UInt8(ascii: "z"), count: 1024 - 2 - 1 - content.count)
    var document: [UInt8] = [UInt8(ascii: "[")]
    for index in 0..<1024 {
        document.append(UInt8(ascii: "\""))
        // The last string a byte shorter, for the opening bracket: 1 MiB exactly.
        document += index == 1023 ? content.dropLast() : content[...]
        document.append(UInt8(ascii: "\""))
        document.append(UInt8(ascii: index == 1023 ? "]" : ","))
    }
    return document
}

/// `JSONValue.parse` of `escapedDocument(percent:)`: what every reader of profiles, NDJSON lines and the
/// audit's files pays per byte. Scripts/bench reports it as MiB/s.
func json(percent: Int) throws {
    let document = escapedDocument(percent: percent)
    try measure("json parse, \(percent)% escapes", size: document.count) { iterations in
        for _ in 0..<iterations { sink &+= try JSONValue.parse(document).arrayValue?.count ?? 0 }
    }
}

/// Shared values (sk3): sealing for 1, 10 and 100 recipients, and opening as the last recipient (whose stanza is tried
/// last), against plain v2 sealing and opening of the same value.
func shared(size: Int, key: SymmetricKey) throws {
    let sender = ShareIdentity(deriving: key)
    let plaintext = String(decoding: (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) }, as: UTF8.self)
    let place = CiphertextPlace.context("note")
    let ring = KeyRing(current: key, id: "bench")
    let sealed = try ring.encrypt(plaintext, format: .v2, place: place)
    measure("shared: plain v2 encrypt", size: size) { iterations in
        for _ in 0..<iterations { sink &+= (try? ring.encrypt(plaintext, format: .v2, place: place).utf8.count) ?? 0 }
    }
    measure("shared: plain v2 decrypt", size: size) { iterations in
        for _ in 0..<iterations { sink &+= (try? ring.decrypt(sealed, place: place).plaintext.utf8.count) ?? 0 }
    }
    for count in [1, 10, 100] {
        let recipients = (0..<count).map { _ in ShareIdentity(deriving: SymmetricKey.generate()) }
        let value = try SharedValue.seal(plaintext, from: sender, to: recipients.map(\.publicIdentity), owner: "bench", place: place)
        measure("shared encrypt, \(count) recipients", size: size) { iterations in
            for _ in 0..<iterations {
                sink &+= (try? SharedValue.seal(plaintext, from: sender, to: recipients.map(\.publicIdentity), owner: "bench", place: place))?.utf8.count ?? 0
            }
        }
        let last = [recipients[count - 1]]
        measure("shared open, \(count) recipients", size: size) { iterations in
            for _ in 0..<iterations {
                sink &+= (try? SharedValue(text: value, place: place).open(with: last))?.utf8.count ?? 0
            }
        }
    }
}

let arguments = CommandLine.arguments
do {
    if arguments.count == 4, arguments[1] == "ops", let size = Int(arguments[2]) {
        try ops(size: size, key: readKey(arguments[3]))
    } else if arguments.count == 4, arguments[1] == "formats", let size = Int(arguments[2]) {
        try formats(size: size, key: readKey(arguments[3]))
    } else if arguments.count == 4, arguments[1] == "shared", let size = Int(arguments[2]) {
        try shared(size: size, key: readKey(arguments[3]))
    } else if arguments.count == 3, arguments[1] == "json", let percent = Int(arguments[2]), escapePercentages.contains(percent) {
        try json(percent: percent)
    } else if arguments.count == 5, arguments[1] == "profile" {
        try profile(schemaPath: arguments[2], profilePath: arguments[3], key: readKey(arguments[4]))
    } else {
        fail("usage: SealKitBench ops SIZE KEYFILE | SealKitBench formats SIZE KEYFILE | SealKitBench profile SCHEMA PROFILE KEYFILE"
            + " | SealKitBench shared SIZE KEYFILE"
            + " | SealKitBench json PERCENT")
    }
} catch {
    fail("\(error)")
}
