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
}
