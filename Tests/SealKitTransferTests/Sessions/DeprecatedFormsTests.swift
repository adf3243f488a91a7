import Foundation
import SealKitTransfer
import SealTestSupport
import Testing

/// What an app written against 1.0 calls, deprecated in favour of `Relay` and `[KeyHistory]` but kept working. Called
/// through a protocol, whose requirement is not deprecated, so that this file builds without warnings.
private protocol FormsOf1_0 {
    func publicRelay() -> String
    func relay(_ address: String) throws(SealKitError) -> String
    func receiveOffers(relay: String, keys: [KeyHistory]) async throws -> (offered: [KeyOffer], stored: [KeyOffer])
}

private struct Deprecated: FormsOf1_0 {
    @available(*, deprecated)
    func publicRelay() -> String { KeyTransfer.publicRelay }

    @available(*, deprecated)
    func relay(_ address: String) throws(SealKitError) -> String { try KeyTransfer.relay(address) }

    @available(*, deprecated)
    func receiveOffers(relay: String, keys: [KeyHistory]) async throws -> (offered: [KeyOffer], stored: [KeyOffer]) {
        let receiver = try await KeyReceiver(relay: relay, timeout: .seconds(30))
        let sender = try await KeySender(code: receiver.code, relay: relay, timeout: .seconds(30))
        let sent = Task { try await sender.send(keys) }
        let box = Offered()
        let stored: [KeyOffer] = try await receiver.receive(into: try Keystore.inMemory()) { (offered: [KeyOffer]) in
            box.set(offered)
            return true
        }
        try await sent.value
        return (box.get(), stored)
    }
}

private final class Offered: @unchecked Sendable {
    private let lock = NSLock()
    private var value: [KeyOffer] = []
    func set(_ offered: [KeyOffer]) { lock.withLock { value = offered } }
    func get() -> [KeyOffer] { lock.withLock { value } }
}

@Suite("SealKitTransfer: the 1.0 forms still work")
struct DeprecatedFormsTests {
    private let forms: any FormsOf1_0 = Deprecated()

    @Test func theStringRelayFormsSayWhatRelayDoes() throws {
        #expect(forms.publicRelay() == Relay.public.description)
        for address in ["ws://relay.example:4000", "ws://10.0.0.1:9/v1"] {
            #expect(try forms.relay(address) == Relay(address).description)
        }
        #expect(throws: SealKitError.self) { try forms.relay("http://relay.example:4000/v1") }
    }

    @Test(.requires(.mailboxServer), .timeLimit(.minutes(2))) func theOfferFormsOfTheNetworkReceiverShowWhatTheHistoriesDo() async throws {
        try await MailboxServer.sharedAsync { relay in
            let keys = [try history("dana", retired: 1)]
            let (offered, stored) = try await forms.receiveOffers(relay: relay, keys: keys)
            #expect(offered == keys.map(KeyOffer.init))
            #expect(stored == offered)
            #expect(offered.map(\.keyCount) == [2] && offered.map(\.fingerprint) == keys.map(\.fingerprint))
        }
    }
}
