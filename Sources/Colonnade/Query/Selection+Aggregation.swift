extension Selection {
    /// Computes aggregates over the matching rows, overall or per ticker.
    /// The same as `aggregate(_:by:options:)` with `.ticker` or `.none`.
    public func aggregate(
        _ aggregates: [Aggregate], byTicker: Bool = false,
        options: QueryOptions = QueryOptions()
    ) throws(QueryError) -> AggregateResult {
        try aggregate(aggregates, by: byTicker ? .ticker : .none, options: options)
    }

    /// Computes aggregates over the matching rows, overall or per group (ticker, calendar year or
    /// month of the date, or ticker and bucket). Groups without matching rows are left out.
    ///
    ///     try hits.aggregate([.count, .mean(Field("high") - Field("low")), .last("close")], by: .year)
    ///
    /// Nulls are skipped (`count(*)` counts rows, `count(x)` rows where `x is not null`, so never a
    /// NaN). Of a bare column, min, max, first and last also skip NaN, while a NaN value makes
    /// sum, mean and stddev NaN;
    /// in any other expression a NaN is null (see `Aggregate`). Expressions are evaluated over
    /// the rows of each ticker with their series history, whatever rows matched.
    ///
    /// Floating-point sums reassociate. Overall: each `QueryOptions.rowsPerChunk`-row chunk is
    /// summed left to right, then the chunk sums are added in chunk order, starting from 0. In
    /// groups: each ticker's part of a group is summed left to right (its rows in date order),
    /// and a group that spans tickers adds those parts in ticker order. So the result does not
    /// depend on the thread count, but may differ in the last bits from one left-to-right sum.
    /// `stddev` uses Welford's update within a part and Chan et al.'s combination across parts.
    ///
    /// - Throws: `QueryError` for an unknown column or an expression that cannot be evaluated
    ///   (`ticker` or `date` in arithmetic, a window that is not positive).
    /// - Complexity: O(rows) at most; expressions cost one evaluation per row of a ticker with matches.
    public func aggregate(
        _ aggregates: [Aggregate], by grouping: AggregateGrouping,
        options: QueryOptions = QueryOptions()
    ) throws(QueryError) -> AggregateResult {
        let plan = try AggregationPlan(aggregates, table: table)
        // Pending columns the aggregates read are merged here, not inside a worker of the loops
        // below (`Column.resolvePendingValues`); expressions merge theirs when compiled.
        for argument in plan.arguments {
            if case .column(let i) = argument.source { table.columns[i].resolvePendingValues() }
        }
        if plan.programs.contains(where: { !$0.materialized.isEmpty }) {
            // Cross-ticker values for the matching rows only, unless most rows match.
            let scope: RowScope = count * 8 < table.rowCount ? .rows(rows()) : .all
            for program in plan.programs { program.prepare(scope, threads: options.effectiveThreads) }
        }
        if grouping.isOverall {
            return AggregateResult(
                aggregates: aggregates, grouping: grouping,
                rows: [plan.row(count, overall(plan, options: options))])
        }
        if options.flatAggregation,
            let result = flatGrouped(plan, grouping, aggregates: aggregates, options: options)
                ?? flatByDate(plan, grouping, aggregates: aggregates, options: options)
        {
            return result
        }
        return AggregateResult(aggregates: aggregates, grouping: grouping, rows: grouped(plan, grouping, options: options))
    }

    /// Chunk by chunk, merged in chunk order.
    private func overall(_ plan: AggregationPlan, options: QueryOptions) -> [Accumulator] {
        if let rows = knownRows, let total = overall(plan, rows: rows, options: options) { return total }
        let chunkRows = options.rowsPerChunk
        let chunks = (table.rowCount + chunkRows - 1) / chunkRows
        let threads = options.effectiveThreads
        options.counters?.addRun(chunks: chunks, threads: threads)
        var partials = [[Accumulator]](repeating: [], count: chunks)
        let scratches = (0 ..< max(1, min(threads, chunks))).map { _ in ExpressionScratch() }
        partials.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress else { return }
            let shared = SharedPointer(base: base)
            forEachChunk(chunks, threads: threads) { chunk, worker in
                let start = chunk * chunkRows
                let range = start ..< min(start + chunkRows, table.rowCount)
                var accs = [Accumulator](repeating: Accumulator(), count: plan.arguments.count)
                if mask.nonzeroBitCount(in: range) > 0 {
                    accumulate(plan, piece: range, part: range, &accs, scratch: scratches[worker])
                }
                shared.base[chunk] = accs
            }
        }
        var total = [Accumulator](repeating: Accumulator(), count: plan.arguments.count)
        for part in partials { for i in total.indices { total[i].merge(part[i]) } }
        return total
    }

    /// `overall` for a selection of known rows (an as-of screen's, a row a ticker) when every
    /// argument is a bare column with only the plain needs (count, sum, mean, min, max): the same
    /// chunks, each adding its rows in ascending order as `accumulatePlain` does (a null skipped),
    /// merged in chunk order, empty ones too — the same values to the bit — on one thread and
    /// without a pass over the mask (two passes over its 78 K words at 5 M rows, and the threads'
    /// start, were most of S1L's aggregate). Nil for any other plan.
    private func overall(_ plan: AggregationPlan, rows: [Int], options: QueryOptions) -> [Accumulator]? {
        var columns = [Int]()
        for argument in plan.arguments {
            guard argument.pair == nil, argument.needs == Accumulator.Needs(), case .column(let c) = argument.source else { return nil }
            columns.append(c)
        }
        let chunkRows = options.rowsPerChunk
        let chunks = (table.rowCount + chunkRows - 1) / chunkRows
        options.counters?.addRun(chunks: chunks, threads: 1)
        var total = [Accumulator](repeating: Accumulator(), count: columns.count)
        var parts = [Accumulator](repeating: Accumulator(), count: columns.count)
        var next = 0  // the first row not yet added
        for chunk in 0 ..< chunks {
            let end = Swift.min((chunk + 1) * chunkRows, table.rowCount)
            let first = next
            while next < rows.count && rows[next] < end { next += 1 }
            for i in parts.indices { parts[i] = Accumulator() }
            if next > first {
                for (i, c) in columns.enumerated() {
                    Selection.accumulatePlain(column: table.columns[c], rows: rows[first ..< next], &parts[i])
                }
            }
            for i in total.indices { total[i].merge(parts[i]) }
        }
        return total
    }

    /// `Accumulator.add` of the column's value at each of `rows` (ascending) that is not null.
    private static func accumulatePlain(column: AnyColumn, rows: ArraySlice<Int>, _ a: inout Accumulator) {
        switch column {
        case .float64(let c): accumulatePlain(c, rows, &a)
        case .float32(let c): accumulatePlain(c, rows, &a)
        case .int64(let c): accumulatePlain(c, rows, &a)
        case .int32(let c): accumulatePlain(c, rows, &a)
        }
    }

    private static func accumulatePlain<T: ColumnElement>(_ column: Column<T>, _ rows: ArraySlice<Int>, _ a: inout Accumulator) {
        column.withUnsafeBufferPointer { values in
            let validity = column.validity
            for row in rows {
                if let validity, !validity[row] { continue }
                a.add(values[row].doubleValue)
            }
        }
    }

    /// Per ticker with matches (in parallel), each split into its calendar buckets; buckets over
    /// all tickers are then merged in ticker order.
    private func grouped(_ plan: AggregationPlan, _ grouping: AggregateGrouping, options: QueryOptions) -> [AggregateResult.Row] {
        let groups = countsByTicker()
        let threads = options.effectiveThreads
        options.counters?.addRun(chunks: groups.count, threads: threads)
        // Per ticker: (bucket key, matching rows, accumulators) of each bucket with matches.
        typealias Part = (key: Int, matched: Int, accs: [Accumulator])
        var perTicker = [[Part]](repeating: [], count: groups.count)
        let scratches = (0 ..< max(1, min(threads, groups.count))).map { _ in ExpressionScratch() }
        let chunkRows = options.rowsPerChunk
        perTicker.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress else { return }
            let shared = SharedPointer(base: base)
            forEachChunk(groups.count, threads: threads) { g, worker in
                let rows = table.tickers[Int(groups[g].ticker)].rows
                let buckets: [(rows: Range<Int>, key: Int)]
                if grouping.bucket == .date {
                    // A day per row: only the matching rows make groups.
                    var runs = [(rows: Range<Int>, key: Int)]()
                    table.dates.withUnsafeBufferPointer { d in
                        mask.forEachSetRow(in: rows) { row in
                            runs.append((row ..< row + 1, Int(d[row])))
                            return true
                        }
                    }
                    buckets = runs
                } else {
                    buckets = grouping.bucket.map { table.calendarRuns(rows, $0) } ?? [(rows: rows, key: 0)]
                }
                let matched = buckets.map { mask.nonzeroBitCount(in: $0.rows) }
                var accs = [[Accumulator]](
                    repeating: [Accumulator](repeating: Accumulator(), count: plan.arguments.count),
                    count: buckets.count)
                // Pieces of at most a chunk: expressions are evaluated once per piece for all buckets.
                var first = 0  // the first bucket not yet finished
                var start = rows.lowerBound
                while start < rows.upperBound {
                    let piece = start ..< min(start + chunkRows, rows.upperBound)
                    start = piece.upperBound
                    while first < buckets.count && buckets[first].rows.upperBound <= piece.lowerBound { first += 1 }
                    var last = first
                    while last < buckets.count && buckets[last].rows.lowerBound < piece.upperBound { last += 1 }
                    let inPiece = (first ..< last).filter { matched[$0] > 0 }
                    if inPiece.isEmpty || mask.nonzeroBitCount(in: piece) == 0 { continue }
                    let parts = inPiece.map { buckets[$0].rows.clamped(to: piece) }
                    for (k, b) in inPiece.enumerated() {
                        // In place (a copy of a bucket's accumulators per call cost more than the sums).
                        accumulate(plan, piece: piece, part: parts[k], &accs[b], scratch: scratches[worker], evaluated: k > 0)
                    }
                }
                shared.base[g] = buckets.indices.filter { matched[$0] > 0 }.map { (buckets[$0].key, matched[$0], accs[$0]) }
            }
        }
        func row(ticker: String?, key: Int, _ matched: Int, _ accs: [Accumulator]) -> AggregateResult.Row {
            var r = plan.row(matched, accs)
            r.ticker = ticker
            if let bucket = grouping.bucket { r.setBucket(key, bucket) }
            return r
        }
        if grouping.byTicker {
            let rows = zip(groups, perTicker).flatMap { group, parts in
                parts.map { row(ticker: table.tickers[Int(group.ticker)].symbol, key: $0.key, $0.matched, $0.accs) }
            }
            if grouping.tickerFirst || grouping.bucket == nil { return rows }
            // `week,ticker`: by bucket, then ticker (a stable sort keeps ticker order within a bucket).
            return rows.enumerated().sorted { ($0.element.bucketKey ?? 0, $0.offset) < ($1.element.bucketKey ?? 0, $1.offset) }.map(
                \.element)
        }
        var merged = [Int: (matched: Int, accs: [Accumulator])]()
        for parts in perTicker {
            for part in parts {
                if var m = merged.removeValue(forKey: part.key) {
                    m.matched += part.matched
                    for i in m.accs.indices { m.accs[i].merge(part.accs[i]) }
                    merged[part.key] = m
                } else {
                    merged[part.key] = (part.matched, part.accs)
                }
            }
        }
        return merged.sorted { $0.key < $1.key }.map { key, part in row(ticker: nil, key: key, part.matched, part.accs) }
    }

    /// Accumulates every argument of `plan` over the matching rows of `part` (a range inside
    /// `piece`). Expression arguments are evaluated over `piece` first, unless `evaluated` says the
    /// scratch already holds them for this piece.
    private func accumulate(
        _ plan: AggregationPlan, piece: Range<Int>, part: Range<Int>,
        _ accs: inout [Accumulator], scratch: ExpressionScratch, evaluated: Bool = false
    ) {
        let buffers = plan.expressionBuffers(piece, scratch: scratch, reuse: evaluated)
        guard !part.isEmpty else { return }
        table.dates.withUnsafeBufferPointer { dates in
            for i in plan.arguments.indices {
                let argument = plan.arguments[i]
                if let pair = argument.pair, case .expression(let e) = argument.source {
                    // Safe: both buffers hold piece.count values and part lies within piece.
                    let shift = part.lowerBound - piece.lowerBound
                    accumulatePairs(buffers[e] + shift, buffers[pair] + shift, rows: part, &accs[i])
                    continue
                }
                switch argument.source {
                case .column(let c):
                    accumulate(column: c, rows: part, needs: argument.needs, dates: dates, &accs[i])
                case .expression(let e):
                    // Safe: the buffer holds piece.count values and part lies within piece.
                    let values = buffers[e] + (part.lowerBound - piece.lowerBound)
                    accumulate(values: values, rows: part, needs: argument.needs, dates: dates, &accs[i])
                }
            }
        }
    }

    private func accumulate(
        column index: Int, rows: Range<Int>, needs: Accumulator.Needs,
        dates: UnsafeBufferPointer<Int32>, _ acc: inout Accumulator
    ) {
        switch table.columns[index] {
        case .float64(let c): accumulate(c, rows, needs, dates, &acc)
        case .float32(let c): accumulate(c, rows, needs, dates, &acc)
        case .int64(let c): accumulate(c, rows, needs, dates, &acc)
        case .int32(let c): accumulate(c, rows, needs, dates, &acc)
        }
    }

    private func accumulate<T: ColumnElement>(
        _ column: Column<T>, _ range: Range<Int>, _ needs: Accumulator.Needs,
        _ dates: UnsafeBufferPointer<Int32>, _ acc: inout Accumulator
    ) {
        var a = acc
        defer { acc = a }
        column.withUnsafeBufferPointer { values in
            let validity = column.validity
            let plain = needs == Accumulator.Needs()
            if plain {
                // The common case (count, sum, min, max, mean).
                guard let base = values.baseAddress, !range.isEmpty else { return }
                Selection.accumulatePlain(base, mask: mask, validity: validity, range, &a)
                return
            }
            mask.forEachSetRow(in: range) { row in
                if let validity, !validity[row] { return true }
                let x = values[row].doubleValue
                a.add(x)
                if needs.spread { a.addSpread(x) }
                if needs.ends { a.addEnds(x, row: row, date: dates[row]) }
                if needs.values && !x.isNaN { a.values.append(x) }  // NaN of a bare column skipped, as by min and max
                return true
            }
        }
    }

    /// `Accumulator.add` of `values[row]` for every row of `range` set in `mask` (and in
    /// `validity`, when there is one), in ascending row order, with the accumulator's count, NaN
    /// count, sum, minimum and maximum kept in registers: the same values to the bit (the sum adds
    /// left to right, min and max skip NaN as `add` does). A word of the mask whose 64 rows all
    /// count is one plain loop; any other, its set bits one by one. (Through `forEachSetRow`'s
    /// closure and `add`, Q4's count and sum(close) over its 5.5 M of 20 M rows took about twice
    /// the scan itself: 47 against 16 ms in the 20 M-row peers run of 2026-11-29.)
    /// - Precondition: `range` is not empty and lies within the column and the mask.
    static func accumulatePlain<T: ColumnElement>(
        _ values: UnsafePointer<T>, mask: Bitmask, validity: Bitmask?, _ range: Range<Int>, _ a: inout Accumulator
    ) {
        var sums = PlainSums(count: a.count, nans: a.nans, sum: a.sum, min: a.min, max: a.max)
        mask.withUnsafeWords { m in
            if let validity {
                validity.withUnsafeWords { k in sums = plainLoop(values, m, k, range, sums) }
            } else {
                sums = plainLoop(values, m, nil, range, sums)
            }
        }
        a.count = sums.count
        a.nans = sums.nans
        a.sum = sums.sum
        a.min = sums.min
        a.max = sums.max
    }

    /// The plain part of an `Accumulator`, in and out of `plainLoop`.
    struct PlainSums {
        var count: Int, nans: Int, sum: Double, min: Double, max: Double
    }

    /// `accumulatePlain`'s loop, its state in locals: `known` is the validity's words, or nil.
    @inline(__always)
    private static func plainLoop<T: ColumnElement>(
        _ values: UnsafePointer<T>, _ m: UnsafeBufferPointer<UInt64>, _ known: UnsafeBufferPointer<UInt64>?,
        _ range: Range<Int>, _ start: PlainSums
    ) -> PlainSums {
        var count = start.count, nans = start.nans, sum = start.sum, lo = start.min, hi = start.max
        let firstWord = range.lowerBound >> 6, lastWord = (range.upperBound - 1) >> 6
        for wi in firstWord ... lastWord {
            var word = m[wi]
            if let known { word &= known[wi] }
            if wi == firstWord { word &= ~UInt64(0) << UInt64(range.lowerBound & 63) }
            if wi == lastWord { word &= ~UInt64(0) >> UInt64(63 - ((range.upperBound - 1) & 63)) }
            let row0 = wi << 6
            if word == ~UInt64(0) {
                for i in 0 ..< 64 {
                    let x = values[row0 + i].doubleValue
                    sum += x
                    if x.isNaN {
                        nans += 1
                    } else {
                        lo = x >= lo ? lo : x  // also x while lo is NaN (no value yet), as `add`
                        hi = x <= hi ? hi : x
                    }
                }
                count += 64
                continue
            }
            count += word.nonzeroBitCount
            while word != 0 {
                let x = values[row0 | word.trailingZeroBitCount].doubleValue
                sum += x
                if x.isNaN {
                    nans += 1
                } else {
                    lo = x >= lo ? lo : x
                    hi = x <= hi ? hi : x
                }
                word &= word &- 1
            }
        }
        return PlainSums(count: count, nans: nans, sum: sum, min: lo, max: hi)
    }

    /// `values[0]` is row `rows.lowerBound`; NaN is null.
    private func accumulate(
        values: UnsafePointer<Double>, rows: Range<Int>, needs: Accumulator.Needs,
        dates: UnsafeBufferPointer<Int32>, _ acc: inout Accumulator
    ) {
        var a = acc
        defer { acc = a }
        let base = rows.lowerBound
        mask.forEachSetRow(in: rows) { row in
            let x = values[row - base]
            if x.isNaN { return true }
            a.add(x)
            if needs.spread { a.addSpread(x) }
            if needs.ends { a.addEnds(x, row: row, date: dates[row]) }
            if needs.values { a.values.append(x) }
            return true
        }
    }

    /// Pairs for `corr`: `x[0]` and `y[0]` are row `rows.lowerBound`; a row counts where both are known.
    private func accumulatePairs(
        _ x: UnsafePointer<Double>, _ y: UnsafePointer<Double>, rows: Range<Int>,
        _ acc: inout Accumulator
    ) {
        var a = acc
        defer { acc = a }
        let base = rows.lowerBound
        mask.forEachSetRow(in: rows) { row in
            let u = x[row - base], v = y[row - base]
            if !u.isNaN && !v.isNaN { a.addPair(u, v) }
            return true
        }
    }
}

/// Aggregates resolved against a table: each distinct argument once (a column or a compiled
/// expression) with what its aggregates need.
struct AggregationPlan {
    enum Source: Hashable {
        case column(Int)
        /// Index into `programs`.
        case expression(Int)
    }

    struct Argument {
        var source: Source
        /// The second argument of `corr(x, y)` (then `source` is an expression too).
        var pair: Int?
        var needs = Accumulator.Needs()
    }

    private struct ArgumentKey: Hashable {
        var source: Source
        var pair: Int?
    }

    let aggregates: [Aggregate]
    var arguments = [Argument]()
    /// Per aggregate: its argument's index, nil for `count(*)`.
    var argumentOf = [Int?]()
    var programs = [ExpressionProgram]()

    init(_ aggregates: [Aggregate], table: QuoteTable) throws(QueryError) {
        self.aggregates = aggregates
        var expressionIndex = [ValueExpression: Int]()
        var argumentIndex = [ArgumentKey: Int]()
        let cache = SeriesCache()  // a recursive series in several arguments is computed once
        func program(_ e: ValueExpression) throws(QueryError) -> Int {
            if let i = expressionIndex[e] { return i }
            programs.append(try ExpressionProgram(e, table: table, cache: cache))
            expressionIndex[e] = programs.count - 1
            return programs.count - 1
        }
        for a in aggregates {
            guard let argument = a.argument else {
                argumentOf.append(nil)
                continue
            }
            var key: ArgumentKey
            for e in [argument] + (a.second.map { [$0] } ?? []) {
                if case .column(let name) = e, table.columnIndex(named: name) == nil {
                    if ExpressionProgram.isKeyColumn(name, table: table) {
                        throw QueryError(
                            "'\(name)' cannot be aggregated; only value columns and expressions over them can", kind: .typeMismatch)
                    }
                    throw QueryError(
                        "unknown column '\(name)' in \(a)", kind: .unknownColumn,
                        suggestions: Suggestions.closest(to: name, among: table.schema.map(\.identifier)))
                }
            }
            if let second = a.second {
                // corr: both sides as expressions (a NaN is null), evaluated over the same rows.
                key = ArgumentKey(source: .expression(try program(argument)), pair: try program(second))
            } else if case .column(let name) = argument, let i = table.columnIndex(named: name) {
                key = ArgumentKey(source: .column(i))
            } else {
                key = ArgumentKey(source: .expression(try program(argument)))
            }
            let index: Int
            if let i = argumentIndex[key] {
                index = i
            } else {
                arguments.append(Argument(source: key.source, pair: key.pair))
                index = arguments.count - 1
                argumentIndex[key] = index
            }
            switch a.function {
            case .stddev: arguments[index].needs.spread = true
            case .first, .last: arguments[index].needs.ends = true
            case .median, .quantile: arguments[index].needs.values = true
            default: break
            }
            argumentOf.append(index)
        }
    }

    /// One output row from the matching row count and the accumulators.
    func row(_ matched: Int, _ accs: [Accumulator]) -> AggregateResult.Row {
        AggregateResult.Row(
            values: zip(aggregates, argumentOf).map { a, i in
                guard let i else { return Double(matched) }
                return accs[i].value(a.function, parameter: a.parameter)
            })
    }

    /// Evaluates every expression over `piece` into the scratch's buffers (one per program, held
    /// until the scratch's next `reset`), or returns the buffers of the last call when `reuse`.
    func expressionBuffers(_ piece: Range<Int>, scratch: ExpressionScratch, reuse: Bool) -> [UnsafeMutablePointer<Double>] {
        if programs.isEmpty { return [] }
        if reuse { return scratch.heldBuffers }
        scratch.releaseHeld()
        var buffers = [UnsafeMutablePointer<Double>]()
        for program in programs {
            let b = scratch.acquire(piece.count)
            program.evaluate(rows: piece, into: b, scratch: scratch)
            buffers.append(b)
        }
        scratch.hold(buffers)
        return buffers
    }
}
