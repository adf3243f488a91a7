import Foundation
import Testing

/// Every script in `scripts/`, one test case each: they report apart and run in parallel.
/// Each sealkit a script runs has its own deadline (`ChildProcess.defaultTimeout`); the limit bounds a whole script.
@Suite(.timeLimit(.minutes(10))) struct ScriptTests {
    @Test(arguments: ScriptRunner.scriptNames())
    func script(_ name: String) throws {
        do {
            try ScriptRunner.run(file: name)
        } catch let failure as ScriptRunner.Failure {
            Issue.record(Comment(rawValue: failure.description))
        }
    }

    @Test func thereAreScripts() {
        #expect(ScriptRunner.scriptNames().count >= 10, "scripts folder: \(ScriptRunner.folder.path)")
    }
}

/// The runner itself: a script that should fail does, naming its line.
@Suite struct ScriptRunnerTests {
    /// The failure `text` (a script) stops at, or nil when it passes.
    private func failure(_ text: String) throws -> String? {
        do {
            try ScriptRunner.run(Script(text), name: "t.txt")
            return nil
        } catch let failure as ScriptRunner.Failure {
            return failure.description
        }
    }

    @Test func aPassingScriptPasses() throws {
        let text = """
            # a comment, then a blank line

            sealkit --version
            stdout /^sealkit [0-9]+\\.[0-9]+/
            ! stderr .
            ! sealkit no-such-command
            ! stdout .
            stderr /^sealkit: 'no-such-command' is not a sealkit command/
            """
        #expect(try failure(text) == nil)
    }

    @Test func aStdoutLineThatDoesNotMatchFailsNamingTheLine() throws {
        let message = try #require(try failure("sealkit --version\n\nstdout /^no such version$/\n"))
        #expect(message.hasPrefix("t.txt:3: stdout /^no such version$/\nno match in stdout"), "\(message)")
        #expect(message.contains("--- stdout ---"))
        #expect(message.contains("--- exit 0 ---"))
    }

    @Test func bangInvertsCommandsAndChecks() throws {
        #expect(try failure("! sealkit --version") != nil)
        #expect(try failure("sealkit no-such-command") != nil)
        #expect(try failure("! sealkit no-such-command") == nil)
        #expect(try failure("sealkit --version\n! stdout /[0-9]/") != nil)
        #expect(try failure("sealkit --version\n! stderr .") == nil)
        #expect(try failure("sealkit no-such-command\n! stderr .") != nil)
        #expect(try failure("! exists nothing-here") == nil)
        #expect(try failure("exists nothing-here") != nil)
    }

    @Test func aNamedExitStatusMustBeExact() throws {
        #expect(try failure("! [64] sealkit no-such-command") == nil)
        let message = try #require(try failure("! [65] sealkit no-such-command"))
        #expect(message.contains("exit status 64, want 65"), "\(message)")
    }

    /// `!` also checks the failure contract; `[N]` alone checks only the status, for commands that fail with a report.
    @Test func bangChecksTheFailureContractAndABareStatusDoesNot() throws {
        #expect(try failure("[1] sealkit status --key nobody\nstderr /^sealkit: /") == nil)
        #expect(try failure("[0] sealkit --version") == nil)
        let report = """
            sealkit keys generate ada
            stdin x.txt
            sealkit encrypt --key ada
            cp stdout c.txt
            stdin c.txt
            sealkit decrypt --key ada
            stdout /^x$/
            -- x.txt --
            x
            """
        #expect(try failure(report) == nil)
        // An audit that finds something prints its report on stdout: a failure, but not a refusal.
        let audit = """
            sealkit keys generate ada
            stdin x.txt
            sealkit encrypt --key ada
            cp stdout c.txt
            [1] sealkit audit p.json
            ! sealkit audit p.json
            -- x.txt --
            x
            -- p.json --
            {"a": "pQMorZmUzAbYmWdJrA3YRHIhdveX/FfU+CCBn9NWs47kKeIeKdqYm/1h", "b": "pQMorZmUzAbYmWdJrA3YRHIhdveX/FfU+CCBn9NWs47kKeIeKdqYm/1h"}
            """
        let message = try #require(try failure(audit))
        #expect(message.hasPrefix("t.txt:6: ! sealkit audit p.json\nnot a clean failure"), "\(message)")
    }

    @Test func embeddedFilesAreWrittenBeforeTheScriptRuns() throws {
        let same = """
            cmp a.txt b/c.txt
            stdin a.txt
            sealkit qr --format ascii
            cp stdout qr.txt
            sealkit qr --format ascii 'one line'
            cmp stdout qr.txt
            -- a.txt --
            one line
            -- b/c.txt --
            one line

            """
        #expect(try failure(same) == nil)
        let differ = "cmp a.txt b.txt\n-- a.txt --\none\n-- b.txt --\ntwo\n"
        let message = try #require(try failure(differ))
        #expect(message.hasPrefix("t.txt:1: cmp a.txt b.txt\nthe two differ"), "\(message)")
    }

    @Test func quotesGroupAndEnvExpands() throws {
        #expect(try ScriptRunner.split("a 'b c' d''e $X ${X}y '$X' 'it''s'", environment: ["X": "x"]) == ["a", "b c", "de", "x", "xy", "$X", "it's"])
        #expect(throws: ScriptRunner.Failure.self) { try ScriptRunner.split("a 'b", environment: [:]) }
        #expect(try failure("env NAME=ada\nsealkit keys generate $NAME\nsealkit keys list\nstdout /^ada\\t/") == nil)
    }

    @Test func unknownCommandsAreRefused() throws {
        let message = try #require(try failure("frobnicate x"))
        #expect(message.contains("unknown command frobnicate"), "\(message)")
        #expect(try failure("! env A=b") != nil)
    }
}
