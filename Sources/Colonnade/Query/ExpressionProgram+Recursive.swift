import Foundation

/// A recursive series (`ema`, `rma`, `rsi`, `cumsum`, `cummax`, `cummin`) computed once over every
/// ticker's whole history: its value on a row depends on every earlier row of the ticker, so it
/// cannot be evaluated from a window of lookback rows as the other series functions are. The
/// argument is evaluated ticker by ticker into the values buffer, then each ticker is run through
/// once in date order, in place. Groups of whole tickers (about 64 K rows each) run on all cores;
/// each ticker is one sequential pass, so the values are the same for any thread count.
///
/// An as-of screen (`--on`) over such a series still computes the whole history: the value on
/// the last row depends on every row before it.
final class MaterializedSeries: @unchecked Sendable {
    // Safe (@unchecked): written only during init; read-only afterwards.

    /// One value per table row (NaN for null).
    let values: UnsafeMutablePointer<Double>
    let count: Int

    /// Evaluates `f(x, n)` over the whole table; recursive series inside `x` come from (and go
    /// into) `cache`.
    /// - Throws: `QueryError` from resolving `x`.
    init(
        _ f: ValueExpression.SeriesFunction, _ x: ValueExpression, window n: Int, table: QuoteTable,
        cache: SeriesCache
    ) throws(QueryError) {
        let argument = try ExpressionProgram(x, table: table, cache: cache)
        cache.counters?.addSeriesRows(table.rowCount)
        count = table.rowCount
        values = .allocate(capacity: max(count, 1))
        // Not filled with NaN first: every row belongs to one ticker, and each group below writes
        // all rows of its tickers (a fill was one more pass over a table-sized buffer).
        values.initialize(to: .nan)
        // The exact seed: the argument's values are decimals with a known scale (a column with a
        // decimal scale, or an expression over such columns: `ExpressionProgram+Exact.swift`).
        let scale = argument.decimalScale
        // Groups of whole tickers, about `groupRows` rows each.
        let groupRows = 1 << 16
        var groups = [Range<Int>]()  // ranges of ticker indices
        var start = 0, rows = 0
        let tickers = table.tickers
        for t in tickers.indices {
            rows += tickers[t].rowCount
            if rows >= groupRows {
                groups.append(start ..< t + 1)
                start = t + 1
                rows = 0
            }
        }
        if start < tickers.count { groups.append(start ..< tickers.count) }
        let out = SharedPointer(base: values)
        let seedScale = scale
        forEachChunk(groups.count, threads: cache.threads) { g, _ in
            let group = groups[g]
            let nonEmpty = tickers[group].filter { $0.rowCount > 0 }
            guard let first = nonEmpty.first, let last = nonEmpty.last else { return }
            let range = first.firstRow ..< last.firstRow + last.rowCount
            // Safe: each group writes only its own tickers' rows.
            argument.evaluate(rows: range, into: out.base + range.lowerBound, scratch: ExpressionScratch())
            for t in nonEmpty {
                SeriesKernels.runRecursive(f, window: n, values: out.base + t.firstRow, count: t.rowCount, seedScale: seedScale)
            }
        }
    }

    deinit { values.deallocate() }
}

/// The recursive series of one query, each computed once: `ema(close, 12)` written twice — in
/// MACD's line and its signal, or on both sides of a crossover and under `prev` — is one pass over
/// the table, read by every program that names it. A series is known by its function, argument
/// and window (the argument as written: `ema(close, 12)` and `ema(1 * close, 12)` are two).
/// Used while a query is compiled, on one thread; the series it hands out are immutable.
final class SeriesCache {
    private struct Key: Hashable {
        let function: ValueExpression.SeriesFunction
        let argument: ValueExpression
        let window: Int
    }

    private var series: [Key: MaterializedSeries] = [:]
    /// Where to count the rows materialized (tests), or nil.
    let counters: EvaluationCounters?
    /// Shareable windows (`SharedWindow.swift`) by how often the query names them.
    var windowCounts: [ValueExpression: Int] = [:]
    /// The shared windows handed out, by expression.
    var sharedWindows: [ValueExpression: SharedWindow] = [:]
    /// Whether windows named more than once are shared (tests turn it off to compare).
    let shareWindows: Bool
    /// Threads a series is computed on: the query's (`QueryOptions.threads`).
    let threads: Int

    init(counters: EvaluationCounters? = nil, shareWindows: Bool = true, threads: Int = QueryOptions.availableCores) {
        self.counters = counters
        self.shareWindows = shareWindows
        self.threads = max(1, threads)
    }

    /// `f(x, n)`, computed over `table` the first time it is asked for.
    /// - Throws: `QueryError` from resolving `x`.
    func series(
        _ f: ValueExpression.SeriesFunction, _ x: ValueExpression, window n: Int,
        table: QuoteTable
    ) throws(QueryError) -> MaterializedSeries {
        let key = Key(function: f, argument: x, window: n)
        if let known = series[key] { return known }
        let computed = try MaterializedSeries(f, x, window: n, table: table, cache: self)
        series[key] = computed
        return computed
    }
}
