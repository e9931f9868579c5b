import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
import DataLinkFormat
@testable import ColonnadeIngest
import Testing

/// Screens on real quotes (WIKI/PRICES 2014: AAPL, BRK.A, MSFT 252 days each, ZEN 160) with
/// answers from an independent tool: DuckDB 2.0 window functions over the same CSV
/// (`lag(close) OVER (PARTITION BY ticker ORDER BY date)`, `avg(x) OVER (… ROWS BETWEEN n-1
/// PRECEDING AND CURRENT ROW)` kept only where `count(x)` over the same frame is n, i.e. null until
/// full). Spot checks by hand against the file: AAPL's first 2014 close is 553.13 and its last
/// 110.38 (after the 7:1 split of 2014-06-09); AAPL gapped up on 2014-04-24 (open 568.21 after
/// close 524.75, +8.3 %, earnings).
@Suite struct FixtureScreenTests {
    static func table() throws -> QuoteTable {
        try QuoteImporter.decodeFile(Fixtures.quandlPath("WIKI-PRICES.datatable.2014.csv")).table
    }

    static func labels(_ s: Selection) -> [String] {
        s.rows().map { "\(s.table.tickers[Int(s.table.tickerNumber(ofRow: $0))].symbol) \(Day(daysSinceEpoch: s.table.dates[$0]))" }
    }

    static func sumOfClose(_ s: Selection) throws -> Double {
        try s.aggregate([.sum("close")]).rows[0].values[0] ?? 0
    }

    static func close(_ a: Double?, _ b: Double) -> Bool {
        guard let a else { return false }
        return Swift.abs(a - b) <= 1e-9 * Swift.max(1, Swift.abs(b))
    }

    @Test func gapUpMatchesDuckDB() throws {
        let table = try Self.table()
        let s = try table.select(where: "open > 1.03 * prev(close)")
        #expect(
            Self.labels(s) == [
                "AAPL 2014-04-24", "AAPL 2014-10-21", "MSFT 2014-01-24", "MSFT 2014-07-17", "MSFT 2014-10-24",
                "ZEN 2014-05-19", "ZEN 2014-08-06", "ZEN 2014-10-31",
            ])
        #expect(Self.close(try Self.sumOfClose(s), 859.385))
        #expect(try table.select(where: "open > 1.03 * prev(close)", on: .latest).count == 0)
        // The same screen built in Swift.
        #expect(try table.select(Field("open") > 1.03 * Field("close").prev()).mask == s.mask)
    }

    @Test func wideRangeOnHeavyVolumeTrendAndNewHighsMatchDuckDB() throws {
        let table = try Self.table()
        let range = try table.select(where: "(high - low) / close > 0.03 and volume > 1.5 * mavg(volume, 20)")
        let rangeSum = try Self.sumOfClose(range)
        #expect(range.count == 33 && Self.close(rangeSum, 780830.82))
        #expect(
            Array(Self.labels(range).prefix(6)) == [
                "AAPL 2014-04-28", "AAPL 2014-09-03", "AAPL 2014-09-09", "AAPL 2014-09-10",
                "AAPL 2014-10-15", "AAPL 2014-12-01",
            ])
        let trend = "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)"
        let t = try table.select(where: trend)
        let trendSum = try Self.sumOfClose(t)
        #expect(t.count == 93 && Self.close(trendSum, 11180945.605))
        #expect(Self.labels(t).first == "BRK.A 2014-10-20")
        // As of the last day (2014-12-31 for every ticker): only BRK.A is in a trend; ZEN, with 160
        // rows, never has a 200-day average.
        #expect(Self.labels(try table.select(where: trend, on: .latest)) == ["BRK.A 2014-12-31"])
        #expect(Self.labels(try table.select(where: trend, on: .day(Day(2014, 12, 31)))) == ["BRK.A 2014-12-31"])
        let highs = try table.select(where: "high >= mmax(high, 20)")
        let highsSum = try Self.sumOfClose(highs)
        #expect(highs.count == 167 && Self.close(highsSum, 12017382.268))
        #expect(try table.select(where: "high >= mmax(high, 20)", on: .latest).count == 0)
    }

    @Test func groupedAggregatesOfExpressionsMatchDuckDB() throws {
        let table = try Self.table()
        let aggregates = try Aggregate.parseList("count, avg(high - low), max(pct_change(close)), stddev(close)", table: table)
        let months = try table.select(where: "ticker in (AAPL)").aggregate(aggregates, by: .month)
        #expect(months.rows.count == 12)
        let expected: [(String, Double, Double, Double, Double)] = [
            ("2014-01", 21, 9.778928571428583, 0.02007723420999663, 18.90232121006758),
            ("2014-02", 19, 8.64698947368421, 0.019947810959698442, 12.498298106364587),
            ("2014-03", 21, 6.38288095238095, 0.011860303638786318, 4.9153194925951205),
        ]
        for (row, e) in zip(months.rows, expected) {
            #expect(row.bucketText == e.0)
            #expect(
                row.values[0] == e.1 && Self.close(row.values[1], e.2) && Self.close(row.values[2], e.3)
                    && Self.close(row.values[3], e.4), "\(row)")
        }
        let byTicker = try table.selectAll().aggregate(
            try Aggregate.parseList("first(close), last(close), stddev(close), max(pct_change(close))", table: table), by: .ticker)
        let expectedTickers: [(String, Double, Double, Double, Double)] = [
            ("AAPL", 553.13, 110.38, 224.92147567328126, 0.08198189614101947),
            ("BRK.A", 176320.0, 226000.0, 16293.979435645448, 0.029174147217235102),
            ("MSFT", 37.16, 46.45, 3.901517965675413, 0.03942181340341655),
            ("ZEN", 13.43, 24.37, 3.566264716080011, 0.16933638443935917),
        ]
        #expect(byTicker.rows.map(\.ticker) == expectedTickers.map(\.0))
        for (row, e) in zip(byTicker.rows, expectedTickers) {
            #expect(
                row.values[0] == e.1 && row.values[1] == e.2 && Self.close(row.values[2], e.3) && Self.close(row.values[3], e.4),
                "\(row)")
        }
        let years = try table.selectAll().aggregate([.count], by: .year)
        #expect(years.rows.map(\.year) == [2014] && years.rows[0].values == [916])
    }
}
