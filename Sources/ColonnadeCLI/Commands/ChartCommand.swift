import Colonnade
import Foundation

/// `colonnade chart TICKER…`: one SVG chart of the tickers' prices (see ``SVGChart``).
struct ChartCommand: Command {
    var spec: CommandSpec { .chart }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        if let output = parsed[Options.output], output != "-", (output as NSString).pathExtension.lowercased() != "svg" {
            throw UsageError.invalidValue(
                option: "--output", value: output,
                reason: "a chart is one SVG document: name the file FILE.svg, or '-' for standard output",
                suggestion: nil, command: spec.name)
        }
        let symbols = parsed.positionals.flatMap { splitList($0) }.filter { !$0.isEmpty }
        guard !symbols.isEmpty else {
            throw UsageError.invalidValue(
                option: "TICKER", value: "", reason: "expected at least one ticker", suggestion: nil, command: spec.name)
        }
        let source = try SnapshotLocation.forReading(parsed, Options.snapshot, context: context)
        let stored = try source.load(verify: !parsed[Options.noVerify])
        // Adjusted prices by default when the table has them: every column read below (the price,
        // candles, --where, --overlay, volume) reads the adjusted view, so they agree.
        let adjusted = !parsed[Options.raw] && stored.hasAdjustedColumns
        let table = adjusted ? try stored.adjustedView() : stored

        let priceName = parsed[Options.price]
        let priceColumn = try Self.column(priceName, in: table, option: "--price")
        // Candlesticks only of close with its own open, high and low: --price of another column is a line.
        let candles = table.schema[priceColumn].identifier == "close"
        var overlays: [(label: String, expression: ValueExpression)] = []
        for text in parsed[Options.overlay] {
            overlays.append((text, try Self.overlay(text, in: table)))
        }
        let volumeColumn = parsed[Options.volume] ? try Self.column("volume", in: table, option: "--volume") : nil
        if parsed[Options.volume] && symbols.count > 1 {
            throw CommandFailure(
                "--volume draws the volume of one ticker; \(symbols.count) were given", hint: "chart one ticker with --volume")
        }

        // Marks: the --where rows (the date range and tickers narrow the series themselves).
        var marks: Bitmask?
        if let text = parsed[Options.where] {
            let predicate: RowPredicate
            do {
                predicate = try QueryParser(table: table).parse(text)
            } catch {
                throw ExpressionError(error: error, expression: text, option: "--where")
            }
            marks = try table.select(predicate).mask
        }

        let from = parsed[Options.from]?.daysSinceEpoch, to = parsed[Options.to]?.daysSinceEpoch
        let asOf = try Self.asOfDays(parsed, symbols: symbols, table: table, context: context)
        var series: [ChartSeries] = []
        for symbol in symbols {
            if let asOf, table.ticker(symbol) != nil, asOf[symbol] == nil { continue }  // stale: left out, as the note said
            guard
                let s = try ChartSeries(
                    table: table, symbol: symbol, from: from, to: asOf?[symbol] ?? to, priceColumn: priceColumn,
                    overlays: overlays, volumeColumn: volumeColumn, marks: marks, candles: candles)
            else {
                let close = Suggestions.closest(to: symbol, among: table.tickers.map(\.symbol))
                throw CommandFailure(
                    "no ticker '\(symbol)' in \(source.displayName)",
                    hint: close.isEmpty ? "see 'colonnade info' for the tickers" : "did you mean '\(close[0])'?")
            }
            guard s.count > 0 else {
                let range = [
                    from.map { "from \(Day(daysSinceEpoch: $0).description)" }, to.map { "to \(Day(daysSinceEpoch: $0).description)" },
                ]
                .compactMap { $0 }.joined(separator: " ")
                throw CommandFailure("\(symbol) has no rows\(range.isEmpty ? "" : " " + range)", hint: "widen --from/--to")
            }
            series.append(s)
        }

        let priceLabel = table.schema[priceColumn].identifier
        let chart = SVGChart(
            series: series, normalize: parsed[Options.normalize], showVolume: volumeColumn != nil,
            priceLabel: priceLabel, whereText: parsed[Options.where],
            priceNote: adjusted && !priceLabel.hasPrefix("adj_") ? "adjusted for splits and dividends" : nil,
            logScale: parsed[Options.log])
        let document = chart.render()
        if let output = parsed[Options.output], output != "-" {
            try ExportCommand.refuseSameFile(output: context.resolve(output), snapshot: source, given: output)
            // Written to a temporary beside it and renamed at close: never a half-written chart.
            let writer = try FileDescriptorWriter(creatingFileAt: context.resolve(output))
            try writer.write(document)
            try writer.close()
            context.note("wrote \(output) (\(document.utf8.count.groupedText) bytes)")
        } else {
            try context.standardOutput.write(document)
        }
        return ExitStatus.success
    }

    /// With `--on`: each ticker's last day on or before the day within `--max-stale` (a ticker
    /// left out as stale has none), resolved as `filter --on` resolves it (`latest` is the newest
    /// date in the snapshot), and the note `filter` writes, about the charted tickers.
    /// - Throws: a usage error for a malformed day or limit; `CommandFailure` when no ticker is left.
    static func asOfDays(
        _ parsed: ParsedArguments, symbols: [String], table: QuoteTable, context: CommandContext
    ) throws -> [String: Int32]? {
        guard let text = parsed[Options.on] else { return nil }
        guard var day = ScreenDay(text) else {
            throw UsageError.invalidValue(
                option: "--on", value: text, reason: "expected a date YYYY-MM-DD or 'latest'",
                suggestion: nil, command: CommandSpec.chart.name)
        }
        let maxStale = try FilterCommand.maxStale(parsed[Options.maxStale], command: CommandSpec.chart.name)
        if case .latest = day, let newest = table.rows(asOf: .latest, maxStale: .none).day { day = .day(newest) }
        let known = symbols.filter { table.ticker($0) != nil }
        guard !known.isEmpty else { return [:] }  // the unknown ticker is reported with a suggestion below
        let charted = table.subtable(try table.select(.tickers(known)))
        let asOf = charted.rows(asOf: day, maxStale: maxStale)
        var days = [String: Int32]()
        for row in asOf.rows { days[charted.tickers[Int(charted.tickerNumber(ofRow: row))].symbol] = charted.dates[row] }
        if let note = asOf.note { context.note(note) }
        if days.isEmpty {
            throw CommandFailure(
                "no ticker to chart as of \(asOf.day?.description ?? text): \(known.joined(separator: ", ")) "
                    + "\(known.count == 1 ? "has" : "have") no row on or before it within --max-stale \(maxStale)",
                hint: "a later --on, or --max-stale none")
        }
        return days
    }

    /// An `--overlay`: a value column (`adj_close`) or an expression of the screens language
    /// (`mavg(close,50)`, `(high + low) / 2`), checked against `table`.
    static func overlay(_ text: String, in table: QuoteTable) throws -> ValueExpression {
        if let index = table.columnIndex(named: text) { return .column(table.schema[index].identifier) }
        let expression: ValueExpression
        do {
            expression = try QueryParser(table: table).parseValue(text)
            _ = try table.values(of: expression, atRows: [])  // unknown columns, windows < 1
        } catch {
            throw ExpressionError(error: error, expression: text, option: "--overlay")
        }
        return expression
    }

    /// The index of the value column `name`, or an error naming the columns there are.
    static func column(_ name: String, in table: QuoteTable, option: String) throws -> Int {
        if let index = table.columnIndex(named: name) { return index }
        let names = table.schema.map(\.identifier)
        let close = Suggestions.closest(to: name, among: names)
        throw CommandFailure(
            "\(option): no column '\(name)' in this snapshot (columns: \(names.joined(separator: ", ")))",
            hint: close.isEmpty ? nil : "did you mean '\(close[0])'?")
    }
}
