@testable import ColonnadeCLI
import Colonnade
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `colonnade shell`: scripted sessions through a pipe (in-process and as a process) and through
/// a pseudo-terminal (editing keys, history, Ctrl-C during a long query, Ctrl-D), compared with
/// `filter`'s output for the same settings.
@Suite struct ShellTests {
    /// Runs `shell --snapshot <fixture>` in-process with `script` on a real pipe as its input.
    static func shellThroughAPipe(_ script: String, extra: [String] = [], snapshot: String? = nil) throws -> Invocation {
        let path = try snapshot ?? EndToEndFixture.get().snapshot
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let writeEnd = ends[1]
        let writer = Thread {
            let bytes = Array(script.utf8)
            _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
            close(writeEnd)
        }
        writer.start()
        defer { close(ends[0]) }
        let output = MemoryOutputWriter(), errors = MemoryOutputWriter()
        let context = CommandContext(standardOutput: output, standardError: errors, environment: [:], currentDirectory: "/tmp")
        let command = ShellCommand(input: ends[0], terminalOutput: ends[0])
        let parsed = try ArgumentParser.parse(["--snapshot", path] + extra, for: .shell)
        let status = try command.run(parsed, context: context)
        return Invocation(status: status, standardOutput: output.text, standardError: errors.text)
    }

    /// `colonnade filter --snapshot <fixture> arguments`, in-process.
    static func filter(_ arguments: [String]) throws -> String {
        let run = colonnade(["filter", "--snapshot", try EndToEndFixture.get().snapshot] + arguments)
        #expect(run.status == 0, "\(arguments): \(run.standardError)")
        return run.standardOutput
    }

    @Test func aScriptThroughAPipeAnswersExactlyAsFilterDoes() throws {
        let fx = try EndToEndFixture.get()
        let (a, b) = (fx.table.tickers[0].symbol, fx.table.tickers[3].symbol)
        let run = try Self.shellThroughAPipe(
            """
            # screens, one per line
            .format csv
            close > 100
            .tickers \(a),\(b)
            .from 2000-03-01
            .to 2000-09-30
            volume > 1000000 and close < 90
            --count --where 'high > 95'
            .format json
            .columns date,close
            .limit 5
            --agg "count(*),avg(close)" --by ticker
            close > 80
            .quit
            close > 1
            """)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty)
        let settings = ["--tickers", "\(a),\(b)", "--from", "2000-03-01", "--to", "2000-09-30"]
        let expected = try [
            Self.filter(["--format", "csv", "--where", "close > 100"]),
            Self.filter(["--format", "csv"] + settings + ["--where", "volume > 1000000 and close < 90"]),
            Self.filter(["--format", "csv"] + settings + ["--count", "--where", "high > 95"]),
            // .columns and .limit are for rows: a summary line leaves them out (filter refuses them there).
            Self.filter(["--format", "json"] + settings + ["--agg", "count(*),avg(close)", "--by", "ticker"]),
            Self.filter(["--format", "json"] + settings + ["--columns", "date,close", "--limit", "5", "--where", "close > 80"]),
        ].joined()
        #expect(run.standardOutput == expected)
        #expect(
            !run.standardOutput.contains("\u{1B}") && !run.standardOutput.contains("colonnade>"), "no prompt or escape codes off a terminal"
        )
    }

    @Test func errorsNameTheLineAndTheSessionGoesOn() throws {
        let run = try Self.shellThroughAPipe(
            """
            .format csv
            clse > 100

            --count --where 'close > 100
            .frm 2001-01-01
            .from 2001-02-30
            --count --snapshot other.snapshot
            --count
            """)
        #expect(run.status == 1, "a script with failed lines exits 1")
        let errors = run.standardError.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(errors.count == 5, "\(run.standardError)")
        guard errors.count == 5 else { return }
        #expect(errors[0].hasPrefix("error: line 2: --where: unknown column 'clse'"))
        // Hints name what to type here, not a command line.
        #expect(run.standardError.contains("hint: '.info' lists the columns"), "\(run.standardError)")
        #expect(!run.standardError.contains("'colonnade info'"))
        #expect(errors[1].hasPrefix("error: line 4: unclosed ' quote"))
        #expect(errors[2].hasPrefix("error: line 5: unknown command '.frm'"))
        #expect(run.standardError.contains("did you mean '.from'?"))
        #expect(errors[3].hasPrefix("error: line 6: "))
        #expect(errors[4].hasPrefix("error: line 7: --snapshot: the shell keeps one snapshot loaded"))
        #expect(run.standardOutput == (try Self.filter(["--format", "csv", "--count"])), "the last line is still answered")
    }

    @Test func dotCommandsShowOpenAndTime() throws {
        let fx = try EndToEndFixture.get()
        let other = try EndToEndFixture.scratchDirectory("shell-open").appendingPathComponent("small.snapshot").path
        try QuoteGenerator(tickers: 2, days: 10, seed: 3).makeTable().save(to: other)
        let run = try Self.shellThroughAPipe(
            """
            .timing on
            --count
            .tickers NOPE
            .show
            .open \(other)
            .tickers all
            --count
            .help
            """)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.hasPrefix("\(fx.table.rowCount)\n"))
        #expect(run.standardOutput.contains("warning: no ticker 'NOPE' in this snapshot"))
        #expect(run.standardOutput.contains("snapshot \(fx.snapshot)\ntickers  NOPE"))
        #expect(run.standardOutput.contains("opened \(other): 20 rows, 2 tickers\n20\n"))
        #expect(run.standardOutput.contains(".timing on|off"))
        let timings = run.standardError.split(separator: "\n").filter { $0.hasPrefix("Run Time: ") && $0.hasSuffix(" ms") }
        #expect(timings.count == 2, "\(run.standardError)")
    }

    @Test func tickersListsMaxrowsCapsATerminalTableAndExitLeaves() throws {
        let fx = try EndToEndFixture.get()
        let session = try ShellSession(
            source: .file(fx.snapshot), verify: true,
            context: CommandContext(
                standardOutput: MemoryOutputWriter(), standardError: MemoryOutputWriter(),
                environment: [:], currentDirectory: "/tmp"))
        guard case .message(let list) = try session.interpret(".tickers") else {
            Issue.record("no listing")
            return
        }
        #expect(list.hasPrefix("\(fx.table.tickers.count) tickers in this snapshot (screens use: all): "))
        for ticker in fx.table.tickers { #expect(list.contains(ticker.symbol)) }
        _ = try session.interpret(".maxrows 3")
        #expect(session.settings.maxRows == .rows(3))
        guard case .query(let parsed) = try session.interpret("close > 0") else {
            Issue.record("not a query")
            return
        }
        let terminal = MemoryOutputWriter(), errors = MemoryOutputWriter()
        terminal.isTerminal = true
        let context = CommandContext(standardOutput: terminal, standardError: errors, environment: [:], currentDirectory: "/tmp")
        _ = try session.answer(parsed, context: context, isCancelled: { false })
        let lines = terminal.text.split(separator: "\n")
        #expect(lines.count == 2 + 3 + 1, "\(terminal.text)")
        #expect(lines[4].hasPrefix("… ") && lines[4].hasSuffix(" more rows …"), "two first rows, the gap, one last row")
        #expect(errors.text.hasPrefix("3 of \(fx.table.rowCount.groupedText) matching rows shown"))
        _ = try session.interpret(".maxrows 0")
        let all = MemoryOutputWriter()
        all.isTerminal = true
        _ = try session.answer(
            parsed,
            context: CommandContext(
                standardOutput: all, standardError: MemoryOutputWriter(), environment: [:],
                currentDirectory: "/tmp"), isCancelled: { false })
        #expect(all.text.split(separator: "\n").count == 2 + fx.table.rowCount)
        for word in ["exit", "quit", "  quit  ", ".quit"] {
            guard case .quit = try session.interpret(word) else {
                Issue.record("\(word) does not quit")
                continue
            }
        }
    }

    @Test func thePipeRunsAsAProcessToo() throws {
        let fx = try EndToEndFixture.get()
        let process = Process()
        process.executableURL = try BuiltExecutable.url()
        process.arguments = ["shell", "--snapshot", fx.snapshot]
        process.environment = EndToEndFixture.cleanEnvironment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // One answer per line read: the first answer arrives before the second line is sent.
        input.fileHandleForWriting.write(Data(".format csv\n--count\n".utf8))
        var received = Data()
        let first = try Self.filter(["--format", "csv", "--count"])
        while String(decoding: received, as: UTF8.self).count < first.count {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received += chunk
        }
        #expect(String(decoding: received, as: UTF8.self) == first)
        input.fileHandleForWriting.write(Data("--count --where 'close > 100'\n".utf8))
        try input.fileHandleForWriting.close()
        received += output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let expected =
            try Self.filter(["--format", "csv", "--count"]) + Self.filter(["--format", "csv", "--count", "--where", "close > 100"])
        #expect(String(decoding: received, as: UTF8.self) == expected)
    }

    // MARK: On a terminal

    static func terminal(home: URL) throws -> PseudoTerminalSession {
        var environment = EndToEndFixture.cleanEnvironment
        environment["HOME"] = home.path
        environment["TERM"] = "xterm"
        return try PseudoTerminalSession(["shell", "--snapshot", try EndToEndFixture.get().snapshot], environment: environment, in: home)
    }

    /// A fresh prompt (after the banner or an answer), not a redraw of the line being edited.
    static let prompt = "\ncolonnade> "

    /// The answer printed before the last fresh prompt: the text from the end of the line that
    /// was entered (its last redraw ends with an erase-to-end, then the new line) to the prompt.
    static func lastAnswer(in output: String) -> String? {
        guard let promptStart = output.range(of: prompt, options: .backwards) else { return nil }
        let before = output[..<promptStart.lowerBound]
        guard let entered = before.range(of: "\u{1B}[K\n", options: .backwards) else { return nil }
        return String(before[entered.upperBound...]) + "\n"
    }

    @Test func editingKeysHistoryAndCtrlDOnATerminal() throws {
        let home = try EndToEndFixture.scratchDirectory("shell-home")
        let expected = try Self.filter(["--format", "csv", "--where", "close > 150"])
        do {
            let term = try Self.terminal(home: home)
            try term.waitFor(Self.prompt)
            term.type(".format csv\r")
            try term.waitFor(Self.prompt, occurrences: 2)
            // Typed "clse > 1200", then: Home, Right ×2, "o" → "close > 1200"; End, Backspace ×3,
            // "50" → "close > 150"; Left ×2, Delete, Ctrl-E … as a user fixing a typo would.
            term.type("clse > 1200")
            term.type("\u{1B}[H\u{1B}[C\u{1B}[Co")
            term.type("\u{1B}[F\u{7F}\u{7F}\u{7F}")
            term.type("50")
            term.type("\u{1B}[D\u{1B}[D\u{1B}[3~5\u{05}\r")
            let output = try term.waitFor(Self.prompt, occurrences: 3)
            #expect(Self.lastAnswer(in: output) == expected, "\(output.debugDescription)")
            // Up recalls the line; Enter runs it again.
            term.type("\u{1B}[A\r")
            let again = try term.waitFor(Self.prompt, occurrences: 4)
            #expect(again.contains("colonnade> close > 150"), "the recalled line is drawn")
            #expect(again.components(separatedBy: expected).count - 1 == 2, "answered twice")
            // Ctrl-C at the prompt abandons a half-typed line.
            term.type("volume >\u{03}")
            try term.waitFor("volume >^C\ncolonnade> ")
            term.type("\u{04}")
            #expect(try term.finish() == 0)
        }
        let history = try String(contentsOf: home.appendingPathComponent(".colonnade_history"), encoding: .utf8)
        #expect(history == ".format csv\nclose > 150\n", "the repeat is not stored twice; the abandoned line not at all")
        var mode = stat()
        #expect(stat(home.appendingPathComponent(".colonnade_history").path, &mode) == 0 && mode.st_mode & 0o777 == 0o600)

        // A new session starts with that history: Up twice reaches ".format csv".
        let term = try Self.terminal(home: home)
        try term.waitFor(Self.prompt)
        term.type("\u{1B}[A\u{1B}[A\r")
        try term.waitFor("colonnade> .format csv")
        term.type(".quit\r")
        #expect(try term.finish() == 0)
    }

    @Test func ctrlCCancelsALongQueryAndTheSessionGoesOn() throws {
        let home = try EndToEndFixture.scratchDirectory("shell-cancel")
        let term = try Self.terminal(home: home)
        try term.waitFor(Self.prompt)
        // A query that would run for hours: its --repeat loop only ends by cancellation.
        term.type("--count --where 'close > 0' --timing --repeat 1000000000\r")
        try term.waitFor("--repeat 1000000000\n")
        term.type("\u{03}")
        try term.waitFor("^C\nquery cancelled\ncolonnade> ")
        term.type("--count\r")
        let output = try term.waitFor(Self.prompt, occurrences: 3)
        #expect(output.hasSuffix("\(try EndToEndFixture.get().table.rowCount)\ncolonnade> "), "\(output.debugDescription)")
        term.type("\u{04}")
        #expect(try term.finish() == 0)
    }

    /// What a terminal is in when no program has changed it: canonical input, echo, signal keys.
    static let cookedModes = tcflag_t(ICANON | ECHO | ISIG)

    /// SIGTERM (and SIGHUP, as when the terminal window closes) at the prompt: the terminal gets
    /// its modes back (line editing, echo, signal keys) before the process ends by that signal.
    @Test(arguments: [SIGTERM, SIGHUP])
    func anEndingSignalPutsTheTerminalBack(signal number: Int32) throws {
        let home = try EndToEndFixture.scratchDirectory("shell-signal-\(number)")
        let term = try Self.terminal(home: home)
        #expect(try term.localModes() & Self.cookedModes == Self.cookedModes, "a fresh terminal is cooked")
        try term.waitFor(Self.prompt)
        term.type("close > 1")
        try term.waitFor("colonnade> close > 1")
        #expect(try term.localModes() & Self.cookedModes == 0, "raw while the shell runs")
        term.send(signal: number)
        #expect(try term.finish() == number && term.endedBySignal, "ended by the signal itself")
        #expect(try term.localModes() & Self.cookedModes == Self.cookedModes, "put back before ending")
    }

    /// SIGTERM while a long query runs: the terminal is put back too.
    @Test func sigtermDuringAQueryPutsTheTerminalBack() throws {
        let home = try EndToEndFixture.scratchDirectory("shell-sigterm-query")
        let term = try Self.terminal(home: home)
        try term.waitFor(Self.prompt)
        term.type("--count --where 'close > 0' --timing --repeat 1000000000\r")
        try term.waitFor("--repeat 1000000000\n")
        term.send(signal: SIGTERM)
        #expect(try term.finish() == SIGTERM && term.endedBySignal)
        #expect(try term.localModes() & Self.cookedModes == Self.cookedModes)
    }

    /// SIGINT from outside (`kill -INT`) acts as Ctrl-C: at the prompt it abandons the line, during
    /// a query it cancels the query; the session goes on either way.
    @Test func sigintActsAsCtrlC() throws {
        let home = try EndToEndFixture.scratchDirectory("shell-sigint")
        let term = try Self.terminal(home: home)
        try term.waitFor(Self.prompt)
        term.type("volume >")
        try term.waitFor("colonnade> volume >")
        term.send(signal: SIGINT)
        try term.waitFor("volume >^C\ncolonnade> ")
        term.type("--count --where 'close > 0' --timing --repeat 1000000000\r")
        try term.waitFor("--repeat 1000000000\n")
        term.send(signal: SIGINT)
        try term.waitFor("^C\nquery cancelled\ncolonnade> ")
        term.type("--count\r")
        let output = try term.waitFor(Self.prompt, occurrences: 4)
        #expect(output.hasSuffix("\(try EndToEndFixture.get().table.rowCount)\ncolonnade> "), "\(output.debugDescription)")
        term.type("\u{04}")
        #expect(try term.finish() == 0)
        #expect(try term.localModes() & Self.cookedModes == Self.cookedModes)
        let history = try String(contentsOf: home.appendingPathComponent(".colonnade_history"), encoding: .utf8)
        #expect(!history.contains("volume >"), "the abandoned line is not kept")
    }
}

/// Tab at the shell's prompt: what completes where.
@Suite struct ShellCompletionTests {
    static func session() throws -> ShellSession {
        try ShellSession(
            source: .file(try EndToEndFixture.get().snapshot), verify: false,
            context: CommandContext(
                standardOutput: MemoryOutputWriter(), standardError: MemoryOutputWriter(),
                environment: [:], currentDirectory: "/tmp"))
    }

    @Test func completesDotCommandsOptionsTickersColumnsAndFunctions() throws {
        let session = try Self.session()
        func complete(_ prefix: String) -> [String] { session.completions(for: prefix).candidates }
        #expect(complete(".ti") == [".tickers", ".timing"])
        #expect(complete(".ma") == [".max-stale", ".maxrows"])
        #expect(complete("--co") == ["--columns", "--count"])
        #expect(complete(".tickers AA") == ["AAPL"])
        #expect(complete(".tickers AAPL,MS") == ["MSFT"])
        #expect(session.completions(for: ".tickers AAPL,MS").start == ".tickers AAPL,".count)
        #expect(complete("ticker in (K") == ["KO"])
        #expect(complete("--tickers c").contains("CSCO"))
        #expect(complete("adj_c") == ["adj_close"])
        #expect(complete("close > mav") == ["mavg("])
        #expect(complete("close > 1 a") == ["adj_open", "adj_high", "adj_low", "adj_close", "adj_volume", "abs(", "avg(", "and"])
        #expect(complete(".format n") == ["ndjson"])
        #expect(complete("--snap").isEmpty, "the shell keeps one snapshot")
    }

    @Test func tabCompletesAtTheTerminalPrompt() throws {
        let home = try EndToEndFixture.scratchDirectory("shell-tab")
        let term = try ShellTests.terminal(home: home)
        try term.waitFor("colonnade> ")
        term.type(".tick\t")
        try term.waitFor("colonnade> .tickers ")
        term.type("KO\r")
        try term.waitFor("colonnade> ", occurrences: 2)
        term.type("--cou\t--where 'adj_cl\t> 0'\r")
        // Redrawn lines carry erase-to-end-of-line codes: the count of KO's rows is the proof.
        let ko = try EndToEndFixture.get().table.ticker("KO")!.rowCount
        let output = try term.waitFor("\n\(ko)\n")
        #expect(output.replacingOccurrences(of: "\u{1B}[K", with: "").contains("--count --where 'adj_close > 0'"))
        term.type("quit\r")
        #expect(try term.finish() == 0)
    }
}
