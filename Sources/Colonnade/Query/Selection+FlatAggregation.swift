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
    /// The rows of `grouped` when the flat path applies (grouped by ticker, every argument a bare
    /// column, no stddev, median, quantile or corr), else nil.
    func flatGrouped(_ plan: AggregationPlan, _ grouping: AggregateGrouping, options: QueryOptions) -> [AggregateResult.Row]? {
        guard AggregationPlan.flatEligible(plan, grouping) else { return nil }
        let columns = plan.arguments.compactMap { argument -> Int? in
            if case .column(let c) = argument.source { return c }
            return nil
        }
        let groups = countsByTicker()
        let threads = options.effectiveThreads
        options.counters?.addRun(chunks: groups.count, threads: threads)
        // Per ticker (in parallel): its buckets with matches and, per argument and bucket, the
        // flat accumulators.
        var parts = [(buckets: [FlatBucket], ends: [FlatEnds])](repeating: ([], []), count: groups.count)
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
                var ends = [FlatEnds](repeating: FlatEnds(), count: buckets.count * columns.count)
                ends.withUnsafeMutableBufferPointer { e in
                    guard let base = e.baseAddress else { return }
                    for (a, c) in columns.enumerated() {
                        // Safe: a * buckets.count + buckets.count <= e.count.
                        accumulateFlat(column: c, buckets, into: base + a * buckets.count)
                    }
                }
                shared.base[g] = (buckets, ends)
            }
        }
        // The rows, made in place in their final order (ticker, then bucket), in parallel.
        var offsets = [Int](repeating: 0, count: groups.count + 1)
        for g in groups.indices { offsets[g + 1] = offsets[g] + parts[g].buckets.count }
        let total = offsets[groups.count]
        let functions = plan.aggregates.map(\.function)
        let argumentOf = plan.argumentOf
        let rows = [AggregateResult.Row](unsafeUninitializedCapacity: total) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            let out = SharedPointer(base: base)
            forEachChunk(groups.count, threads: threads) { g, _ in
                let symbol = table.tickers[Int(groups[g].ticker)].symbol
                let (buckets, ends) = parts[g]
                for (b, bucket) in buckets.enumerated() {
                    let values = [Double?](unsafeUninitializedCapacity: functions.count) { v, n in
                        for k in functions.indices {
                            // k < functions.count, the capacity asked for.
                            if let a = argumentOf[k] {
                                v.initializeElement(at: k, to: ends[a * buckets.count + b].value(functions[k]))
                            } else {
                                v.initializeElement(at: k, to: Double(bucket.matched))
                            }
                        }
                        n = functions.count
                    }
                    var row = AggregateResult.Row(values: values)
                    row.ticker = symbol
                    if let kind = grouping.bucket { row.setBucket(bucket.key, kind) }
                    // Safe: each ticker initializes only its own rows, offsets[g] ..< offsets[g + 1].
                    (out.base + offsets[g] + b).initialize(to: row)
                }
            }
            initialized = total
        }
        if grouping.tickerFirst || grouping.bucket == nil { return rows }
        // `week,ticker`: by bucket, then ticker (a stable sort keeps ticker order within a bucket).
        return rows.enumerated().sorted { ($0.element.bucketKey ?? 0, $0.offset) < ($1.element.bucketKey ?? 0, $1.offset) }.map(
            \.element)
    }

    private func accumulateFlat(column index: Int, _ buckets: [FlatBucket], into out: UnsafeMutablePointer<FlatEnds>) {
        switch table.columns[index] {
        case .float64(let c): accumulateFlat(c, buckets, into: out)
        case .float32(let c): accumulateFlat(c, buckets, into: out)
        case .int64(let c): accumulateFlat(c, buckets, into: out)
        case .int32(let c): accumulateFlat(c, buckets, into: out)
        }
    }

    private func accumulateFlat<T: ColumnElement>(_ column: Column<T>, _ buckets: [FlatBucket], into out: UnsafeMutablePointer<FlatEnds>) {
        column.withUnsafeBufferPointer { values in
            let validity = column.validity
            for (b, bucket) in buckets.enumerated() {
                var e = FlatEnds()
                if validity == nil && bucket.matched == bucket.rows.count {
                    // Every row of the bucket: a plain loop.
                    for row in bucket.rows { e.add(values[row].doubleValue) }
                } else {
                    mask.forEachSetRow(in: bucket.rows) { row in
                        if let validity, !validity[row] { return true }
                        e.add(values[row].doubleValue)
                        return true
                    }
                }
                out[b] = e
            }
        }
    }
}

/// One bucket of one ticker with matching rows.
private struct FlatBucket {
    var rows: Range<Int>
    var key: Int
    var matched: Int
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
    static func flatEligible(_ plan: AggregationPlan, _ grouping: AggregateGrouping) -> Bool {
        guard grouping.byTicker, plan.programs.isEmpty else { return false }
        return plan.arguments.allSatisfy { argument in
            guard case .column = argument.source else { return false }
            return argument.pair == nil && !argument.needs.spread && !argument.needs.values
        }
    }
}
