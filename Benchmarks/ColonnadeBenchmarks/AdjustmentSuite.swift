import Colonnade
import ColonnadeIngest
import Foundation

/// Issue 33, in process on the bench table (adjusted columns by WIKI's rule, docs/ADJUSTMENTS.md):
/// - `verify --adjustments` beside `verify` (both warm: the file was just written, its pages are in
///   the page cache): the checksums alone, then the checksums, a load and the rule's check;
/// - `adjust` beside a plain save: load, recompute every ticker's adjusted columns, save (fsync),
///   beside load and save;
/// - the work of `fetch --update` after its downloads, with one split among every ticker beside
///   none: upsert one overlapping and one new day per ticker, look for restatements, recompute the
///   restated ticker, save (fsync). The HTTP requests are not part of it; Benchmarks/peers/update_e2e.py
///   times the whole `fetch --update` process, HTTP included (Benchmarks/suites/70-adjustments.sh).
struct AdjustmentSuite {
    let table: QuoteTable
    let recorder: Recorder
    let label: String
    let directory: String

    func run() throws {
        let path = directory + "/adjust-bench-\(getpid()).snapshot", out = directory + "/adjust-bench-\(getpid())-out.snapshot"
        defer { for p in [path, out] { try? FileManager.default.removeItem(atPath: p) } }
        try table.save(to: path)
        let runs = table.rowCount > 5_000_000 ? 3 : 5
        let fileBytes = Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        let rows = Double(table.rowCount)

        // Checked once, not timed: the bench table follows the rule.
        guard try table.adjustmentProblems().isEmpty else { throw BenchError("the bench table's adjusted columns break WIKI's rule") }

        let verify = try measure(runs: runs) {
            guard QuoteTable.verifySnapshot(at: path).isValid else { throw BenchError("verify found problems in \(path)") }
        }
        record(
            "verify \(label) warm", verify, runs: runs, items: fileBytes, unit: "B",
            note: "every checksum and invariant, file in the page cache")
        let verifyAdjustments = try measure(runs: runs) {
            guard QuoteTable.verifySnapshot(at: path).isValid else { throw BenchError("verify found problems in \(path)") }
            let loaded = try QuoteTable.load(from: path, verify: false)
            sink(try loaded.adjustmentProblems().count)
        }
        record(
            "verify --adjustments \(label) warm", verifyAdjustments, runs: runs, items: rows, unit: "rows",
            note: String(
                format: "%.2f× verify (target ≤ 2×); + load and the rule's check of every ticker", verifyAdjustments.median / verify.median)
        )

        let plain = try measure(runs: runs) {
            let loaded = try QuoteTable.load(from: path, verify: false)
            try loaded.save(to: out)
        }
        record(
            "load + save \(label) (fsync)", plain, runs: runs, items: fileBytes, unit: "B",
            note: "adjust's yardstick: a plain save of the same table")
        let adjust = try measure(runs: runs) {
            var loaded = try QuoteTable.load(from: path, verify: false)
            sink(try loaded.recomputeAdjustments().count)
            try loaded.save(to: out)
        }
        record(
            "adjust \(label): load + recompute + save (fsync)", adjust, runs: runs, items: rows, unit: "rows",
            note: String(format: "%.2f× the plain save (target ≤ 1.5×); every ticker", adjust.median / plain.median))

        let quiet = try Self.update(of: table, splitting: nil), split = try Self.update(of: table, splitting: table.tickers[0].symbol)
        func timedUpdate(_ incoming: QuoteTable, restated expected: Int) throws -> (median: Double, spread: Double) {
            try measure(runs: runs) {
                var merged = table
                merged.upsert(contentsOf: [incoming], threads: QueryOptions.availableCores)
                let restated = try QuoteStore.restate(&merged, existing: table, incoming: incoming)
                guard restated.count == expected else { throw BenchError("\(restated.count) tickers restated, expected \(expected)") }
                try merged.save(to: out)
            }
        }
        let none = try timedUpdate(quiet, restated: 0)
        record(
            "update \(label), no event: upsert 2 days × \(table.tickers.count) tickers + check + save", none, runs: runs, items: rows,
            unit: "rows",
            note: "fetch --update after its downloads (overlapping day + new day), no restatement")
        let one = try timedUpdate(split, restated: 1)
        record(
            "update \(label), one 2:1 split among \(table.tickers.count) tickers: + recompute", one, runs: runs, items: rows, unit: "rows",
            note: String(format: "%.2f× the update without one (target ≤ 1.5×); the recomputing path", one.median / none.median))
    }

    /// What an update brings for every ticker: its newest stored row again (the overlapping day)
    /// and one new day at the same prices; with `splitting`, that ticker's new day is a 2:1 split
    /// (raw prices halved) and the vendor's adjusted values are restated (its overlapping day's
    /// halved), as WIKI restates.
    static func update(of table: QuoteTable, splitting: String?) throws -> QuoteTable {
        var dates: [Int32] = []
        var values = [[Double?]](repeating: [], count: table.schema.count)
        var entries: [TickerEntry] = []
        let index = { (name: String) throws -> Int in
            guard let i = table.columnIndex(named: name) else { throw BenchError("the bench table has no \(name) column") }
            return i
        }
        let raw = try ["open", "high", "low", "close"].map(index), volume = try index("volume")
        let adjusted = try ["adj_open", "adj_high", "adj_low", "adj_close"].map(index)
        let split = try index("split_ratio"), dividend = try index("ex_dividend")
        for t in table.tickers where t.rowCount > 0 {
            let last = t.firstRow + t.rowCount - 1
            let splits = t.symbol == splitting
            entries.append(TickerEntry(symbol: t.symbol, firstRow: dates.count, rowCount: 2))
            dates += [table.dates[last], table.dates[last] + 1]
            for c in table.columns.indices {
                var old = table.columns[c].doubleValue(at: last)
                if splits && adjusted.contains(c) { old = old.map { $0 / 2 } }
                var new = table.columns[c].doubleValue(at: last)
                if splits && (raw.contains(c) || adjusted.contains(c)) { new = new.map { $0 / 2 } }
                if c == split { new = splits ? 2 : 1 }
                if c == dividend { new = 0 }
                if splits && c == volume { new = new.map { $0 * 2 } }
                values[c] += [old, new]
            }
        }
        return try QuoteTable(
            schema: table.schema.map { ColumnDescriptor(name: $0.name, type: .float64) },
            columns: values.map { .float64(Column($0)) }, dates: Column(dates), tickers: entries,
            dateColumnName: table.dateColumnName)
    }

    private func record(_ name: String, _ result: (median: Double, spread: Double), runs: Int, items: Double, unit: String, note: String) {
        recorder.record(
            Measurement(
                suite: "adjustments", name: name, seconds: result.median, spread: result.spread, runs: runs,
                items: items, unit: unit, bytes: unit == "B" ? items : 0, note: note))
    }
}
