import Foundation
import SealKit
import SealTestSupport
import Testing


/// PyNaCl, an independent libsodium binding, opens the fields SealKit encrypts.
@Suite(.requires(.pyNaCl)) struct InteropTests {
    @Test func pyNaClDecryptsEveryEncryptedField() throws {
        let schema = try ProfileSchema(parsing: try Fixture.json("schema.json"))
        let profile = try Fixture.json("profile.json")
        var keyText = Array(Base64.encode(SecureRandom.bytes(count: SymmetricKey.byteCount)).utf8)
        defer { ConstantTime.wipe(&keyText) }
        let keys = KeyRing(current: try SymmetricKey(base64Encoded: keyText))
        let encryptor = ProfileEncryptor(schema: schema)
        // Both ways in: the value tree, and the text fast path.
        let viaTree = try encryptor.encrypt(profile, with: keys)
        let viaText = try JSONValue.parse(encryptor.encrypt(jsonText: Array(profile.serialized(pretty: true).utf8), with: keys))
        #expect(viaText != viaTree, "fresh nonces make every ciphertext new")

        // The key travels on stdin, never on the command line; the profile follows it.
        let script = #"""
        import sys, json, base64
        from nacl.secret import SecretBox
        lines = sys.stdin.buffer.read().split(b'\n', 2)
        box = SecretBox(base64.b64decode(lines[0], validate=True))
        fields = json.loads(lines[1])
        data = json.loads(lines[2])['data']
        print(json.dumps({name: box.decrypt(base64.b64decode(data[name], validate=True)).decode('utf-8') for name in fields}))
        """#
        let flagged = schema.encryptedFields.map(\.name).filter { !(profile.data[$0]?.isNull ?? true) }
        #expect(flagged.count == 7)
        for encrypted in [viaTree, viaText] {
            var input = keyText + [0x0A]
            input += Array(JSONValue.array(flagged.map { .string($0) }).serialized().utf8) + [0x0A]
            input += Array(encrypted.serialized().utf8)
            defer { ConstantTime.wipe(&input) }
            let output = try JSONValue.parse(try Python.output(of: script, stdin: input))

            for name in flagged {
                let original = try #require(profile.data[name])
                let expected = original.stringValue ?? original.serialized()
                #expect(output[name]?.stringValue == expected, "\(name)")
            }
            #expect(output["account_balance"] == "12345678901234567890.10")
            #expect(output["home_address"]?.stringValue?.hasPrefix(#"{"street":"12 St James's Square","#) == true)
        }
    }

    /// And SealKit opens what PyNaCl encrypts, restoring each value by the schema's type.
    @Test func sealKitDecryptsWhatPyNaClEncrypts() throws {
        let schema = try ProfileSchema(parsing: try Fixture.json("schema.json"))
        var keyText = Array(Base64.encode(SecureRandom.bytes(count: SymmetricKey.byteCount)).utf8)
        defer { ConstantTime.wipe(&keyText) }
        let keys = KeyRing(current: try SymmetricKey(base64Encoded: keyText))
        let script = #"""
        import sys, json, base64
        from nacl.secret import SecretBox
        key = sys.stdin.buffer.readline().strip()
        box = SecretBox(base64.b64decode(key, validate=True))
        plain = {"ssn": "078-05-1120", "credit_score": "-0.5e10", "is_verified": "false",
                 "home_address": '{"city":"Z\u00fcrich"}', "recovery_codes": '["a",1]'}
        data = {k: base64.b64encode(box.encrypt(v.encode('utf-8'))).decode() for k, v in plain.items()}
        data["email"] = "ada@example.com"
        print(json.dumps({"id": "u", "data": data}))
        """#
        let encrypted = try JSONValue.parse(try Python.output(of: script, stdin: keyText + [0x0A]))
        let decrypted = try ProfileEncryptor(schema: schema).decrypt(encrypted, with: keys)
        #expect(
            decrypted.profile.data
                == [
                    "ssn": "078-05-1120", "credit_score": .number("-0.5e10"), "is_verified": false,
                    "home_address": ["city": "Zürich"], "recovery_codes": ["a", 1], "email": "ada@example.com",
                ])
    }
}
