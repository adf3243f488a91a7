import Foundation
import SealTestSupport

/// A script of `sealkit` commands and checks on what they printed, in the manner of age's testscript
/// (the language is in docs/testing.md): the commands a reader types, each followed by what must hold.
///
/// The files embedded after the script in txtar form (`-- name --` lines) are written into the work folder
/// before the script runs.
struct Script {
    /// One line of the script, with its line number in the file (1-based), for failure messages.
    struct Line {
        let number: Int
        let text: String
    }

    let lines: [Line]
    let files: [(name: String, content: String)]

    /// Splits `text` into its script (up to the first `-- name --` line) and its files.
    init(_ text: String) {
        var lines: [Line] = [], files: [(name: String, content: String)] = []
        var current: (name: String, content: String)?
        // By scalars: as Characters, "\r\n" is one and would never split at "\n".
        for (index, scalars) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(String.UnicodeScalarView(scalars))
            if line.hasPrefix("-- "), line.hasSuffix(" --"), line.count > 6 {
                if let current { files.append(current) }
                current = (String(line.dropFirst(3).dropLast(3)).trimmingCharacters(in: .whitespaces), "")
            } else if current != nil {
                current!.content += line + "\n"
            } else {
                lines.append(Line(number: index + 1, text: String(line)))
            }
        }
        if let current {
            // The text's final newline ends the last file's last line; it does not start another line.
            let content = current.content.unicodeScalars
            files.append((current.name, text.unicodeScalars.last == "\n" ? String(String.UnicodeScalarView(content.dropLast())) : current.content))
        }
        self.lines = lines
        self.files = files
    }
}

/// Runs a `Script` in a fresh work folder (its working directory) with a fresh, empty `SEALKIT_HOME`, and stops
/// at the first line that does not hold.
struct ScriptRunner {
    /// Why a script failed: the script, the line and its number, and the last command's outputs.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The folder of the scripts (`Tests/SealKitCLITests/scripts`).
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("scripts")

    /// The names of every `*.txt` script in `folder`, sorted.
    static func scriptNames() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".txt") }.sorted()
    }

    /// Runs the script file `name` from `folder`.
    static func run(file name: String) throws {
        let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        try run(Script(text), name: name)
    }

    /// Runs `script`; throws a `Failure` naming `name`, the line, and the last command's outputs.
    static func run(_ script: Script, name: String) throws {
        let cli = try CLI()
        let work = cli.home
        defer { try? FileManager.default.removeItem(at: work) }
        var environment = cli.environment
        environment["WORK"] = work.path
        for file in script.files {
            let url = work.appendingPathComponent(file.name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(file.content.utf8).write(to: url)
        }
        var last: ProcessResult?
        var stdin: [UInt8] = []
        for line in script.lines {
            func fail(_ why: String) -> Failure {
                var message = "\(name):\(line.number): \(line.text)\n\(why)"
                if let last {
                    message += "\n--- stdout ---\n\(last.stdoutText)--- stderr ---\n\(last.stderrText)--- exit \(last.status) ---"
                }
                return Failure(description: message)
            }
            var rest = Substring(line.text.trimmingCharacters(in: .whitespaces))
            guard !rest.isEmpty, !rest.hasPrefix("#") else { continue }
            var negated = false, expectedStatus: Int32?
            if rest.hasPrefix("! ") {
                negated = true
                rest = rest.dropFirst(2).drop { $0 == " " }
            }
            if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
                guard let status = Int32(rest[rest.index(after: rest.startIndex)..<close]) else {
                    throw fail("bad exit status \(rest[...close])")
                }
                expectedStatus = status
                rest = rest[rest.index(after: close)...].drop { $0 == " " }
            }
            let command = String(rest.prefix { $0 != " " })
            if negated, !["sealkit", "stdout", "stderr", "cmp", "exists", "mode"].contains(command) {
                throw fail("'!' does not apply to \(command)")
            }
            if expectedStatus != nil, command != "sealkit" { throw fail("an exit status applies only to sealkit") }
            // A regex is taken as written: no splitting, quoting or expansion.
            let arguments = command == "stdout" || command == "stderr"
                ? [] : try split(String(rest.dropFirst(command.count)), environment: environment)
            func file(_ path: String) -> URL { path.hasPrefix("/") ? URL(fileURLWithPath: path) : work.appendingPathComponent(path) }
            func contents(_ path: String) throws -> [UInt8] {
                switch path {
                case "stdout", "stderr":
                    guard let last else { throw fail("no command has run yet") }
                    return path == "stdout" ? last.stdout : last.stderr
                default:
                    guard let data = FileManager.default.contents(atPath: file(path).path) else { throw fail("cannot read \(path)") }
                    return Array(data)
                }
            }
            func needs(_ count: Int) throws {
                guard arguments.count == count else { throw fail("\(command) takes \(count) argument(s)") }
            }
            switch command {
            case "sealkit":
                let result = try ChildProcess.run(
                    CLI.executable.path, arguments, stdin: stdin, environment: environment, workingDirectory: work.path)
                last = result
                stdin = []
                if result.timedOut { throw fail("killed at its deadline") }
                if let signal = result.signal { throw fail("ended by signal \(signal)") }
                if let expectedStatus {
                    if result.status != expectedStatus { throw fail("exit status \(result.status), want \(expectedStatus)") }
                } else if negated {
                    if result.status == 0 { throw fail("succeeded, want a failure") }
                    if result.status >= 126 { throw fail("exit status \(result.status): a crash, not a refusal") }
                } else if result.status != 0 {
                    throw fail("exit status \(result.status), want 0")
                }
                // A refusal is one line on stderr starting `sealkit: `, and nothing on stdout.
                if negated {
                    let text = result.stderrText
                    if !text.hasPrefix("sealkit: ") || !text.hasSuffix("\n") || text.dropLast().contains("\n") || !result.stdout.isEmpty {
                        throw fail("not a clean failure: want one line on stderr starting 'sealkit: ' and nothing on stdout")
                    }
                }
            case "stdout", "stderr":
                guard let last else { throw fail("no command has run yet") }
                guard let pattern = pattern(String(rest.dropFirst(command.count))) else { throw fail("want \(command) /regex/") }
                let regex: NSRegularExpression
                do { regex = try NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines]) } catch {
                    throw fail("bad regex: \(error)")
                }
                let text = command == "stdout" ? last.stdoutText : last.stderrText
                let found = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                if found == negated { throw fail(negated ? "\(command) matches, want no match" : "no match in \(command)") }
            case "cmp":
                try needs(2)
                let same = try contents(arguments[0]) == contents(arguments[1])
                if same == negated { throw fail(negated ? "the two are the same" : "the two differ") }
            case "exists":
                try needs(1)
                let exists = FileManager.default.fileExists(atPath: file(arguments[0]).path)
                if exists == negated { throw fail(negated ? "\(arguments[0]) exists" : "\(arguments[0]) does not exist") }
            case "env":
                try needs(1)
                guard let equals = arguments[0].firstIndex(of: "=") else { throw fail("want env NAME=value") }
                environment[String(arguments[0][..<equals])] = String(arguments[0][arguments[0].index(after: equals)...])
            case "unset":
                try needs(1)
                environment.removeValue(forKey: arguments[0])
            case "stdin":
                // Several files are joined, in order.
                guard !arguments.isEmpty else { throw fail("stdin takes one file or more") }
                stdin = try arguments.flatMap { try contents($0) }
            case "cp":
                try needs(2)
                try Data(contents(arguments[0])).write(to: file(arguments[1]))
            case "mkdir":
                try needs(1)
                try FileManager.default.createDirectory(at: file(arguments[0]), withIntermediateDirectories: true)
            case "mode":
                // mode 600 FILE: the file's permission bits, in octal.
                try needs(2)
                let attributes = try FileManager.default.attributesOfItem(atPath: file(arguments[1]).path)
                let mode = String((attributes[.posixPermissions] as? Int ?? -1) & 0o777, radix: 8)
                if (mode == arguments[0]) == negated { throw fail("mode \(mode)") }
            default:
                throw fail("unknown command \(command)")
            }
        }
    }

    /// The regex of `stdout /re/` (between the first and the last slash), or of `stdout re` (the rest of the line, for
    /// a regex without a slash, as `! stderr .`); nil when there is none.
    static func pattern(_ rest: String) -> String? {
        let text = rest.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        guard text.hasPrefix("/") else { return text }
        guard text.count >= 2, text.hasSuffix("/") else { return nil }
        return String(text.dropFirst().dropLast())
    }

    /// Splits `line` into words at spaces; single quotes group (`''` inside them is one quote), `$NAME` and `${NAME}` outside
    /// quotes expand from `environment`.
    static func split(_ line: String, environment: [String: String]) throws -> [String] {
        var words: [String] = [], word = "", inWord = false, quoted = false
        var characters = Array(line)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "'" {
                    // '' inside quotes is one quote, as in testscript.
                    if characters.first == "'" { word.append(characters.removeFirst()) } else { quoted = false }
                } else {
                    word.append(character)
                }
            } else if character == "'" {
                quoted = true
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else if character == "$", let next = characters.first, next == "{" || next.isLetter || next == "_" {
                var name = ""
                if next == "{" {
                    characters.removeFirst()
                    while let c = characters.popFirst(), c != "}" { name.append(c) }
                } else {
                    while let c = characters.first, c.isLetter || c.isNumber || c == "_" { name.append(characters.removeFirst()) }
                }
                word += environment[name] ?? ""
                inWord = true
            } else {
                word.append(character)
                inWord = true
            }
        }
        if quoted { throw ScriptRunner.Failure(description: "unclosed quote in: \(line)") }
        if inWord { words.append(word) }
        return words
    }
}
