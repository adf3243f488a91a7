import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// TCP ports on 127.0.0.1, for the servers the tests start (the mailbox server, swtpm, hostile relays).
public enum Loopback {
    /// Why no port could be had.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// A port nothing listens on now (the kernel's choice for a socket bound to port 0).
    public static func freePort() throws -> Int {
        var port = 0
        let bound = withSocket(port: 0) { fd, address, length in
            var length = length
            guard bind(fd, address, length) == 0, getsockname(fd, address, &length) == 0 else { return false }
            port = Int(UInt16(bigEndian: address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }))
            return true
        }
        guard bound else { throw Failure("cannot find a free port") }
        return port
    }

    /// Whether `port` can be bound now.
    public static func isFree(_ port: Int) -> Bool {
        withSocket(port: port) { fd, address, length in bind(fd, address, length) == 0 }
    }

    /// Whether something accepts connections on `port`.
    public static func accepts(_ port: Int) -> Bool {
        withSocket(port: port) { fd, address, length in connect(fd, address, length) == 0 }
    }

    /// Calls `body` with a new TCP socket and the address 127.0.0.1:`port`, and closes the socket.
    private static func withSocket(
        port: Int, _ body: (Int32, UnsafeMutablePointer<sockaddr>, socklen_t) -> Bool
    ) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}

extension ChildProcess {
    /// Stops a server the tests started: SIGTERM, SIGKILL if it lingers 5 s, then waits for it.
    public func stopServer() {
        guard isRunning else { return }
        send(signal: SIGTERM)
        if !waitForExit(timeout: 5) { kill() }
        _ = waitForExit(timeout: 60)
    }
}
