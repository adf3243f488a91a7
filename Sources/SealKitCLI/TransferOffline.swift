import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitTransfer

#if canImport(Glibc)
import Glibc
#endif

/// The offline transfer (`transfer receive --offline`, `transfer send --to OFFER --code CODE`):
/// texts carried by hand, authenticated by the receiver's one-time code through SPAKE2.
/// Argument handling and printing only; the protocol is SealKitTransfer's `OfflineKeyReceiver`
/// and `OfflineOffer`.
enum TransferOffline {
    /// The longest line read from stdin: a whole reply or part is at most
    /// `ReplyAssembler.maximumLineLength` characters; the rest is room for stray blanks.
    static let maximumLineLength = 4 * ReplyAssembler.maximumLineLength
    /// The longest offer `--to -` reads.
    static let maximumOfferInput = 4096

    /// `transfer send ID... --to OFFER [--code CODE]`: prints the reply.
    static func send(
        ids: [String], all: Bool, to: String, code: String?, expiresIn: Int?, format: TransferFormat,
        keystoreOptions: KeystoreOptions
    ) throws {
        // Read the offer and the code before unlocking anything, so a bad paste fails fast.
        let offer = try OfflineOffer(to == "-" ? readOffer() : to)
        let code = try senderCode(code)
        let keystore = try keystoreOptions.openKeystore()
        let keys = try keystoreOptions.exportKeys(keystoreOptions.idsToExport(ids, all: all, in: keystore), from: keystore)
        let lines = try offer.reply(sending: keys, code: code, expiresIn: expiresIn.map { .seconds($0) } ?? KeyTransfer.defaultReplyLifetime)
        TransferDisplay.describe(keys, "Sending")
        if format == .qr {
            StandardError.write(
                "Give the receiver this reply: scan it, or paste its line\(lines.count > 1 ? "s" : ""). "
                    + "It opens only with the code the receiver showed; a wrong code ends the transfer there.\n")
        }
        try TransferDisplay.show(lines, format: format)
    }

    /// `transfer receive --offline`: shows the offer and the code, reads the reply, stores its keys.
    /// - Parameter assumeYes: store without asking, even at a terminal (`--yes`).
    /// - Parameter replyImages: images holding the reply's QR codes, opened after the offer is shown (`--qr`).
    static func receive(
        format: TransferFormat, protect: Bool, assumeYes: Bool = false, replyImages: [String] = [], keystoreOptions: KeystoreOptions
    ) throws {
        let keystore = try keystoreOptions.openKeystore()
        let receiver = OfflineKeyReceiver()
        let offer = receiver.offer
        let code = receiver.code.text
        switch format {
        case .text:
            let output = StandardOutput()
            try output.write(offer + "\n" + code + "\n")
            try output.flush()
        case .qr:
            StandardError.write(
                "On the sending side, photograph this offer, then run: sealkit transfer send ID --to-qr PHOTO --code <code> "
                    + "(or --to <offer> with its text)\n")
            TransferDisplay.showQR(offer)
            StandardError.write(offer + "\n")
            StandardError.write(
                "Code: \(code)\nTell the sender this code yourself (read it out; do not send it with the offer).\n")
        }
        let interactive = isatty(0) == 1
        let reader = LineReader(fd: 0, what: "the reply on stdin", maximumLineLength: maximumLineLength)
        // Ctrl-C at any of its prompts (the paste, the photo, the question, a passphrase) stores nothing
        // and says so; the store itself comes after.
        let (reply, passphrase) = try PromptInterrupt.guarding(.nothingStored) { () throws -> ([KeyHistory], Passphrase?) in
            let reply: [KeyHistory]
            if !replyImages.isEmpty {
                reply = try readReplyImages(receiver, replyImages, reading: reader)
            } else {
                reply = try interactive ? readReplyInteractively(receiver, from: reader) : readReply(receiver, from: reader)
            }
            TransferDisplay.describe(reply, "Received")
            StandardError.write("Check that the sender shows the same fingerprints.\n")
            // On a terminal, whatever the format, it asks before storing, as the network receive does.
            if interactive && StandardError.isTerminal && !assumeYes {
                guard try TerminalPrompt.confirm("Store these keys? [y/N] ", reading: reader) else {
                    throw CLIFailure("nothing was stored", status: .negative)
                }
            }
            return (reply, try keystoreOptions.passphrase(forStoring: reply.map(\.id), protect: protect, in: keystore))
        }
        let imported = try keystore.importKeys(reply, passphrase: passphrase)
        let output = StandardOutput()
        for (key, new) in zip(reply, imported) {
            try output.write("\(key.id)\t\(key.fingerprint)\t\(new ? "imported" : "unchanged")\n")
        }
        try output.flush()
    }

    /// The reply from its photos. At a terminal, a photo that cannot be read, or holds no reply, parts
    /// of two, or a damaged one, is said and another asked for, as a damaged paste is asked again; the
    /// one-time exchange is spent only on a reply whose text is whole. Elsewhere the first problem ends the run.
    private static func readReplyImages(_ receiver: OfflineKeyReceiver, _ images: [String], reading reader: LineReader) throws -> [KeyHistory] {
        let atTerminal = isatty(0) == 1 && StandardError.isTerminal && !images.contains("-")
        var paths = images
        while true {
            let whole: String
            do {
                try awaitReplyImages(paths, reading: reader)
                whole = try assembleReply(from: try ImageInput.codes(of: .reply, in: paths))
                if atTerminal { try receiver.check(whole) }
            } catch {
                // Said as a damaged paste is. A machine without a library that reads images gets no better
                // with another photo.
                guard atTerminal, (error as? SealKitError)?.reason != .libraryUnavailable else { throw error }
                var problem = (error as? CLIFailure)?.message ?? said(error)
                let place = paths.map { SealKitError.quoting($0) }.joined(separator: " and ")
                // Which photo it was, when the problem is with the text it holds.
                if !paths.contains(where: { problem.contains($0) }) { problem = "\(place): \(problem)" }
                StandardError.write(
                    "\(problem.replacing("\n", with: " "))\n"
                        + "Save another photo of the reply as \(place), or type the path of one, then press Enter: ")
                var typed = ""
                guard try reader.nextLine({ typed = String(decoding: $0, as: UTF8.self).trimmingBlanks() }) else { throw error }
                // A file dropped on the terminal comes quoted.
                if typed.count > 1, let quote = typed.first, quote == "'" || quote == "\"", typed.last == quote {
                    typed = String(typed.dropFirst().dropLast())
                }
                if !typed.isEmpty { paths = [typed] }
                continue
            }
            // The text is whole: from here a failure (wrong code, expired) is final.
            return try receiver.accept(whole)
        }
    }

    /// The reply's photos cannot exist before the offer was shown: waits for each that does not yet.
    /// At a terminal, asks the person to save it and press Enter; otherwise waits for the file to
    /// appear (a phone or a camera syncing it), up to a reply's default lifetime, saying so on
    /// stderr, and until its size holds still (a file still being written).
    private static func awaitReplyImages(_ paths: [String], reading reader: LineReader) throws {
        func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
        for path in paths where path != "-" && !exists(path) {
            let shown = SealKitError.quoting(path)
            if isatty(0) == 1 && StandardError.isTerminal {
                while !exists(path) {
                    StandardError.write("Save the photo of the reply as \(shown), then press Enter: ")
                    guard try reader.nextLine({ _ in }) else { throw ReplyAssembler().incompleteError }
                }
                continue
            }
            let limit = KeyTransfer.defaultReplyLifetime
            let minutes = limit.components.seconds / 60
            StandardError.write("sealkit: waiting for the reply's photo at \(shown) (up to \(minutes) minutes; Ctrl-C cancels)\n")
            let deadline = ContinuousClock.now + limit
            while !exists(path) {
                guard ContinuousClock.now < deadline else {
                    throw CLIFailure("no photo of the reply appeared at \(shown) within \(minutes) minutes: nothing was stored", status: .noInput)
                }
                usleep(200_000)
            }
            var size: off_t = -1
            for _ in 0..<50 {
                var status = stat()
                guard stat(path, &status) == 0 else { break }
                if status.st_size > 0 && status.st_size == size { break }
                size = status.st_size
                usleep(200_000)
            }
        }
    }

    /// The offer from stdin (`--to -`): its line, or its pieces if something wrapped it.
    private static func readOffer() throws -> String {
        var bytes = try StandardInput.readAll(limit: maximumOfferInput, what: "offer")
        defer { wipe(&bytes) }
        // An offer has no blanks, so every one is from wrapping or copying.
        let joined = bytes.filter { ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n")].contains($0) }
        guard let text = String(validating: joined, as: UTF8.self) else {
            throw CLIFailure("the offer on stdin is not UTF-8 text", status: .dataError)
        }
        guard !text.isEmpty else { throw CLIFailure("no transfer offer on stdin: give it as one line, or one line per part", status: .noInput) }
        return text
    }

    /// The code from `--code`, else asked on the terminal.
    private static func senderCode(_ given: String?) throws -> TransferCode {
        if let given { return try CodeEntry.parse(given: given) }
        guard let code = try CodeEntry.ask("Code the receiver shows (such as 7-guitarist-revenge): ") else {
            throw ValidationError("give --code CODE: the code the receiver shows (no terminal to ask on)")
        }
        return code
    }

    /// Non-interactive: one line, or one line per part in any order; anything wrong ends the run.
    private static func readReply(_ receiver: OfflineKeyReceiver, from reader: LineReader) throws -> [KeyHistory] {
        var assembler = ReplyAssembler()
        var whole: String?
        while whole == nil, try reader.nextLine({ line in
            whole = try assembler.add(String(decoding: line, as: UTF8.self))
        }) {}
        guard let whole else { throw assembler.incompleteError }
        return try receiver.accept(whole)
    }

    /// A reply from lines already read (from QR codes): parts in any order, blank lines skipped.
    private static func assembleReply(from lines: [String]) throws -> String {
        var assembler = ReplyAssembler()
        for line in lines {
            if let whole = try assembler.add(line) { return whole }
        }
        throw assembler.incompleteError
    }

    /// On a terminal: survives a damaged paste. Says what is wrong and asks again, joins a
    /// reply wrapped over several lines, and spends the one-time exchange only on a reply
    /// whose text is whole (`TransferReceiver.check`).
    private static func readReplyInteractively(_ receiver: OfflineKeyReceiver, from reader: LineReader) throws -> [KeyHistory] {
        StandardError.write("Paste the reply (one line per part), then press Enter:\n")
        var assembler = ReplyAssembler()
        var pending = ""
        func retry(_ problem: any Error) { retry(said(problem)) }
        func retry(_ problem: String) {
            StandardError.write("\(problem)\nPaste it again:\n")
        }
        while true {
            var line = ""
            guard try reader.nextLine({ line = String(decoding: $0, as: UTF8.self) }) else {
                // End of input: what was pasted so far is all there is.
                if !pending.isEmpty { return try receiver.accept(pending) }
                throw assembler.incompleteError
            }
            let text = line.trimmingBlanks()
            var candidate: String?
            if text.isEmpty {
                // Enter on its own: what is pending is all the person pasted.
                if !pending.isEmpty {
                    do {
                        try receiver.check(pending)
                        candidate = pending
                    } catch {
                        retry(error)
                        pending = ""
                    }
                }
            } else if text.hasPrefix(ReplyAssembler.partPrefix) {
                pending = ""
                do {
                    // Parts that do not belong together make the assembler start over.
                    candidate = try assembler.add(text)
                    if candidate == nil {
                        StandardError.write("Got it; still missing part\(assembler.missingParts.count == 1 ? "" : "s") "
                            + assembler.missingParts.map(String.init).joined(separator: ", ") + ".\n")
                    }
                } catch {
                    retry(error)
                }
            } else if text.hasPrefix("sealkit-") || pending.isEmpty {
                pending = text
            } else if pending.utf8.count + text.utf8.count <= ReplyAssembler.maximumLineLength + maximumLineLength {
                // A wrapped line: the rest of the reply.
                pending += text
            } else {
                retry("the transfer reply is damaged (longer than any reply): copy it again in full")
                pending = ""
            }
            if candidate == nil, !pending.isEmpty {
                do {
                    try receiver.check(pending)
                    candidate = pending
                } catch {
                    // Damaged or cut short is perhaps wrapped: wait for the rest, or for Enter.
                    if !receiver.mayBeIncomplete(pending) {
                        retry(error)
                        pending = ""
                    }
                }
            }
            guard let candidate else { continue }
            pending = ""
            do {
                try receiver.check(candidate)
            } catch {
                retry(error)
                assembler = ReplyAssembler()
                continue
            }
            // The text is whole: from here a failure (wrong code, expired) is final.
            return try receiver.accept(candidate)
        }
    }
}
