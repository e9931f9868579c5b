import Colonnade
import Foundation

/// `colonnade filter`: select rows, then print, count or aggregate them.
struct FilterCommand: Command {
    var spec: CommandSpec { .filter }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        // Command-line mistakes first, before any time goes into loading.
        let destination = try Self.destination(parsed, toTerminal: context.standardOutput.isTerminal)
        try Self.refuseInapplicable(parsed, format: destination.format)
        let source = try SnapshotLocation.forReading(parsed, Options.snapshot, context: context)
        let loadStart = ContinuousClock.now
        let table = try source.load(verify: !parsed[Options.noVerify])
        let loadTime = ContinuousClock.now - loadStart
        return try Self.answer(parsed, table: table, loadTime: loadTime, source: source, context: context)
    }

    /// Runs the query `parsed` describes against an already loaded `table` and writes the answer:
    /// the work of `filter` after loading, shared with `colonnade shell`.
    ///
    /// - Parameters:
    ///   - loadTime: reported by `--timing` as `load_ms`.
    ///   - source: where `table` came from (`-o` may not name that file).
    ///   - rowCap: how many rows a table on a terminal shows unless `--all` is given (the
    ///     shell's `.maxrows`).
    ///   - announcesAdjusted: whether `--adjusted` writes its note (the shell says it once, at `.adjusted on`).
    ///   - isCancelled: checked between `--repeat` runs; when it turns true the query stops with
    ///     ``QueryCancelled``.
    static func answer(
        _ parsed: ParsedArguments, table stored: QuoteTable, loadTime: Duration, source: SnapshotSource,
        rowCap: RowCap = .screen, context: CommandContext, announcesAdjusted: Bool = true,
        isCancelled: () -> Bool = { false }
    ) throws -> Int32 {
        let destination = try destination(parsed, toTerminal: context.standardOutput.isTerminal)
        try refuseInapplicable(parsed, format: destination.format)
        // --adjusted: every expression, sort key, aggregate and column below reads the view.
        let table = parsed[Options.adjusted] ? try adjustedTable(stored) : stored
        if parsed[Options.adjusted] && announcesAdjusted { context.note(adjustedNote) }
        let query = try Query(parsed, table: table, format: destination.format.textFormat ?? .csv, rowCap: rowCap, context: context)
        guard let outcome = try query.run(on: table, isCancelled: isCancelled) else { return ExitStatus.failure }
        if parsed[Options.timing] {
            try writeTiming(outcome, query: query, table: table, loadTime: loadTime, verified: !parsed[Options.noVerify], context: context)
        }
        noteAsOf(query.screenDay, maxStale: query.maxStale, table: table, context: context)
        noteWhyEmpty(matched: outcome.selection.count, query: query, table: table, context: context)
        if let columnar = destination.format.columnarFormat {
            return try ExportCommand.writeColumnar(
                table.subtable(outcome.selection), format: columnar, output: destination.file,
                snapshot: source, command: CommandSpec.filter.name, context: context)
        }
        var output = context
        var file: FileDescriptorWriter?
        if let given = destination.file {
            try ExportCommand.refuseSameFile(output: context.resolve(given), snapshot: source, given: given)
            file = try FileDescriptorWriter(creatingFileAt: context.resolve(given))
            output.standardOutput = file!
        }
        if parsed[Options.count] {
            try writeCount(outcome, query: query, table: table, context: output)
        } else if let result = outcome.aggregates {
            try writeAggregates(result, query: query, context: output)
        } else {
            try writeRows(outcome, query: query, table: table, limit: parsed[Options.limit], context: output)
        }
        if let file, let given = destination.file {
            try file.close()  // renamed over the target only now: never a half-written file
            context.note("wrote \(query.format.rawValue) to \(given)")
        }
        return ExitStatus.success
    }

    /// Everything the command line asks for, resolved against the table before any query time is
    /// spent: a mistake in --columns, --sort, --agg or --on fails first.
    struct Query {
        var predicate: RowPredicate
        var shown: ColumnSelection
        var options: QueryOptions
        var aggregates: [Aggregate]?
        /// The --agg text, for error messages.
        var aggregateText: String
        /// --by: overall, per ticker, per calendar year or month, or per ticker and bucket.
        var grouping: AggregateGrouping
        var format: OutputFormat
        var sortKeys: [SortKey]
        /// --sort with --by: the order of the groups.
        var groupSortKeys: [AggregateResult.GroupSortKey]
        /// --having: which groups to keep.
        var having: String?
        /// --limit.
        var limit: Int?
        var screenDay: ScreenDay?
        /// --max-stale: how old a ticker's row may be for --on to use it.
        var maxStale: StaleLimit = .default
        var repeats: Int
        var warmups: Int
        /// How many rows a table on a terminal shows (`--all`: every row).
        var rowCap: RowCap
        /// `--precision`: at most this many decimals in every number column of a table.
        var precision: Int?

        init(_ parsed: ParsedArguments, table: QuoteTable, format: OutputFormat, rowCap: RowCap, context: CommandContext) throws {
            predicate = try FilterCommand.predicate(
                where: parsed[Options.where],
                tickers: parsed.isGiven(Options.tickers) ? parsed[Options.tickers] : nil,
                from: parsed[Options.from], to: parsed[Options.to], table: table)
            FilterCommand.warnAboutUnknownTickers(in: predicate, table: table, context: context)
            shown = try ColumnSelection(FilterCommand.columnNames(parsed, table: table, predicate: predicate), in: table)
            if parsed[Options.adjusted] && format == .table { shown = shown.markingAdjusted(in: table) }
            options = QueryOptions(
                threads: parsed[Options.threads] ?? QueryOptions.availableCores,
                useBlockSummaries: !parsed[Options.noZonemaps])
            aggregateText = parsed[Options.agg].joined(separator: ",")
            aggregates = try parsed.isGiven(Options.agg) ? FilterCommand.aggregates(parsed[Options.agg], table: table) : nil
            grouping = parsed[Options.by]?.aggregateGrouping ?? .none
            if let aggregates {  // the keys and the aggregates' names, as writeAggregates prints them
                let reserved = ["ticker", "date"] + grouping.keyNames
                for a in aggregates {
                    if let name = a.name, reserved.contains(name.lowercased()) {
                        throw UsageError.invalidValue(
                            option: "--agg", value: a.description,
                            reason: "'\(name)' names a key column (ticker, date or a --by key); choose another name",
                            suggestion: nil, command: CommandSpec.filter.name)
                    }
                }
                let keys = FilterCommand.groupColumns(grouping).map {
                    OutputNames.Column($0.name, holds: $0.name == "ticker" ? .ticker : .other)
                }
                try OutputNames.check(
                    keys + aggregates.map { OutputNames.Column($0.outputName) }, option: "--agg",
                    command: CommandSpec.filter.name, canRename: false)
            }
            self.format = format
            sortKeys = []
            groupSortKeys = []
            having = parsed[Options.having]
            if !grouping.isOverall {
                // --by: --sort and --having apply to the groups (checked here, before any query time).
                let summary = aggregates ?? [FilterCommand.countAggregate]
                for text in parsed[Options.sort] {
                    do {
                        groupSortKeys.append(try AggregateResult.GroupSortKey.parse(text, aggregates: summary, grouping: grouping))
                    } catch {
                        throw ExpressionError(error: error, expression: text, option: "--sort")
                    }
                }
            }
            for text in grouping.isOverall ? parsed[Options.sort] : [] {
                do {
                    sortKeys.append(try SortKey.parse(text, table: table))
                } catch {
                    throw ExpressionError(error: error, expression: text, option: "--sort")
                }
            }
            if let text = parsed[Options.on] {
                guard let day = ScreenDay(text) else {
                    throw UsageError.invalidValue(
                        option: "--on", value: text, reason: "expected a date YYYY-MM-DD or 'latest'",
                        suggestion: nil, command: CommandSpec.filter.name)
                }
                screenDay = day
                maxStale = try FilterCommand.maxStale(parsed[Options.maxStale], command: CommandSpec.filter.name)
            }
            // With an explicit --repeat, one untimed warm-up run comes first, as the peers
            // benchmark does for every engine.
            limit = parsed[Options.limit]
            repeats = parsed[Options.repeat]
            self.rowCap = parsed[Options.showAll] ? .none : rowCap
            precision = parsed[Options.precision]
            warmups = parsed.isGiven(Options.repeat) ? 1 : 0
        }

        /// What the runs found, and the median time of the timed ones.
        struct Outcome {
            var selection: Selection
            var aggregates: AggregateResult?
            var median: Duration
        }

        /// The query alone (selection and aggregates), `warmups + repeats` times; the median of
        /// the timed runs goes to --timing and the table's footer. `nil` only if nothing ran
        /// (`repeats` is at least 1, so never).
        func run(on table: QuoteTable, isCancelled: () -> Bool) throws -> Outcome? {
            var last: (Selection, AggregateResult?)?
            var times = [Duration]()
            for run in 0 ..< warmups + repeats {
                if isCancelled() { throw QueryCancelled() }
                let start = ContinuousClock.now
                let selection =
                    try screenDay.map { day throws(QueryError) in try table.select(predicate, on: day, maxStale: maxStale, options: options)
                    }
                    ?? table.select(predicate, options: options)
                var result: AggregateResult?
                if let summary = aggregates ?? (grouping.isOverall ? nil : [FilterCommand.countAggregate]) {
                    do {
                        result = try selection.aggregate(summary, by: grouping, options: options)
                    } catch {
                        // An unknown column in --agg is a command-line mistake, like one in --where.
                        throw ExpressionError(error: error, expression: aggregateText, option: "--agg")
                    }
                    if let having {
                        do {
                            result = try result?.having(having)
                        } catch {
                            throw ExpressionError(error: error, expression: having, option: "--having")
                        }
                    }
                    result = result?.sorted(by: groupSortKeys)
                    if let limit, !grouping.isOverall { result = result?.prefix(limit) }
                }
                if run >= warmups { times.append(ContinuousClock.now - start) }
                last = (selection, result)
            }
            guard let (selection, result) = last, !times.isEmpty else { return nil }
            times.sort()
            return Outcome(selection: selection, aggregates: result, median: times[times.count / 2])
        }
    }

    /// `--timing`: one JSON object on one line to standard error (docs/ARCHITECTURE.md, "The CLI contract").
    private static func writeTiming(
        _ outcome: Query.Outcome, query: Query, table: QuoteTable, loadTime: Duration,
        verified: Bool, context: CommandContext
    ) throws {
        func ms(_ d: Duration) -> String {
            String(format: "%.3f", Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15)
        }
        try context.standardError.writeLine(
            "{\"load_ms\":\(ms(loadTime)),\"query_ms\":\(ms(outcome.median)),\"repeat\":\(query.repeats),\"warmup\":\(query.warmups),"
                + "\"rows\":\(table.rowCount),\"matched\":\(outcome.selection.count),\"threads\":\(query.options.effectiveThreads),"
                + "\"zonemaps\":\(query.options.useBlockSummaries),\"verified\":\(verified)}")
    }

    /// The formatter for `context`'s standard output: a table there is capped to `query.rowCap`
    /// rows when it is a terminal.
    private static func formatter(_ query: Query, context: CommandContext) -> any ResultFormatter {
        let output = context.standardOutput
        return query.format.formatter(forTerminal: output.isTerminal, rowCap: query.rowCap.rows(on: output), precision: query.precision)
    }

    /// `--count`: the number of matching rows (per group with `--by`).
    private static func writeCount(_ outcome: Query.Outcome, query: Query, table: QuoteTable, context: CommandContext) throws {
        let selection = outcome.selection
        let format = query.format
        let grouping = query.grouping
        if !grouping.isOverall {
            let counts = try outcome.aggregates ?? selection.aggregate([countAggregate], by: grouping, options: query.options)
            var source = AggregateRows(columns: groupColumns(grouping) + [ResultColumn(name: "count")], result: counts)
            try formatter(query, context: context).write(&source, to: context.standardOutput)
        } else if format == .table {
            try context.standardOutput.writeLine(String(selection.count))
        } else {
            var source = MaterializedRows(columns: [ResultColumn(name: "count")], rows: [[.integer(Int64(selection.count))]])
            try formatter(query, context: context).write(&source, to: context.standardOutput)
        }
    }

    /// `--agg`: one row of aggregates (one per group with `--by`, keys first); in a table, with at
    /// most ``ResultColumn/computedDecimals`` decimals (a count is exact).
    private static func writeAggregates(_ result: AggregateResult, query: Query, context: CommandContext) throws {
        let columns =
            groupColumns(query.grouping)
            + result.aggregates.map {
                ResultColumn(name: $0.outputName, maximumDecimals: $0.function == .count ? nil : ResultColumn.computedDecimals)
            }
        var source = AggregateRows(columns: columns, result: result)
        try formatter(query, context: context).write(&source, to: context.standardOutput)
    }

    /// The matching rows: in table order (streamed from the mask) or sorted by `--sort`, at most
    /// `limit` of them. A table on a terminal is capped (``RowCap``) and followed on standard
    /// error by `10 of 456 matching rows shown in 3.1 ms`.
    private static func writeRows(
        _ outcome: Query.Outcome, query: Query, table: QuoteTable, limit: Int?,
        context: CommandContext
    ) throws {
        let output = context.standardOutput
        let matched = outcome.selection.count
        let count = min(matched, limit ?? .max)
        var shown = count
        func write<Rows: RowSource>(_ source: inout Rows) throws {
            if query.format == .table {
                let formatter = TableFormatter(rowCap: query.rowCap.rows(on: output), precision: query.precision)
                shown = try formatter.writeTable(&source, count: count, to: output)
            } else {
                try formatter(query, context: context).write(&source, to: output)
            }
        }
        if !query.sortKeys.isEmpty {
            let rows = try outcome.selection.rows(sortedBy: query.sortKeys, limit: limit)
            var source = TableRows(table: table, selection: query.shown, rows: rows.makeIterator())
            try write(&source)
        } else {
            var source = TableRows(table: table, selection: query.shown, rows: MaskRowIterator(outcome.selection.mask, limit: limit))
            try write(&source)
        }
        if query.format == .table && output.isTerminal {
            try output.flush()  // the table before the line under it, when both go to one terminal
            try context.standardError.writeLine(TableFooter(shown: shown, matched: matched, elapsed: outcome.median).text)
        }
    }

    /// --where, --tickers, --from and --to, and-ed together (`export` has only --where).
    ///
    /// - Parameters:
    ///   - tickers: the symbols of --tickers, `nil` when it was not given (all tickers).
    ///   - option: the option `text` came from, for error messages.
    static func predicate(
        where text: String?, tickers: [String]? = nil, from: Day? = nil, to: Day? = nil,
        table: QuoteTable, option: String = "--where"
    ) throws -> RowPredicate {
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
            parts.append(
                .dates(
                    RangeBounds(
                        lower: from?.daysSinceEpoch, lowerInclusive: true,
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
            case .tickers(let symbols): unknown += symbols.filter { table.tickerNumber(of: $0) == nil && !unknown.contains($0) }
            case .and(let ps), .or(let ps): ps.forEach(walk)
            case .not(let q): walk(q)
            case .range, .integerRange, .compare, .compareExpressions, .dates, .constant: break
            }
        }
        walk(predicate)
        for symbol in unknown {
            let close = Suggestions.closest(to: symbol, among: table.tickers.map(\.symbol))
            context.warn(
                "no ticker '\(symbol)' in this snapshot; it matches no rows"
                    + (close.isEmpty ? "" : " (did you mean '\(close[0])'?)"))
        }
    }

    /// `--count` with `--by`: the one aggregate, named `count` (what --sort and --having call it).
    static let countAggregate = Aggregate.count.named("count")

    /// The key columns of a grouped answer, in --by's order: `ticker`, `week,ticker`, `month`, …
    static func groupColumns(_ grouping: AggregateGrouping) -> [ResultColumn] {
        grouping.keyNames.map { ResultColumn(name: $0) }
    }

    /// Appends the key cells of row `row` of `result`: the ticker and the bucket (`2014`,
    /// `2014-03`, `2014-Q2`, a day), in --by's order.
    static func appendGroupCells(_ result: AggregateResult, row: Int, into cells: inout [Cell]) {
        let grouping = result.grouping
        for key in grouping.keyNames {
            if key == "ticker" {
                cells.append(.text(result.ticker(row: row) ?? ""))
            } else if grouping.bucket == .year, let year = result.bucketKey(row: row) {
                cells.append(.integer(Int64(year)))
            } else {
                cells.append(.text(result.bucketText(row: row) ?? ""))
            }
        }
    }

    /// The aggregates of --agg (arguments may be expressions over `table`'s columns).
    static func aggregates(_ items: [String], table: QuoteTable) throws -> [Aggregate] {
        let text = items.joined(separator: ",")
        do {
            return try Aggregate.parseList(text, table: table)
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

/// The rows of an aggregate answer, made one at a time as they are written: the group keys,
/// then each aggregate (a count as an integer, no value as null).
struct AggregateRows: RowSource {
    let columns: [ResultColumn]
    let result: AggregateResult
    private var position = 0

    init(columns: [ResultColumn], result: AggregateResult) {
        precondition(columns.count == result.grouping.keyNames.count + result.aggregates.count, "one column per key and aggregate")
        self.columns = columns
        self.result = result
    }

    mutating func nextRow(into row: inout [Cell]) -> Bool {
        guard position < result.count else { return false }
        row.removeAll(keepingCapacity: true)
        FilterCommand.appendGroupCells(result, row: position, into: &row)
        for (k, aggregate) in result.aggregates.enumerated() {
            guard let v = result.value(row: position, aggregate: k) else {
                row.append(.null)
                continue
            }
            row.append(aggregate.function == .count ? .integer(Int64(v)) : .number(v))
        }
        position += 1
        return true
    }

    mutating func skipRows(_ count: Int) {
        position = min(result.count, position + max(0, count))
    }
}
