import Foundation
import Colonnade

/// Across-ticker questions of issue 31: X1 momentum decile as of the latest day (a rank within
/// one date), X2 relative strength against the first ticker (`ref`, merged by date), X3 market
/// breadth (new 52-week highs counted per date), X4 weekly OHLC bars per ticker. The note carries
/// what Benchmarks/peers/crossticker.py checks every engine agrees on.
struct CrossTickerSuite {
    let table: QuoteTable
    let threads: Int
    let recorder: Recorder
    let label: String

    func run() throws {
        let rows = Double(table.rowCount)
        let runs = table.rowCount > 5_000_000 ? 7 : 11
        let first = table.tickers.first { $0.rowCount > 0 }?.symbol ?? ""
        let x1 = try QueryParser(table: table).parse("xpct(pct_change(close, 250)) > 0.9")
        let x2 = try QueryParser(table: table).parse("close / ref(close, '\(first)') > mmax(close / ref(close, '\(first)'), 50)")
        let x3 = try QueryParser(table: table).parse("high >= mmax(high, 252)")
        let bars = try Aggregate.parseList("first(open),max(high),min(low),last(close),sum(volume)", table: table)
        let weekly = try AggregateGrouping(parsing: "ticker,week")
        for t in Set([1, threads]).sorted() {
            let options = QueryOptions(threads: t)
            // X1: one date, every ticker's row on it.
            var latest = try table.select(x1, on: .latest, options: options)
            var r = try measure(runs: runs * 3) {
                latest = try table.select(x1, on: .latest, options: options)
                sink(latest.count)
            }
            let sum1 = try latest.aggregate([.sum("close")]).rows[0].values[0] ?? 0
            recorder.record(
                Measurement(
                    suite: "crossticker", name: "X1 momentum decile --on latest \(label) t=\(t)",
                    seconds: r.median, spread: r.spread, runs: runs * 3, items: Double(table.tickers.count),
                    unit: "tickers", bytes: 0, note: "matched \(latest.count), sum(close) \(String(format: "%.6g", sum1))"))
            // X2: the whole table against the first ticker.
            var strong = try table.select(x2, options: options)
            r = try measure(runs: runs) {
                strong = try table.select(x2, options: options)
                sink(strong.count)
            }
            let sum2 = try strong.aggregate([.sum("close")]).rows[0].values[0] ?? 0
            recorder.record(
                Measurement(
                    suite: "crossticker", name: "X2 relative strength \(label) t=\(t)",
                    seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows", bytes: rows * 16,
                    note: "matched \(strong.count), sum(close) \(String(format: "%.6g", sum2))"))
            // X3: breadth, a count per date.
            var breadth = try table.select(x3, options: options).aggregate([.count], by: .date, options: options)
            r = try measure(runs: runs) {
                breadth = try table.select(x3, options: options).aggregate([.count], by: .date, options: options)
                sink(breadth.count)
            }
            let peak = (0 ..< breadth.count).map { breadth.value(row: $0, aggregate: 0) ?? 0 }.max() ?? 0
            recorder.record(
                Measurement(
                    suite: "crossticker", name: "X3 breadth by date \(label) t=\(t)",
                    seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows", bytes: rows * 8,
                    note:
                        "dates \(breadth.count), sum \(Int((0 ..< breadth.count).reduce(0) { $0 + (breadth.value(row: $1, aggregate: 0) ?? 0) })), max \(Int(peak))"
                ))
            // X4: weekly bars.
            let all = table.selectAll()
            var result = try all.aggregate(bars, by: weekly, options: options)
            r = try measure(runs: runs) {
                result = try all.aggregate(bars, by: weekly, options: options)
                sink(result.count)
            }
            let closes = (0 ..< result.count).reduce(0.0) { $0 + (result.value(row: $1, aggregate: 3) ?? 0) }
            recorder.record(
                Measurement(
                    suite: "crossticker", name: "X4 weekly bars \(label) t=\(t)",
                    seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows", bytes: rows * 40,
                    note: "bars \(result.count), sum(last(close)) \(String(format: "%.6g", closes))"))
        }
    }
}
