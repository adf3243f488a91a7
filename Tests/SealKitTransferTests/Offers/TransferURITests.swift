import SealKitTransfer
import Testing


@Suite("transfer URIs")
struct TransferURITests {
    @Test func makeAndParseRoundTripAsTheSpecWritesThem() throws {
        let relay = try RelayURL("ws://relay.magic-wormhole.io:4000/v1")
        let text = TransferURI.make(code: "7-guitarist-revenge", relay: relay)
        #expect(text == "sealkit-transfer:7-guitarist-revenge?version=0&rendezvous=ws%3A%2F%2Frelay.magic-wormhole.io%3A4000&role=leader")
        let parsed = try TransferURI(parsing: text)
        #expect(parsed.code == "7-guitarist-revenge" && parsed.relay == relay)
        #expect(try TransferURI(parsing: "sealkit-transfer:7-guitarist-revenge").relay == nil)
        for bad in ["sealkit-transfer:?version=0", "sealkit-transfer:7-a-b?version=1", "sealkit-transfer:7-a-b?role=follower",
                    "sealkit-transfer:7-a-b?rendezvous=http%3A%2F%2Fx", "sealkit-transfer:7-%zz", "wormhole-transfer:7-a-b", "7-a-b"] {
            #expect(throws: TransferURIError.self) { try TransferURI(parsing: bad) }
        }
    }
}
