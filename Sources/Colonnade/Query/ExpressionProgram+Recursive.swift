import Foundation

/// A recursive series (`ema`, `rma`, `rsi`, `cumsum`, `cummax`, `cummin`) computed once over every
/// ticker's whole history: its value on a row depends on every earlier row of the ticker, so it
/// cannot be evaluated from a window of lookback rows as the other series functions are. The
/// argument is evaluated ticker by ticker into the values buffer, then each ticker is run through
/// once in date order, in place. Groups of whole tickers (about 64 K rows each) run on all cores;
/// each ticker is one sequential pass, so the values are the same for any thread count.
///
/// A running series (`cumsum`, `cummax`, `cummin`) over the whole table is not materialized: its
/// state after any row is a fold of the ticker's rows so far, so it is *streamed* — computed
/// where it is read, a piece at a time, from the state carried by the worker reading it
/// (`readRunning`). Nothing table-sized is written (for I3's `cummax(close)` that table-sized
/// buffer and its page faults were a third of the query's time).
///
/// An as-of screen (`--on`) needs each ticker's series only up to its as-of row: there the series
/// is *per ticker* (`values` is nil). A worker sets `ExpressionScratch.tickerPrefix` to the rows
/// from the ticker's first to its as-of row, and the first read of the series computes it over
/// those rows only, into a buffer of the worker's the size of that prefix (nothing table-sized):
/// the same kernel over the same values from the ticker's first row, so each value is the one the
/// whole-table pass gives, to the bit.
final class MaterializedSeries: @unchecked Sendable {
    // Safe (@unchecked): written only during init; read-only afterwards.

    /// One value per table row (NaN for null); nil for a series computed per ticker on demand.
    let values: UnsafeMutablePointer<Double>?
    let count: Int
    let function: ValueExpression.SeriesFunction
    let window: Int
    /// The argument, resolved with the same cache (its own recursive series are per ticker too).
    let argument: ExpressionProgram
    /// The decimal scale of the argument's values (exact seeds), or nil.
    let seedScale: DecimalScale?
    /// Which series of its cache this is (0, 1, …): the key of its per-ticker buffer.
    let id: Int
    let counters: EvaluationCounters?
    /// Rows before a row that the programs reading this series read through it (their lookback),
    /// so per ticker only the last `reach + 1` values are kept (set while the query compiles).
    var reach = 0
    /// Whether another series' argument reads it: then per ticker every row up to the as-of row.
    var keepAll = false
    /// Whether it is streamed (a running series over the whole table): `values` is nil and
    /// `readRunning` computes it where it is read.
    let streamed: Bool

    /// Evaluates `f(x, n)` over the whole table, or, with `perTicker`, prepares it to be computed
    /// per ticker up to an as-of row; recursive series inside `x` come from (and go into) `cache`.
    /// - Throws: `QueryError` from resolving `x`.
    init(
        _ f: ValueExpression.SeriesFunction, _ x: ValueExpression, window n: Int, table: QuoteTable,
        cache: SeriesCache, perTicker: Bool = false
    ) throws(QueryError) {
        let before = cache.handedOut.count
        let argument = try ExpressionProgram(x, table: table, cache: cache)
        // The series the argument reads are read over the whole prefix.
        for s in cache.handedOut[before...] { s.keepAll = true }
        self.argument = argument
        self.function = f
        self.window = n
        // Taken after the argument's own series took theirs.
        self.id = cache.takeID()
        self.counters = cache.counters
        count = table.rowCount
        // The exact seed: the argument's values are decimals with a known scale (a column with a
        // decimal scale, or an expression over such columns: `ExpressionProgram+Exact.swift`).
        let scale = argument.decimalScale
        seedScale = scale
        streamed = !perTicker && (f == .cumsum || f == .cummax || f == .cummin)
        if perTicker {
            values = nil
            return
        }
        // A streamed series is counted once, the table's rows: its fold runs through every row
        // once per worker that reads it (more only where a worker skips ahead: `carry`).
        cache.counters?.addSeriesRows(table.rowCount)
        if streamed {
            values = nil
            return
        }
        let values = UnsafeMutablePointer<Double>.allocate(capacity: max(count, 1))
        self.values = values
        // Not filled with NaN first: every row belongs to one ticker, and each group below writes
        // all rows of its tickers (a fill was one more pass over a table-sized buffer).
        values.initialize(to: .nan)
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

    /// The values of `range`: read in place, or, per ticker, from the worker's buffer of the
    /// ticker's rows up to its as-of row (`scratch.tickerPrefix`), computed on the first read.
    /// Rows of `range` outside that prefix (an earlier ticker's, read only by windows that stop at
    /// the ticker's first row) are null.
    func read(_ range: Range<Int>, into dst: UnsafeMutablePointer<Double>, _ scratch: ExpressionScratch) -> UnsafePointer<Double> {
        if let values { return UnsafePointer(values) + range.lowerBound }
        if streamed { return readRunning(range, into: dst, scratch) }
        guard let prefix = scratch.tickerPrefix else {
            assertionFailure("a per-ticker series read outside an as-of screen")
            dst.update(repeating: .nan, count: range.count)
            return UnsafePointer(dst)
        }
        if !keepAll, let group = scratch.asOfGroup,
            let values = readTail(range, into: dst, prefix: prefix, group: group, scratch)
        {
            return values
        }
        let buffer = scratch.seriesPrefix(id, rows: prefix) { buffer in
            argument.evaluate(rows: prefix, into: buffer, scratch: scratch)
            SeriesKernels.runRecursive(function, window: window, values: buffer, count: prefix.count, seedScale: seedScale)
            counters?.addSeriesRows(prefix.count)
        }
        if prefix.lowerBound <= range.lowerBound && range.upperBound <= prefix.upperBound {
            return UnsafePointer(buffer) + (range.lowerBound - prefix.lowerBound)
        }
        dst.update(repeating: .nan, count: range.count)
        let inside = Swift.max(range.lowerBound, prefix.lowerBound) ..< Swift.min(range.upperBound, prefix.upperBound)
        if !inside.isEmpty {
            (dst + (inside.lowerBound - range.lowerBound)).update(
                from: buffer + (inside.lowerBound - prefix.lowerBound), count: inside.count)
        }
        return UnsafePointer(dst)
    }

    /// A streamed running series over `range`, into `dst`: the argument over `range`, then each
    /// ticker's part folded from the state of the ticker's rows before it (`carry`). The worker's
    /// cursor then remembers the states at the part's start and end, so the next read — the next
    /// piece, or the same rows for another program — starts where this one did or ended.
    private func readRunning(
        _ range: Range<Int>, into dst: UnsafeMutablePointer<Double>, _ scratch: ExpressionScratch
    ) -> UnsafePointer<Double> {
        guard !range.isEmpty else { return UnsafePointer(dst) }
        let buffer = scratch.acquire(range.count + argument.lookback)
        defer { scratch.release() }
        let src = argument.evaluate(rows: range, buffer: buffer, scratch: scratch)
        argument.forEachTickerSegment(range) { segment, tickerStart in
            let start = carry(to: segment.lowerBound, tickerStart: tickerStart, scratch)
            var state = start
            let o = segment.lowerBound - range.lowerBound
            SeriesKernels.running(function, src: src + o, dst: dst + o, count: segment.count, state: &state)
            scratch.noteRunning(id, tickerStart: tickerStart, row: segment.lowerBound, state: start)
            scratch.noteRunning(id, tickerStart: tickerStart, row: segment.upperBound, state: state)
        }
        return UnsafePointer(dst)
    }

    /// The state of the fold over the ticker's rows `[tickerStart, row)`: from the worker's latest
    /// checkpoint at or before `row` in the same ticker, else from the ticker's first row, folding
    /// the argument over the rows between (a piece at a time, nothing written).
    private func carry(to row: Int, tickerStart: Int, _ scratch: ExpressionScratch) -> SeriesKernels.RunningState {
        var (from, state) =
            scratch.runningCheckpoint(id, tickerStart: tickerStart, atOrBefore: row)
            ?? (tickerStart, SeriesKernels.RunningState(function))
        let piece = Evaluator.expressionPieceRows
        while from < row {
            let to = Swift.min(row, from + piece)
            let buffer = scratch.acquire(to - from + argument.lookback)
            let src = argument.evaluate(rows: from ..< to, buffer: buffer, scratch: scratch)
            SeriesKernels.running(function, src: src, dst: nil, count: to - from, state: &state)
            scratch.release()
            from = to
        }
        return state
    }

    /// `read` from the last `reach + 1` values of the ticker, computed for the whole group of
    /// tickers the worker is screening at once (`SeriesKernels.smoothingTails`: four in lockstep);
    /// nil when `range` reaches before them (then the whole prefix is computed).
    private func readTail(
        _ range: Range<Int>, into dst: UnsafeMutablePointer<Double>, prefix: Range<Int>,
        group: ExpressionScratch.AsOfGroup, _ scratch: ExpressionScratch
    ) -> UnsafePointer<Double>? {
        let keep = reach + 1
        let tailStart = prefix.upperBound - keep  // the table row of the tail's first value
        guard range.lowerBound >= tailStart || range.upperBound <= prefix.lowerBound else { return nil }
        let buffer = scratch.seriesTails(id, group: group.number, count: group.prefixes.count * keep) { buffer in
            var lanes = [SeriesKernels.SmoothingLane]()
            lanes.reserveCapacity(group.prefixes.count)
            let direct = argument.directValues
            for (k, p) in group.prefixes.enumerated() {
                let src: UnsafePointer<Double>
                if let direct {
                    src = direct + p.lowerBound
                } else {
                    // The argument over the lane's prefix (its own series read that ticker's rows).
                    let b = scratch.laneBuffer(k, count: p.count)
                    let saved = scratch.tickerPrefix
                    scratch.tickerPrefix = p
                    scratch.asOfGroup?.slot = k
                    argument.evaluate(rows: p, into: b, scratch: scratch)
                    scratch.tickerPrefix = saved
                    scratch.asOfGroup?.slot = group.slot
                    src = UnsafePointer(b)
                }
                lanes.append(SeriesKernels.SmoothingLane(src: src, count: p.count, out: buffer + k * keep, keep: keep))
            }
            SeriesKernels.smoothingTails(function, window: window, seedScale: seedScale, lanes: &lanes)
            counters?.addSeriesRows(group.prefixes.reduce(0) { $0 + $1.count })
        }
        let values = buffer + group.slot * keep
        if range.lowerBound >= tailStart { return UnsafePointer(values) + (range.lowerBound - tailStart) }
        dst.update(repeating: .nan, count: range.count)  // rows of an earlier ticker only
        return UnsafePointer(dst)
    }

    deinit { values?.deallocate() }
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
    /// Whether series are computed per ticker up to an as-of row (`MaterializedSeries.read`)
    /// instead of over the whole table.
    let perTicker: Bool
    /// Whether any recursive series was asked for.
    var isEmpty: Bool { series.isEmpty }
    private var ids = 0

    /// Every series handed out, in order (one that is asked for twice, twice).
    private(set) var handedOut = [MaterializedSeries]()

    /// Raises every series' reach to a program's lookback (`MaterializedSeries.reach`).
    func noteReach(_ lookback: Int) {
        for s in series.values { s.reach = Swift.max(s.reach, lookback) }
    }

    /// A number no other series of this cache has.
    func takeID() -> Int {
        ids += 1
        return ids - 1
    }
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

    /// Whether windows over decimal columns are exact (`QueryOptions.exactWindows`).
    let exactWindows: Bool

    init(
        counters: EvaluationCounters? = nil, shareWindows: Bool = true, threads: Int = QueryOptions.availableCores,
        perTicker: Bool = false, exactWindows: Bool = true
    ) {
        self.exactWindows = exactWindows
        self.counters = counters
        self.perTicker = perTicker
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
        if let known = series[key] {
            handedOut.append(known)
            return known
        }
        let computed = try MaterializedSeries(f, x, window: n, table: table, cache: self, perTicker: perTicker)
        series[key] = computed
        handedOut.append(computed)
        return computed
    }
}
