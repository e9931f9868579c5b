import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// The expression engine against `ExpressionOracle` (row by row, no engine code) on seeded random
/// tables: tickers of 0…300 rows, nulls, NaN, ±0, ±∞, windows of 1…400 rows.
@Suite struct ExpressionDifferentialTests {
    static func lengths(_ rng: inout SplitMix64, tickers: Int) -> [Int] {
        (0 ..< tickers).map { _ in rng.chance(6) ? rng.below(4) : rng.inRange(0 ... 300) }
    }

    static func smallChunks(threads: Int) -> QueryOptions {
        var o = QueryOptions(threads: threads)
        o.rowsPerChunk = zoneMapBlockRows  // 512 rows: windows reach back across many chunk edges
        return o
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func randomPredicatesMatchTheOracleExactly(seed: UInt64) throws {
        var lengthRng = SplitMix64(seed: 1000 + seed)
        let table = SeriesTables.random(tickerLengths: Self.lengths(&lengthRng, tickers: 24), seed: seed)
        var oracle = ExpressionOracle(table: table)
        var generator = ExpressionGenerator(seed: 2000 + seed)
        var nonTrivial = 0
        for _ in 0 ..< 40 {
            let p = generator.predicate(2)
            let expected = oracle.rows(p)
            if !expected.isEmpty && expected.count < table.rowCount { nonTrivial += 1 }
            let single = try table.select(p, options: QueryOptions(threads: 1))
            #expect(single.rows() == expected, "\(p)")
            let parallel = try table.select(p, options: Self.smallChunks(threads: 3))
            #expect(parallel.mask == single.mask, "thread/chunk dependence: \(p)")
        }
        // The generator must produce predicates that select something, but not everything.
        #expect(nonTrivial >= 15)
    }

    /// Every series function, every window length around the ticker lengths, on tickers of 0…n+1 rows.
    @Test func windowsAreNullUntilFullAndNeverCrossTickers() throws {
        var rng = SplitMix64(seed: 77)
        let lengths = [0, 1, 2, 3, 5, 0, 8, 13, 1, 40, 2, 300, 7]
        let table = SeriesTables.random(tickerLengths: lengths, seed: 78, nullRate: 0.02, specialRate: 0.01)
        var oracle = ExpressionOracle(table: table)
        for f in ValueExpression.SeriesFunction.allCases where f != .mdev {
            for n in [1, 2, 3, 4, 7, 8, 9, 13, 14, 39, 40, 41, 299, 300, 301, 400] {
                let e = ValueExpression.series(f, .column(SeriesTables.columns[rng.below(4)]), window: n)
                // `e = e` holds exactly where the value is not null: the oracle's non-null rows.
                let p = RowPredicate.compareExpressions(e, e, .equal(to: 0))
                let expected = oracle.rows(p)
                #expect(try table.select(p, options: QueryOptions(threads: 1)).rows() == expected, "\(e)")
                #expect(try table.select(p, options: Self.smallChunks(threads: 2)).rows() == expected, "\(e)")
                if f == .mavg || f == .msum || f == .mmin || f == .mmax {
                    // Null unless all n exist: no row before a ticker's n-th has a value.
                    for r in expected {
                        let t = Int(table.tickerNumber(ofRow: r))
                        #expect(r - table.tickers[t].firstRow >= n - 1, "\(e) row \(r)")
                    }
                }
            }
        }
    }

    /// Adjacent tickers whose rows would change every answer if a window or prev crossed over.
    @Test func seriesNeverSeeTheNeighbouringTicker() throws {
        // A: 1 2 3 (then) B: 100 101, C: 5.
        let table = try QuoteTable(
            sortingRows: [TickerEntry(symbol: "A"), TickerEntry(symbol: "B"), TickerEntry(symbol: "C")],
            rowTickers: [0, 0, 0, 1, 1, 2], dates: Column<Int32>([1, 2, 3, 1, 2, 1]),
            schema: [ColumnDescriptor(name: "close", type: .float64)],
            columns: [AnyColumn(Column<Double>([1, 2, 3, 100, 101, 5]))])
        func rows(_ text: String) throws -> [Int] { try table.select(where: text, options: QueryOptions(threads: 1)).rows() }
        #expect(try rows("prev(close) > 0") == [1, 2, 4])  // B's first and C's only row have no prev
        #expect(try rows("change(close) = 1") == [1, 2, 4])
        #expect(try rows("mavg(close, 2) > 0") == [1, 2, 4])
        #expect(try rows("mavg(close, 3) > 0") == [2])  // only A has 3 rows
        #expect(try rows("mmax(close, 2) < 50") == [1, 2])  // B's windows are its own (100, 101)
        #expect(try rows("mmin(close, 2) > 50") == [4])
        #expect(try rows("msum(close, 1) = close") == [0, 1, 2, 3, 4, 5])
        #expect(try rows("pct_change(close) > 0.4") == [1, 2])  // 2/1 - 1 and 3/2 - 1; B's is 0.01
        #expect(try rows("pct_change(close) = 1") == [1])
        #expect(try rows("prev(close, 2) = 1") == [2])
        #expect(try rows("prev(close, 3) > 0").isEmpty)
    }

    /// `mdev` against a two-pass sample standard deviation of each window: within 1e-9 relative,
    /// and exactly 0 for a window of identical values.
    @Test(arguments: [11, 12, 13])
    func movingDeviationAgreesWithTwoPass(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let table = SeriesTables.random(tickerLengths: Self.lengths(&rng, tickers: 20), seed: seed, specialRate: 0.005)
        var oracle = ExpressionOracle(table: table)
        var zeros = 0
        for n in [2, 3, 5, 20, 63, 250] {
            for column in ["close", "volume", "f32"] {
                let e = ValueExpression.column(column).mdev(n)
                let expected = oracle.values(e)
                let program = try ExpressionProgram(e, table: table)
                var got = [Double](repeating: 0, count: table.rowCount)
                for chunk in stride(from: 0, to: table.rowCount, by: 700) {  // odd chunks: lookback at every start
                    let rows = chunk ..< min(chunk + 700, table.rowCount)
                    got.withUnsafeMutableBufferPointer { p in
                        program.evaluate(rows: rows, into: p.baseAddress! + chunk, scratch: ExpressionScratch())
                    }
                }
                var worst = 0.0
                for r in 0 ..< table.rowCount {
                    switch expected[r] {
                    case nil: #expect(got[r].isNaN, "\(e) row \(r): \(got[r]) where null")
                    case let x? where x.isNaN: #expect(got[r].isNaN, "\(e) row \(r)")
                    case 0?:
                        zeros += 1
                        #expect(got[r] == 0, "\(e) row \(r): \(got[r]) where every value is the same")
                    case let x?:
                        let error = Swift.abs(got[r] - x) / x
                        worst = max(worst, error)
                        #expect(error <= 1e-9, "\(e) row \(r): \(got[r]) vs \(x)")
                    }
                }
                #expect(worst <= 1e-9)
            }
        }
        #expect(zeros > 0)  // the data has constant windows (a walk that stays put)
    }

    /// Printing an expression and parsing it back selects the same rows.
    @Test func printedExpressionsParseBackToTheSameRows() throws {
        var rng = SplitMix64(seed: 5)
        let table = SeriesTables.random(tickerLengths: Self.lengths(&rng, tickers: 10), seed: 6)
        var generator = ExpressionGenerator(seed: 7, maxWindow: 60)
        let parser = QueryParser(table: table)
        for _ in 0 ..< 60 {
            let l = generator.any(3), r = generator.any(2)
            if l.constantValue != nil { continue }  // `0.5 > 0.25` is rejected: a comparison needs a column
            for (text, tree) in [
                ("\(l) > 0.25", RowPredicate.compare(l, .greater(than: 0.25))),
                ("\(l) <= \(r)", RowPredicate.compareExpressions(l, r, .atMost(0))),
            ] {
                let parsed = try parser.parse(text)
                let a = try table.select(parsed, options: QueryOptions(threads: 1))
                let b = try table.select(tree, options: QueryOptions(threads: 1))
                #expect(a.mask == b.mask, "\(text)")
            }
        }
    }
}
