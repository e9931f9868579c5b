import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import Foundation
import Testing

/// Issue 11, item 10: text from a snapshot, an input file or its name never reaches the
/// terminal with control characters in it — no OSC (title, clipboard), no CSI, no 8-bit C1, no
/// bidirectional override — whatever command and format prints it.
@Suite struct TerminalInjectionTests {
    static let osc52 = "\u{1B}]52;c;aGVsbG8=\u{07}"
    static let hostileSymbol = "EVIL\u{1B}[2J\u{9B}31m\u{202E}"
    static let hostileColumn = "Close" + osc52
    static let hostileMetadata = ["source\u{1B}[31m": "v\u{9D}0;title\u{9C}\u{2066}", "note": "a\u{7F}b\u{2028}c"]

    /// The scalars no output may carry (line feeds are output's own).
    static func unsafeScalars(_ text: String) -> [String] {
        text.unicodeScalars.filter { $0 != "\n" && TerminalText.needsEscape($0) }.map { "U+" + String($0.value, radix: 16) }
    }

    /// Runs in-process with both streams claiming to be terminals.
    static func onTerminal(_ arguments: [String]) -> Invocation {
        let output = MemoryOutputWriter(), errors = MemoryOutputWriter()
        output.isTerminal = true
        errors.isTerminal = true
        let context = CommandContext(standardOutput: output, standardError: errors, environment: [:], currentDirectory: "/tmp")
        let status = runColonnade(arguments, context: context)
        return Invocation(status: status, standardOutput: output.text, standardError: errors.text)
    }

    static func hostileSnapshot(in dir: String) throws -> String {
        let path = dir + "/hostile.snapshot"
        let schema = [ColumnDescriptor(name: hostileColumn, type: .float64)]
        var table = try QuoteTable(
            schema: schema, columns: [.float64(Column<Double>([1, 2]))], dates: Column<Int32>([0, 1]),
            tickers: [TickerEntry(symbol: hostileSymbol, metadata: ["name": "Name" + osc52], firstRow: 0, rowCount: 2)],
            dateColumnName: "Day\u{1B}[1m", metadata: hostileMetadata)
        table.computeSummaries()
        try table.save(to: path, durable: false)
        return path
    }

    @Test(arguments: [
        ["info"], ["info", "--format", "json"],
        ["filter", "--format", "table"], ["filter", "--format", "csv"], ["filter", "--format", "json"], ["filter", "--format", "ndjson"],
        ["filter", "--count", "--by-ticker"], ["export", "--format", "csv"], ["export", "--format", "ndjson"], ["verify"],
        ["filter", "--where", "ticker in (\"\(hostileSymbol)\") and nope > 1"],
    ])
    func hostileSnapshotTextIsEscapedInEveryCommand(arguments: [String]) throws {
        let scratch = try Scratch()
        let path = try Self.hostileSnapshot(in: scratch.path)
        let run = Self.onTerminal(arguments + ["--snapshot", path])
        #expect(Self.unsafeScalars(run.standardOutput).isEmpty, "stdout: \(Self.unsafeScalars(run.standardOutput))")
        #expect(Self.unsafeScalars(run.standardError).isEmpty, "stderr: \(Self.unsafeScalars(run.standardError))")
        #expect(!(run.standardOutput + run.standardError).isEmpty)
    }

    @Test func escapedTextStaysReadableAndJSONStaysTheSameValue() throws {
        let scratch = try Scratch()
        let path = try Self.hostileSnapshot(in: scratch.path)
        let info = colonnade("info", "--snapshot", path)
        #expect(info.standardOutput.contains("EVIL\\u{1B}[2J\\u{9B}31m\\u{202E}"), "\(info.standardOutput)")
        #expect(info.standardOutput.contains("metadata    source\\u{1B}[31m: v\\u{9D}0;title\\u{9C}\\u{2066}"))
        // JSON output escapes as \uXXXX: a JSON parser reads back exactly the stored text.
        let json = colonnade("filter", "--format", "ndjson", "--snapshot", path)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.split(separator: "\n")[0].utf8)) as? [String: Any])
        #expect(object["ticker"] as? String == Self.hostileSymbol)
        let infoJSON = colonnade("info", "--format", "json", "--snapshot", path)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(infoJSON.standardOutput.utf8)) as? [String: Any])
        #expect((parsed["metadata"] as? [String: String]) == Self.hostileMetadata)
    }

    @Test func hostileFileNamesAndHeadersInImportErrorsAreEscaped() async throws {
        let scratch = try Scratch()
        let name = "evil\u{1B}]0;pwned\u{07}.csv"
        try scratch.write("Date,Close\u{1B}[31m\n2014-01-02,abc\u{9B}1m\n", to: name)
        let run = await runOffPool(["import", scratch.file(name), "--ticker", "X", "--snapshot", scratch.snapshot], in: scratch)
        #expect(run.status == 1)
        #expect(run.errorLines.first?.lowercased().contains("evil\\u{1b}]0;pwned\\u{7}.csv") == true, "\(run.standardError)")
        #expect(Self.unsafeScalars(run.standardError).isEmpty, "\(Self.unsafeScalars(run.standardError))")
        // A good file with a hostile name: the summary names it escaped.
        let good = "ok\u{1B}[1m.csv"
        try scratch.write("Date,Close\n2014-01-02,1\n", to: good)
        let ok = await runOffPool(["import", scratch.file(good), "--ticker", "X\u{9B}", "--snapshot", scratch.snapshot], in: scratch)
        #expect(ok.status == 0, "\(ok.standardError)")
        #expect(Self.unsafeScalars(ok.standardOutput).isEmpty && Self.unsafeScalars(ok.standardError).isEmpty, "\(ok.standardOutput)")
    }

    @Test func csvKeepsExactTextForFilesAndPipesAndEscapesItForTerminals() throws {
        let scratch = try Scratch()
        let path = try Self.hostileSnapshot(in: scratch.path)
        let piped = colonnade("filter", "--format", "csv", "--snapshot", path)
        #expect(piped.standardOutput.contains(Self.hostileSymbol), "lossless when not a terminal")
        let shown = Self.onTerminal(["filter", "--format", "csv", "--snapshot", path])
        #expect(shown.standardOutput.contains("EVIL\\u{1B}[2J\\u{9B}31m\\u{202E}"))
    }

    @Test func terminalTextEscapesExactlyTheDangerousScalars() {
        #expect(TerminalText.escaped("plain ÄБ日本 📈 \\ text") == "plain ÄБ日本 📈 \\ text")
        #expect(TerminalText.escaped("a\u{1B}]0;t\u{07}b") == "a\\u{1B}]0;t\\u{7}b")
        #expect(TerminalText.escaped("\u{9B}\u{202E}\u{2028}\u{7F}\t") == "\\u{9B}\\u{202E}\\u{2028}\\u{7F}\\t")
        #expect(TerminalText.escapedJSON("{\"a\":\"x\u{9B}\u{202E}\"}") == "{\"a\":\"x\\u009b\\u202e\"}")
    }
    // MARK: Issue 28, item 15: the shell and warnings

    /// ESC (a CSI and an OSC title), BEL, CR, DEL, a C1 CSI, a bidirectional override, NEL.
    static let hostileTyped = "X\u{1B}[2J\u{1B}]0;pwned\u{07}\rY\u{7F}\u{9B}1m\u{202E}\u{85}"

    @Test func theShellShowsSettingsAndWarnsAboutUnknownTickersEscaped() throws {
        // Bytes as a screens file would hold them, an invalid UTF-8 byte included (read as U+FFFD).
        var script = Array(".tickers AAPL,\(Self.hostileTyped)\n.columns close,\(Self.hostileTyped)\n.show\n".utf8)
        script += Array(".tickers Z".utf8) + [0xFF, 0xC0] + Array("\n.show\n".utf8)
        let run = try ShellTests.shellThroughAPipe(String(decoding: script, as: UTF8.self))
        #expect(Self.unsafeScalars(run.standardOutput).isEmpty, "stdout: \(Self.unsafeScalars(run.standardOutput))")
        #expect(Self.unsafeScalars(run.standardError).isEmpty, "stderr: \(Self.unsafeScalars(run.standardError))")
        let escaped = "X\\u{1B}[2J\\u{1B}]0;pwned\\u{7}\\rY\\u{7F}\\u{9B}1m\\u{202E}\\u{85}"
        #expect(run.standardOutput.contains("warning: no ticker '\(escaped)' in this snapshot"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("tickers  AAPL,\(escaped)\n"))
        #expect(run.standardOutput.contains("columns  close,\(escaped)\n"))
        #expect(run.standardOutput.contains("tickers  Z\u{FFFD}\u{FFFD}\n"), "invalid UTF-8 shows as U+FFFD")
    }

    @Test func theUnknownTickerWarningOfFilterIsEscaped() throws {
        let fx = try EndToEndFixture.get()
        let run = Self.onTerminal(["filter", "--snapshot", fx.snapshot, "--count", "--tickers", "AAPL,\(Self.hostileTyped)"])
        #expect(run.status == 0)
        #expect(Self.unsafeScalars(run.standardError).isEmpty, "\(Self.unsafeScalars(run.standardError))")
        #expect(run.standardError.hasPrefix("warning: no ticker 'X\\u{1B}[2J"), "\(run.standardError)")
        let inWhere = Self.onTerminal(["filter", "--snapshot", fx.snapshot, "--count", "--where", "ticker in ('a\u{9B}\u{1B}c')"])
        #expect(inWhere.standardError.hasPrefix("warning: no ticker 'a\\u{9B}\\u{1B}c'"), "\(inWhere.standardError)")
    }

    @Test func theOneEscaperHandlesLineBreaksThreeWays() {
        let text = "a\nb\r\nc\td\u{1B}e\u{2028}f"
        #expect(TerminalText.escaped(text) == "a\\nb\\r\\nc\\td\\u{1B}e\\u{2028}f")
        #expect(TerminalText.escaped(text, lineBreaks: .spaces) == "a b c\\td\\u{1B}e f")
        #expect(TerminalText.escaped(text, lineBreaks: .kept) == "a\nb\r\nc\td\\u{1B}e\\u{2028}f")
        #expect(TerminalText.escaped("ok", lineBreaks: .spaces) == "ok")
        // Error reports use the spaces rule, CSV fields on a terminal the kept one.
        #expect(ErrorReport(CommandFailure("bad\nname\u{1B}]0;t\u{07}")).message == "bad name\\u{1B}]0;t\\u{7}")
        var line = ""
        CSVFormatter.appendField("x\ny\u{9B}", to: &line, escaping: true)
        #expect(line == "\"x\ny\\u{9B}\"")
    }

    @Test func theLineEditorNeverTakesInOrDrawsAControlCharacter() throws {
        var keys: [Int32] = [0, 0], screen: [Int32] = [0, 0]
        #expect(pipe(&keys) == 0 && pipe(&screen) == 0)
        defer {
            close(keys[0])
            close(screen[0])
        }
        // Types a C1 CSI (UTF-8 C2 9B), a right-to-left override and a letter, Enter; then recalls
        // a history line holding ESC and BEL (up), Enter.
        let typed: [UInt8] = [0xC2, 0x9B] + Array("\u{202E}ok\r".utf8) + [0x1B, 0x5B, 0x41, 0x0D]
        _ = typed.withUnsafeBytes { write(keys[1], $0.baseAddress, $0.count) }
        close(keys[1])
        let editor = LineEditor(input: keys[0], output: screen[1], history: ["old\u{1B}]0;t\u{07}line"])
        var states = [EditBuffer]()
        editor.afterEachKey = { states.append($0) }
        #expect(editor.readLine(prompt: "> ") == .line("ok"))
        #expect(editor.readLine(prompt: "> ") == .line("old]0;tline"))
        close(screen[1])
        var drawn = [UInt8](), chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(screen[0], &chunk, chunk.count)
            if n <= 0 { break }
            drawn += chunk[..<n]
        }
        // The editor's own sequences are ESC [ K and ESC [ n D; nothing else may reach the screen.
        let text = String(decoding: drawn, as: UTF8.self).replacingOccurrences(of: "\u{1B}[K", with: "")
        #expect(Self.unsafeScalars(text.replacingOccurrences(of: "\r", with: "")).isEmpty, "\(text.debugDescription)")
        #expect(!states.isEmpty && states.allSatisfy(\.isValid))
    }
    @Test func theBulkProgressLineEscapesTheServersStatusAndLinkHost() {
        let writer = MemoryOutputWriter()
        let progress = BulkProgress(enabled: true, writer: writer)
        progress.report(.waiting(status: "creat\u{1B}]0;pwned\u{07}ing", elapsed: .seconds(1), next: .seconds(1)))
        progress.report(.downloading(host: "evil\u{9B}2J.example", offset: 0))
        progress.finish()
        // The line's own ESC [ K aside, nothing the server sent reaches the terminal raw.
        #expect(Self.unsafeScalars(writer.text.replacingOccurrences(of: "\r\u{1B}[K", with: "")).isEmpty, "\(writer.text.debugDescription)")
        #expect(writer.text.contains("waiting for the export: creat\\u{1B}]0;pwned\\u{7}ing, 0:01"))
        #expect(writer.text.contains("downloading the export from evil\\u{9B}2J.example"))
    }
}
