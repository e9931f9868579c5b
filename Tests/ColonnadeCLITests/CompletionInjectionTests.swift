import Colonnade
@testable import ColonnadeCLI
import Foundation
import Testing

/// Issue 28, item 1: tickers are data (an imported CSV, a `fetch --table` response), and a
/// completion script must never run them. Each shell's own machinery completes a line over a
/// snapshot of hostile tickers; no file `INJECTED` may appear, and each name is offered literally:
/// inserted quoted, so that the argument the line then runs with is the name itself. Names with
/// spaces, control or non-ASCII characters are left out (``CompletionCandidates/isOffered(_:)``).
@Suite struct CompletionInjectionTests {
    /// Each would run `touch INJECTED` (or write `INJECTED`) if a script expanded it: bash's
    /// `compgen -W` performs command substitution, zsh's `_values` runs `{…}` actions, fish runs `(…)`.
    static let hostile = [
        "$(touch${IFS}INJECTED)", "`touch${IFS}INJECTED`", "a;touch${IFS}INJECTED;b", "y:{>INJECTED}",
        "(touch${IFS}INJECTED)x", "q'u\"o\\te", "$HOME", "*", "~root", "-n",
    ]
    /// Not offered: they cannot travel as one line, would draw on the terminal, or may hide look-alikes.
    static let unoffered = ["has space", "new\nline", "tab\there", "bel\u{07}", "esc\u{1B}[31m", "del\u{7F}", "c1\u{9B}", "ünï"]

    /// A snapshot whose tickers are `symbols`, one row each.
    static func snapshot(_ symbols: [String], named name: String, in directory: String) throws -> String {
        let path = directory + "/" + name
        let entries = symbols.enumerated().map { TickerEntry(symbol: $1, firstRow: $0, rowCount: 1) }
        var table = try QuoteTable(
            schema: [ColumnDescriptor(name: "Close $(touch${IFS}INJECTED)", type: .float64)],
            columns: [.float64(Column<Double>(symbols.map { _ in 1 }))],
            dates: Column<Int32>(symbols.map { _ in 0 }), tickers: entries)
        table.computeSummaries()
        try table.save(to: path, durable: false)
        return path
    }

    static func noInjection(in directory: String) -> Bool {
        !FileManager.default.fileExists(atPath: directory + "/INJECTED")
    }

    // MARK: The helper

    @Test func completeOffersHostileNamesQuotedForBashAndLeavesOutUnprintableOnes() throws {
        let scratch = try Scratch()
        let path = try Self.snapshot(Self.hostile + Self.unoffered + ["AAPL"], named: "h.snapshot", in: scratch.path)
        let plain = colonnade("_complete", "tickers", "--snapshot", path)
        #expect(plain.status == 0)
        #expect(plain.standardOutput == (Self.hostile + ["AAPL"]).map { $0 + "\n" }.joined())
        let quoted = colonnade("_complete", "tickers", "--snapshot", path, "--word=")
        #expect(quoted.standardOutput == (Self.hostile + ["AAPL"]).map { shellWord($0) + "\n" }.joined())
        #expect(quoted.standardOutput.contains("'$(touch${IFS}INJECTED)'\n"))
        // The last comma item is matched literally (`*` is not a pattern), the typed prefix kept.
        #expect(
            colonnade("_complete", "tickers", "--snapshot", path, "--word=AAPL,$").standardOutput
                == "AAPL,'$(touch${IFS}INJECTED)'\nAAPL,'$HOME'\n")
        #expect(colonnade("_complete", "tickers", "--snapshot", path, "--word=*").standardOutput == "'*'\n")
        #expect(colonnade("_complete", "tickers", "--snapshot", path, "--word=ZZZ").standardOutput.isEmpty)
        // Column identifiers are normalized, so a hostile source name arrives as a plain word.
        #expect(colonnade("_complete", "value-columns", "--snapshot", path).standardOutput == "close_touch_ifs_injected\n")
    }

    /// The Completion fuzz target's finding 1 (crash-7ba77634…): the word being completed
    /// started with a combining mark (U+033C) and held U+FFFD and a control character; `_complete`
    /// exited 2 (the argument parser took `--word=\u{33C}…` for an unknown option).
    @Test func completeTakesAnyWordEvenOneStartingWithACombiningMark() throws {
        let scratch = try Scratch()
        let path = try Self.snapshot(["R[.A", "B-BF", "^GSPCAF"], named: "f.snapshot", in: scratch.path)
        let word = "\u{33C}n\u{FFFD}AA\u{1D}"
        let run = colonnade("_complete", "tickers", "--snapshot", path, "--word=" + word)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.isEmpty && run.standardError.isEmpty)
        #expect(colonnade("_complete", "tickers", "--snapshot", path, "--word=\u{301}").standardOutput.isEmpty)
        #expect(colonnade("_complete", "tickers", "--snapshot", path, "--word=^").standardOutput == "'^GSPCAF'\n")
    }

    @Test func completeIsDocumentedAsInternal() {
        let help = colonnade("help", "_complete").standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("Internal:") && help.contains("Not a stable interface"), "\(help)")
        #expect(colonnade("help", "completions").standardOutput.contains("_complete"))
        #expect(!colonnade("help").standardOutput.contains("_complete"))
    }

    // MARK: bash

    @Test(.enabled(if: CompletionScriptTests.installed("bash") != nil, "bash is not installed"))
    func bashNeverExpandsATickerAndInsertsItQuoted() throws {
        let scratch = try Scratch()
        let path = try Self.snapshot(Self.hostile + Self.unoffered + ["AAPL"], named: "h.snapshot", in: scratch.path)
        let scriptPath = try CompletionScriptTests.file(CompletionScriptTests.script(.bash), named: "colonnade.bash")
        // Completes each word after --tickers (and a TICKER argument), prints each candidate, then
        // the argument a command line holding that candidate would get: eval, as the shell will.
        var program = "source \(shellWord(scriptPath))\ncd \(shellWord(scratch.path))\n"
        let words = [
            ["filter", "--snapshot", path, "--tickers", ""], ["filter", "--snapshot", path, "--tickers", "AAPL,"],
            ["chart", "--snapshot", path, "$"], ["filter", "--snapshot", path, "--tickers", "=", ""],
        ]
        for line in words {
            let all = ["colonnade"] + line
            program += "COMP_WORDS=(\(all.map { $0.isEmpty ? "''" : shellWord($0) }.joined(separator: " "))); COMP_CWORD=\(all.count - 1); "
            program +=
                "COMPREPLY=(); _colonnade; for c in \"${COMPREPLY[@]}\"; do eval \"set -- $c\"; printf '%s\\n' \"$1\"; done; echo ---\n"
        }
        let result = try CompletionScriptTests.run(
            "/usr/bin/env", ["bash", "--norc", "--noprofile", "-c", program],
            environment: try CompletionScriptTests.environmentWithColonnade())
        #expect(Self.noInjection(in: scratch.path), "a ticker ran: \(result.output)")
        let parts = result.output.components(separatedBy: "---\n")
        #expect(parts.count == 5, "\(result.output)")
        guard parts.count == 5 else { return }
        let offered = Self.hostile + ["AAPL"]
        #expect(parts[0] == offered.map { $0 + "\n" }.joined())
        #expect(parts[1] == offered.map { "AAPL," + $0 + "\n" }.joined())
        #expect(parts[2] == "$(touch${IFS}INJECTED)\n$HOME\n")
        #expect(parts[3] == offered.map { $0 + "\n" }.joined(), "--tickers=VALUE")
    }

    @Test(.enabled(if: CompletionScriptTests.installed("bash") != nil, "bash is not installed"))
    func bashCompletesFileNamesWithSpacesAndGlobCharactersWhole() throws {
        let scratch = try Scratch()
        for name in ["a b.snapshot", "a*.snapshot"] { try Data().write(to: URL(fileURLWithPath: scratch.path + "/" + name)) }
        let scriptPath = try CompletionScriptTests.file(CompletionScriptTests.script(.bash), named: "colonnade.bash")
        let program =
            "source \(shellWord(scriptPath))\ncd \(shellWord(scratch.path))\n"
            + "COMP_WORDS=(colonnade info --snapshot a); COMP_CWORD=3; COMPREPLY=(); _colonnade; printf '<%s>\\n' \"${COMPREPLY[@]}\"\n"
        let result = try CompletionScriptTests.run("/usr/bin/env", ["bash", "--norc", "--noprofile", "-c", program])
        #expect(Set(result.output.split(separator: "\n").map(String.init)) == ["<a b.snapshot>", "<a*.snapshot>"], "\(result.output)")
    }

    // MARK: zsh and fish, interactive, on a pseudo-terminal

    /// Types `colonnade filter --snapshot S --tickers PREFIX`, Tab (one ticker: it is inserted),
    /// then Ctrl-X, bound to append the line's last word (unquoted as the shell will) to `dump`.
    static func completeInteractively(
        shell: String, arguments: [String], environment: [String: String], lines: [String],
        dump: String, in directory: URL
    ) throws -> [String] {
        let session = try PseudoTerminalSession(arguments, executable: URL(fileURLWithPath: shell), environment: environment, in: directory)
        try session.waitFor("READY> ")
        func dumped() -> [String] {
            ((try? String(contentsOfFile: dump, encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast().map(String.init)
        }
        for (index, line) in lines.enumerated() {
            session.type(line + "\t")
            session.type("\u{18}")
            // Waits for the condition (the line dumped), not for time to pass.
            let deadline = ContinuousClock.now + .seconds(120)
            while dumped().count <= index {
                guard ContinuousClock.now < deadline else { throw PseudoTerminalSession.TimedOut(waitingFor: line, output: session.output) }
                usleep(2_000)
            }
        }
        session.type("exit\r")
        _ = try session.finish()
        return dumped()
    }

    /// Snapshots with one hostile ticker each, and the lines completing them.
    static func oneTickerSnapshots(in directory: String, prefix: String = "") throws -> [String] {
        try Self.hostile.enumerated().map { i, symbol in
            let path = try snapshot([symbol], named: "s\(i).snapshot", in: directory)
            return "colonnade filter --snapshot \(path) --tickers \(prefix)"
        }
    }

    @Test(.enabled(if: CompletionScriptTests.installed("zsh") != nil, "zsh is not installed"))
    func zshNeverExpandsATickerAndInsertsItQuoted() throws {
        let scratch = try Scratch()
        let zsh = try #require(CompletionScriptTests.installed("zsh"))
        let scriptPath = try CompletionScriptTests.file(CompletionScriptTests.script(.zsh), named: "_colonnade")
        let dump = scratch.path + "/dump"
        try Data("setopt no_global_rcs\n".utf8).write(to: URL(fileURLWithPath: scratch.path + "/.zshenv"))
        let rc = """
            PS1='READY> '
            unsetopt beep
            autoload -Uz compinit && compinit -u -D
            source \(shellWord(scriptPath))
            dump-line() { print -r -- "${(Q)${(z)BUFFER}[-1]}" >> \(shellWord(dump)); BUFFER=''; zle accept-line }
            zle -N dump-line
            bindkey '^X' dump-line

            """
        try Data(rc.utf8).write(to: URL(fileURLWithPath: scratch.path + "/.zshrc"))
        var environment = try CompletionScriptTests.environmentWithColonnade()
        environment["ZDOTDIR"] = scratch.path
        environment["TERM"] = "xterm"
        let lines = try Self.oneTickerSnapshots(in: scratch.path) + Self.oneTickerSnapshots(in: scratch.path, prefix: "AAPL,")
        let got = try Self.completeInteractively(
            shell: zsh, arguments: ["-i"], environment: environment, lines: lines,
            dump: dump, in: URL(fileURLWithPath: scratch.path))
        #expect(Self.noInjection(in: scratch.path))
        // compadd -S , leaves the separator after a completed item, ready for the next one.
        #expect(got == Self.hostile.map { $0 + "," } + Self.hostile.map { "AAPL," + $0 + "," })
    }

    @Test(
        .enabled(
            if: CompletionScriptTests.installed("fish") != nil && CompletionScriptTests.installed("setsid") != nil,
            "fish or setsid is not installed"))
    func fishNeverExpandsATickerAndInsertsItQuoted() throws {
        let scratch = try Scratch()
        let fish = try #require(CompletionScriptTests.installed("fish"))
        let scriptPath = try CompletionScriptTests.file(CompletionScriptTests.script(.fish), named: "colonnade.fish")
        let dump = scratch.path + "/dump"
        let setup = """
            function fish_prompt; echo -n 'READY> '; end
            source \(shellWord(scriptPath))
            function dump_line
                set -l tokens (commandline -o)
                printf '%s\\n' $tokens[-1] >> \(shellWord(dump))
                commandline ''
                commandline -f repaint
            end
            bind \\cx dump_line
            """
        let setupPath = try CompletionScriptTests.file(setup, named: "setup.fish")
        var environment = try CompletionScriptTests.environmentWithColonnade()
        environment["TERM"] = "xterm"
        environment["HOME"] = scratch.path
        environment["XDG_CONFIG_HOME"] = scratch.path + "/config"
        environment["XDG_DATA_HOME"] = scratch.path + "/data"
        let lines = try Self.oneTickerSnapshots(in: scratch.path) + Self.oneTickerSnapshots(in: scratch.path, prefix: "AAPL,")
        // fish wants the terminal as its controlling one (job control): setsid -c makes it so.
        let setsid = try #require(CompletionScriptTests.installed("setsid"))
        let got = try Self.completeInteractively(
            shell: setsid, arguments: ["-c", fish, "--no-config", "-i", "-C", "source " + shellWord(setupPath)],
            environment: environment, lines: lines, dump: dump, in: URL(fileURLWithPath: scratch.path))
        #expect(Self.noInjection(in: scratch.path))
        #expect(got == Self.hostile + Self.hostile.map { "AAPL," + $0 })
    }
}
