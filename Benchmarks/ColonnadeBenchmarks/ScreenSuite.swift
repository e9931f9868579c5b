import Foundation
import Colonnade

/// Screens of issue 12 (arithmetic and per-ticker series functions), over the whole table and as
/// of the latest day. The note carries matched rows and sum(close), which Benchmarks/peers checks
/// every engine agrees on.
struct ScreenSuite {
    let table: QuoteTable
    let threads: Int
    let recorder: Recorder
    let label: String

    static let screens: [(String, String, Int)] = [
        ("S1 gap up", "open > 1.03 * prev(close)", 2),
        ("S2 wide range, heavy volume", "(high - low) / close > 0.05 and volume > 2 * mavg(volume, 20)", 4),
        ("S3 trend", "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)", 1),
        ("S4 new 52-week high", "high >= mmax(high, 252)", 1),
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
                        suite: "screens", name: "\(name) \(label) t=\(t)",
                        seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows",
                        bytes: rows * 8 * Double(columns),
                        note: "matched \(selection.count), sum(close) \(String(format: "%.6g", sum))"))
            }
            // As of the latest day: one row per ticker, windows over its last rows only.
            var latest = try table.select(predicate, on: .latest)
            let r = try measure(runs: runs * 3) {
                latest = try table.select(predicate, on: .latest)
                sink(latest.count)
            }
            let sum = try latest.aggregate([.sum("close")]).rows[0].values[0] ?? 0
            recorder.record(
                Measurement(
                    suite: "screens", name: "\(name) --on latest \(label) t=1",
                    seconds: r.median, spread: r.spread, runs: runs * 3, items: Double(table.tickers.count),
                    unit: "tickers", bytes: 0,
                    note: "matched \(latest.count), sum(close) \(String(format: "%.6g", sum))"))
        }
    }
}
