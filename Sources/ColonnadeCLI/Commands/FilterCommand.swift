import Colonnade
import Foundation

/// `colonnade filter`: select rows, then print, count or aggregate them.
struct FilterCommand: Command {
    var spec: CommandSpec { .filter }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let (path, _) = try SnapshotLocation.forReading(parsed[Options.snapshot], context: context)
        let loadStart = ContinuousClock.now
        let table = try QuoteTable.load(from: path, verify: !parsed[Options.noVerify])
        let loadTime = ContinuousClock.now - loadStart
        return try Self.answer(parsed, table: table, loadTime: loadTime, context: context)
    }

    /// Runs the query `parsed` describes against an already loaded `table` and writes the answer:
    /// the work of `filter` after loading, shared with `colonnade shell`.
    ///
    /// - Parameters:
    ///   - loadTime: reported by `--timing` as `load_ms`.
    ///   - isCancelled: checked between `--repeat` runs; when it turns true the query stops with
    ///     ``QueryCancelled``.
    static func answer(_ parsed: ParsedArguments, table: QuoteTable, loadTime: Duration, context: CommandContext,
                       isCancelled: () -> Bool = { false }) throws -> Int32 {
        let predicate = try Self.predicate(where: parsed[Options.where],
                                           tickers: parsed.isGiven(Options.tickers) ? parsed[Options.tickers] : nil,
                                           from: parsed[Options.from], to: parsed[Options.to], table: table)
        Self.warnAboutUnknownTickers(in: predicate, table: table, context: context)
        // Resolve --columns before running anything, so a mistake costs no query time.
        let shown = try ColumnSelection(Self.columnNames(parsed, table: table, predicate: predicate), in: table)
        let threads = parsed[Options.threads] ?? QueryOptions.availableCores
        let options = QueryOptions(threads: threads, useBlockSummaries: !parsed[Options.noZonemaps])
        let aggregates = try parsed.isGiven(Options.agg) ? Self.aggregates(parsed[Options.agg]) : nil
        let byTicker = parsed[Options.by] == .ticker
        let format = parsed[Options.format]
        var sortKeys = [SortKey]()
        for text in parsed[Options.sort] {
            do {
                sortKeys.append(try SortKey.parse(text, table: table))
            } catch {
                throw ExpressionError(error: error, expression: text, option: "--sort")
            }
        }
        var screenDay: ScreenDay?
        if let text = parsed[Options.on] {
            guard let day = ScreenDay(text) else {
                throw UsageError.invalidValue(option: "--on", value: text, reason: "expected a date YYYY-MM-DD or 'latest'",
                                              suggestion: nil, command: CommandSpec.filter.name)
            }
            screenDay = day
        }

        // The query alone, --repeat times; the median goes to --timing and the footer. With an explicit
        // --repeat, one untimed warm-up run comes first, as the peers benchmark does for every engine.
        let repeats = parsed[Options.repeat]
        let warmups = parsed.isGiven(Options.repeat) ? 1 : 0
        var selection: Selection?
        var aggregateResult: AggregateResult?
        var times = [Duration]()
        for run in 0 ..< warmups + repeats {
            if isCancelled() { throw QueryCancelled() }
            let start = ContinuousClock.now
            let s = try screenDay.map { day throws(QueryError) in try table.select(predicate, on: day, options: options) }
                ?? table.select(predicate, options: options)
            if let aggregates {
                do {
                    aggregateResult = try s.aggregate(aggregates, byTicker: byTicker, options: options)
                } catch {
                    // An unknown column in --agg is a command-line mistake, like one in --where.
                    throw ExpressionError(error: error, expression: parsed[Options.agg].joined(separator: ","), option: "--agg")
                }
            }
            if run >= warmups { times.append(ContinuousClock.now - start) }
            selection = s
        }
        guard let selection else { return ExitStatus.failure }
        times.sort()
        let median = times[times.count / 2]

        if parsed[Options.timing] {
            func ms(_ d: Duration) -> String { String(format: "%.3f", Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15) }
            try context.standardError.writeLine(
                "{\"load_ms\":\(ms(loadTime)),\"query_ms\":\(ms(median)),\"repeat\":\(repeats),\"warmup\":\(warmups),\"rows\":\(table.rowCount),"
                + "\"matched\":\(selection.count),\"threads\":\(options.effectiveThreads),\"zonemaps\":\(options.useBlockSummaries),"
                + "\"verified\":\(!parsed[Options.noVerify])}")
        }

        if parsed[Options.count] {
            if byTicker {
                let rows = selection.countsByTicker().map { [Cell.text(table.tickers[Int($0.code)].symbol), .integer(Int64($0.count))] }
                var source = MaterializedRows(columns: [ResultColumn(name: "ticker"), ResultColumn(name: "count")], rows: rows)
                try format.formatter(footer: nil, forTerminal: context.standardOutput.isTerminal).write(&source, to: context.standardOutput)
            } else if format == .table {
                try context.standardOutput.writeLine(String(selection.count))
            } else {
                var source = MaterializedRows(columns: [ResultColumn(name: "count")], rows: [[.integer(Int64(selection.count))]])
                try format.formatter(footer: nil, forTerminal: context.standardOutput.isTerminal).write(&source, to: context.standardOutput)
            }
            return ExitStatus.success
        }

        if let aggregateResult {
            var columns = aggregateResult.aggregates.map { ResultColumn(name: $0.description) }
            if byTicker { columns.insert(ResultColumn(name: "ticker"), at: 0) }
            let rows = aggregateResult.rows.map { row -> [Cell] in
                let values = zip(aggregateResult.aggregates, row.values).map { a, v -> Cell in
                    guard let v else { return .null }
                    return a.function == .count ? .integer(Int64(v)) : .number(v)
                }
                return byTicker ? [.text(row.ticker ?? "")] + values : values
            }
            var source = MaterializedRows(columns: columns, rows: rows)
            try format.formatter(footer: nil, forTerminal: context.standardOutput.isTerminal).write(&source, to: context.standardOutput)
            return ExitStatus.success
        }

        let footer = TableFooter(matched: selection.count, total: table.rowCount, elapsed: median)
        let limit = parsed[Options.limit]
        if !sortKeys.isEmpty {
            let rows = try selection.rows(sortedBy: sortKeys, limit: limit)
            var source = TableRows(table: table, selection: shown, rows: rows.makeIterator())
            try format.formatter(footer: footer, forTerminal: context.standardOutput.isTerminal).write(&source, to: context.standardOutput)
        } else {
            var source = TableRows(table: table, selection: shown, rows: MaskRowIterator(selection.mask, limit: limit))
            try format.formatter(footer: footer, forTerminal: context.standardOutput.isTerminal).write(&source, to: context.standardOutput)
        }
        return ExitStatus.success
    }

    /// --where, --tickers, --from and --to, and-ed together (`export` has only --where).
    ///
    /// - Parameters:
    ///   - tickers: the symbols of --tickers, `nil` when it was not given (all tickers).
    ///   - option: the option `text` came from, for error messages.
    static func predicate(where text: String?, tickers: [String]? = nil, from: Day? = nil, to: Day? = nil,
                          table: QuoteTable, option: String = "--where") throws -> RowPredicate {
        var parts = [RowPredicate]()
        if let text {
            do {
                parts.append(try QueryParser(table: table).parse(text))
            } catch {
                throw ExpressionError(error: error, expression: text, option: option)
            }
        }
        if let tickers {
            parts.append(.tickers(tickers))
        }
        if from != nil || to != nil {
            parts.append(.dates(RangeBounds(lower: from?.daysSinceEpoch, lowerInclusive: true,
                                            upper: to?.daysSinceEpoch, upperInclusive: true)))
        }
        switch parts.count {
        case 0: return .constant(true)
        case 1: return parts[0]
        default: return .and(parts)
        }
    }

    /// `ticker in (…)` and --tickers match nothing for symbols the table lacks (as in SQL); say so.
    static func warnAboutUnknownTickers(in predicate: RowPredicate, table: QuoteTable, context: CommandContext) {
        var unknown = [String]()
        func walk(_ p: RowPredicate) {
            switch p {
            case .tickers(let symbols): unknown += symbols.filter { table.code(of: $0) == nil && !unknown.contains($0) }
            case .and(let ps), .or(let ps): ps.forEach(walk)
            case .not(let q): walk(q)
            case .range, .compare, .compareExpressions, .dates, .constant: break
            }
        }
        walk(predicate)
        for symbol in unknown {
            let close = Suggestions.closest(to: symbol, among: table.tickers.map(\.symbol))
            context.warn("no ticker '\(symbol)' in this snapshot; it matches no rows"
                + (close.isEmpty ? "" : " (did you mean '\(close[0])'?)"))
        }
    }

    /// The aggregates of --agg.
    static func aggregates(_ items: [String]) throws -> [Aggregate] {
        let text = items.joined(separator: ",")
        do {
            return try Aggregate.parseList(text)
        } catch {
            throw ExpressionError(error: error, expression: text, option: "--agg")
        }
    }

    /// --columns, or ticker, date and the columns --where mentions (all columns when it mentions none).
    static func columnNames(_ parsed: ParsedArguments, table: QuoteTable, predicate: RowPredicate) throws -> [String] {
        let all = ["ticker", "date"] + table.schema.map(\.identifier)
        if parsed.isGiven(Options.columns) {
            let list = parsed[Options.columns]
            if list.count == 1 && list[0].lowercased() == "all" { return all }
            return list
        }
        let mentioned = predicate.mentionedColumns.compactMap { table.columnIndex(named: $0).map { table.schema[$0].identifier } }
        return mentioned.isEmpty ? all : ["ticker", "date"] + mentioned
    }
}
