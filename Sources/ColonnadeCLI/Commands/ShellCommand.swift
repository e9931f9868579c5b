import Colonnade
import Foundation
import Synchronization

/// `colonnade shell`: one loaded snapshot, screens answered line by line (see ``ShellSession``).
///
/// On a terminal (standard input and output both): a prompt and ``LineEditor``, with the terminal
/// in raw input mode so Ctrl-C arrives as a key; each screen is answered on another thread while
/// this one watches the keyboard, and Ctrl-C cancels it (its output stops at once, a `--repeat`
/// loop at its next run) and returns to the prompt. Otherwise: no prompt and no escape codes,
/// lines read one at a time, answers flushed after each, errors naming the line.
struct ShellCommand: Command {
    var spec: CommandSpec { .shell }

    /// Where lines come from (standard input; a test may pass another descriptor).
    var input: Int32 = 0
    /// The descriptor of the terminal the line editor draws on, when interactive.
    var terminalOutput: Int32 = 1

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let source = try SnapshotLocation.forReading(parsed, Options.snapshot, context: context)
        let session = try ShellSession(source: source, verify: !parsed[Options.noVerify], context: context)
        if isatty(input) == 1 && isatty(terminalOutput) == 1, let mode = TerminalMode(fileDescriptor: input) {
            // SIGTERM and SIGHUP put the terminal back before ending; SIGINT acts as Ctrl-C.
            let signals = ShellSignals(restoring: mode, terminal: terminalOutput)
            defer {
                mode.restore()  // first: a signal arriving now ends a process whose terminal is already back
                signals?.stop()
            }
            return interactive(session, signals: signals, context: context)
        }
        return script(session, context: context)
    }

    // MARK: From a pipe or a file

    private func script(_ session: ShellSession, context: CommandContext) -> Int32 {
        let reader = LineReader(fileDescriptor: input)
        var failed = 0
        var number = 0
        while let line = reader.next() {
            number += 1
            do {
                switch try session.interpret(line) {
                case .nothing: continue
                case .quit: return failed > 0 ? ExitStatus.failure : ExitStatus.success
                case .message(let text):
                    if !text.isEmpty { try context.standardOutput.writeLine(text) }
                case .query(let parsed):
                    let start = ContinuousClock.now
                    _ = try session.answer(parsed, context: context, isCancelled: { false })
                    let elapsed = ContinuousClock.now - start
                    try context.standardOutput.flush()  // the answer before its time, even when both go to one terminal
                    if session.settings.timing {
                        try context.standardError.writeLine(Self.timing(elapsed))
                        try context.standardError.flush()
                    }
                }
                try context.standardOutput.flush()
            } catch OutputError.brokenPipe {
                return ExitStatus.success  // the reader is gone
            } catch {
                failed += 1
                try? context.standardOutput.flush()
                Self.report(error, line: number, to: context.standardError)
            }
        }
        return failed > 0 ? ExitStatus.failure : ExitStatus.success
    }

    // MARK: On a terminal

    private func interactive(_ session: ShellSession, signals: ShellSignals?, context: CommandContext) -> Int32 {
        let history = ShellHistory(environment: context.environment)
        let editor = LineEditor(input: input, output: terminalOutput, history: history.load())
        editor.signals = signals
        editor.completer = { session.completions(for: $0) }
        let table = session.table
        editor.write(
            "colonnade shell: \(TerminalText.escaped(session.source.displayName)), \(table.rowCount.groupedText) rows, \(table.tickers.count) tickers. "
                + "Type a screen (close > 100), .help for help, Ctrl-D to quit.\n")
        while true {
            let line: String
            switch editor.readLine(prompt: "colonnade> ") {
            case .endOfInput: return ExitStatus.success
            case .interrupt: continue
            case .line(let text): line = text
            }
            if editor.remember(line.trimmingSpacesAndTabs()) { history.append(line.trimmingSpacesAndTabs()) }
            do {
                switch try session.interpret(line) {
                case .nothing: continue
                case .quit: return ExitStatus.success
                case .message(let text): if !text.isEmpty { editor.write(text + "\n") }
                case .query(let parsed): answerWatchingForCtrlC(parsed, session: session, editor: editor, context: context)
                }
            } catch {
                Self.report(error, line: nil, to: context.standardError)
                try? context.standardError.flush()
            }
        }
    }

    /// What the answering thread hands back.
    private struct Answer: Sendable {
        var error: String?
        var elapsed: Duration
    }

    /// Answers `parsed` on another thread while reading keys: Ctrl-C cancels; other keys are kept
    /// for the next prompt.
    private func answerWatchingForCtrlC(_ parsed: ParsedArguments, session: ShellSession, editor: LineEditor, context: CommandContext) {
        var wake: [Int32] = [0, 0]
        guard pipe(&wake) == 0 else {
            Self.report(CommandFailure("cannot start the query (pipe: errno \(errno))"), line: nil, to: context.standardError)
            return
        }
        defer { close(wake[0]) }
        let output = CancellableOutputWriter(FileDescriptorWriter(fileDescriptor: 1, destination: "standard output"))
        let errors = CancellableOutputWriter(FileDescriptorWriter(fileDescriptor: 2, destination: "standard error"))
        let result = Mutex<Answer?>(nil)
        let table = session.table, source = session.source, settingsTiming = session.settings.timing
        let rowCap = session.settings.maxRows
        let environment = context.environment, directory = context.currentDirectory
        let writeEnd = wake[1]
        let worker = Thread {
            let queryContext = CommandContext(
                standardOutput: output, standardError: errors,
                environment: environment, currentDirectory: directory)
            let start = ContinuousClock.now
            var message: String?
            do {
                _ = try FilterCommand.answer(
                    parsed, table: table, loadTime: .zero, source: source, rowCap: rowCap, context: queryContext,
                    isCancelled: { output.isCancelled })
                try output.flush()
            } catch {
                if !output.isCancelled {
                    let text = MemoryOutputWriter()
                    ErrorReport(error).write(to: text)
                    message = Self.inShellTerms(text.text)
                }
            }
            try? errors.flush()
            let elapsed = ContinuousClock.now - start
            result.withLock { $0 = Answer(error: message, elapsed: elapsed) }
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
            close(writeEnd)
        }
        worker.stackSize = 8 << 20
        worker.start()

        var fds = [
            pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0),
            pollfd(fd: editor.signals?.interruptDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let n = SystemCall.retryingOnInterrupt { poll(&fds, 3, -1) }
            if n < 0 { break }
            if fds[1].revents != 0 { break }  // the answer is complete
            if fds[2].revents != 0, editor.signals?.takeInterrupt() == true {  // SIGINT: as Ctrl-C
                output.cancel()
                errors.cancel()
                editor.write("^C\r\nquery cancelled\r\n")
                return
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                var bytes = [UInt8](repeating: 0, count: 256)
                let count = read(input, &bytes, bytes.count)
                if count <= 0 {
                    fds[0].fd = -1
                    continue
                }  // input closed: just wait for the answer
                let typed = bytes[..<count]
                if let interrupt = typed.firstIndex(of: 0x03) {
                    output.cancel()
                    errors.cancel()
                    editor.pending = Array(typed[(interrupt + 1)...])
                    editor.write("^C\r\nquery cancelled\r\n")
                    return
                }
                editor.pending += typed
            } else if fds[0].revents != 0 {
                fds[0].fd = -1
            }
        }
        guard let answer = result.withLock({ $0 }) else { return }
        if let error = answer.error {
            editor.write(error.replacingOccurrences(of: "\n", with: "\r\n"))  // no run time for a line that failed
        } else if settingsTiming {
            editor.write(Self.timing(answer.elapsed) + "\r\n")
        }
    }

    // MARK: Reporting

    /// `Run Time: 3.214 ms` (the screen, from parsing to the last byte written).
    static func timing(_ elapsed: Duration) -> String {
        let ms = Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
        return "Run Time: " + String(format: "%.3f ms", ms)
    }

    /// A report's hints in the shell's terms: the dot-command that does what a hint's command
    /// line would (`'.info'` for `'colonnade info'`, `.open PATH` for `--snapshot PATH`).
    static func inShellTerms(_ report: String) -> String {
        report.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix("hint: ") else { return String(line) }
            return line.replacingOccurrences(of: "'colonnade info'", with: "'.info'")
                .replacingOccurrences(of: "--snapshot PATH", with: ".open PATH")
                .replacingOccurrences(of: "'colonnade help filter'", with: "'.help'")
        }.joined(separator: "\n")
    }

    /// `error: line 3: …` and the hint, on `writer`.
    static func report(_ error: any Error, line: Int?, to writer: any OutputWriter) {
        let text = MemoryOutputWriter()
        ErrorReport(error).write(to: text)
        var out = inShellTerms(text.text)
        if let line, out.hasPrefix("error: ") { out = "error: line \(line): " + out.dropFirst("error: ".count) }
        try? writer.write(out)
        try? writer.flush()
    }
}
