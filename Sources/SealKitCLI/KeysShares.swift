import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(CLI) import SealKit
@_spi(CLI) import SealKitBackup
@_spi(CLI) import SealKitTransfer

#if canImport(Glibc)
import Glibc
#endif

/// `keys backup --shares` and `keys restore --shares`: the keys sealed under a fresh random secret
/// that SLIP-39 shares hold (docs/transfer.md, "Share backup").
enum ShareBackupCommands {
    /// `--group K/N`.
    struct Group: ExpressibleByArgument {
        let threshold: Int
        let count: Int

        init?(argument: String) {
            let parts = argument.split(separator: "/")
            guard parts.count == 2, let threshold = Int(parts[0]), let count = Int(parts[1]) else { return nil }
            self.threshold = threshold
            self.count = count
        }
    }

    /// The SLIP-39 passphrase: the one given (`--passphrase-file`, `SEALKIT_PASSPHRASE`), else asked
    /// on a terminal (Enter for none), else none, as SLIP-39 allows.
    static func sharesPassphrase(_ options: KeystoreOptions, confirm: Bool) throws -> Passphrase? {
        if let given = try options.givenPassphrase() { return given }
        guard StandardInput.isTerminal, StandardError.isTerminal else { return nil }
        // An empty answer is no passphrase, which SLIP-39 allows.
        guard let first = (try? TerminalPrompt.passphrase("SLIP-39 passphrase for the shares (Enter for none): ")) ?? nil
        else { return nil }
        if confirm {
            let again = (try? TerminalPrompt.passphrase("The same passphrase again: ")) ?? nil
            guard let again, first == again else {
                throw CLIFailure("the two passphrases differ: no backup was made", status: .usage)
            }
        }
        return first
    }

    /// Makes the shares and the bundle and shows them.
    static func backup(
        _ histories: [KeyHistory], groups: [Group], groupThreshold: Int, format: TransferFormat, sharesDirectory: String?,
        check: Bool, options: KeystoreOptions
    ) throws {
        let passphrase = try sharesPassphrase(options, confirm: true)
        let made: ShareBackup.Made
        do {
            made = try ShareBackup.make(
                histories, groups: groups.map { ShareBackup.Group(threshold: $0.threshold, count: $0.count) },
                groupThreshold: groupThreshold, passphrase: passphrase)
        } catch {
            guard error.reason == .invalidShareLayout else { throw error }
            throw CLIFailure("\(said(error)): no backup was made", status: .usage)
        }
        let (bundle, shares) = (made.bundle, made.shares)
        TransferDisplay.describe(histories, "Backed up")
        let labels = labels(for: shares, groups: groups, groupThreshold: groupThreshold)
        if let sharesDirectory { try write(shares, labels: labels, bundle: bundle, into: sharesDirectory) }
        switch format {
        case .text:
            let output = StandardOutput()
            try output.write(bundle + "\n")
            if sharesDirectory == nil { for share in shares.joined() { try output.write(share + "\n") } }
            try output.flush()
            if sharesDirectory == nil { StandardError.write(labels.joined(separator: "\n") + "\n") }
        case .qr:
            StandardError.write(
                "The sealed bundle: keep it anywhere (cloud storage too); without enough shares it is useless.\n")
            TransferDisplay.showQR(bundle)
            StandardError.write(bundle + "\n")
            guard sharesDirectory == nil else { return }
            // The alternate screen, cleared with its scrollback (ESC[3J) between shares: no share
            // stays on screen or in scrollback once the next is shown, nor after Ctrl-C.
            let clear = PromptInterrupt.clearScreen
            try PromptInterrupt.guarding {
                try PromptInterrupt.onAlternateScreen {
                    for (share, label) in zip(shares.joined(), labels) {
                        StandardError.write("\nPress Enter to show \(label).")
                        _ = try TerminalPrompt.line()
                        while true {
                            StandardError.write(clear + "\(label.capitalizedFirst):\n\n    \(share)\n\nHand this share to its keeper, then press Enter.")
                            _ = try TerminalPrompt.line()
                            StandardError.write(clear)
                            if try !check || checkCopy(of: share, label: label) { break }
                            StandardError.write("That does not match the share. Press Enter to show \(label) again and correct the copy.")
                            _ = try TerminalPrompt.line()
                        }
                    }
                }
            }
            StandardError.write("Every share was shown. Restore with: sealkit keys restore --shares --all\n")
        }
    }

    /// The keeper types back two words of the share, chosen at random, as hardware wallets ask: a copy
    /// with a word skipped or misread is caught while the share can still be shown again.
    /// - Returns: whether both words match (a word's first four letters or more are that word).
    /// - Throws: `TerminalPrompt.terminalGone` when input ends, so the display never asks forever.
    static func checkCopy(of share: String, label: String) throws -> Bool {
        let words = share.split(separator: " ").map(String.init)
        // Which words to ask for is no secret: the system generator is enough.
        let first = Int.random(in: 0..<words.count)
        var second = Int.random(in: 0..<(words.count - 1))
        if second >= first { second += 1 }
        StandardError.write("Check the copy of \(label): type two of its words.\n")
        for position in [first, second].sorted() {
            guard let typed = LineEditor.read("word \(position + 1): ", vocabulary: { _ in ShareBackup.Words.all }) else {
                throw TerminalPrompt.terminalGone
            }
            guard ShareBackup.Words.completing(typed) == words[position] else { return false }
        }
        return true
    }

    /// "share 2 of 5 (any 3 restore)", with the group when there are several.
    static func labels(for shares: [[String]], groups: [Group], groupThreshold: Int) -> [String] {
        var labels: [String] = []
        for (groupIndex, group) in shares.enumerated() {
            for member in group.indices {
                var label = "share \(member + 1) of \(group.count) (any \(groups[groupIndex].threshold) restore"
                if shares.count > 1 {
                    label = "group \(groupIndex + 1) of \(shares.count) (any \(groupThreshold) groups), " + label
                }
                labels.append(label + ")")
            }
        }
        return labels
    }

    /// `--shares-dir`: one 0600 text file and one PNG QR per share, and the bundle.
    static func write(_ shares: [[String]], labels: [String], bundle: String, into path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw CLIFailure("cannot make the folder \(path): \(String(cString: strerror(errno)).lowercased())", status: .ioError)
        }
        var names: [String] = []
        for (index, share) in shares.joined().enumerated() {
            let base = "\(path)/share-\(index + 1)"
            try DurableFile.write(Array((labels[index] + "\n" + share + "\n").utf8), to: base + ".txt", exclusive: true)
            try DurableFile.write(try QRCode(share).rendered(as: .png), to: base + ".png", exclusive: true)
            names.append(base + ".txt")
        }
        try DurableFile.write(Array((bundle + "\n").utf8), to: "\(path)/bundle.txt", exclusive: true)
        StandardError.write("wrote \(names.count) shares (text and PNG QR, 0600) and bundle.txt to \(path)\n")
    }

    /// Reads the bundle and the shares from stdin, recovers the secret, opens the bundle.
    /// - Parameter lines: the lines scanned from QR codes (`--qr`), in place of stdin.
    static func open(options: KeystoreOptions, lines: [String]? = nil) throws -> PaperBackup.Contents {
        let interactive = lines == nil && StandardInput.isTerminal
        if interactive { StandardError.write("Paste the sealed bundle (sealkit-shares-v1:...), then the shares, one per line:\n") }
        var bundle: String?
        var shares: [ShareBackup.Share] = []
        var failure: CLIFailure?
        /// Shares given again, said once it is known whether the restore goes on: as notes, or in its one-line failure.
        var duplicates: [String] = []
        /// Takes one line; false once reading should stop.
        func take(_ raw: String, lineNumber: Int) -> Bool {
            let text = raw.trimmingBlanks()
            guard !text.isEmpty else { return true }
            let place = lines == nil ? "line \(lineNumber)" : "QR code \(lineNumber)"
            guard bundle != nil else {
                guard text.hasPrefix(ShareBackup.bundlePrefix) else {
                    failure = CLIFailure(
                        "\(place): the first line must be the sealed bundle (sealkit-shares-v1:...), then the shares",
                        status: .dataError)
                    return false
                }
                bundle = text
                return true
            }
            do {
                let share = try ShareBackup.Share(text)
                // A share given twice counts once: say so, rather than "accepted" with nothing gained.
                if shares.contains(where: { $0.isDuplicate(of: share) }) {
                    duplicates.append("\(place): share \"\(share.prefix) ...\" is a duplicate of one given before: not counted again")
                    return true
                }
                shares.append(share)
                if interactive { StandardError.write("\(place): share \"\(share.prefix) ...\" accepted\n") }
            } catch {
                failure = CLIFailure("\(place): \(said(error))", status: .dataError)
                return false
            }
            // On a terminal, stop as soon as the shares suffice.
            return !(interactive && (try? ShareBackup.check(shares)) != nil)
        }
        if let lines {
            // Scanned codes come in any order: the bundle first, then the shares.
            let ordered = lines.filter { $0.hasPrefix(ShareBackup.bundlePrefix) } + lines.filter { !$0.hasPrefix(ShareBackup.bundlePrefix) }
            for (index, line) in ordered.enumerated() where !take(line, lineNumber: index + 1) { break }
        } else if interactive {
            shares = try readInteractively(bundle: &bundle)
        } else {
            let reader = LineReader(fd: 0, what: "the bundle and shares on stdin", maximumLineLength: InputLimits.codeLine)
            var going = true
            while going, try reader.nextLine({ line in going = take(String(decoding: line, as: UTF8.self), lineNumber: reader.lineNumber) }) {}
        }
        if let failure { throw failure }
        guard let bundle else { throw CLIFailure("no share backup on stdin: give the sealed bundle line, then the shares", status: .noInput) }
        do {
            try ShareBackup.check(shares)
        } catch {
            throw CLIFailure("\(said(error))" + (duplicates.isEmpty ? "" : " (\(duplicates.joined(separator: "; ")))"), status: .dataError)
        }
        for duplicate in duplicates { StandardError.write("sealkit: note: \(duplicate)\n") }
        // Asked only once the shares suffice; a wrong one is told from another backup's shares.
        let passphrase = try sharesPassphrase(options, confirm: false)
        return try ShareBackup.restore(bundle: bundle, shares: shares, passphrase: passphrase)
    }
}

extension ShareBackupCommands {
    /// The bundle and the shares typed or pasted at the terminal with libedit, Tab completing each
    /// word from the SLIP-39 word list. Nothing typed is thrown away: a line that is not the bundle, or
    /// a share that does not parse or does not fit the others, is refused on its own and asked again.
    /// A word given by its first four letters or more is that word; a share one word off is offered
    /// its correction, which the checksum makes unique. Reading stops once the shares suffice.
    static func readInteractively(bundle: inout String?) throws -> [ShareBackup.Share] {
        var shares: [ShareBackup.Share] = []
        while true {
            let words: [String] = bundle == nil ? [] : ShareBackup.Words.all
            guard let line = LineEditor.read(bundle == nil ? "bundle> " : "share> ", vocabulary: { _ in words }) else { break }
            guard line.utf8.count <= InputLimits.codeLine else {
                StandardError.write("that line is longer than \(InputLimits.codeLine) bytes and was not taken: paste it again\n")
                continue
            }
            let text = line.trimmingBlanks()
            guard !text.isEmpty else { continue }
            guard bundle != nil else {
                guard text.hasPrefix(ShareBackup.bundlePrefix) else {
                    StandardError.write("the first line must be the sealed bundle (sealkit-shares-v1:...): paste it, then the shares\n")
                    continue
                }
                bundle = text
                continue
            }
            guard let share = parsedOrCorrected(ShareBackup.Words.completing(text), kept: shares.count) else { continue }
            guard !shares.contains(where: { $0.isDuplicate(of: share) }) else {
                StandardError.write(
                    "share \"\(share.prefix) ...\" was already taken: a duplicate, not counted again; "
                        + "\(progress(of: shares, latest: share)), type the next share\n")
                continue
            }
            let trial = shares + [share]
            do {
                try ShareBackup.check(trial)
                shares = trial
                StandardError.write("share \"\(share.prefix) ...\" accepted: \(progress(of: shares, latest: share)); that is enough\n")
                break
            } catch {
                guard error.reason == .notEnoughShares else {
                    StandardError.write("that share was not taken: \(said(error)); \(kept(shares.count)), type the next share\n")
                    continue
                }
                shares = trial
                StandardError.write("share \"\(share.prefix) ...\" accepted: \(progress(of: shares, latest: share))\n")
            }
        }
        return shares
    }

    /// The share typed, or its one-word correction after asking; nil (having said why) when neither.
    private static func parsedOrCorrected(_ text: String, kept: Int) -> ShareBackup.Share? {
        do {
            return try ShareBackup.Share(text)
        } catch {
            if let fix = ShareBackup.Words.correction(of: text),
                let answer = LineEditor.read("did you mean \"\(fix.word)\" for word \(fix.position)? [Y/n] ", vocabulary: { _ in [] }),
                ["", "y", "yes"].contains(answer.trimmingBlanks().lowercased()),
                let share = try? ShareBackup.Share(fix.share)
            {
                return share
            }
            StandardError.write("that share was not taken: \(said(error)); \(Self.kept(kept)), type it again\n")
            return nil
        }
    }

    private static func kept(_ count: Int) -> String {
        count == 0 ? "no share is taken yet" : count == 1 ? "the 1 share taken stays" : "the \(count) shares taken stay"
    }

    /// "2 of 3 shares (need 1 more)", or with groups "2 of 3 shares for group 1 (need 1 more)".
    static func progress(of shares: [ShareBackup.Share], latest: ShareBackup.Share) -> String {
        let members = Set(shares.filter { $0.groupIndex == latest.groupIndex }.map(\.memberIndex)).count
        let threshold = latest.memberThreshold
        var text = "\(members) of \(threshold) shares"
        if latest.groupCount > 1 { text += " for group \(latest.groupIndex + 1)" }
        if members < threshold {
            return text + " (need \(threshold - members) more)"
        }
        guard latest.groupCount > 1 else { return text }
        let complete = Set(shares.map(\.groupIndex)).filter { group in
            let inGroup = shares.filter { $0.groupIndex == group }
            return Set(inGroup.map(\.memberIndex)).count >= inGroup[0].memberThreshold
        }.count
        let more = latest.groupThreshold - complete
        return text + " (group complete" + (more > 0 ? "; need \(more) more group\(more == 1 ? "" : "s"))" : ")")
    }
}

extension String {
    /// The string with its first letter capitalized.
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
