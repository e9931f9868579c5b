import Foundation
import Colonnade

/// Issue 30's indicator screens (I1–I4: recursive series, conditionals, running series) and S3
/// with exact windows, over the whole table and as of the latest day, in process. The note carries
/// matched rows and sum(close); `Benchmarks/peers/indicators.py` puts the same screens through
/// Polars, DuckDB and TA-Lib and checks every engine agrees on the counts.
struct IndicatorSuite {
    let table: QuoteTable
    let threads: Int
    let recorder: Recorder
    let label: String

    /// (name, text, value columns read): the texts are `indicators.py`'s, as a user types them.
    static let screens: [(String, String, Int)] = [
        ("I1 MACD cross", "ema(close, 12) > ema(close, 26) and prev(ema(close, 12)) <= prev(ema(close, 26))", 1),
        ("I2 RSI oversold", "rsi(close, 14) < 30", 1),
        ("I3 drawdown, heavy volume", "close / cummax(close) - 1 < -0.2 and volume > 2 * mavg(volume, 20)", 2),
        (
            "I4 ATR breakout",
            "close > prev(close) + 2 * rma(greatest(high - low, abs(high - prev(close)), abs(low - prev(close))), 14)", 3
        ),
        ("S3 trend (exact windows)", "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)", 1),
    ]

    func run() throws {
        try exactWindowCost()
        let rows = Double(table.rowCount)
        let runs = table.rowCount > 5_000_000 ? 7 : 11
        for (name, text, columns) in Self.screens {
            let predicate = try QueryParser(table: table).parse(text)
            for t in Set([1, threads]).sorted() {
                let options = QueryOptions(threads: t)
                var selection = try table.select(predicate, options: options)
                let r = try measure(runs: runs) {
                    selection = try table.select(predicate, options: options)
                    sink(selection.count)
                }
                let sum = try selection.aggregate([.sum("close")]).rows[0].values[0] ?? 0
                recorder.record(
                    Measurement(
                        suite: "indicators", name: "\(name) \(label) t=\(t)",
                        seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows",
                        bytes: rows * 8 * Double(columns),
                        note: "matched \(selection.count), sum(close) \(String(format: "%.6g", sum))"))
            }
            // As of the latest day: each ticker's recursive series runs from its first row to its as-of row
            // (its value depends on all of them), keeping only the tail the screen reads.
            for t in Set([1, threads]).sorted() {
                let options = QueryOptions(threads: t)
                var latest = try table.select(predicate, on: .latest, options: options)
                let r = try measure(runs: runs) {
                    latest = try table.select(predicate, on: .latest, options: options)
                    sink(latest.count)
                }
                let sum = try latest.aggregate([.sum("close")]).rows[0].values[0] ?? 0
                recorder.record(
                    Measurement(
                        suite: "indicators", name: "\(name) --on latest \(label) t=\(t)",
                        seconds: r.median, spread: r.spread, runs: runs, items: Double(table.tickers.count),
                        unit: "tickers", bytes: 0,
                        note: "matched \(latest.count), sum(close) \(String(format: "%.6g", sum))"))
            }
        }
    }

    /// What exact windows cost (issue 30: "S3 exact and within 5 % of its speed today"): S3 with
    /// exact windows against the same screen on the floating-point sliding sums it ran on before
    /// (`QueryOptions.exactWindows` off: not a user's option), in one process, interleaved run by
    /// run (which goes first alternates), medians of each. The float path answers some ties wrong;
    /// its matched count is in the note.
    func exactWindowCost() throws {
        let text = "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)"
        let predicate = try QueryParser(table: table).parse(text)
        let pairs = table.rowCount > 5_000_000 ? 15 : 25
        for t in Set([1, threads]).sorted() {
            let exact = QueryOptions(threads: t)
            var float = exact
            float.exactWindows = false
            func timed(_ o: QueryOptions) throws -> (seconds: Double, matched: Int) {
                let start = DispatchTime.now().uptimeNanoseconds
                let s = try table.select(predicate, options: o)
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                sink(s.count)
                return (seconds, s.count)
            }
            _ = try timed(exact)  // warm-up, both
            _ = try timed(float)
            var a = [Double](), b = [Double]()
            var matched = (0, 0)
            for i in 0 ..< pairs {
                let first = try timed(i % 2 == 0 ? exact : float)
                let second = try timed(i % 2 == 0 ? float : exact)
                let (x, y) = i % 2 == 0 ? (first, second) : (second, first)
                a.append(x.seconds)
                b.append(y.seconds)
                matched = (x.matched, y.matched)
            }
            func stats(_ v: [Double]) -> (median: Double, spread: Double) {
                let s = v.sorted()
                let m = s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
                return (m, m > 0 ? ((s.last ?? m) - (s.first ?? m)) / m : 0)
            }
            let (ea, fb) = (stats(a), stats(b))
            let rows = Double(table.rowCount)
            let ratio = ea.median / fb.median
            recorder.record(
                Measurement(
                    suite: "indicators", name: "S3 exact windows, A/B \(label) t=\(t)", seconds: ea.median, spread: ea.spread,
                    runs: pairs, items: rows, unit: "rows", bytes: rows * 8,
                    note: String(
                        format: "matched %d; %.3f× the floating-point path's median (interleaved, %d pairs)", matched.0, ratio, pairs)))
            recorder.record(
                Measurement(
                    suite: "indicators", name: "S3 floating-point windows, A/B \(label) t=\(t)", seconds: fb.median,
                    spread: fb.spread, runs: pairs, items: rows, unit: "rows", bytes: rows * 8,
                    note: "matched \(matched.1) (ties as the sums fall; the exact answer is the other row's)"))
            print(
                String(
                    format: "S3 t=%d: exact %.2f ms (spread %.0f%%), floating-point %.2f ms (spread %.0f%%): exact/float %.3f, %d pairs",
                    t, ea.median * 1e3, ea.spread * 100, fb.median * 1e3, fb.spread * 100, ratio, pairs))
        }
    }
}
