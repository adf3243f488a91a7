@preconcurrency import CEdit
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

/// Lines typed at the terminal with libedit (BSD-licensed, Debian's `libedit-dev`): editing, and Tab
/// completion of words from a list, rather than terminal handling of our own. Tab completes a word
/// when one candidate fits and shows the candidates on a second Tab, as magic-wormhole's code prompt does.
enum LineEditor {
    /// The words that may stand at a position of the line (0 is its first word), for completion.
    typealias Vocabulary = @Sendable (_ position: Int) -> [String]

    // libedit calls back through C function pointers, which capture nothing: the vocabulary of the
    // one prompt being edited waits here. The CLI edits one line at a time on its main thread.
    nonisolated(unsafe) private static var vocabulary: Vocabulary = { _ in [] }
    nonisolated(unsafe) private static var matches: [String] = []
    nonisolated(unsafe) private static var separator: @Sendable (_ position: Int) -> Character? = { _ in " " }
    /// The terminal and its settings from before the prompt being edited, to give back when an interrupt
    /// ends the process at the prompt (`PromptInterrupt`, or a network transfer's `InterruptHandler`).
    static let saved = SavedTerminal()

    /// Reads one line from the controlling terminal with completion from `vocabulary`; words are
    /// separated by spaces and dashes. nil when there is no terminal, or at end of input. Ctrl-C at the
    /// prompt gives the terminal back, says so, and exits 130 (`PromptInterrupt`, or the network
    /// transfer's own handler while one runs).
    /// - Parameter separator: what follows a word completed at a position (a space between a share's
    ///   words; in a code, a hyphen after every word but the last, as magic-wormhole's completer adds).
    static func read(
        _ prompt: String, separator: @escaping @Sendable (_ position: Int) -> Character? = { _ in " " },
        vocabulary: @escaping Vocabulary
    ) -> String? {
        PromptInterrupt.guarding { edit(prompt, separator: separator, vocabulary: vocabulary) }
    }

    private static func edit(
        _ prompt: String, separator: @escaping @Sendable (_ position: Int) -> Character?, vocabulary: @escaping Vocabulary
    ) -> String? {
        guard let terminal = fopen("/dev/tty", "r+") else { return nil }
        defer { fclose(terminal) }
        Self.vocabulary = vocabulary
        Self.separator = separator
        rl_instream = terminal
        rl_outstream = terminal
        // libedit's completion reads the basic list; readline's, the completer list: both say " -".
        rl_basic_word_break_characters = UnsafePointer(strdup(" -"))
        rl_completer_word_break_characters = strdup(" -")
        rl_attempted_completion_function = { text, start, _ in
            // The word's position: how many words stand before it on the line.
            let before = rl_line_buffer.map { String(cString: $0).utf8.prefix(Int(start)) } ?? Substring("").utf8
            let position = String(decoding: before, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "-" }).count
            let prefix = text.map { String(cString: $0).lowercased() } ?? ""
            LineEditor.matches = LineEditor.vocabulary(position).filter { $0.hasPrefix(prefix) }
            rl_completion_append_character = LineEditor.separator(position).map { Int32($0.asciiValue ?? 0) } ?? 0
            // Nothing but our own candidates: no file names when none fit.
            rl_attempted_completion_over = 1
            return rl_completion_matches(text, { _, state in
                guard Int(state) < LineEditor.matches.count else { return nil }
                return strdup(LineEditor.matches[Int(state)])
            })
        }
        var settings = termios()
        if tcgetattr(fileno(terminal), &settings) == 0 { saved.save(fileno(terminal), settings) }
        let read = readline(prompt)
        saved.clear()
        guard let line = read else { return nil }
        defer { free(line) }
        return String(cString: line)
    }
}

/// Codes typed as in magic-wormhole, with fewer mistakes: completion from the PGP word lists, and a
/// word not in its list corrected when exactly one word of that list is within two edits.
enum CodeEntry {
    /// The PGP list for each position of `NN-odd-even`: none for the number.
    static let vocabulary: LineEditor.Vocabulary = { position in TransferCode.words(at: position) }

    /// A hyphen after the number and the first word, nothing after the last: magic-wormhole's
    /// completer appends a hyphen "if we expect more words".
    static let separator: @Sendable (Int) -> Character? = { position in position < 2 ? "-" : nil }

    /// The code typed at the terminal with completion, corrected after asking when one word is off.
    /// A code that is malformed, or whose correction is declined, is refused with its reason and asked
    /// again, three times in all: a malformed code never reaches the relay.
    /// - Returns: nil when there is no terminal.
    static func ask(_ prompt: String) throws -> TransferCode? {
        for attempt in 1...KeystoreOptions.tries {
            guard let typed = LineEditor.read(prompt, separator: separator, vocabulary: vocabulary) else { return nil }
            do {
                return try TransferCode(typed)
            } catch {
                if let suggestion = TransferCode.suggestion(for: typed),
                    let answer = LineEditor.read("did you mean \(suggestion)? [Y/n] ", vocabulary: { _ in [] }),
                    ["", "y", "yes"].contains(answer.trimmingBlanks().lowercased()),
                    let code = try? TransferCode(suggestion)
                {
                    return code
                }
                guard attempt < KeystoreOptions.tries else { throw error }
                TerminalPrompt.say("sealkit: \(said(error)); type the code again")
            }
        }
        return nil
    }

    /// A code given on the command line (`--code`): refused with its reason, and the suggestion when
    /// there is one; never corrected without asking.
    static func parse(given: String) throws -> TransferCode {
        do {
            return try TransferCode(given)
        } catch {
            if let suggestion = TransferCode.suggestion(for: given) {
                throw CLIFailure("\(said(error)) (did you mean \(suggestion)?)", status: .usage)
            }
            throw error
        }
    }
}
