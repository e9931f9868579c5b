import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// `ema`, `rma`, `rsi`, `cumsum`, `cummax`, `cummin` against `ExpressionOracle`'s plain loops
/// (written from the issue's rules, no engine code), on seeded tables with nulls, NaN and ±∞ in
/// the middle of series, tickers shorter than the window, windows of 1 and nesting three deep.
@Suite struct RecursiveSeriesTests {
    static func smallChunks(threads: Int) -> QueryOptions {
        var o = QueryOptions(threads: threads)
        o.rowsPerChunk = zoneMapBlockRows
        return o
    }

    /// Values equal where both are numbers (within 1e-12 of the inputs' scale), null where the oracle's are.
    static func expectSameValues(_ got: [Double?], _ expected: [Double?], _ label: String) {
        for r in got.indices {
            switch (got[r], expected[r].flatMap { $0.isNaN ? nil : $0 }) {
            case (nil, nil): continue
            case let (a?, b?):
                if a == b || (a.isInfinite && b.isInfinite && a.sign == b.sign) { continue }
                #expect(Swift.abs(a - b) <= 1e-12 * max(1, Swift.abs(b)), "\(label) row \(r): \(a) vs \(b)")
            case let (a, b):
                #expect(Bool(false), "\(label) row \(r): \(String(describing: a)) vs \(String(describing: b))")
            }
        }
    }

    @Test(arguments: [1, 2, 3])
    func everyRecursiveFunctionMatchesTheOracle(seed: UInt64) throws {
        var rng = SplitMix64(seed: 300 + seed)
        let lengths = (0 ..< 14).map { _ in rng.chance(4) ? rng.below(4) : rng.inRange(0 ... 300) }
        let table = SeriesTables.random(tickerLengths: lengths, seed: seed, nullRate: 0.05, specialRate: 0.02)
        var oracle = ExpressionOracle(table: table)
        let all = Array(0 ..< table.rowCount)
        for f in ValueExpression.SeriesFunction.allCases where f.isRecursive {
            for n in f.takesWindow ? [1, 2, 3, 14, 26, 299, 301] : [1] {
                for column in SeriesTables.columns {
                    let e = ValueExpression.series(f, .column(column), window: n)
                    Self.expectSameValues(try table.values(of: e, atRows: all), oracle.values(e), "\(e)")
                    // Non-null rows exactly, on any chunking.
                    let p = RowPredicate.compareExpressions(e, e, .equal(to: 0))
                    let expected = oracle.rows(p)
                    #expect(try table.select(p, options: QueryOptions(threads: 1)).rows() == expected, "\(e)")
                    #expect(try table.select(p, options: Self.smallChunks(threads: 3)).rows() == expected, "\(e)")
                }
            }
        }
    }

    @Test(arguments: [4, 5, 6, 7])
    func randomNestedPredicatesMatchTheOracleExactly(seed: UInt64) throws {
        var rng = SplitMix64(seed: 400 + seed)
        let lengths = (0 ..< 16).map { _ in rng.chance(5) ? rng.below(3) : rng.inRange(0 ... 250) }
        let table = SeriesTables.random(tickerLengths: lengths, seed: seed)
        var oracle = ExpressionOracle(table: table)
        var generator = ExpressionGenerator(seed: 500 + seed, maxWindow: 40)
        var nonTrivial = 0
        for _ in 0 ..< 30 {
            let l = generator.recursive(3), r = generator.recursive(2)
            let p = RowPredicate.compareExpressions(l, r, generator.order())
            let expected = oracle.rows(p)
            if !expected.isEmpty && expected.count < table.rowCount { nonTrivial += 1 }
            let single = try table.select(p, options: QueryOptions(threads: 1))
            #expect(single.rows() == expected, "\(p)")
            #expect(try table.select(p, options: Self.smallChunks(threads: 3)).mask == single.mask, "thread dependence: \(p)")
            // As of the latest day: the same answer as the whole-table screen at each ticker's last row.
            let latest = try table.select(p, on: .latest, maxStale: .none)
            let lastRows = Set(table.tickers.filter { $0.rowCount > 0 }.map { $0.firstRow + $0.rowCount - 1 })
            #expect(latest.rows() == expected.filter(lastRows.contains), "--on latest: \(p)")
        }
        #expect(nonTrivial >= 10)
    }

    /// Nesting three deep and the compositions the issue names: MACD, its signal, true range, ATR,
    /// drawdown and on-balance volume (without `if`), against the oracle.
    @Test func compositionsMatchTheOracle() throws {
        let table = SeriesTables.random(tickerLengths: [0, 5, 40, 300, 1, 120], seed: 9, nullRate: 0.03, specialRate: 0)
        var oracle = ExpressionOracle(table: table)
        let parser = QueryParser(table: table)
        let all = Array(0 ..< table.rowCount)
        for text in [
            "ema(close, 12) - ema(close, 26)",
            "ema(ema(close, 12) - ema(close, 26), 9)",
            "rma(high - low, 14)",
            "close / cummax(close) - 1",
            "rsi(ema(close, 5), 14)",
            "ema(pct_change(close), 10)",
            "ema(rsi(cummin(close), 3), 4)",
            "cumsum(volume) - cumsum(prev(volume))",
            "rma(ema(rsi(close, 1), 1), 1)",
        ] {
            let e = try parser.parseValue(text)
            Self.expectSameValues(try table.values(of: e, atRows: all), oracle.values(e), text)
        }
    }

    /// Hand-worked values: ema(1…5, 3) seeds at 2 then 3, 4; rma the same seed then (2·2+4)/3;
    /// cumsum skips a null and carries; rsi of 1, 2, 1, 2 over 2 changes.
    @Test func handWorkedValues() throws {
        let closes: [Double?] = [1, 2, 3, 4, 5, nil, 6]
        let table = try QuoteTable(
            sortingRows: [TickerEntry(symbol: "A"), TickerEntry(symbol: "B")],
            rowTickers: [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
            dates: Column<Int32>([1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4]),
            schema: [ColumnDescriptor(name: "close", type: .float64)],
            columns: [AnyColumn(Column<Double>(closes + [1, 2, 1, 2]))])
        let rows = Array(0 ..< table.rowCount)
        #expect(
            try table.values(of: Field("close").ema(3), atRows: rows)
                == [nil, nil, 2, 3, 4, nil, 5, nil, nil, 4.0 / 3, (2 - 4.0 / 3) * 0.5 + 4.0 / 3])
        #expect(try table.values(of: Field("close").rma(3), atRows: Array(0 ..< 5)) == [nil, nil, 2, 8.0 / 3, (16.0 / 3 + 5) / 3])
        #expect(try table.values(of: Field("close").cumsum, atRows: rows) == [1, 3, 6, 10, 15, 15, 21, 1, 3, 4, 6])
        #expect(try table.values(of: Field("close").cummin, atRows: Array(7 ..< 11)) == [1, 1, 1, 1])
        // B: changes +1, −1, +1. Over 2: gains (1, 0)/2 = 0.5, losses 0.5 → 50; then gain (0.5 + 1)/2 = 0.75,
        // loss 0.25 → 75.
        #expect(try table.values(of: Field("close").rsi(2), atRows: Array(7 ..< 11)) == [nil, nil, 50, 75])
        // Before the first non-null value a running sum is null.
        #expect(try table.values(of: Field("close").prev(100).cumsum, atRows: [0, 6]) == [nil, nil])
    }

    @Test func parsingAndPrinting() throws {
        let table = SeriesTables.random(tickerLengths: [10], seed: 1)
        let parser = QueryParser(table: table)
        #expect(throws: QueryError.self) { try parser.parse("cumsum(close, 3) > 0") }
        #expect(throws: QueryError.self) { try parser.parse("ema(close) > 0") }
        #expect(throws: QueryError.self) { try parser.parse("rsi(close, 0) > 0") }
        #expect("\(ValueExpression.column("close").cummax)" == "cummax(close)")
        #expect("\(Field("close").rsi(14))" == "rsi(close, 14)")
        let e = try parser.parseValue("ema(close, 12) - rsi(cummin(low), 3) + cumsum(volume)")
        #expect(try parser.parseValue("\(e)") == e)
    }
}
