// Encrypts the fields an app schema flags, under the user's key from a file keystore, and prints
// the JSON the app would upload. The server never sees the key.
//
//     profile-uploader --keystore DIR --user ID SCHEMA.json PROFILE.json
//
// The first run for a user makes their key, unless the profile already holds values sealed under a
// key this keystore lacks (the user has a key on another device): then it says so and makes none.
import SealKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String, status: Int32 = 1) -> Never {
    let line = Array("profile-uploader: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

/// A file of at most 1 MiB: a profile or a schema, never more.
func readSmallFile(_ path: String) -> Data {
    guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? any BinaryInteger else {
        fail("cannot open \(path)")
    }
    guard let bytes = Int(exactly: size), bytes <= 1 << 20 else { fail("\(path) is larger than 1 MiB") }
    guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else { fail("cannot read \(path)") }
    return data
}

let usage = "usage: profile-uploader --keystore DIR --user ID SCHEMA.json PROFILE.json"
/// Takes `--name VALUE` out of `arguments` and returns VALUE.
func take(_ name: String, from arguments: inout [String]) -> String {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { fail(usage, status: 64) }
    let value = arguments[index + 1]
    arguments.removeSubrange(index...index + 1)
    return value
}
var arguments = Array(CommandLine.arguments.dropFirst())
let keystoreRoot = take("--keystore", from: &arguments)
let user = take("--user", from: &arguments)
guard arguments.count == 2 else { fail(usage, status: 64) }

/// A small file's text, which must be UTF-8.
func readSmallText(_ path: String) -> String {
    guard let text = String(data: readSmallFile(path), encoding: .utf8) else { fail("\(path) is not UTF-8 text") }
    return text
}

do {
    let schema = try ProfileSchema(json: readSmallText(arguments[0]))
    let profile = readSmallText(arguments[1])
    // Each field's format comes from the schema; the vault's own applies to single values.
    let vault = Vault(keystore: try Keystore(directory: keystoreRoot), user: try KeyID(user), format: .v1)
    // A key on first use, unless the profile shows the user already has one elsewhere.
    try vault.ensureKey(existing: profile, schema: schema)
    print(try ProfileProcessor(.encrypt, schema: schema).process(profile, with: vault).json)
} catch {
    // SealKit's one error type: a reason to switch on, and one line that never holds a key or a plaintext.
    fail("\(error)", status: error.reason == .keyElsewhere ? 3 : 1)
}
