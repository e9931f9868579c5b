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

    /// Evaluates `f(x, n)` over the whole table.
    /// - Throws: `QueryError` from resolving `x`.
    init(_ f: ValueExpression.SeriesFunction, _ x: ValueExpression, window n: Int, table: QuoteTable) throws(QueryError) {
        let argument = try ExpressionProgram(x, table: table)
        count = table.rowCount
        values = .allocate(capacity: max(count, 1))
        values.initialize(repeating: .nan, count: max(count, 1))
        // The exact seed: the argument is a column with a decimal scale.
        var scale: DecimalScale?
        if case .column(let name) = x, let i = table.columnIndex(named: name), case .float64(let c) = table.columns[i] {
            scale = c.decimalScale
        }
        // Groups of whole tickers, about `groupRows` rows each.
        let groupRows = 1 << 16
        var groups = [Range<Int>]()  // ranges of ticker indices
        var start = 0, rows = 0
        let tickers = table.tickers
        for t in tickers.indices {
            rows += tickers[t].rowCount
            if rows >= groupRows { groups.append(start ..< t + 1); start = t + 1; rows = 0 }
        }
        if start < tickers.count { groups.append(start ..< tickers.count) }
        let out = SharedPointer(base: values)
        let seedScale = scale
        forEachChunk(groups.count, threads: ProcessInfo.processInfo.activeProcessorCount) { g, _ in
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
