#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

/// Key transfer through a magic-wormhole mailbox server (see docs/transfer.md, "Network transfer").
///
/// The receiver allocates a code and shows it; the sender types it. SPAKE2 on the code gives
/// both a key; after the `version` exchange proves it (and both sides' app versions say
/// SealKit), the sender sends every key of each id in numbered phases, and the receiver answers
/// with one message saying whether it stored them. Without the code, neither the relay nor
/// anyone watching can read or forge a message; a wrong guess ends the attempt on both sides.
package enum NetworkTransfer {
    /// `app_versions`' member that marks a SealKit key transfer peer.
    static let versionsKey = "sealkit"
    /// The protocol named in `app_versions`.
    static let protocolName = "key-transfer/v1"
    /// The most plaintext bytes one keys message carries. Mailbox servers set no size limit by
    /// default, but clients bound what they read: wormhole-william's reader stops at 32 KiB. 15 KiB
    /// sealed (+40) and hex-encoded (×2) is 30,800 bytes, and the server's `message` envelope keeps it
    /// under 32 KiB, so larger transfers use more phases. Each id travels whole, and the largest
    /// (255 versions, a 255-byte id) is 14,545 bytes with the message's header: it always fits.
    static let maximumPartBytes = 15 * 1024
    /// The largest server message a peer must be able to read: docs/transfer.md states it.
    package static let interoperableMessageBytes = 32 * 1024
    /// The most keys messages a transfer may have (4,096 ids of one key each fit in about 70).
    static let maximumPartCount = 1024
    /// The keys message's first byte.
    static let keysMessageKind: UInt8 = 1

    /// Which end of a transfer a program is, as its `app_versions` says.
    enum Role: String {
        case sender, receiver
    }

    static func appVersions(_ role: Role) -> JSONValue {
        [versionsKey: ["protocol": .string(protocolName), "role": .string(role.rawValue)]]
    }

    /// Checks the peer's `app_versions`: SealKit's protocol, and the other role.
    static func checkPeer(_ versions: JSONValue, expecting role: Role) throws(MailboxError) {
        guard let ours = versions[versionsKey], ours["protocol"]?.stringValue == protocolName else {
            throw .notSealKit("its app versions do not name SealKit's \(protocolName)")
        }
        guard let theirs = ours["role"]?.stringValue, theirs == role.rawValue else {
            throw .notSealKit(role == .receiver
                ? "it is not receiving keys (was the code typed into a second 'transfer send'?)"
                : "it is not sending keys (was the code typed into a second 'transfer receive'?)")
        }
    }

    /// The keys messages for `keys`: each `kind (u8) ‖ part (u16) ‖ parts (u16) ‖ KeyBundle`,
    /// every id whole in one part, built in guarded memory.
    package static func keysMessages(_ keys: [KeyHistory]) throws(TransferError) -> [SecureBytes] {
        try TransferError.converting { () throws(CodeError) in try KeyBundle.validate(keys) }
        var groups: [[KeyHistory]] = [[]]
        var size = 5 + 2
        for history in keys {
            let entry = KeyBundle.byteCount(of: [history]) - 2
            if size + entry > maximumPartBytes, !groups[groups.count - 1].isEmpty {
                groups.append([])
                size = 5 + 2
            }
            groups[groups.count - 1].append(history)
            size += entry
        }
        guard groups.count <= maximumPartCount else { throw .code(.tooLarge(parts: groups.count)) }
        return groups.enumerated().map { index, group in
            SecureBytes(count: 5 + KeyBundle.byteCount(of: group)) { buffer in
                var writer = ByteWriter(buffer)
                writer.write(keysMessageKind)
                writer.write(UInt16(index + 1))
                writer.write(UInt16(groups.count))
                KeyBundle.write(group, into: &writer)
            }
        }
    }

    /// Reads one keys message: its part number, the part count, and its keys.
    package static func readKeysMessage(_ message: SecureBytes?) throws(TransferError) -> (part: Int, parts: Int, keys: [KeyHistory]) {
        guard let message else { throw .code(.malformed(.reply, reason: "an empty message")) }
        return try TransferError.converting { () throws(CodeError) in try message.reading { raw throws(CodeError) in
            var reader = ByteReader(raw, kind: .reply)
            guard try reader.byte() == keysMessageKind else {
                throw .malformed(.reply, reason: "not a keys message")
            }
            let part = Int(try reader.uint16()), parts = Int(try reader.uint16())
            guard (1...maximumPartCount).contains(parts), (1...parts).contains(part) else {
                throw .malformed(.reply, reason: "bad part numbers")
            }
            let keys = try KeyBundle.read(from: &reader, as: .reply)
            try reader.finish()
            return (part, parts, keys)
        } }
    }

    /// The receiver's one answer, as JSON: `{"stored": true}` or `{"stored": false, "reason": "..."}`.
    static func answer(_ outcome: ReceiverAnswer) -> [UInt8] {
        let value: JSONValue
        switch outcome {
        case .stored: value = ["stored": true]
        case .refused(let reason): value = ["stored": false, "reason": .string(reason.rawValue)]
        }
        return Array(value.serialized().utf8)
    }

    package static func readAnswer(_ message: SecureBytes?) throws(MailboxError) -> ReceiverAnswer {
        let bytes = message?.withUnsafeBytes { Array($0) } ?? []
        guard bytes.count <= 4096, let value = try? JSONValue.parse(bytes), let stored = value["stored"]?.boolValue else {
            throw .notSealKit("its answer is not a SealKit receipt")
        }
        if stored { return .stored }
        return .refused(value["reason"]?.stringValue.flatMap(Refusal.init(rawValue:)) ?? .failed)
    }
}

/// What the receiver tells the sender after the keys arrived.
package enum ReceiverAnswer: Equatable, Sendable {
    /// Every key is in the receiver's keystore.
    case stored
    /// Nothing was stored, for this reason.
    case refused(Refusal)
}

/// Why a receiver stored nothing; sent to the sender, so it says no more than this.
public enum Refusal: String, Sendable {
    /// The person at the receiver answered no.
    case declined
    /// The receiver already has a different key under one of the ids.
    case conflict
    /// The keys arrived but could not be stored (a locked keystore, a full disk, ...).
    case failed
    /// The person at the receiver pressed Ctrl-C after the keys arrived.
    case cancelled
    /// The keys message broke the format (a malformed key, a time out of range, an id twice, parts
    /// out of order, more than a transfer carries).
    case invalid
}

/// Why the receiver stored nothing, as the sender reports it.
package struct ReceiverRefusedError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the receiver said.
    package let reason: Refusal
    package var description: String {
        switch reason {
        case .declined: return "the receiver declined the keys; nothing was stored there"
        case .conflict: return "the receiver already has a different key under one of these ids; nothing was stored there"
        case .failed: return "the receiver could not store the keys; nothing was stored there (see its message)"
        case .cancelled: return "the receiver cancelled the transfer (Ctrl-C); nothing was stored there"
        case .invalid: return "the receiver refused the keys message as malformed; nothing was stored there"
        }
    }
}

/// The receiving end: allocates a code, waits for a sender, takes its keys, answers.
///
/// SealKitTransfer's `KeyReceiver` drives one, for apps and for the `sealkit` command alike (whose Ctrl-C
/// must answer the sender while the person is at a prompt: `abandon()`).
package actor NetworkKeyReceiver {
    /// The code to show; the sender types it.
    package nonisolated let code: WormholeCode
    /// The relay in use.
    package nonisolated var relay: RelayURL { wormhole.relay }
    private let wormhole: Wormhole
    private var finished = false
    private var keysArrived = false

    /// Connects to `relay`, allocates a nameplate and opens its mailbox.
    /// - Parameters:
    ///   - relay: the mailbox server.
    ///   - timeout: seconds to wait for the sender (and for each later step).
    package init(relay: RelayURL, timeout: Int) async throws(MailboxError) {
        let wormhole = try await Wormhole(
            relay: relay, appID: TransferOffer.appID, appVersions: NetworkTransfer.appVersions(.receiver), timeout: timeout)
        do {
            code = try await wormhole.allocateCode()
        } catch {
            await wormhole.close(mood: .errory)
            throw error
        }
        self.wormhole = wormhole
    }

    /// Waits for the sender and reads its keys: every id, current and retired.
    /// - Returns: the keys, in the sender's order.
    /// - Throws: `MailboxError` (wrong code, timeout, not SealKit, `.interrupted` when the task is
    ///   cancelled, ...) or `TransferError` (a damaged keys message); the wormhole is closed then.
    /// - Parameter onPeer: called once the sender has joined and proven the code, before its keys arrive.
    package func receiveKeys(onPeer: (@Sendable () -> Void)? = nil) async throws -> [KeyHistory] {
        do {
            try NetworkTransfer.checkPeer(try await wormhole.waitForPeer(), expecting: .sender)
            onPeer?()
            do {
                let keys = try await readKeys()
                keysArrived = true
                return keys
            } catch let error as MailboxError {
                // A keys message from the authenticated sender that breaks the format is refused
                // with an answer, so the sender ends at once instead of waiting out its timeout.
                switch error {
                case .notSealKit, .protocolViolation: await refuse(.invalid)
                default: break
                }
                throw error
            }
        } catch {
            await cancel(after: error)
            throw error
        }
    }

    /// Sends the sender `.refused(reason)` and closes, once.
    private func refuse(_ reason: Refusal) async {
        guard finish() else { return }
        try? await wormhole.send(NetworkTransfer.answer(.refused(reason)))
        await wormhole.close(mood: .errory)
    }

    /// Reads the keys messages, every part, checking each.
    private func readKeys() async throws -> [KeyHistory] {
        var keys: [KeyHistory] = []
        var seen = Set<KeyID>()
        var expected = 1, total = 1
        while expected <= total {
            let message = try await wormhole.receive()
            let part: (part: Int, parts: Int, keys: [KeyHistory])
            do {
                part = try NetworkTransfer.readKeysMessage(message)
            } catch {
                // The reason alone: TransferError's own text ("copy it again in full") is advice for a pasted reply.
                throw MailboxError.notSealKit("its message is not a SealKit keys message (\(Self.reason(error)))")
            }
            if expected == 1 { total = part.parts }
            guard part.part == expected, part.parts == total else {
                throw MailboxError.notSealKit("its keys messages are numbered out of sequence")
            }
            // The same bound as a single bundle: every part together holds at most 4,096 ids.
            guard keys.count + part.keys.count <= KeyBundle.maximumIDCount else {
                throw MailboxError.protocolViolation("the sender sent more than \(KeyBundle.maximumIDCount) ids, more than a transfer carries")
            }
            guard KeyBundle.keyCount(of: keys) + KeyBundle.keyCount(of: part.keys) <= KeyBundle.maximumKeyCount else {
                throw MailboxError.protocolViolation("the sender sent more than \(KeyBundle.maximumKeyCount) keys, more than a transfer carries")
            }
            for history in part.keys {
                guard seen.insert(history.id).inserted else {
                    throw MailboxError.notSealKit("its keys messages hold key id '\(history.id)' twice")
                }
            }
            keys += part.keys
            expected += 1
        }
        return keys
    }

    /// Why a keys message was refused, without the advice meant for pasted text.
    private static func reason(_ error: TransferError) -> String {
        if case .code(.malformed(_, let reason)) = error { return reason }
        return "\(error)"
    }

    /// Tells the sender the outcome and closes the wormhole. It goes out from a cancelled task too.
    /// - Returns: whether the answer went out to the relay; false when the connection was lost or the
    ///   relay did not take it (the sender was not told), or when the transfer had already ended.
    @discardableResult
    package func answer(_ answer: ReceiverAnswer) async -> Bool {
        guard finish() else { return false }
        let told = (try? await wormhole.send(NetworkTransfer.answer(answer))) != nil
        await wormhole.close(mood: answer == .stored ? .happy : .errory)
        return told
    }

    /// Closes the wormhole after a failure, with the mood magic-wormhole uses for it.
    package func cancel(after error: Error) async {
        guard finish() else { return }
        await wormhole.close(mood: mood(for: error))
    }

    /// Sends the release and close at once and disconnects, for a process about to exit; it may run
    /// while another task waits in `receiveKeys()`, whose wait then ends. Once the keys have arrived
    /// the sender waits for our answer (closing the mailbox tells it nothing), so it is told first
    /// that nothing was stored, instead of waiting out its timeout. All within a few seconds,
    /// whatever the relay does.
    /// - Returns: whether the relay confirmed the nameplate's release (see `Wormhole.abandon(mood:)`).
    @discardableResult
    package func abandon() async -> Bool {
        // The caller is then at the question or the passphrase prompt, not using the wormhole.
        if keysArrived, finish() { try? await wormhole.send(NetworkTransfer.answer(.refused(.cancelled))) }
        finished = true
        return await wormhole.abandon(mood: .lonely)
    }

    /// Marks the transfer finished; true for the one caller that did so.
    private func finish() -> Bool {
        guard !finished else { return false }
        finished = true
        return true
    }
}

/// The sending end: joins the receiver's code, sends keys, waits for the receipt.
package actor NetworkKeySender {
    private let wormhole: Wormhole
    private var finished = false
    private var keysSent = false
    private var keysLeaving = false

    /// Connects to `relay` and joins the mailbox of `code`.
    package init(relay: RelayURL, code: WormholeCode, timeout: Int) async throws(MailboxError) {
        let wormhole = try await Wormhole(
            relay: relay, appID: TransferOffer.appID, appVersions: NetworkTransfer.appVersions(.sender), timeout: timeout)
        do {
            try await wormhole.join(code: code)
        } catch {
            await wormhole.close(mood: mood(for: error))
            throw error
        }
        self.wormhole = wormhole
    }

    /// The relay in use.
    package nonisolated var relay: RelayURL { wormhole.relay }

    /// Sends `keys` once the receiver's key is proven, and returns when it confirms storing them.
    /// - Throws: `MailboxError` (`.interrupted` when the task is cancelled), `TransferError`, or
    ///   `ReceiverRefusedError` when the receiver stored nothing.
    /// - Parameters:
    ///   - keys: every key of each id to send, current and retired.
    ///   - onPeer: called once the receiver has joined and proven the code, before the keys go out.
    package func send(_ keys: [KeyHistory], onPeer: (@Sendable () -> Void)? = nil) async throws {
        do {
            let messages = try NetworkTransfer.keysMessages(keys)
            try NetworkTransfer.checkPeer(try await wormhole.waitForPeer(), expecting: .receiver)
            onPeer?()
            // From the first byte handed to the network, the receiver may get the keys, however late this
            // task resumes after the write (a busy machine): an interrupt from then on must not say "cancelled".
            keysLeaving = true
            for message in messages { try await wormhole.send(message) }
            keysSent = true
            let answer = try NetworkTransfer.readAnswer(try await wormhole.receive())
            if case .refused(let reason) = answer { throw ReceiverRefusedError(reason: reason) }
            finished = true
            await wormhole.close(mood: .happy)
        } catch {
            await cancel(after: error)
            throw error
        }
    }

    /// Closes the wormhole after a failure.
    package func cancel(after error: Error) async {
        guard !finished else { return }
        finished = true
        await wormhole.close(mood: mood(for: error))
    }

    /// Sends the release and close at once and disconnects, for a process about to exit; it may run
    /// while another task waits in `send(_:)`, whose wait then ends; within a few seconds, whatever the relay does.
    /// - Returns: whether the relay confirmed the nameplate's release (see `Wormhole.abandon(mood:)`).
    @discardableResult
    package func abandon() async -> Bool {
        finished = true
        return await wormhole.abandon(mood: .lonely)
    }

    /// Whether the keys went out to the receiver: an interrupt after that cannot take them back,
    /// and the receiver may store them.
    package var hasSentKeys: Bool { keysSent }

    /// Whether the keys may have left: their sending began. What an interrupt must assume.
    package var mayHaveSentKeys: Bool { keysLeaving }
}

private func mood(for error: Error) -> Mood {
    switch error as? MailboxError {
    case .wrongCode: return .scary
    case .timedOut, .interrupted, .receiverGone: return .lonely
    default: return .errory
    }
}
