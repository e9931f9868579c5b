/// The day a screen is taken on: which row of each ticker it keeps.
public enum ScreenDay: Sendable, Equatable {
    /// Each ticker's last row on or before that day, if recent enough (see `rows(asOf:maxStale:)`).
    case day(Day)
    /// As `day` with the newest date in the table.
    case latest

    /// `latest` or a date written `YYYY-MM-DD`; nil for anything else.
    public init?(_ text: String) {
        if text.lowercased() == "latest" {
            self = .latest
            return
        }
        guard let d = Day(text) else { return nil }
        self = .day(d)
    }
}

extension QuoteTable {
    /// The rows an as-of screen on `day` uses: at most one per ticker, ascending (see
    /// `rows(asOf:maxStale:)`, which also says what was left out).
    /// - Complexity: one binary search per ticker.
    public func rows(on day: ScreenDay, maxStale: StaleLimit = .default) -> [Int] {
        rows(asOf: day, maxStale: maxStale).rows
    }

    /// Screening as of a day: the predicate is evaluated only at each ticker's last row on or
    /// before `day` (at most `maxStale` calendar days before it; `rows(asOf:maxStale:)`), with
    /// series functions over the ticker's whole history up to that row (a window reads only the
    /// rows it needs: the last `n` of each ticker, not the table). `select(p, on: .latest)` keeps
    /// the rows of `select(p)` that are each ticker's last, for tickers not stale on the newest
    /// date. Date terms in the predicate apply to each chosen row's own date.
    ///
    ///     let screen = Field("close") > Field("close").mavg(200) && Field("volume") > 2 * Field("volume").mavg(20)
    ///     let today = try table.select(screen, on: .latest)
    ///
    /// A date term in the predicate narrows the answer, never the history a window sees.
    /// - Throws: `QueryError` for an unknown column.
    public func select(
        _ predicate: RowPredicate, on day: ScreenDay, maxStale: StaleLimit = .default,
        options: QueryOptions = QueryOptions()
    ) throws(QueryError) -> Selection {
        // Recursive series per ticker, up to its as-of row only (`MaterializedSeries.read`).
        let cache = SeriesCache(
            counters: options.counters, shareWindows: options.shareWindows, threads: options.effectiveThreads,
            perTicker: true, exactWindows: options.exactWindows)
        let plan = try plan(predicate, cache: cache)
        let candidates = rows(on: day, maxStale: maxStale)
        let keep: [Bool]
        if cache.isEmpty {
            let scratch = ExpressionScratch()
            keep = pointMatches(plan, rows: candidates, scratch: scratch)
            options.counters?.addExpressionRows(scratch.rowsEvaluated)
        } else {
            keep = perTickerMatches(plan, rows: candidates, threads: options.effectiveThreads, counters: options.counters)
        }
        // At most one bit a ticker: only the mask's pages that get a bit are given memory.
        var mask = Bitmask(sparselyWrittenCount: rowCount)
        var kept = [Int]()
        mask.withUnsafeMutableWords { w in
            for (row, k) in zip(candidates, keep) where k {
                w[row >> 6] |= 1 << UInt64(row & 63)
                kept.append(row)
            }
        }
        return Selection(table: self, mask: mask, rows: kept)
    }

    /// Screening as of a day with the predicate written as text.
    public func select(
        where expression: String, on day: ScreenDay, maxStale: StaleLimit = .default,
        options: QueryOptions = QueryOptions()
    ) throws(QueryError) -> Selection {
        try select(QueryParser(table: self).parse(expression), on: day, maxStale: maxStale, options: options)
    }

    /// `pointMatches` for a plan whose recursive series are per ticker: each row (one per ticker,
    /// ascending) on its own, with the series computed over its ticker's rows up to it.
    func perTickerMatches(_ plan: PlanNode, rows: [Int], threads: Int, counters: EvaluationCounters?) -> [Bool] {
        // Cross-ticker values are prepared once for all the rows (not per ticker).
        var programs = [ExpressionProgram]()
        QuoteTable.collectPrograms(plan, into: &programs)
        for program in programs where !program.materialized.isEmpty { program.prepare(.rows(rows), threads: threads) }
        return forEachAsOfRow(rows, threads: threads, counters: counters) { row, scratch in
            pointMatches(plan, rows: [row], scratch: scratch, prepared: true)[0]
        }
    }

    /// `body(row, scratch)` for each of `rows` (at most one per ticker), with `scratch`'s
    /// `tickerPrefix` set to the rows of the row's ticker up to it, so per-ticker recursive series
    /// are computed over those rows only (`MaterializedSeries.read`). Groups of rows run on
    /// `threads` cores; each answer depends on its ticker's rows alone, so it is the same for any
    /// thread count. `counters` gets the rows expressions were evaluated over.
    func forEachAsOfRow<T>(
        _ rows: [Int], threads: Int, counters: EvaluationCounters?,
        _ body: (_ row: Int, _ scratch: ExpressionScratch) -> T
    ) -> [T] {
        let firstRows = nonEmptyTickerStarts
        let groupSize = 16
        let groups = (rows.count + groupSize - 1) / groupSize
        let workers = Swift.max(1, Swift.min(threads, groups))
        let scratches = (0 ..< workers).map { _ in ExpressionScratch() }
        let result = UnsafeMutablePointer<T>.allocate(capacity: Swift.max(rows.count, 1))
        defer { result.deallocate() }
        let out = SharedPointer(base: result)
        forEachChunk(groups, threads: workers) { g, worker in
            let scratch = scratches[worker]
            let members = g * groupSize ..< Swift.min(rows.count, (g + 1) * groupSize)
            // Each row's ticker prefix: from the last first row at or before it.
            let prefixes = members.map { i in
                let row = rows[i]
                var lo = 0, hi = firstRows.count
                while lo < hi {
                    let mid = (lo + hi) >> 1
                    if firstRows[mid] <= row { lo = mid + 1 } else { hi = mid }
                }
                return firstRows[Swift.max(0, lo - 1)] ..< row + 1
            }
            // The group's smoothing series are computed for all its tickers together.
            scratch.asOfGroup = ExpressionScratch.AsOfGroup(number: g, prefixes: prefixes, slot: 0)
            for (slot, i) in members.enumerated() {
                scratch.tickerPrefix = prefixes[slot]
                scratch.asOfGroup?.slot = slot
                // Safe: each row's answer is written once, by the worker that claimed its group.
                (out.base + i).initialize(to: body(rows[i], scratch))
            }
            scratch.tickerPrefix = nil
            scratch.asOfGroup = nil
        }
        counters?.addExpressionRows(scratches.reduce(0) { $0 + $1.rowsEvaluated })
        let answers = Array(UnsafeBufferPointer(start: result, count: rows.count))
        result.deinitialize(count: rows.count)
        return answers
    }

    /// The expression programs of `plan`'s leaves.
    static func collectPrograms(_ plan: PlanNode, into programs: inout [ExpressionProgram]) {
        switch plan {
        case .expression(let program, _): programs.append(program)
        case .and(let children), .or(let children): for c in children { collectPrograms(c, into: &programs) }
        case .range, .rows, .all, .none: break
        }
    }

    /// Whether each of `rows` (ascending) satisfies `plan`: the plan's leaves are evaluated at
    /// those rows only (negation normal form, so a null or NaN leaf is false, as in the kernels).
    /// With `prepared`, the programs' cross-ticker values are already prepared for `rows`.
    func pointMatches(_ plan: PlanNode, rows: [Int], scratch: ExpressionScratch, prepared: Bool = false) -> [Bool] {
        switch plan {
        case .none: return [Bool](repeating: false, count: rows.count)
        case .all: return [Bool](repeating: true, count: rows.count)
        case .rows(let intervals):
            return rows.map { row in
                var lo = 0, hi = intervals.count
                while lo < hi {
                    let mid = (lo + hi) >> 1
                    if intervals[mid].upperBound <= row { lo = mid + 1 } else { hi = mid }
                }
                return lo < intervals.count && intervals[lo].contains(row)
            }
        case let .range(column, bounds):
            return rows.map { QuoteTable.matches(columns[column], bounds, row: $0) }
        case let .expression(program, bounds):
            let values = prepared ? program.evaluateValues(atRows: rows, scratch: scratch) : program.values(atRows: rows, scratch: scratch)
            return values.map { !$0.isNaN && bounds.matches($0) }
        case .and(let children):
            var result = [Bool](repeating: true, count: rows.count)
            for child in children {
                // Only rows still in the running: a later term costs nothing for rows already out.
                let alive = rows.indices.filter { result[$0] }
                if alive.isEmpty { break }
                let m = pointMatches(child, rows: alive.map { rows[$0] }, scratch: scratch, prepared: prepared)
                for (k, i) in alive.enumerated() where !m[k] { result[i] = false }
            }
            return result
        case .or(let children):
            var result = [Bool](repeating: false, count: rows.count)
            for child in children {
                let open = rows.indices.filter { !result[$0] }
                if open.isEmpty { break }
                let m = pointMatches(child, rows: open.map { rows[$0] }, scratch: scratch, prepared: prepared)
                for (k, i) in open.enumerated() where m[k] { result[i] = true }
            }
            return result
        }
    }

    private static func matches(_ column: AnyColumn, _ bounds: TypedBounds, row: Int) -> Bool {
        switch (column, bounds) {
        case let (.float64(c), .float64(b)): return c.value(at: row).map(b.matches) ?? false
        case let (.float32(c), .float32(b)): return c.value(at: row).map(b.matches) ?? false
        case let (.int64(c), .int64(b)): return c.value(at: row).map(b.matches) ?? false
        case let (.int32(c), .int32(b)): return c.value(at: row).map(b.matches) ?? false
        default: return false
        }
    }
}
