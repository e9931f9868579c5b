import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// A recursive series named more than once in a query (`ema(close, 12)` on both sides of a MACD
/// cross and under `prev`, MACD's line inside its signal) is computed once (`SeriesCache`). The
/// work is counted (`EvaluationCounters.seriesRows`: the table's rows once per series computed),
/// never timed; the answers stay those of `ExpressionOracle`'s plain loops.
@Suite struct SharedSeriesTests {
    static func table(seed: UInt64) -> QuoteTable {
        var rng = SplitMix64(seed: 900 + seed)
        // Tickers shorter than the windows, empty ones, and ones crossing 512-row blocks.
        let lengths = (0 ..< 12).map { _ in rng.chance(4) ? rng.below(20) : rng.inRange(100 ... 700) }
        return SeriesTables.random(tickerLengths: lengths, seed: seed, nullRate: 0.04, specialRate: 0.02)
    }

    /// (query, distinct recursive series in it).
    static let queries: [(String, Int)] = [
        ("ema(close, 12) > ema(close, 26) and prev(ema(close, 12)) <= prev(ema(close, 26))", 2),
        ("ema(ema(close, 12) - ema(close, 26), 9) < ema(close, 12) - ema(close, 26)", 3),
        ("ema(close, 12) - ema(close, 12) = 0", 1),
        ("rsi(close, 14) < 30 or rsi(close, 14) > 70 or rsi(close, 7) > 90", 2),
        ("close / cummax(close) - 1 < -0.2 and cummax(close) > 2 * cummin(close) and cummax(close) > 0", 2),
        (
            "close > prev(close) + 2 * rma(greatest(high - low, abs(high - prev(close)), abs(low - prev(close))), 14)"
                + " and rma(greatest(high - low, abs(high - prev(close)), abs(low - prev(close))), 14) > 0.5", 1
        ),
        // Different windows or arguments are different series.
        ("ema(close, 12) > ema(open, 12) and ema(close, 13) > 0", 3),
    ]

    @Test(arguments: [1, 2, 3])
    func eachDistinctRecursiveSeriesIsComputedOnce(seed: UInt64) throws {
        let table = Self.table(seed: seed)
        var oracle = ExpressionOracle(table: table)
        for (text, distinct) in Self.queries {
            let predicate = try QueryParser(table: table).parse(text)
            let expected = oracle.rows(predicate)
            for threads in [1, 3] {
                var options = QueryOptions(threads: threads)
                options.rowsPerChunk = zoneMapBlockRows
                let counters = EvaluationCounters()
                options.counters = counters
                #expect(try table.select(predicate, options: options).rows() == expected, "\(text)")
                #expect(counters.seriesRows.load(ordering: .relaxed) == distinct * table.rowCount, "\(text)")
            }
            // As of the latest day: each series computed at most once per ticker, over its whole
            // history (a term already false leaves the later terms' series uncomputed).
            let counters = EvaluationCounters()
            var options = QueryOptions(threads: 1)
            options.counters = counters
            let latest = table.rows(on: .latest, maxStale: .none)
            let onLatest = try table.select(predicate, on: .latest, maxStale: .none, options: options).rows()
            #expect(onLatest == expected.filter { Set(latest).contains($0) }, "\(text) --on latest")
            #expect(counters.seriesRows.load(ordering: .relaxed) <= distinct * table.rowCount, "\(text) --on latest")
        }
    }

    @Test func sharedSeriesGiveTheSameValuesAsSeparateOnes() throws {
        // The value of `ema(close, 12) - ema(close, 12)` is 0 or null, never anything else, and
        // the shared series equals a program of its own to the bit.
        let table = Self.table(seed: 7)
        let all = Array(0 ..< table.rowCount)
        let ema = ValueExpression.series(.ema, .column("close"), window: 12)
        let alone = try table.values(of: ema, atRows: all)
        let difference = try table.values(of: .chain(ema, [.init(.subtract, ema)]), atRows: all)
        for r in all {
            // x - x is 0 for a number, null for null and for ±∞ (∞ - ∞ is NaN).
            #expect(difference[r] == alone[r].flatMap { $0.isFinite ? 0 : nil }, "row \(r)")
        }
        var oracle = ExpressionOracle(table: table)
        let expected = oracle.values(ema)
        for r in all {
            switch (alone[r], expected[r].flatMap { $0.isNaN ? nil : $0 }) {
            case (nil, nil): continue
            case let (a?, b?): #expect(a == b || Swift.abs(a - b) <= 1e-12 * max(1, Swift.abs(b)), "row \(r)")
            case let (a, b): #expect(Bool(false), "row \(r): \(String(describing: a)) vs \(String(describing: b))")
            }
        }
    }
}

/// `count(x)` counts exactly the rows where `x is not null`: a NaN is null to both, for a stored
/// NaN in a bare column as for a computed one (DuckDB counts a stored NaN and says it is not null;
/// README, "Nulls and NaN in aggregates").
@Suite struct CountNullRuleTests {
    @Test(arguments: [11, 12])
    func countOfAColumnAgreesWithIsNull(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let lengths = (0 ..< 9).map { _ in rng.chance(3) ? rng.below(5) : rng.inRange(60 ... 1_100) }
        let table = SeriesTables.random(tickerLengths: lengths, seed: seed, nullRate: 0.1, specialRate: 0.1)
        let all = table.selectAll()
        for column in SeriesTables.columns {
            let c = table.column(named: column)!
            // The reference: rows whose stored value is neither missing nor NaN, per ticker.
            var perTicker = [String: Int]()
            var total = 0
            for t in table.tickers where t.rowCount > 0 {
                let n = t.rows.filter { r in c.doubleValue(at: r).map { !$0.isNaN } ?? false }.count
                perTicker[t.symbol] = n
                total += n
            }
            let nulls = try table.select(where: "\(column) is null").count
            #expect(total + nulls == table.rowCount, "\(column)")
            for threads in [1, 3] {
                var options = QueryOptions(threads: threads)
                options.rowsPerChunk = zoneMapBlockRows
                for argument in [ValueExpression.column(column), .chain(.column(column), [.init(.multiply, .number(1))])] {
                    let overall = try all.aggregate([.count, .count(argument)], options: options)
                    #expect(overall.rows[0].values == [Double(table.rowCount), Double(total)], "count(\(argument))")
                    let byTicker = try all.aggregate([.count(argument)], byTicker: true, options: options)
                    for row in byTicker.rows {
                        #expect(row.values[0] == Double(perTicker[row.ticker ?? ""] ?? -1), "count(\(argument)) \(row.ticker ?? "")")
                    }
                }
            }
        }
    }
}
