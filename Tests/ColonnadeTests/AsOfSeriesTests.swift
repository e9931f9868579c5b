import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// An as-of screen (`--on DAY`, `--on latest`) computes a recursive series per ticker, only over
/// the ticker's rows up to its as-of row (`MaterializedSeries.read`), never over the whole table.
/// Its values must be those of the whole-table pass to the bit, and its masks those of the
/// whole-table screen restricted to the as-of rows, for any thread count; the rows run through
/// the series are counted (`EvaluationCounters.seriesRows`), never timed.
@Suite struct AsOfSeriesTests {
    /// Tickers shorter than the windows, empty ones, long ones crossing 512-row blocks; each starts
    /// on its own day and advances 1–3 days a row, so on a middle day some have ended long before
    /// (stale) and some have not started.
    static func table(seed: UInt64) -> QuoteTable {
        var rng = SplitMix64(seed: 1_300 + seed)
        let lengths = (0 ..< 24).map { _ in rng.chance(4) ? rng.below(20) : rng.inRange(30 ... 900) }
        return SeriesTables.random(tickerLengths: lengths, seed: 40 + seed, nullRate: 0.05, specialRate: 0.02)
    }

    static let expressions = [
        "ema(close, 12)", "rma(close, 14)", "rsi(close, 14)", "rsi(f32, 3)", "cumsum(volume)", "cummax(close)",
        "cummin(low)", "ema(close, 1)", "rma(high, 40)",
        "ema(ema(close, 12) - ema(close, 26), 9)", "rsi(ema(close, 5), 14)",
        // A series both inside another's argument and beside it.
        "ema(ema(close, 12) - ema(close, 26), 9) - (ema(close, 12) - ema(close, 26))", "mavg(rsi(close, 14), 5)",
        "prev(ema(close, 3), 2) - ema(close, 3)", "close / cummax(close) - 1",
        "rma(greatest(high - low, abs(high - prev(close)), abs(low - prev(close))), 14)",
        "ema(mavg(close, 3), 4)", "cumsum(if(close > prev(close), volume, if(close < prev(close), -volume, 0)))",
    ]

    static let screens = [
        "rsi(close, 14) < 30",
        "ema(close, 12) > ema(close, 26) and prev(ema(close, 12)) <= prev(ema(close, 26))",
        "close / cummax(close) - 1 < -0.2 and volume > 2 * mavg(volume, 20)",
        "close > prev(close) + 2 * rma(greatest(high - low, abs(high - prev(close)), abs(low - prev(close))), 14)",
        "ema(ema(close, 12) - ema(close, 26), 9) < ema(close, 12) - ema(close, 26) or cummin(low) > 10",
        "rsi(ema(close, 5), 14) > 50 and not cumsum(volume) > 100000",
    ]

    /// Days to screen on: before every row, inside the table, on its last day, after it.
    static func days(_ table: QuoteTable) -> [ScreenDay] {
        let dates = (0 ..< table.rowCount).map { table.dates[$0] }
        guard let lo = dates.min(), let hi = dates.max() else { return [.latest] }
        let picks: [Int32] = [lo - 5, lo + 40, (lo + hi) / 2, (lo + hi) / 2 + 1, hi - 300, hi, hi + 20]
        return [.latest] + picks.map { .day(Day(daysSinceEpoch: $0)) }
    }

    /// The per-ticker values at the as-of rows, computed as an as-of screen computes them.
    static func perTickerValues(_ table: QuoteTable, _ e: ValueExpression, rows: [Int], threads: Int) throws -> [Double] {
        let cache = SeriesCache(threads: threads, perTicker: true)
        let program = try ExpressionProgram(e, table: table, cache: cache)
        return table.forEachAsOfRow(rows, threads: threads, counters: nil) { row, scratch in
            program.evaluateValues(atRows: [row], scratch: scratch)[0]
        }
    }

    @Test(arguments: [1, 2, 3])
    func perTickerValuesEqualTheWholeTablePassToTheBit(seed: UInt64) throws {
        let table = Self.table(seed: seed)
        for text in Self.expressions {
            let e = try QueryParser(table: table).parseValue(text)
            let whole = try ExpressionProgram(e, table: table)
            for day in Self.days(table) {
                for stale in [StaleLimit.default, .none] {
                    let rows = table.rows(on: day, maxStale: stale)
                    let expected = whole.values(atRows: rows, scratch: ExpressionScratch())
                    for threads in [1, 2, 3] {
                        let got = try Self.perTickerValues(table, e, rows: rows, threads: threads)
                        #expect(got.map(\.bitPattern) == expected.map(\.bitPattern), "\(text) on \(day) (\(stale)) t=\(threads)")
                    }
                }
            }
        }
    }

    @Test(arguments: [4, 5])
    func asOfScreensEqualTheWholeTableScreenOnTheAsOfRows(seed: UInt64) throws {
        let table = Self.table(seed: seed)
        var nonEmpty = 0
        for text in Self.screens {
            let predicate = try QueryParser(table: table).parse(text)
            let all = try table.select(predicate, options: QueryOptions(threads: 1)).rows()
            for day in Self.days(table) {
                for stale in [StaleLimit.default, .days(0), .none] {
                    let asOf = Set(table.rows(on: day, maxStale: stale))
                    let expected = all.filter(asOf.contains)
                    nonEmpty += expected.isEmpty ? 0 : 1
                    for threads in [1, 2, 3] {
                        let got = try table.select(predicate, on: day, maxStale: stale, options: QueryOptions(threads: threads)).rows()
                        #expect(got == expected, "\(text) on \(day) (\(stale)) t=\(threads)")
                    }
                }
            }
        }
        #expect(nonEmpty > 10)  // the screens match something on many days
    }

    /// The series runs over each used ticker's rows up to its as-of row, once per distinct series:
    /// a fraction of the table on an early day, and nothing table-sized.
    @Test func asOfSeriesRunOverEachTickersRowsUpToItsAsOfRowOnly() throws {
        let table = Self.table(seed: 6)
        let firstRows = table.tickers.filter { $0.rowCount > 0 }.map(\.firstRow)
        func prefixRows(_ rows: [Int]) -> Int {
            rows.reduce(0) { sum, row in sum + row - firstRows.last { $0 <= row }! + 1 }
        }
        for (text, distinct) in [("rsi(close, 14) < 101", 1), ("ema(ema(close, 12) - ema(close, 26), 9) > -1e300", 3)] {
            let predicate = try QueryParser(table: table).parse(text)
            for day in Self.days(table) {
                for threads in [1, 3] {
                    let counters = EvaluationCounters()
                    var options = QueryOptions(threads: threads)
                    options.counters = counters
                    let rows = table.rows(on: day, maxStale: .none)
                    _ = try table.select(predicate, on: day, maxStale: .none, options: options)
                    #expect(counters.seriesRows.load(ordering: .relaxed) == distinct * prefixRows(rows), "\(text) on \(day)")
                }
            }
            // On an early day, well under the table's rows (the whole-table pass ran every row).
            let early = Self.days(table)[2]
            let counters = EvaluationCounters()
            var options = QueryOptions(threads: 2)
            options.counters = counters
            _ = try table.select(predicate, on: early, maxStale: .none, options: options)
            #expect(counters.seriesRows.load(ordering: .relaxed) < distinct * table.rowCount / 4)
        }
        // A term that rules a ticker out first: its series is never computed.
        let counters = EvaluationCounters()
        var options = QueryOptions(threads: 1)
        options.counters = counters
        _ = try table.select(where: "volume < 0 and rsi(close, 14) < 30", on: .latest, maxStale: .none, options: options)
        #expect(counters.seriesRows.load(ordering: .relaxed) == 0)
    }
}
