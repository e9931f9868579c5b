import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Screening as of a day: the same rows as evaluating over the whole table and keeping that day's.
@Suite struct ScreeningTests {
    static func table(seed: UInt64) -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        let lengths = (0 ..< 30).map { _ in rng.chance(8) ? rng.below(3) : rng.inRange(0 ... 300) }
        return SeriesTables.random(tickerLengths: lengths, seed: seed)
    }

    @Test(arguments: [31, 32, 33])
    func aDayKeepsExactlyThatDaysRowsOfTheWholeTableAnswer(seed: UInt64) throws {
        let table = Self.table(seed: seed)
        var oracle = ExpressionOracle(table: table)
        var generator = ExpressionGenerator(seed: seed + 100)
        // The exact-day rule (--max-stale 0) and each ticker's last row (latest, --max-stale none).
        let latest = Set(table.rows(on: .latest, maxStale: .none))
        #expect(latest.count == table.tickers.filter { $0.rowCount > 0 }.count)
        // A day most tickers have, and one few have.
        let busiest = Dictionary(grouping: 0 ..< table.rowCount, by: { table.dates[$0] }).max { $0.value.count < $1.value.count }!
        let day = ScreenDay.day(Day(daysSinceEpoch: busiest.key))
        let dayRows = Set(table.rows(on: day, maxStale: .days(0)))
        #expect(dayRows == Set(busiest.value))
        for _ in 0 ..< 30 {
            let p = generator.predicate(2)
            let all = oracle.rows(p)
            #expect(try table.select(p, on: .latest, maxStale: .none).rows() == all.filter(latest.contains), "\(p)")
            #expect(try table.select(p, on: day, maxStale: .days(0)).rows() == all.filter(dayRows.contains), "\(p)")
        }
    }

    @Test func aDayNoTickerHasSelectsNothingAndLatestIsEachTickersLastRow() throws {
        let table = Self.table(seed: 40)
        #expect(try table.select(.constant(true), on: .day(Day(1969, 1, 1))).count == 0)
        let last = try table.select(.constant(true), on: .latest, maxStale: .none)
        #expect(last.rows() == table.tickers.filter { $0.rowCount > 0 }.map { $0.firstRow + $0.rowCount - 1 })
    }

    /// A date term narrows the answer, never the history a window sees: with a 200-row average,
    /// a range that starts after a ticker's first 200 rows still gets values.
    @Test func dateRangesNarrowTheOutputNotTheWindows() throws {
        let table = SeriesTables.random(tickerLengths: [300, 260, 10], seed: 41, nullRate: 0, specialRate: 0)
        let p =
            RowPredicate.compareExpressions(.column("close"), .series(.mavg, .column("close"), window: 200), .atLeast(0))
            || .compareExpressions(.column("close"), .series(.mavg, .column("close"), window: 200), .less(than: 0))
        // Every row from each ticker's 200th on has a value, so the predicate holds there.
        let expected = table.tickers.flatMap { t in t.rowCount >= 200 ? Array(t.firstRow + 199 ..< t.firstRow + t.rowCount) : [] }
        #expect(try table.select(p).rows() == expected)
        // From the date of T0's 250th row on: only later rows, and none of them lost its window.
        let from = table.dates[249]
        let narrowed = try table.select(p && .dates(.atLeast(from))).rows()
        #expect(narrowed == expected.filter { table.dates[$0] >= from })
        #expect(narrowed.contains(250))
        // As of the latest day with a date range that covers only the last rows.
        #expect(
            try table.select(p && .dates(.atLeast(from)), on: .latest, maxStale: .none).rows()
                == [299, 559].filter { table.dates[$0] >= from })
    }

    @Test func textScreensAndSwiftScreensAgree() throws {
        let table = Self.table(seed: 42)
        let text = "close > mavg(close, 5) and volume > 0.5 * mavg(volume, 3)"
        let built = Field("close") > Field("close").mavg(5) && Field("volume") > 0.5 * Field("volume").mavg(3)
        let a = try table.select(where: text, on: .latest, maxStale: .none), b = try table.select(built, on: .latest, maxStale: .none)
        #expect(a.mask == b.mask)
        #expect(a.count > 0)
        #expect(ScreenDay("latest") == .latest && ScreenDay("2014-03-05") == .day(Day(2014, 3, 5)) && ScreenDay("yesterday") == nil)
    }
}
