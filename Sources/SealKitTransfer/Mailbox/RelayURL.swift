/// Where a mailbox server listens: a `ws://host[:port][/path]` address.
///
/// Only plain `ws://` is spoken: every message between the two clients is end-to-end
/// encrypted with the PAKE's key, so TLS would hide only metadata the server sees anyway.
package struct RelayURL: Sendable, Equatable, CustomStringConvertible {
    /// The public magic-wormhole mailbox server, used when nothing else is configured.
    package static let publicRelay = RelayURL(host: "relay.magic-wormhole.io", port: 4000, path: "/v1")

    /// The host name or address.
    package let host: String
    /// The TCP port (80 when the address names none).
    package let port: Int
    /// The request path, starting with `/`.
    package let path: String

    init(host: String, port: Int, path: String) {
        self.host = host
        self.port = port
        self.path = path
    }

    /// Reads a relay address.
    /// - Parameter text: such as `ws://relay.magic-wormhole.io:4000/v1` or `ws://127.0.0.1:4000/v1`.
    /// - Throws: `MailboxError.badRelay` when it is not a `ws://` address with a host, or holds
    ///   anything but printable ASCII (a control byte such as ESC would reach the terminal in every
    ///   message that names the relay).
    package init(_ text: String) throws(MailboxError) {
        guard text.utf8.count <= 2048, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .badRelay("a relay address is a ws:// URL of printable ASCII without spaces, such as ws://relay.example:4000/v1")
        }
        let scheme = "ws://"
        guard text.lowercased().hasPrefix(scheme) else {
            if text.lowercased().hasPrefix("wss://") {
                throw .badRelay("wss:// relays are not supported: use ws://, every message is end-to-end encrypted")
            }
            throw .badRelay("a relay address starts with ws://, such as ws://relay.example:4000/v1")
        }
        var rest = Substring(text.dropFirst(scheme.count))
        var path = "/"
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[slash...])
            rest = rest[..<slash]
        }
        var host = rest
        var port = 80
        if rest.hasPrefix("[") {
            // An IPv6 literal: [::1]:4000
            guard let close = rest.firstIndex(of: "]") else { throw .badRelay("the relay's IPv6 address lacks its ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()) else {
                    throw .badRelay("the relay's port must be a number from 1 to 65535")
                }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let value = Int(rest[rest.index(after: colon)...]) else {
                throw .badRelay("the relay's port must be a number from 1 to 65535")
            }
            port = value
        }
        guard !host.isEmpty else { throw .badRelay("the relay address names no host") }
        guard (1...65535).contains(port) else { throw .badRelay("the relay's port must be a number from 1 to 65535") }
        self.init(host: String(host), port: port, path: path)
    }

    /// Reads a relay address as people (and magic-wormhole's uri-scheme, whose `rendezvous` has no
    /// endpoint path) write it: an address without a path, such as `ws://relay.example:4000`, is the
    /// mailbox endpoint `/v1` on it; any other path is kept as given.
    /// - Parameter text: such as `ws://127.0.0.1:4000` or `ws://127.0.0.1:4000/v1`.
    /// - Throws: `MailboxError.badRelay`, as `init(_:)`.
    package init(endpoint text: String) throws(MailboxError) {
        let address = try RelayURL(text)
        self = address.path == "/" ? RelayURL(host: address.host, port: address.port, path: "/v1") : address
    }

    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "ws://\(shownHost)\(port == 80 ? "" : ":\(port)")\(path)"
    }

    /// The `Host` header's value.
    var hostHeader: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? shownHost : "\(shownHost):\(port)"
    }
}
