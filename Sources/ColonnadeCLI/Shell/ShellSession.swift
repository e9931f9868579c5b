import Colonnade

/// The state of one `colonnade shell`: the loaded snapshot and the settings, and what each typed
/// line means. Terminal handling lives in ``ShellCommand``; this type only interprets lines.
///
/// A line is one of:
/// - empty or starting with `#`: nothing (so a file of screens can have comments);
/// - a dot-command (`.tickers AAPL,MSFT`, `.help`): changes a setting or shows something;
/// - starting with `-`: `filter` options (`--where 'close > 100' --count`), quoted as in a shell;
/// - anything else: a `--where` expression.
///
/// Screens are answered exactly as `colonnade filter` with the settings' options and the line's.
final class ShellSession {
    /// What a line asks for.
    enum Action {
        /// Nothing to do (blank line, comment).
        case nothing
        /// Leave the shell.
        case quit
        /// Text to print (from a dot-command, already done); what it quotes from the line, a
        /// file or the snapshot is already escaped (`TerminalText`), so it prints as it is.
        case message(String)
        /// A screen to answer: `filter` arguments, parsed.
        case query(ParsedArguments)
    }

    /// The snapshot being queried.
    private(set) var table: QuoteTable
    /// Where it came from: a file, or the built-in sample.
    private(set) var source: SnapshotSource
    /// The settings so far.
    var settings = ShellSettings()
    /// Whether the snapshot is loaded without checking column checksums (`--no-verify`, `.open`).
    let verify: Bool
    private let context: CommandContext

    /// A session over `source`, loaded now.
    init(source: SnapshotSource, verify: Bool, context: CommandContext) throws {
        self.source = source
        self.verify = verify
        self.context = context
        table = try source.load(verify: verify)
    }

    /// What `line` asks for; dot-commands are carried out here.
    ///
    /// - Throws: a ``UsageError`` or ``CommandFailure`` for a line that cannot be done; the
    ///   settings are then unchanged.
    func interpret(_ line: String) throws -> Action {
        let text = line.trimmingSpacesAndTabs()
        if text.isEmpty || text.hasPrefix("#") { return .nothing }
        if text == "exit" || text == "quit" { return .quit }
        if text.hasPrefix(".") { return try dotCommand(text) }
        var arguments: [String]
        if text.hasPrefix("-") {
            let words = try ShellWords.split(text)
            if let given = words.first(where: { $0 == "--snapshot" || $0.hasPrefix("--snapshot=") }) {
                throw CommandFailure("\(given): the shell keeps one snapshot loaded", hint: "use .open PATH to switch to another")
            }
            let summarizing = words.contains { $0 == "--count" || $0 == "--agg" || $0.hasPrefix("--agg=") }
            arguments = settings.filterArguments(summarizing: summarizing) + words
        } else {
            arguments = settings.filterArguments() + ["--where", text]
        }
        return .query(try ArgumentParser.parse(arguments, for: .filter))
    }

    /// Answers a screen as `filter` does, on the loaded table.
    func answer(_ parsed: ParsedArguments, context: CommandContext, isCancelled: () -> Bool) throws -> Int32 {
        try FilterCommand.answer(
            parsed, table: table, loadTime: .zero, source: source, rowCap: settings.maxRows, context: context,
            announcesAdjusted: false, isCancelled: isCancelled)
    }

    // MARK: Dot-commands

    static let helpText = """
        Type a screen: a --where expression (close > 100 and volume > 1e7), or filter options
        (--where 'close > 100' --count, --agg 'avg(close)' --by ticker). Settings persist:
          .tickers A,B          only these tickers (.tickers all: every ticker)
          .tickers              list the snapshot's tickers
          .from YYYY-MM-DD      only rows on or after (.from alone: no bound)
          .to YYYY-MM-DD        only rows on or before (.to alone: no bound)
          .on YYYY-MM-DD|latest screens as of a day, as filter --on (.on alone: every day)
          .max-stale DAYS|none  with .on: how old a ticker's row may be (default 7)
          .adjusted on|off      open, high, low, close, volume read adj_open … adj_volume
          .format FORMAT        table, csv, json or ndjson
          .columns a,b|all      columns to print (.columns alone: the default)
          .limit N              print at most N rows (.limit alone: no limit)
          .maxrows N            show at most N rows of a table here (0: all; alone: a screenful)
          .timing on|off        show how long each answer took
          .show                 the settings
          .open PATH            load another snapshot
          .info                 describe the snapshot
          .help                 this text
          .quit                 leave (also exit, quit, Ctrl-D)
        """

    private func dotCommand(_ text: String) throws -> Action {
        let parts = text.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let name = parts[0]
        let value = parts.count > 1 ? parts[1].trimmingSpacesAndTabs() : nil
        func invalid(_ reason: String) -> UsageError {
            .invalidValue(option: name, value: value ?? "", reason: reason, suggestion: nil, command: "shell")
        }
        switch name {
        case ".quit", ".exit", ".q":
            return .quit
        case ".help", ".h":
            return .message(Self.helpText)
        case ".show", ".settings":
            return .message("snapshot \(TerminalText.escaped(source.displayName))\n" + settings.description)
        case ".tickers":
            guard let value else {
                let symbols = table.tickers.map(\.symbol)
                let setting = settings.tickers.isEmpty ? "all" : settings.tickers.joined(separator: ",")
                return .message(
                    wrap(
                        "\(symbols.count.groupedText) tickers in this snapshot (screens use: \(setting)): "
                            + TerminalText.escaped(symbols.joined(separator: " ")), indent: 0))
            }
            settings.tickers = value.lowercased() == "all" ? [] : splitList(value).filter { !$0.isEmpty }
            let unknown = settings.tickers.filter { table.tickerNumber(of: $0) == nil }
            return .message(
                unknown.isEmpty
                    ? "" : "warning: no ticker \(unknown.map { "'\(TerminalText.escaped($0))'" }.joined(separator: ", ")) in this snapshot")
        case ".from", ".to":
            if let value, case .failure(let problem) = DateArgument.parse(value) { throw invalid("\(problem)") }
            if name == ".from" { settings.from = value } else { settings.to = value }
            if let from = settings.from.flatMap({ Day($0) }), let to = settings.to.flatMap({ Day($0) }), from > to {
                return .message(
                    TerminalText.escaped("warning: .from \(settings.from ?? "") is after .to \(settings.to ?? ""): screens match nothing"))
            }
            return .message("")
        case ".on":
            if let value, ScreenDay(value) == nil { throw invalid("expected a date YYYY-MM-DD or 'latest'") }
            settings.on = value
            return .message("")
        case ".max-stale":
            if let value, StaleLimit(value) == nil { throw invalid("expected a whole number of calendar days or 'none'") }
            settings.maxStale = value
            return .message("")
        case ".adjusted":
            guard value == "on" || value == "off" else { throw invalid("expected on or off") }
            if value == "on" { _ = try FilterCommand.adjustedTable(table, option: ".adjusted") }  // refused now, not on every line
            settings.adjusted = value == "on"
            return .message(settings.adjusted ? "note: " + FilterCommand.adjustedNote : "")
        case ".format":
            let formats = OutputFormat.allCases.map(\.rawValue)
            guard let value, formats.contains(value) else { throw invalid("expected one of " + formats.joined(separator: ", ")) }
            settings.format = value
            return .message("")
        case ".columns":
            settings.columns = value.map(splitList)?.filter { !$0.isEmpty } ?? []
            return .message("")
        case ".limit":
            guard let value else {
                settings.limit = nil
                return .message("")
            }
            guard let n = Int(value), n >= 1 else { throw invalid("expected a positive integer") }
            settings.limit = n
            return .message("")
        case ".maxrows":
            guard let value else {
                settings.maxRows = .screen
                return .message("")
            }
            guard let n = Int(value), n >= 0 else { throw invalid("expected a number of rows (0: all)") }
            settings.maxRows = n == 0 ? .none : .rows(n)
            return .message("")
        case ".timing":
            guard value == "on" || value == "off" else { throw invalid("expected on or off") }
            settings.timing = value == "on"
            return .message("")
        case ".open":
            guard let value else { throw invalid("expected a snapshot path") }
            let newPath = context.resolve(value)
            table = try QuoteTable.load(from: newPath, verify: verify)
            source = .file(newPath)
            return .message("opened \(TerminalText.escaped(newPath)): \(table.rowCount.groupedText) rows, \(table.tickers.count) tickers")
        case ".info":
            let output = MemoryOutputWriter()
            var report = try source.withFile { try InfoCommand.report($0) }
            report.path = source.displayName
            try InfoCommand.writeText(report, to: output)
            return .message(output.text.hasSuffix("\n") ? String(output.text.dropLast()) : output.text)
        default:
            let known = [
                ".tickers", ".from", ".to", ".on", ".max-stale", ".adjusted", ".format", ".columns", ".limit", ".maxrows", ".timing",
                ".show", ".open", ".info",
                ".help", ".quit",
            ]
            let close = Suggestions.closest(to: name, among: known)
            throw CommandFailure(
                "unknown command '\(name)'", hint: close.isEmpty ? "type .help for the commands" : "did you mean '\(close[0])'?")
        }
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and carriage returns.
    func trimmingSpacesAndTabs() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(drop(while: isBlank).reversed().drop(while: isBlank).reversed())
    }
}
