import SealKit

/// One message from the mailbox server, as docs/server-protocol in magic-wormhole describes them.
///
/// Parsing is strict about the fields this client uses and ignores the rest (`server_tx`,
/// `server_rx`, `id`), so newer servers that add fields still work.
package enum ServerMessage: Equatable, Sendable {
    /// The first message: `motd` to show, or `error` when the server refuses this client.
    case welcome(motd: String?, error: String?)
    /// The server received one of our messages.
    case ack
    /// `allocate` succeeded.
    case allocated(nameplate: String)
    /// `claim` succeeded: the mailbox that belongs to the nameplate.
    case claimed(mailbox: String)
    /// `release` finished.
    case released
    /// `close` finished.
    case closed
    /// A message added to the open mailbox, by either side (ours come back too).
    case message(side: String, phase: String, body: [UInt8])
    /// The server refused a request.
    case error(String)
    /// The answer to `ping`.
    case pong
    /// The nameplates the app's transfers hold on the relay (the answer to `list`).
    case nameplates([String])
    /// A type this client does not know; ignored, as magic-wormhole does.
    case unknown(String)

    /// The largest text message this client reads from a server (256 KiB). SealKit's own
    /// mailbox messages stay far below it (see `NetworkTransfer`).
    package static let maximumBytes = 256 * 1024

    /// Reads one server message.
    /// - Parameter bytes: the WebSocket text message.
    /// - Throws: `MailboxError` when it is too large, not JSON, or lacks a field its type needs.
    package init(parsing bytes: some Collection<UInt8>) throws(MailboxError) {
        guard bytes.count <= Self.maximumBytes else { throw .messageTooLarge(limit: Self.maximumBytes) }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw .protocolViolation("the relay sent a message that is not JSON (\(error))")
        }
        guard value.objectValue != nil, let type = value["type"]?.stringValue else {
            throw .protocolViolation("the relay sent a message without a type")
        }
        func field(_ name: String) throws(MailboxError) -> String {
            guard let text = value[name]?.stringValue else {
                throw .protocolViolation("the relay's '\(TextSafety.printable(type))' message lacks its '\(name)'")
            }
            return text
        }
        switch type {
        case "welcome":
            guard let welcome = value["welcome"], welcome.objectValue != nil else {
                throw .protocolViolation("the relay's welcome lacks its 'welcome'")
            }
            self = .welcome(motd: welcome["motd"]?.stringValue, error: welcome["error"].map { $0.stringValue ?? "an error" })
        case "ack": self = .ack
        case "allocated":
            let nameplate = try field("nameplate")
            guard Self.isNameplate(nameplate) else { throw .protocolViolation("the relay allocated a nameplate that is not a number") }
            self = .allocated(nameplate: nameplate)
        case "claimed":
            let mailbox = try field("mailbox")
            guard !mailbox.isEmpty, mailbox.utf8.count <= 256 else { throw .protocolViolation("the relay claimed a bad mailbox id") }
            self = .claimed(mailbox: mailbox)
        case "released": self = .released
        case "closed": self = .closed
        case "message":
            let side = try field("side")
            let phase = try field("phase")
            guard side.utf8.count <= 256, phase.utf8.count <= 256 else {
                throw .protocolViolation("a mailbox message has an overlong side or phase")
            }
            guard let body = Hex.decode(try field("body")) else {
                throw .protocolViolation("a mailbox message's body is not hex")
            }
            self = .message(side: side, phase: phase, body: body)
        case "error": self = .error(TextSafety.printable(value["error"]?.stringValue ?? "unknown error"))
        case "pong": self = .pong
        case "nameplates":
            // [{"id": "5"}, ...]: the numbers of the codes the relay holds; anything else in it is not ours to judge.
            let ids = value["nameplates"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            self = .nameplates(ids)
        default: self = .unknown(TextSafety.printable(type))
        }
    }

    /// Whether `text` is a nameplate as servers allocate them: 1 to 10 decimal digits.
    package static func isNameplate(_ text: String) -> Bool {
        (1...10).contains(text.utf8.count) && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}

/// Messages this client sends to the server, each with a fresh random `id` (as magic-wormhole does).
enum ClientMessage: Equatable {
    case bind(appID: String, side: String, clientVersion: String)
    case allocate
    /// Asks for the nameplates the app's transfers hold (`nameplates`).
    case list
    case claim(nameplate: String)
    case open(mailbox: String)
    case add(phase: String, body: [UInt8])
    case release(nameplate: String)
    case close(mailbox: String, mood: String)

    /// The JSON text to send; `id` is 2 random bytes as hex, as magic-wormhole's client sends.
    func text(id: String) -> String {
        var members: [(key: String, value: JSONValue)] = []
        switch self {
        case .bind(let appID, let side, let clientVersion):
            members = [("type", "bind"), ("appid", .string(appID)), ("side", .string(side)),
                       ("client_version", ["sealkit", .string(clientVersion)])]
        case .allocate: members = [("type", "allocate")]
        case .list: members = [("type", "list")]
        case .claim(let nameplate): members = [("type", "claim"), ("nameplate", .string(nameplate))]
        case .open(let mailbox): members = [("type", "open"), ("mailbox", .string(mailbox))]
        case .add(let phase, let body): members = [("type", "add"), ("phase", .string(phase)), ("body", .string(Hex.encode(body)))]
        case .release(let nameplate): members = [("type", "release"), ("nameplate", .string(nameplate))]
        case .close(let mailbox, let mood): members = [("type", "close"), ("mailbox", .string(mailbox)), ("mood", .string(mood))]
        }
        members.append((key: "id", value: .string(id)))
        return JSONValue.object(members).serialized()
    }
}
