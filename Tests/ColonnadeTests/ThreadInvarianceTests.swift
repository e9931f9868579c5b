import Testing
import Colonnade
import ColonnadeTestSupport

/// Results do not depend on the thread count, and really run on several threads: the chunk size is
/// lowered to one or a few zone-map blocks, so tables of a few thousand rows span dozens of chunks.
@Suite struct ThreadInvarianceTests {
    static let threadCounts = [1, 2, 3, 4, 8]
    /// The aggregates `chunkOrderReference` computes (first, last and stddev: AggregateDifferentialTests).
    static let chunkOrderFunctions: [Aggregate.Function] = [.count, .sum, .min, .max, .mean]

    static func options(threads: Int, chunkBlocks: Int, zoneMaps: Bool = true, counters: EvaluationCounters? = nil) -> QueryOptions {
        var o = QueryOptions(threads: threads, useBlockSummaries: zoneMaps)
        o.rowsPerChunk = chunkBlocks * zoneMapBlockRows
        o.counters = counters
        return o
    }

    @Test func selectionsAreIdenticalOnManyChunksAndThreads() throws {
        let table = TestTables.random(rows: 5_000, tickers: 17, seed: 21)  // nulls, NaN, ±0, ±∞
        let reference = ColumnarReference(table)
        let counters = EvaluationCounters()
        var rng = SplitMix64(seed: 22)
        for _ in 0 ..< 16 {
            let p = Reference.randomPredicate(table, rng: &rng)
            let expected = reference.rows(p)
            let single = try table.select(p, options: QueryOptions(threads: 1))
            #expect(single.rows() == expected, "\(p)")
            for threads in Self.threadCounts {
                for chunkBlocks in [1, 3] {
                    for zoneMaps in [true, false] {
                        let got = try table.select(
                            p,
                            options: Self.options(
                                threads: threads, chunkBlocks: chunkBlocks,
                                zoneMaps: zoneMaps, counters: counters))
                        if got.mask != single.mask {
                            Issue.record("threads \(threads), chunk \(chunkBlocks) blocks, zone maps \(zoneMaps): \(p)")
                            return
                        }
                    }
                }
            }
        }
        // 5,000 rows in 512-row chunks are 10 chunks: every multi-thread query went parallel.
        #expect(counters.parallelRuns.load(ordering: .relaxed) == 16 * (Self.threadCounts.count - 1) * 2 * 2)
    }

    // MARK: Aggregates

    /// The documented rules (Aggregate.swift): nulls are skipped, count(*) counts rows and
    /// count(column) values that are neither null nor NaN; min and max skip NaN; NaN makes sum and mean
    /// NaN; a sum, min, max or mean of no values is nil.
    @Test func aggregateRulesForNullsAndNaN() throws {
        let table = try QuoteTable(
            schema: [
                ColumnDescriptor(name: "mixed", type: .float64), ColumnDescriptor(name: "nulls", type: .float64),
                ColumnDescriptor(name: "nans", type: .float64), ColumnDescriptor(name: "ints", type: .int32),
                ColumnDescriptor(name: "inf", type: .float64),
            ],
            columns: [
                AnyColumn(Column<Double>([1.5, nil, .nan, -2, nil, 4])), AnyColumn(Column<Double>([nil, nil, nil, nil, nil, nil])),
                AnyColumn(Column<Double>([.nan, nil, .nan, .nan, .nan, nil])), AnyColumn(Column<Int32>([3, nil, -7, 1, nil, 2])),
                AnyColumn(Column<Double>([.infinity, 1, -.infinity, 2, 3, .infinity])),
            ],
            dates: Column<Int32>([1, 2, 3, 4, 5, 6]), tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 6)])
        let all = table.selectAll()
        func values(_ aggs: [Aggregate], _ s: Selection, threads: Int = 1) throws -> [Double?] {
            try s.aggregate(aggs, options: Self.options(threads: threads, chunkBlocks: 1)).rows[0].values
        }
        for threads in [1, 4] {
            // mixed: 1.5, null, NaN, -2, null, 4
            let m = try values(
                [.count, .count("mixed"), .sum("mixed"), .min("mixed"), .max("mixed"), .mean("mixed")], all, threads: threads)
            #expect(m[0] == 6 && m[1] == 3 && m[3] == -2 && m[4] == 4)  // count(x): a NaN is null, as to `is null`
            #expect(m[2]!.isNaN && m[5]!.isNaN)
            // Only nulls: counts are 0, everything else has no value.
            #expect(
                try values([.count("nulls"), .sum("nulls"), .min("nulls"), .max("nulls"), .mean("nulls")], all, threads: threads)
                    == [0, nil, nil, nil, nil])
            // Only NaN and nulls: count(x) is 0 (a NaN is null to it), sum and mean are NaN, min and max have no value.
            let n = try values([.count("nans"), .sum("nans"), .min("nans"), .max("nans"), .mean("nans")], all, threads: threads)
            #expect(n[0] == 0 && n[1]!.isNaN && n[2] == nil && n[3] == nil && n[4]!.isNaN)
            // Integers: nulls skipped, the mean is sum / non-null count.
            #expect(
                try values([.count("ints"), .sum("ints"), .min("ints"), .max("ints"), .mean("ints")], all, threads: threads)
                    == [4, -1, -7, 3, -0.25])
            // ±∞: min and max are infinite, ∞ + -∞ makes the sum NaN.
            let i = try values([.min("inf"), .max("inf"), .sum("inf")], all, threads: threads)
            #expect(i[0] == -.infinity && i[1] == .infinity && i[2]!.isNaN)
        }
        // Rows 0, 3 and 5 only (1.5, -2, 4; the NaN row is not selected): an ordinary sum.
        let some = try table.select(where: "ints > 0")
        #expect(try values([.count, .sum("mixed"), .min("mixed"), .max("mixed"), .mean("mixed")], some) == [3, 3.5, -2, 4, 3.5 / 3])
        // Nothing selected: count(*) is 0, the rest have no value.
        let none = try table.select(where: "ints > 100")
        #expect(
            try values([.count, .count("mixed"), .sum("mixed"), .min("mixed"), .max("mixed"), .mean("mixed")], none)
                == [0, 0, nil, nil, nil, nil])
        #expect(try none.aggregate([.count, .sum("mixed")], byTicker: true).rows.isEmpty)
    }

    /// What `Selection.aggregate` documents, computed the obvious way: each chunk's non-null values
    /// left to right, chunk results combined in chunk order (sum from 0; min and max skip NaN).
    static func chunkOrderReference(_ s: Selection, column: String, chunkRows: Int, function: Aggregate.Function) -> Double? {
        let c = s.table.column(named: column)!
        var count = 0, sum = 0.0
        var known = [Double]()
        for start in stride(from: 0, to: s.table.rowCount, by: chunkRows) {
            var chunkSum = 0.0
            for row in start ..< min(start + chunkRows, s.table.rowCount) where s.mask[row] {
                guard let v = c.doubleValue(at: row) else { continue }
                count += 1
                chunkSum += v
                if !v.isNaN { known.append(v) }
            }
            sum += chunkSum
        }
        switch function {
        case .count: return Double(known.count)  // a NaN is null to count(x)
        case .sum: return count == 0 ? nil : sum
        case .mean: return count == 0 ? nil : sum / Double(count)
        case .min: return known.min()
        case .max: return known.max()
        case .first, .last, .stddev, .median, .quantile, .corr:
            preconditionFailure("not a chunk-order aggregate (AggregateDifferentialTests covers it)")
        }
    }

    static func sameBits(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (x?, y?): x.isNaN ? y.isNaN : x.bitPattern == y.bitPattern || (x == y && x == 0)  // ±0 from min/max ties
        default: false
        }
    }

    @Test(arguments: [0.0, 0.02])
    func everyAggregateIsBitIdenticalAcrossThreadsAndFollowsChunkOrder(specialRate: Double) throws {
        let table = TestTables.random(rows: 6_000, tickers: 9, seed: 31, nullRate: 0.1, specialRate: specialRate)
        let columns = table.schema.map(\.name)
        let aggregates = [Aggregate.count] + columns.flatMap { c in Self.chunkOrderFunctions.map { Aggregate($0, c) } }
        var orderMattered = 0
        for selection in [table.selectAll(), try table.select(where: "f64 > 70 or i32 < 65 or f32 > 99")] {
            for chunkBlocks in [1, 5] {
                let counters = EvaluationCounters()
                let results = try Self.threadCounts.map {
                    try selection.aggregate(aggregates, options: Self.options(threads: $0, chunkBlocks: chunkBlocks, counters: counters))
                }
                #expect(counters.parallelRuns.load(ordering: .relaxed) == Self.threadCounts.count - 1)
                let expected = aggregates.map { a in
                    a.column.map {
                        Self.chunkOrderReference(selection, column: $0, chunkRows: chunkBlocks * zoneMapBlockRows, function: a.function)
                    } ?? Double(selection.count)
                }
                for (t, r) in zip(Self.threadCounts, results) {
                    #expect(r.rows.count == 1 && r.rows[0].values.count == aggregates.count)
                    for (a, (v, expected)) in zip(aggregates, zip(r.rows[0].values, expected)) {
                        if !Self.sameBits(v, expected) {
                            Issue.record(
                                "\(a), \(t) threads, chunk \(chunkBlocks) blocks: got \(String(describing: v)), expected \(String(describing: expected))"
                            )
                        }
                    }
                }
                // The sum really depends on the chunk order in this data: the test can tell a merge
                // in another order (here: the whole column left to right) from the documented one.
                if specialRate == 0 {
                    let c = table.column(named: "Adj. F64")!
                    var flat = 0.0
                    for row in 0 ..< table.rowCount where selection.mask[row] { if let v = c.doubleValue(at: row) { flat += v } }
                    if flat
                        != Self.chunkOrderReference(
                            selection, column: "Adj. F64", chunkRows: chunkBlocks * zoneMapBlockRows, function: .sum)
                    {
                        orderMattered += 1
                    }
                }
            }
        }
        if specialRate == 0 { #expect(orderMattered > 0, "no case where the merge order changes the sum") }
    }

    @Test func byTickerAggregatesAreBitIdenticalAcrossThreads() throws {
        let table = TestTables.random(rows: 6_000, tickers: 23, seed: 41, nullRate: 0.1, specialRate: 0.01)
        let selection = try table.select(where: "f64 > 65 or i64 < 70000")
        let aggregates = [Aggregate.count] + table.schema.map(\.name).flatMap { c in Self.chunkOrderFunctions.map { Aggregate($0, c) } }
        let counters = EvaluationCounters()
        let results = try Self.threadCounts.map {
            try selection.aggregate(aggregates, byTicker: true, options: Self.options(threads: $0, chunkBlocks: 1, counters: counters))
        }
        #expect(counters.parallelRuns.load(ordering: .relaxed) == Self.threadCounts.count - 1)
        // Per ticker: its matching rows left to right (one "chunk" per ticker).
        let groups = selection.countsByTicker()
        let expected = groups.map { group in
            let ticker = table.tickers[Int(group.ticker)]
            var only = Bitmask(count: table.rowCount)
            for i in ticker.rows where selection.mask[i] { only[i] = true }
            let one = Selection(table: table, mask: only)
            return aggregates.map { a in
                a.column.map { Self.chunkOrderReference(one, column: $0, chunkRows: table.rowCount, function: a.function) }
                    ?? Double(group.count)
            }
        }
        for (t, r) in zip(Self.threadCounts, results) {
            #expect(r.rows.map(\.ticker) == groups.map { table.tickers[Int($0.ticker)].symbol })
            for ((row, group), expected) in zip(zip(r.rows, groups), expected) {
                let ticker = table.tickers[Int(group.ticker)]
                for (a, (v, expected)) in zip(aggregates, zip(row.values, expected)) {
                    if !Self.sameBits(v, expected) {
                        Issue.record(
                            "\(ticker.symbol) \(a), \(t) threads: got \(String(describing: v)), expected \(String(describing: expected))")
                    }
                }
            }
        }
    }

    /// Chunk sums of very different magnitudes (2^53, then ones, then -2^53): added in chunk order
    /// each 1 rounds away (2^53 + 1 ties to 2^53) and the result is 0; in reverse order the ones
    /// survive (-2^53 + 1 is exact) and the result is 8. A merge in any order but chunk order
    /// (reversed, by worker, by completion) gives another sum.
    @Test func partialSumsMergeInChunkOrder() throws {
        let blocks = 40, big = 9_007_199_254_740_992.0  // 2^53
        let rows = blocks * zoneMapBlockRows
        let values: [Double] = (0 ..< rows).map { row in
            switch (row / zoneMapBlockRows, row % zoneMapBlockRows) {
            case (0, 0): big
            case (blocks - 1, 0): -big
            case (let b, 7) where b % 4 == 0 && b > 0 && b < blocks - 4: 1  // one 1 per chunk of up to 4 blocks
            default: 0
            }
        }
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "v", type: .float64)], columns: [AnyColumn(Column<Double>(values))],
            dates: Column<Int32>((0 ..< rows).map { Int32($0) }),
            tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: rows)])
        let all = table.selectAll()
        #expect(Self.chunkOrderReference(all, column: "v", chunkRows: zoneMapBlockRows, function: .sum) == 0)
        for chunkBlocks in [1, 2, 4] {
            let chunkRows = chunkBlocks * zoneMapBlockRows
            let expected = try #require(Self.chunkOrderReference(all, column: "v", chunkRows: chunkRows, function: .sum))
            var reversed = 0.0
            for start in stride(from: 0, to: rows, by: chunkRows).reversed() {
                reversed += values[start ..< start + chunkRows].reduce(0, +)
            }
            #expect(reversed != expected, "the data cannot tell chunk order from reverse order")
            for threads in Self.threadCounts {
                let counters = EvaluationCounters()
                let got = try all.aggregate(
                    [.sum("v"), .mean("v")], options: Self.options(threads: threads, chunkBlocks: chunkBlocks, counters: counters))
                #expect(got.rows[0].values == [expected, expected / Double(rows)], "\(threads) threads, chunk \(chunkBlocks) blocks")
                #expect(counters.chunks.load(ordering: .relaxed) == blocks / chunkBlocks)
                #expect(counters.parallelRuns.load(ordering: .relaxed) == (threads > 1 ? 1 : 0))
            }
        }
    }
}
