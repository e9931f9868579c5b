/// Grouped aggregates of bare columns per ticker (`--agg 'first(open),max(high),min(low),
/// last(close),sum(volume)' --by ticker,week`), with flat accumulators: per ticker, each argument
/// column is run through once, bucket after bucket, in a tight loop that keeps a bucket's count,
/// sum, minimum, maximum, first and last value in locals (docs/ARCHITECTURE.md, *Across
/// tickers*, Groups). No `Accumulator`, no expression buffers, no per-row closure where every row
/// of a bucket matches.
///
/// The values are those of the general path to the bit: sums left to right in row order from 0,
/// min and max skipping NaN, first and last the earliest and latest non-NaN value (dates ascend
/// within a ticker). `FlatAggregationTests` holds the two paths equal.
extension Selection {
    /// The answer of `aggregate(_:by:options:)` when the flat path applies (grouped by ticker,
    /// every argument a bare column, no stddev, median, quantile or corr), else nil.
    func flatGrouped(
        _ plan: AggregationPlan, _ grouping: AggregateGrouping, aggregates: [Aggregate], options: QueryOptions
    ) -> AggregateResult? {
        guard AggregationPlan.flatEligible(plan, grouping) else { return nil }
        let columns = plan.arguments.compactMap { argument -> Int? in
            if case .column(let c) = argument.source { return c }
            return nil
        }
        let needs = FlatNeeds.of(plan)
        let groups = countsByTicker()
        let threads = options.effectiveThreads
        options.counters?.addRun(chunks: groups.count, threads: threads)
        // Per ticker (in parallel): its buckets with matches.
        var parts = [[FlatBucket]](repeating: [], count: groups.count)
        parts.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress else { return }
            let shared = SharedPointer(base: base)
            forEachChunk(groups.count, threads: threads) { g, _ in
                let rows = table.tickers[Int(groups[g].ticker)].rows
                let runs = grouping.bucket.map { table.calendarRuns(rows, $0) } ?? [(rows: rows, key: 0)]
                var buckets = [FlatBucket]()
                buckets.reserveCapacity(runs.count)
                for run in runs {
                    let matched = mask.nonzeroBitCount(in: run.rows)
                    if matched > 0 { buckets.append(FlatBucket(rows: run.rows, key: run.key, matched: matched)) }
                }
                shared.base[g] = buckets
            }
        }
        // Then per ticker (in parallel) each argument column once, bucket after bucket, its
        // accumulators turned into the answer's values at once, in place, in their final order
        // (ticker, then bucket).
        var offsets = [Int](repeating: 0, count: groups.count + 1)
        for g in groups.indices { offsets[g + 1] = offsets[g] + parts[g].count }
        let total = offsets[groups.count]
        let functions = plan.aggregates.map(\.function)
        let argumentOf = plan.argumentOf
        // The aggregates of `count(*)`, and those reading each argument.
        let counts = functions.indices.filter { argumentOf[$0] == nil }
        let readers = columns.indices.map { a in functions.indices.filter { argumentOf[$0] == a } }
        let result = AggregateResult(
            aggregates: aggregates, grouping: grouping, symbols: table.tickers.map(\.symbol), count: total
        ) { tickerNumbers, keys, values, isNull in
            let out = SharedColumns(tickerNumbers: tickerNumbers, keys: keys, values: values, isNull: isNull)
            forEachChunk(groups.count, threads: threads) { g, _ in
                let number = Int32(groups[g].ticker)
                let buckets = parts[g]
                let first = offsets[g]
                // Safe: each ticker writes only its own rows, offsets[g] ..< offsets[g + 1], of
                // each column.
                for (b, bucket) in buckets.enumerated() {
                    out.tickerNumbers?[first + b] = number
                    out.keys?[first + b] = bucket.key
                }
                for k in counts {
                    for (b, bucket) in buckets.enumerated() {
                        out.values[k * total + first + b] = Double(bucket.matched)
                        out.isNull[k * total + first + b] = false
                    }
                }
                for (a, c) in columns.enumerated() {
                    accumulateFlat(column: c, buckets, needs: needs[a]) { b, ends in
                        for k in readers[a] {
                            let value = ends.value(functions[k])
                            out.values[k * total + first + b] = value ?? 0
                            out.isNull[k * total + first + b] = value == nil
                        }
                    }
                }
            }
        }
        if grouping.tickerFirst || grouping.bucket == nil { return result }
        // `week,ticker`: by bucket, then ticker (a stable sort keeps ticker order within a bucket).
        return result.gathered((0 ..< total).sorted { (result.bucketKey(row: $0) ?? 0, $0) < (result.bucketKey(row: $1) ?? 0, $1) })
    }

    /// The answer of `aggregate(_:by:options:)` grouped by date alone (market breadth: `--count
    /// --by date`) when every argument is a bare column, else nil. A group is one day across
    /// tickers, one row of each: per day, flat accumulators in a dense array over the table's
    /// span of days, filled ticker after ticker, so each day's values are added in ticker order
    /// as the general path merges its per-ticker parts (bit for bit: a part of one row is that
    /// row's value). In parallel over slices of days, each slice visiting every ticker in order.
    func flatByDate(
        _ plan: AggregationPlan, _ grouping: AggregateGrouping, aggregates: [Aggregate], options: QueryOptions
    ) -> AggregateResult? {
        guard !grouping.byTicker, grouping.bucket == .date, AggregationPlan.flatArguments(plan) else { return nil }
        let columns = plan.arguments.compactMap { argument -> Int? in
            if case .column(let c) = argument.source { return c }
            return nil
        }
        var first = Int32.max, last = Int32.min
        table.dates.withUnsafeBufferPointer { d in
            for t in table.tickers where t.rowCount > 0 {
                first = Swift.min(first, d[t.firstRow])
                last = Swift.max(last, d[t.firstRow + t.rowCount - 1])
            }
        }
        let span = first <= last ? Int(last) - Int(first) + 1 : 0
        // Days far apart (a few rows across millennia): the dense array would outgrow the table.
        guard span <= 4 * table.rowCount + 4096 else { return nil }
        let threads = options.effectiveThreads
        let slices = Swift.min(span, threads * 4)
        options.counters?.addRun(chunks: slices, threads: threads)
        var matched = [Int](repeating: 0, count: span)
        var ends = [FlatEnds](repeating: FlatEnds(), count: span * columns.count)
        matched.withUnsafeMutableBufferPointer { m in
            ends.withUnsafeMutableBufferPointer { e in
                guard let mBase = m.baseAddress, let eBase = e.baseAddress else { return }
                let counts = SharedPointer(base: mBase), accumulators = SharedPointer(base: eBase)
                table.dates.withUnsafeBufferPointer { dates in
                    forEachChunk(slices, threads: threads) { s, _ in
                        // Days first + lo ..< first + hi: this slice's alone, so no two threads
                        // write one day.
                        let lo = Int32(s * span / slices), hi = Int32((s + 1) * span / slices)
                        for ticker in table.tickers where ticker.rowCount > 0 {
                            let rows = ticker.rows
                            let start = Self.firstRow(in: rows, onOrAfter: first + lo, dates)
                            let end = Self.firstRow(in: start ..< rows.upperBound, onOrAfter: first + hi, dates)
                            guard start < end else { continue }
                            mask.forEachSetRow(in: start ..< end) { row in
                                counts.base[Int(dates[row] - first)] += 1
                                return true
                            }
                            for (a, c) in columns.enumerated() {
                                accumulateByDate(column: c, rows: start ..< end, dates, first: first, into: accumulators.base + a * span)
                            }
                        }
                    }
                }
            }
        }
        let days = (0 ..< span).filter { matched[$0] > 0 }
        let functions = plan.aggregates.map(\.function)
        let argumentOf = plan.argumentOf
        return AggregateResult(aggregates: aggregates, grouping: grouping, symbols: [], count: days.count) { _, keys, values, isNull in
            for (row, day) in days.enumerated() {
                keys?[row] = Int(first) + day
                for k in functions.indices {
                    let value = argumentOf[k].map { ends[$0 * span + day].value(functions[k]) } ?? Double(matched[day])
                    values[k * days.count + row] = value ?? 0
                    isNull[k * days.count + row] = value == nil
                }
            }
        }
    }

    /// The first row of `rows` (dates ascending) whose date is at least `day`.
    private static func firstRow(in rows: Range<Int>, onOrAfter day: Int32, _ dates: UnsafeBufferPointer<Int32>) -> Int {
        var lo = rows.lowerBound, hi = rows.upperBound
        while lo < hi {
            let mid = (lo + hi) / 2
            if dates[mid] < day { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    private func accumulateByDate(
        column index: Int, rows: Range<Int>, _ dates: UnsafeBufferPointer<Int32>, first: Int32, into out: UnsafeMutablePointer<FlatEnds>
    ) {
        func run<T: ColumnElement>(_ column: Column<T>) {
            column.withUnsafeBufferPointer { values in
                let validity = column.validity
                mask.forEachSetRow(in: rows) { row in
                    if let validity, !validity[row] { return true }
                    out[Int(dates[row] - first)].add(values[row].doubleValue)
                    return true
                }
            }
        }
        switch table.columns[index] {
        case .float64(let c): run(c)
        case .float32(let c): run(c)
        case .int64(let c): run(c)
        case .int32(let c): run(c)
        }
    }

    /// Each bucket's accumulators of column `index`, handed to `body` with the bucket's index.
    private func accumulateFlat(
        column index: Int, _ buckets: [FlatBucket], needs: FlatNeeds, _ body: (Int, FlatEnds) -> Void
    ) {
        switch table.columns[index] {
        case .float64(let c): accumulateFlat(c, buckets, needs: needs, body)
        case .float32(let c): accumulateFlat(c, buckets, needs: needs, body)
        case .int64(let c): accumulateFlat(c, buckets, needs: needs, body)
        case .int32(let c): accumulateFlat(c, buckets, needs: needs, body)
        }
    }

    private func accumulateFlat<T: ColumnElement>(
        _ column: Column<T>, _ buckets: [FlatBucket], needs: FlatNeeds, _ body: (Int, FlatEnds) -> Void
    ) {
        column.withUnsafeBufferPointer { values in
            let validity = column.validity
            for (b, bucket) in buckets.enumerated() {
                var e = FlatEnds()
                if validity == nil && bucket.matched == bucket.rows.count {
                    // Every row of the bucket: one tight loop per field asked for (weekly bars ask
                    // one field of each column), and the ends found from either side.
                    let rows = bucket.rows
                    if needs.counts {
                        e.count = rows.count
                        for row in rows {
                            let x = values[row].doubleValue
                            e.sum += x
                            e.nans += x.isNaN ? 1 : 0
                        }
                    }
                    if needs.minimum {
                        var m = Double.infinity
                        for row in rows {
                            let x = values[row].doubleValue
                            m = x < m ? x : m  // NaN never taken; ties keep the first, as `add`
                        }
                        // +∞ is a value only if one is stored; else there was none but NaN.
                        e.min = m != .infinity || rows.contains(where: { values[$0].doubleValue == .infinity }) ? m : .nan
                    }
                    if needs.maximum {
                        var m = -Double.infinity
                        for row in rows {
                            let x = values[row].doubleValue
                            m = x > m ? x : m
                        }
                        e.max = m != -.infinity || rows.contains(where: { values[$0].doubleValue == -.infinity }) ? m : .nan
                    }
                    if needs.ends {
                        if let r = rows.first(where: { !values[$0].doubleValue.isNaN }) { e.first = values[r].doubleValue }
                        if let r = rows.last(where: { !values[$0].doubleValue.isNaN }) { e.last = values[r].doubleValue }
                    }
                } else {
                    mask.forEachSetRow(in: bucket.rows) { row in
                        if let validity, !validity[row] { return true }
                        e.add(values[row].doubleValue)
                        return true
                    }
                }
                body(b, e)
            }
        }
    }

}

/// The columns `AggregateResult`'s filling initializer hands out, shared by the threads that
/// write disjoint rows of them.
private struct SharedColumns: @unchecked Sendable {
    var tickerNumbers: UnsafeMutablePointer<Int32>?
    var keys: UnsafeMutablePointer<Int>?
    var values: UnsafeMutablePointer<Double>
    var isNull: UnsafeMutablePointer<Bool>
}

/// One bucket of one ticker with matching rows.
private struct FlatBucket {
    var rows: Range<Int>
    var key: Int
    var matched: Int
}

/// Which fields of `FlatEnds` an argument's aggregates read: a bucket where every row matches
/// computes only those, each in a loop of its own. (The others keep their initial values, which
/// no aggregate of the argument reads.)
private struct FlatNeeds {
    var counts = false, minimum = false, maximum = false, ends = false

    /// Per argument of `plan`.
    static func of(_ plan: AggregationPlan) -> [FlatNeeds] {
        var needs = [FlatNeeds](repeating: FlatNeeds(), count: plan.arguments.count)
        for (k, aggregate) in plan.aggregates.enumerated() {
            guard let a = plan.argumentOf[k] else { continue }
            switch aggregate.function {
            case .count, .sum, .mean: needs[a].counts = true
            case .min: needs[a].minimum = true
            case .max: needs[a].maximum = true
            case .first, .last: needs[a].ends = true
            case .stddev, .median, .quantile, .corr: break  // never flat
            }
        }
        return needs
    }
}

/// What `Accumulator` keeps for count, sum, min, max, mean, first and last, for rows of one ticker
/// added in date order.
private struct FlatEnds {
    var count = 0
    var nans = 0
    var sum = 0.0
    var min = Double.nan
    var max = Double.nan
    var first = Double.nan
    var last = Double.nan

    /// Without branches on the values (random prices mispredict): each field takes `x` or keeps
    /// its value by a select. NaN `x` is counted, summed, and kept out of the rest.
    @inline(__always)
    mutating func add(_ x: Double) {
        let isNaN = x.isNaN
        count += 1
        nans += isNaN ? 1 : 0
        sum += x
        min = x >= min ? min : (isNaN ? min : x)  // x while min is NaN (none yet)
        max = x <= max ? max : (isNaN ? max : x)
        first = first.isNaN ? x : first
        last = isNaN ? last : x
    }

    /// As `Accumulator.value(_:parameter:)` for the functions the flat path takes.
    func value(_ function: Aggregate.Function) -> Double? {
        switch function {
        case .count: Double(count - nans)
        case .sum: count == 0 ? nil : sum
        case .min: min.isNaN ? nil : min
        case .max: max.isNaN ? nil : max
        case .mean: count == 0 ? nil : sum / Double(count)
        case .first: first.isNaN ? nil : first
        case .last: last.isNaN ? nil : last
        case .stddev, .median, .quantile, .corr: nil  // never asked: the flat path refuses them
        }
    }
}

extension AggregationPlan {
    /// Whether `Selection.flatGrouped` takes these aggregates: grouped by ticker (so no group
    /// spans tickers), every argument a bare column, and no stddev, median, quantile or corr.
    /// (`Selection.flatByDate` takes the same arguments grouped by date alone.)
    static func flatEligible(_ plan: AggregationPlan, _ grouping: AggregateGrouping) -> Bool {
        grouping.byTicker && flatArguments(plan)
    }

    /// Whether every argument is a bare column and no aggregate needs more than the flat
    /// accumulators keep (no stddev, median, quantile or corr).
    static func flatArguments(_ plan: AggregationPlan) -> Bool {
        guard plan.programs.isEmpty else { return false }
        return plan.arguments.allSatisfy { argument in
            guard case .column = argument.source else { return false }
            return argument.pair == nil && !argument.needs.spread && !argument.needs.values
        }
    }
}
