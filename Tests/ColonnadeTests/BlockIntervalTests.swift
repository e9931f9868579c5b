import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Interval arithmetic over block summaries for computed comparisons on plain columns
/// (`(high - low) / close > 0.05`): the same rows as the oracle with zone maps on or off, on any
/// thread count, and blocks really are skipped and filled.
@Suite struct BlockIntervalTests {
    /// Arithmetic without series functions (the only expressions intervals answer for), plus
    /// `ln`/`exp`, which must fall back to the kernel.
    static func arithmetic(_ rng: inout SplitMix64, _ depth: Int) -> ValueExpression {
        if depth == 0 || rng.chance(3) {
            if rng.chance(5) { return .number([-2, -0.0, 0, 0.5, 3, 25, .infinity][rng.below(7)]) }
            return .column(SeriesTables.columns[rng.below(SeriesTables.columns.count)])
        }
        switch rng.below(8) {
        case 0, 1, 2:
            let ops = ValueExpression.Operator.allCases
            return .arithmetic(ops[rng.below(ops.count)], arithmetic(&rng, depth - 1), arithmetic(&rng, depth - 1))
        case 3: return -arithmetic(&rng, depth - 1)
        case 4: return arithmetic(&rng, depth - 1).abs
        case 5: return arithmetic(&rng, depth - 1).sqrt
        case 6: return rng.chance(2) ? arithmetic(&rng, depth - 1).ln : arithmetic(&rng, depth - 1).exp
        default: return arithmetic(&rng, depth - 1) - arithmetic(&rng, depth - 1)
        }
    }

    static func bounds(_ rng: inout SplitMix64) -> RangeBounds<Double> {
        let points: [Double] = [-100, -2, 0, 0.05, 1, 10, 60, 500, 5000]
        let a = points[rng.below(points.count)], b = points[rng.below(points.count)]
        switch rng.below(4) {
        case 0: return .greater(than: a)
        case 1: return .atMost(a)
        case 2: return .equal(to: a)
        default: return RangeBounds(lower: min(a, b), lowerInclusive: rng.chance(2), upper: max(a, b), upperInclusive: rng.chance(2))
        }
    }

    @Test(arguments: [1, 2, 3])
    func computedComparisonsOnPlainColumnsMatchTheOracleWithZoneMapsOnAndOff(seed: UInt64) throws {
        var rng = SplitMix64(seed: 900 + seed)
        // Long tickers at very different levels: blocks (512 rows) of one ticker prune.
        let lengths = (0 ..< 12).map { _ in rng.chance(5) ? rng.below(3) : rng.inRange(200 ... 1500) }
        let table = SeriesTables.random(
            tickerLengths: lengths, seed: seed, nullRate: seed == 1 ? 0 : 0.02,
            specialRate: seed == 1 ? 0 : 0.01)
        var oracle = ExpressionOracle(table: table)
        let counters = EvaluationCounters()
        for _ in 0 ..< 60 {
            let p: RowPredicate
            switch rng.below(4) {
            case 0:
                p = .compareExpressions(
                    Self.arithmetic(&rng, 2), Self.arithmetic(&rng, 2),
                    [.greater(than: 0), .atMost(0), .equal(to: 0)][rng.below(3)])
            case 1: p = .not(.compare(Self.arithmetic(&rng, 3), Self.bounds(&rng)))
            case 2: p = .compare(Self.arithmetic(&rng, 3), Self.bounds(&rng)) || .range(column: "close", bounds: .less(than: 50))
            default: p = .compare(Self.arithmetic(&rng, 3), Self.bounds(&rng))
            }
            let expected = oracle.rows(p)
            for threads in [1, 3] {
                for zoneMaps in [true, false] {
                    var o = QueryOptions(threads: threads, useBlockSummaries: zoneMaps)
                    o.rowsPerChunk = 2 * zoneMapBlockRows
                    o.counters = counters
                    let got = try table.select(p, options: o).rows()
                    if got != expected {
                        Issue.record("threads \(threads), zone maps \(zoneMaps): \(got.count) rows, expected \(expected.count): \(p)")
                        return
                    }
                }
            }
        }
        let blocks = counters.blocks
        #expect(blocks.skipped > 0 && blocks.kernel > 0, "\(blocks)")
        if seed == 1 { #expect(blocks.filled > 0, "no nulls: some blocks must be filled, \(blocks)") }
    }

    /// A hand-made case: two tickers at 10 and 1000, `(high - low) / close > 0.05`. Every block of
    /// the first ticker has a range of at least 1/10 of close (fill), the second at most 0.002
    /// (skip): no kernel runs at all.
    @Test func aRangeRatioSkipsAndFillsWholeBlocks() throws {
        let n = 4 * zoneMapBlockRows
        var high = Column<Double>(), low = Column<Double>(), close = Column<Double>()
        var dates = Column<Int32>()
        for i in 0 ..< 2 * n {
            let level = i < n ? 10.0 : 1000.0
            high.append(level + (i < n ? 1 : 0.5))
            low.append(level - (i < n ? 1 : 0.5))
            close.append(level)
            dates.append(Int32(i % n))
        }
        var table = try QuoteTable(
            schema: ["high", "low", "close"].map { ColumnDescriptor(name: $0, type: .float64) },
            columns: [AnyColumn(high), AnyColumn(low), AnyColumn(close)], dates: dates,
            tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: n), TickerEntry(symbol: "B", firstRow: n, rowCount: n)])
        table.computeSummaries()
        let counters = EvaluationCounters()
        var o = QueryOptions(threads: 1)
        o.counters = counters
        let s = try table.select(where: "(high - low) / close > 0.05", options: o)
        #expect(s.rows() == Array(0 ..< n))
        #expect(counters.blocks.kernel == 0 && counters.blocks.skipped == 4 && counters.blocks.filled == 4, "\(counters.blocks)")
        // With a series function, no interval: the kernel runs.
        let series = EvaluationCounters()
        o.counters = series
        _ = try table.select(where: "(high - low) / prev(close) > 0.05", options: o)
        #expect(series.blocks.skipped == 0 && series.blocks.filled == 0)
    }

    /// `--on DAY` evaluates windows only where they reach that day's rows: the last `n` rows of
    /// each ticker, not the table.
    @Test func screeningOnADayEvaluatesOnlyTheRowsTheWindowsReach() throws {
        let table = SeriesTables.random(tickerLengths: Array(repeating: 1500, count: 20), seed: 7)
        let counters = EvaluationCounters()
        var o = QueryOptions(threads: 1)
        o.counters = counters
        let screen = Field("close") > Field("close").mavg(50) && Field("close").mavg(50) > Field("close").mavg(200)
        let s = try table.select(screen, on: .latest, options: o)
        #expect(try s.rows() == table.select(screen).rows().filter { Set(table.rows(on: .latest)).contains($0) })
        let evaluated = counters.expressionRows.load(ordering: .relaxed)
        // Two comparisons, each evaluated over at most the lookback (2 × 200 - 2) + 1 rows per ticker.
        #expect(evaluated > 0 && evaluated <= 20 * 2 * 399, "\(evaluated) rows evaluated")
        #expect(evaluated < table.rowCount)
    }
}
