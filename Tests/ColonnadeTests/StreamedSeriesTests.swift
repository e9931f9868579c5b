import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Running series over the whole table (`cumsum`, `cummax`, `cummin`) are streamed: computed where
/// they are read, from the state the reading worker carries (`MaterializedSeries.readRunning`).
/// Whatever rows are read, in whatever order — sparse rows, pieces an earlier `and` term emptied,
/// lookback under `prev`, chunks claimed by several workers, tickers spanning many chunks — each
/// value is the one a single pass from the ticker's first row gives, to the bit (a plain loop
/// written here), and screens equal `ExpressionOracle`'s.
@Suite struct StreamedSeriesTests {
    /// Long tickers (spanning many 512-row chunks), short and empty ones, nulls, NaN, ±0 and ±∞.
    static func table(seed: UInt64) -> QuoteTable {
        SeriesTables.random(tickerLengths: [2_600, 1, 0, 3, 1_900, 700, 4_100], seed: seed, nullRate: 0.05, specialRate: 0.02)
    }

    /// `f` over `column` by the rule: over the non-null (non-NaN) values so far, in row order;
    /// null before the first; a null row carries the running value.
    static func reference(_ f: ValueExpression.SeriesFunction, _ column: String, _ table: QuoteTable) -> [Double?] {
        guard let c = table.columnIndex(named: column) else { return [] }
        var out = [Double?](repeating: nil, count: table.rowCount)
        for t in table.tickers where t.rowCount > 0 {
            var value: Double?
            for r in t.firstRow ..< t.firstRow + t.rowCount {
                if let x = table.columns[c].doubleValue(at: r), !x.isNaN {
                    switch (f, value) {
                    case (_, nil): value = x
                    case (.cumsum, let v?): value = v + x
                    case (.cummax, let v?): if x > v { value = x }
                    case (_, let v?): if x < v { value = x }
                    }
                }
                out[r] = value
            }
        }
        return out
    }

    /// The same Doubles, bit for bit (nil for null; a NaN sum, ∞ + −∞, is null in the answer).
    static func expectIdentical(_ got: [Double?], _ expected: [Double?], _ label: String) {
        #expect(got.count == expected.count, "\(label)")
        var wrong = 0, first = ""
        for (i, (a, b)) in zip(got, expected.map { $0.flatMap { $0.isNaN ? nil : $0 } }).enumerated()
        where a?.bitPattern != b?.bitPattern {
            if wrong == 0 { first = "value \(i): \(String(describing: a)) vs \(String(describing: b))" }
            wrong += 1
        }
        #expect(wrong == 0, "\(label): \(wrong) values differ, first \(first)")
    }

    @Test(arguments: [1, 2])
    func valuesAreThoseOfOnePassWhateverRowsAreRead(seed: UInt64) throws {
        let table = Self.table(seed: seed)
        var rng = SplitMix64(seed: 70 + seed)
        let all = Array(0 ..< table.rowCount)
        // Sparse rows (each run of reads skips ahead within a ticker), and random subsets.
        let subsets: [[Int]] = [
            all, all.filter { $0 % 37 == 5 }, all.filter { $0 % 1_031 == 17 },
            all.filter { _ in rng.chance(50) }, all.filter { _ in rng.chance(3) }, [table.rowCount - 1],
        ]
        for f in [ValueExpression.SeriesFunction.cumsum, .cummax, .cummin] {
            for column in ["close", "volume", "f32"] {
                let expected = Self.reference(f, column, table)
                let e = ValueExpression.series(f, .column(column), window: 1)
                for rows in subsets {
                    Self.expectIdentical(try table.values(of: e, atRows: rows), rows.map { expected[$0] }, "\(e) at \(rows.count) rows")
                }
                // Under `prev` (lookback: each piece's reads start before the previous one ended).
                let lagged = ValueExpression.series(.prev, e, window: 3)
                let laggedExpected = all.map { r -> Double? in
                    guard let t = table.tickers.first(where: { $0.rows.contains(r) }), r - 3 >= t.firstRow else { return nil }
                    return expected[r - 3]
                }
                Self.expectIdentical(try table.values(of: lagged, atRows: all), laggedExpected, "\(lagged)")
            }
        }
    }

    @Test(arguments: [3, 4])
    func screensMatchTheOracleOnAnyChunkingAndThreadCount(seed: UInt64) throws {
        let table = Self.table(seed: seed)
        var oracle = ExpressionOracle(table: table)
        let parser = QueryParser(table: table)
        for text in [
            // A selective first term: the drawdown is read only in pieces left with some rows.
            "volume > 4500 and close / cummax(close) - 1 < -0.05",
            "close / cummax(close) - 1 < -0.05 and volume > 4500",
            "prev(cummax(high), 2) < close and cumsum(low) > 1000 or cummin(open) = open",
            "cummax(close) > 2 * cummin(close) and cummax(cumsum(volume)) >= cumsum(volume)",
            "ema(cummax(close), 5) > prev(cummin(close), 1)",
        ] {
            let p = try parser.parse(text)
            let expected = oracle.rows(p)
            #expect(expected.count > 10 && expected.count < table.rowCount, "\(text): a screen that decides")
            for threads in [1, 2, 3] {
                #expect(try table.select(p, options: QueryOptions(threads: threads)).rows() == expected, "\(text) t=\(threads)")
                var small = QueryOptions(threads: threads)
                small.rowsPerChunk = zoneMapBlockRows
                #expect(try table.select(p, options: small).rows() == expected, "\(text) t=\(threads), 512-row chunks")
            }
        }
    }
}
