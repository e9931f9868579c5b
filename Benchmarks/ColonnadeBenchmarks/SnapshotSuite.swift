import Foundation
import Colonnade

/// Codable row for the seed-like baseline (Core Data rows → here Foundation's encoders).
struct CodableQuote: Codable {
    var ticker: String
    var date: Int32
    var open, high, low, close, volume, exDividend, splitRatio: Double?
    var adjOpen, adjHigh, adjLow, adjClose, adjVolume: Double?
}

struct SnapshotSuite {
    let table: QuoteTable
    let recorder: Recorder
    let label: String
    let directory: String

    func run() throws {
        let path = directory + "/bench.snapshot"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let runs = table.rowCount > 5_000_000 ? 5 : 9
        try table.save(to: path)
        let fileBytes = Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        let rows = Double(table.rowCount)

        for durable in [false, true] {
            let r = try measure(runs: runs) { try table.save(to: path, durable: durable) }
            recorder.record(
                Measurement(
                    suite: "snapshot", name: "save \(label) \(durable ? "with fsync (file + dir)" : "before fsync")",
                    seconds: r.median, spread: r.spread, runs: runs, items: fileBytes, unit: "B",
                    bytes: fileBytes, note: String(format: "%.0f MB file", fileBytes / 1e6)))
        }
        // Warm: the file's pages are in the page cache (it was just written, and every run after
        // the warm-up finds them there). An unverified load reads only the structure and footer,
        // so it has no MB/s; a verified one reads every payload byte from memory.
        let q1 = try QueryParser(table: table).parse("80 < high < 83")
        for verify in [false, true] {
            let r = try measure(runs: runs) {
                let t = try QuoteTable.load(from: path, verify: verify)
                sink(t.rowCount)
            }
            let resident = try PageCache.residentFraction(path)
            recorder.record(
                Measurement(
                    suite: "snapshot", name: "load \(label) warm, \(verify ? "with verification" : "without verification (mmap)")",
                    seconds: r.median, spread: r.spread, runs: runs, items: verify ? fileBytes : 0, unit: "B",
                    bytes: verify ? fileBytes : 0,
                    note: String(
                        format: "%@; page cache warm (%.0f%% of the file resident)",
                        verify
                            ? "every payload checksum, from memory"
                            : "structure, footer and validity padding only; column payloads not read",
                        resident * 100)))
        }
        for verify in [false, true] {
            let r = try measure(runs: runs) {
                let t = try QuoteTable.load(from: path, verify: verify)
                sink(try t.select(q1, options: QueryOptions(threads: 1)).count)
            }
            recorder.record(
                Measurement(
                    suite: "snapshot", name: "load + first Q1 \(label) t=1 warm, \(verify ? "verified" : "unverified")",
                    seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows",
                    bytes: 0, note: "time to the first answer from a file in the page cache"))
        }

        // Cold: before each run the file is written back and dropped from the page cache
        // (fsync + posix_fadvise(POSIX_FADV_DONTNEED)); mincore then counts what is still resident.
        let coldRuns = table.rowCount > 5_000_000 ? 3 : 5
        let evict = { try PageCache.evict(path) }
        for verify in [false, true] {
            let r = try measureCold(runs: coldRuns, evict: evict) {
                let t = try QuoteTable.load(from: path, verify: verify)
                sink(t.rowCount)
            }
            recorder.record(
                Measurement(
                    suite: "snapshot", name: "load \(label) cold, \(verify ? "with verification" : "without verification (mmap)")",
                    seconds: r.median, spread: r.spread, runs: coldRuns, items: verify ? fileBytes : 0, unit: "B",
                    bytes: verify ? fileBytes : 0,
                    note: String(
                        format: "%@; evicted before each run (at most %.1f%% resident)",
                        verify
                            ? "every payload byte read from disk" : "structure, footer and validity padding only; column payloads not read",
                        r.resident * 100)))
        }
        for verify in [false, true] {
            let r = try measureCold(runs: coldRuns, evict: evict) {
                let t = try QuoteTable.load(from: path, verify: verify)
                sink(try t.select(q1, options: QueryOptions(threads: 1)).count)
            }
            recorder.record(
                Measurement(
                    suite: "snapshot", name: "load + first Q1 \(label) t=1 cold, \(verify ? "verified" : "unverified")",
                    seconds: r.median, spread: r.spread, runs: coldRuns, items: rows, unit: "rows",
                    bytes: 0,
                    note: String(
                        format: "time to the first answer, file evicted before each run (at most %.1f%% resident)", r.resident * 100)))
        }
        try foundationBaseline()
    }

    /// The seed-like way: rows as Codable structs through PropertyListEncoder (binary), on a slice.
    func foundationBaseline() throws {
        let n = min(table.rowCount, 200_000)
        let names = [
            "open", "high", "low", "close", "volume", "ex_dividend", "split_ratio", "adj_open", "adj_high", "adj_low",
            "adj_close", "adj_volume",
        ]
        let cols = names.map { table.column(named: $0)! }
        let quotes = (0 ..< n).map { r in
            let v = cols.map { $0.doubleValue(at: r) }
            return CodableQuote(
                ticker: table.tickers[Int(table.tickerNumber(ofRow: r))].symbol, date: table.dates[r],
                open: v[0], high: v[1], low: v[2], close: v[3], volume: v[4], exDividend: v[5], splitRatio: v[6],
                adjOpen: v[7], adjHigh: v[8], adjLow: v[9], adjClose: v[10], adjVolume: v[11])
        }
        let url = URL(fileURLWithPath: directory + "/bench.plist")
        defer { try? FileManager.default.removeItem(at: url) }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        var bytes = 0.0
        let save = try measure(runs: 3) {
            let data = try encoder.encode(quotes)
            bytes = Double(data.count)
            try data.write(to: url, options: .atomic)
        }
        recorder.record(
            Measurement(
                suite: "snapshot", name: "baseline: PropertyListEncoder save \(n / 1000)k rows",
                seconds: save.median, spread: save.spread, runs: 3, items: Double(n), unit: "rows",
                bytes: bytes, note: String(format: "%.1f MB; seed-like (Codable rows)", bytes / 1e6)))
        let load = try measure(runs: 3) {
            let data = try Data(contentsOf: url)
            sink(try PropertyListDecoder().decode([CodableQuote].self, from: data).count)
        }
        recorder.record(
            Measurement(
                suite: "snapshot", name: "baseline: PropertyListDecoder load \(n / 1000)k rows",
                seconds: load.median, spread: load.spread, runs: 3, items: Double(n), unit: "rows",
                bytes: bytes, note: "compare rows/s with the snapshot load above"))
    }
}
