import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitTransfer
@_spi(CLI) import SealKitQR

#if canImport(Glibc)
import Glibc
#endif

/// How transfer codes are shown.
enum TransferFormat: String, ExpressibleByArgument, CaseIterable {
    /// Codes alone on stdout, one per line: for pipes and scripts.
    case text
    /// QR codes, the codes' text and instructions on stderr, for people at a terminal.
    case qr

    /// `qr` when both stdout and stderr are terminals, else `text`.
    static func resolve(_ chosen: TransferFormat?) -> TransferFormat {
        chosen ?? (StandardOutput.isTerminal && StandardError.isTerminal ? .qr : .text)
    }
}

/// Shows a code as a QR code on the terminal.
enum TransferDisplay {
    /// Draws `text` as a QR code on stderr when stderr is a terminal; otherwise shows nothing.
    static func showQR(_ text: String) {
        guard StandardError.isTerminal else { return }
        do {
            // ansi: explicit black on white, so it scans whatever the terminal's theme.
            let code = try QRCode(text)
            // NO_COLOR and TERM=dumb: plain half blocks in the terminal's own colours instead, light on
            // dark on a dark theme unless SEALKIT_QR_INVERT turns them round; said under the code.
            let format: QRFormat = Terminal.allowsColor ? .ansi : .utf8
            StandardError.write(String(decoding: try code.rendered(as: format, inverted: Terminal.invertsQR), as: UTF8.self))
            if format == .utf8 {
                StandardError.write(
                    Terminal.invertsQR
                        ? "(drawn inverted for a dark terminal, as SEALKIT_QR_INVERT asks)\n"
                        : "(drawn in the terminal's colours: on a dark theme set SEALKIT_QR_INVERT=1 so phones read it)\n")
            }
            if let needed = code.terminalWidth(for: format), let columns = Terminal.columns(fd: 2), needed > columns {
                StandardError.write(
                    "this QR code is \(needed) columns wide but the terminal has \(columns): widen the window, or copy the text below\n")
            }
        } catch {
            StandardError.write("(no QR code: \(said(error)); use the text below)\n")
        }
    }

    /// Shows payload lines: on stdout for `text`, else as QR codes with their text on stderr.
    static func show(_ lines: [String], format: TransferFormat) throws {
        switch format {
        case .text:
            let output = StandardOutput()
            for line in lines { try output.write(line + "\n") }
            try output.flush()
        case .qr:
            for (index, line) in lines.enumerated() {
                if lines.count > 1 { StandardError.write("\nPart \(index + 1) of \(lines.count):\n") }
                showQR(line)
                StandardError.write(line + "\n")
            }
        }
    }

    /// One line per id: what was received, sent or backed up, for people to compare.
    static func describe(_ keys: [KeyOffer], _ verb: String) {
        for key in keys {
            let retired = key.keyCount - 1
            StandardError.write("\(verb) \(key.id.shown) key \(key.fingerprint)\(retired > 0 ? " (+\(retired) retired)" : "")\n")
        }
    }

    /// `describe` for keys read or received: what people compare.
    static func describe(_ keys: [KeyHistory], _ verb: String) { describe(keys.map(KeyOffer.init), verb) }
}

struct TransferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "Move keys to another keystore: with a short code through a mailbox relay, offline, or as Rownd's QR text.",
        discussion: """
            Network (default): run 'sealkit transfer receive' on the receiving device; it shows a code such as \
            7-guitarist-revenge. Run 'sealkit transfer send ID' on the sending device and type the code \
            (or pass --code). The keys travel end-to-end encrypted through a magic-wormhole mailbox relay \
            (--relay URL, else SEALKIT_RELAY, else ws://relay.magic-wormhole.io:4000/v1). \
            Offline: run 'sealkit transfer receive --offline' on the receiving side; it shows an offer and a code. \
            Run 'sealkit transfer send ID --to OFFER --code CODE' on the sending side and give its reply to the receiver. \
            Only the code authenticates (SPAKE2): tell it yourself, apart from the offer. \
            See docs/transfer.md.
            """,
        subcommands: [Send.self, Receive.self])

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Send keys to the receiver whose code you type (network), to an offer (--to), or as Rownd's QR text (--rownd).",
            discussion: """
                Without --to or --rownd, joins the receiver's code through the mailbox relay and exits 0 once the \
                receiver confirmed that it stored every key. With --to, prints the reply: one line, or numbered parts when long. It holds each id's current and \
                retired keys, sealed so only that receiver can open it, and expires (default 600 seconds). \
                With --rownd --link URL, prints URL#<base64 key>, which a Rownd app scans (or opens as a link) to sign \
                the user in and store the key: it holds the raw key.
                """)

        @Argument(help: "Key ids to send.", completion: .keyIDs) var ids: [String] = []
        @Flag(help: "Send every key id in the namespace.") var all = false
        @Option(help: ArgumentHelp(
            "The code the receiver shows, such as 7-guitarist-revenge (asked on a terminal when not given).",
            discussion: "A command line shows in the process list (ps) to every user of the machine while the transfer runs: prefer --code-file or the prompt.",
            valueName: "code"))
        var code: String?
        @Option(help: ArgumentHelp(
            "Read the code from this file's first line ('-' is stdin), out of the process list.", valueName: "path"),
            completion: .file())
        var codeFile: String?
        @Option(help: ArgumentHelp("The mailbox relay (default: SEALKIT_RELAY, else ws://relay.magic-wormhole.io:4000/v1).", valueName: "url"))
        var relay: String?
        @Option(help: ArgumentHelp("Seconds to wait for the receiver (default 600).", valueName: "seconds"))
        var timeout: Int?
        @Option(help: ArgumentHelp("Offline: the receiver's offer (sealkit-offer-v2:...), or - to read it from stdin.", valueName: "offer")) var to: String?
        @Option(help: ArgumentHelp("Offline: read the receiver's offer from the QR code in this image.", valueName: "image"), completion: .file())
        var toQr: String?
        @Option(help: ArgumentHelp("Read the receiver's code from the QR code in this image.", valueName: "image"), completion: .file())
        var codeQr: String?
        @Flag(help: "Use the relay that a scanned code's sealkit-transfer: URI names without asking.") var yes = false
        @Flag(help: "Show Rownd's key text <link>#<key> instead: holds the raw key.") var rownd = false
        @Option(help: ArgumentHelp(
            "With --rownd: the user's sign-in link, which the app's backend gets from Rownd's API; the key follows it after '#'.",
            valueName: "url"))
        var link: String?
        @Option(help: ArgumentHelp("Seconds until the reply expires (1 to 86400, default 600).", valueName: "seconds"))
        var expiresIn: Int?
        @Option(help: "text: codes alone on stdout; qr: QR codes and text on stderr (default on a terminal).")
        var format: TransferFormat?
        @OptionGroup var keystoreOptions: KeystoreOptions

        func validate() throws {
            guard !(rownd && to != nil) else {
                throw ValidationError("give --to OFFER for an offline transfer, or --rownd for Rownd's QR text, not both")
            }
            if (rownd || to != nil) && (relay != nil || timeout != nil) {
                throw ValidationError("--relay and --timeout are for network transfers")
            }
            if to == nil && !rownd && expiresIn != nil { throw ValidationError("--expires-in is for offline transfers (--to)") }
            if let timeout, !(1...86_400).contains(timeout) { throw ValidationError("--timeout must be 1 to 86400 seconds") }
            if all && !ids.isEmpty { throw ValidationError("give key ids or --all, not both") }
            if !all && ids.isEmpty { throw ValidationError("name a key id to send, or use --all") }
            if rownd {
                guard ids.count == 1, !all else { throw ValidationError("Rownd's QR text holds one key: name exactly one id") }
                guard expiresIn == nil else { throw ValidationError("--expires-in is for sealed transfers; Rownd's QR text never expires") }
                guard let link else {
                    throw ValidationError(
                        "a Rownd app needs the sign-in link that the app's backend gets from Rownd for this user: give --link URL")
                }
                try Self.validateRowndLink(link)
            }
            if link != nil && !rownd { throw ValidationError("--link is only for --rownd") }
            if rownd && (code != nil || codeFile != nil) { throw ValidationError("--code is for transfers with a code, not --rownd") }
            if [code != nil, codeFile != nil, codeQr != nil].filter({ $0 }).count > 1 {
                throw ValidationError("give one of --code, --code-file and --code-qr")
            }
            if to != nil && toQr != nil { throw ValidationError("give --to or --to-qr, not both") }
            if rownd && (toQr != nil || codeQr != nil) { throw ValidationError("--to-qr and --code-qr are for transfers with a code, not --rownd") }
            if codeFile == "-" && to == "-" { throw ValidationError("--code-file - and --to - both read stdin: give one of them as a file") }
            if let expiresIn, !(1...86_400).contains(expiresIn) {
                throw ValidationError("--expires-in must be 1 to 86400 seconds")
            }
        }

        func run() async throws {
            let format = TransferFormat.resolve(format)
            let keystore = try keystoreOptions.openKeystore()
            if rownd { return try sendRownd(format: format, keystore: keystore) }
            let code = try codeFile.map(Self.readCode) ?? codeQr.map { try ImageInput.single(.transferCode, in: $0) } ?? self.code
            let to = try toQr.map { try ImageInput.single(.offer, in: $0) } ?? self.to
            if to == nil {
                var relay = try TransferNetwork.relay(relay)
                var code = code
                if let text = code, let uri = try Self.uri(text) {
                    if let named = uri.mailboxRelay, named != relay {
                        // The keys would travel through the relay the URI names: only with consent.
                        guard yes || Self.confirm("The code names the relay \(named), not \(relay). Send through it? [y/N] ") else {
                            throw CLIFailure(
                                "the code's URI names the relay \(named), not \(relay): give --yes (or --relay \(named)) to use it",
                                status: .usage)
                        }
                        relay = named
                    }
                    code = uri.code.text
                }
                let keys = try keystoreOptions.exportKeys(keystoreOptions.idsToExport(ids, all: all, in: keystore), from: keystore)
                return try await TransferNetwork.send(keys, code: code, relay: relay, timeout: timeout ?? TransferNetwork.defaultTimeout)
            }
            try TransferOffline.send(
                ids: ids, all: all, to: to ?? "", code: code, expiresIn: expiresIn, format: format,
                keystoreOptions: keystoreOptions)
        }

        /// The URI in `text`, when it is one (`sealkit-transfer:`; `wormhole-transfer:` is refused).
        private static func uri(_ text: String) throws -> TransferLink? {
            let lowered = text.lowercased()
            guard lowered.hasPrefix("sealkit-transfer:") || lowered.hasPrefix("wormhole-transfer:") else { return nil }
            do {
                return try TransferLink(parsing: text)
            } catch {
                // A misspelt code in a link gets the suggestion a typed one gets, when the code is what is wrong:
                // the same link with the documentation's code in its place reads. A percent-encoded code (sealkit
                // writes none: a code's words and hyphens need no encoding) gets the link's own reason.
                let prefix = "sealkit-transfer:"
                let code = text.dropFirst(prefix.count).prefix { $0 != "?" }
                if lowered.hasPrefix(prefix), !code.contains("%"),
                    (try? TransferLink(parsing: prefix + "7-guitarist-revenge" + text.drop { $0 != "?" })) != nil
                {
                    _ = try CodeEntry.parse(given: String(code))
                }
                throw CLIFailure("\(said(error))", status: .usage)
            }
        }

        /// Asks a yes/no question on the terminal; no terminal is no.
        private static func confirm(_ question: String) -> Bool {
            guard let answer = LineEditor.read(question, vocabulary: { _ in [] }) else { return false }
            return TerminalPrompt.isYes(answer)
        }

        /// The code in the first line of `path` (`-` is stdin), bounded like any pasted code.
        private static func readCode(from path: String) throws -> String {
            let fd = try StandardInput.fileDescriptor(path, what: "code file")
            defer { if fd != 0 { close(fd) } }
            let reader = LineReader(fd: fd, what: "the code file", maximumLineLength: InputLimits.codeLine)
            var line = ""
            _ = try reader.nextLine { line = String(decoding: $0, as: UTF8.self) }
            let code = line.trimmingBlanks()
            guard !code.isEmpty else { throw CLIFailure("the code file \(path) is empty: put the receiver's code on its first line", status: .usage) }
            return code
        }

        /// Rownd's iOS scanner reads the whole text with `URL(string:)` and takes the key from the
        /// fragment, so the link must be an absolute URL without one of its own. Never quotes the
        /// link: a sign-in link signs its holder in.
        private static func validateRowndLink(_ link: String) throws {
            // Only RFC 3986's characters: Foundation's URL(string:) would quietly escape a space, which
            // older parsers (and so the app) refuse.
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%".utf8)
            guard link.utf8.allSatisfy(allowed.contains), let url = URL(string: link), let scheme = url.scheme,
                !scheme.isEmpty, url.host?.isEmpty == false
            else {
                throw ValidationError("--link must be an absolute URL such as https://<app>.rownd.link/<code>")
            }
            guard !link.contains("#") else {
                throw ValidationError("--link must not have a '#' fragment: the key goes there")
            }
        }

        private func sendRownd(format: TransferFormat, keystore: Keystore) throws {
            let id = try keyID(ids[0])
            let text = try RowndKeyText(
                for: id, in: keystore, passphrase: keystoreOptions.passphrase(toUnlock: id, in: keystore), link: link ?? "")
            StandardError.write(
                "sealkit: warning: this code holds the raw key of \(id.shown) (\(text.fingerprint)): anyone who sees it can read that user's data; show it only to the device that should have it\n")
            if text.retiredKeyCount > 0 {
                let count = text.retiredKeyCount == 1 ? "1 retired key" : "\(text.retiredKeyCount) retired keys"
                StandardError.write(
                    "sealkit: warning: \(id.shown) has \(count); only the current key travels, because a Rownd app holds one key per user: "
                        + "run 'sealkit profile rotate' so no data stays under a retired key\n")
            }
            switch format {
            case .text:
                // Straight from guarded memory to the descriptor: no copy in an ordinary buffer.
                try text.withUnsafeBytes { try writeAll($0, to: 1) }
                try Array("\n".utf8).withUnsafeBytes { try writeAll($0, to: 1) }
            case .qr:
                let shown = text.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                TransferDisplay.showQR(shown)
                StandardError.write(shown + "\n")
            }
        }
    }

    struct Receive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "receive",
            abstract: "Show a code, wait for the sender through the mailbox relay, and store its keys (--offline: an offer and a reply).",
            discussion: """
                With --format text, stdout's first line is the code; after the transfer, one line per stored id: \
                id, fingerprint, imported|unchanged. On a terminal it asks before storing (--yes skips the question). \
                With --offline and --format text, the offer is the first line of stdout; the reply is read from stdin (one line, or \
                one line per part, in any order); then one line per stored id: id, fingerprint, imported|unchanged. \
                A different key already stored under an id refuses the whole reply; nothing is stored.
                """)

        @Flag(help: "Protect new keys with a passphrase (asked on the terminal unless given).") var protect = false
        @OptionGroup var tpmOptions: TPMOptions
        @Option(help: "text: the code on stdout's first line (--offline: the offer, then the code); qr: QR code, text and instructions on stderr (default on a terminal).")
        var format: TransferFormat?
        @Option(help: ArgumentHelp("The mailbox relay (default: SEALKIT_RELAY, else ws://relay.magic-wormhole.io:4000/v1).", valueName: "url"))
        var relay: String?
        @Option(help: ArgumentHelp("Seconds to wait for the sender (1 to 86400, default 600).", valueName: "seconds"))
        var timeout: Int?
        @Flag(help: "Store the keys without asking on the terminal.") var yes = false
        @Flag(help: "Offline: show an offer and read the sender's reply from stdin instead of using a relay.") var offline = false
        @Option(parsing: .upToNextOption, help: ArgumentHelp(
            "With --offline: read the reply (or its parts, in any order) from QR codes in these images instead of stdin; they are opened after the offer is shown.",
            valueName: "image"), completion: .file())
        var qr: [String] = []
        @OptionGroup var keystoreOptions: KeystoreOptions

        func validate() throws {
            if offline && (relay != nil || timeout != nil) { throw ValidationError("--relay and --timeout are for network transfers") }
            if !qr.isEmpty && !offline { throw ValidationError("--qr reads an offline reply: it goes with --offline") }
            if let timeout, !(1...86_400).contains(timeout) { throw ValidationError("--timeout must be 1 to 86400 seconds") }
            try tpmOptions.validate(protect: protect)
        }

        func run() async throws {
            let format = TransferFormat.resolve(format)
            tpmOptions.apply()
            // The PIN, like --protect's passphrase, comes from the passphrase sources.
            let protect = tpmOptions.needsSecret(protect: protect)
            // --protect with no passphrase given and no terminal to ask on fails now (one line, exit 64),
            // not after a code was shown and the sender's keys arrived. A given passphrase is not read
            // here: a pipe (--passphrase-file <(...)) gives it only once.
            let given = keystoreOptions.passphraseFile != nil || ProcessInfo.processInfo.environment["SEALKIT_PASSPHRASE"] != nil
            if protect && !given && !Self.hasTerminal { _ = try keystoreOptions.passphrase(toProtect: true) }
            guard offline else {
                return try await TransferNetwork.receive(
                    relay: TransferNetwork.relay(relay), timeout: timeout ?? TransferNetwork.defaultTimeout, format: format,
                    assumeYes: yes, protect: protect, keystoreOptions: keystoreOptions)
            }
            try TransferOffline.receive(format: format, protect: protect, assumeYes: yes, replyImages: qr, keystoreOptions: keystoreOptions)
        }

        /// Whether a passphrase could be asked for: TerminalPrompt asks on /dev/tty.
        private static var hasTerminal: Bool {
            let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
            if fd >= 0 { close(fd) }
            return fd >= 0
        }
    }
}

/// Writes every byte to a descriptor, retrying after interruptions.
func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) throws {
    var offset = 0
    while offset < bytes.count {
        let count = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if count < 0 && errno == EINTR { continue }
        if count < 0 && errno == EPIPE {
            // The reader is gone (`| head -1`, a script that read enough): end quietly by the
            // signal ignored at start-up, as StandardOutput.flush does and as cat does.
            signal(SIGPIPE, SIG_DFL)
            raise(SIGPIPE)
        }
        guard count > 0 else {
            throw CLIFailure("cannot write the output: \(String(cString: strerror(errno)))", status: .ioError)
        }
        offset += count
    }
}
