import Foundation
import Colonnade

/// Issue 35, in process: zstd Parquet and Delta Lake export of the bench table (MB/s of file,
/// to the page cache, `durable: false`, as the peers' writers in Benchmarks/peers/lakehouse.py),
/// the same with fsync, and appending one day to a Delta table of every other row. Before every
/// export (not timed) the last output is removed and dirty pages are written back (`sync`).
struct LakehouseSuite {
    let table: QuoteTable
    let recorder: Recorder
    let label: String
    let directory: String

    func run() throws {
        let runs = table.rowCount > 5_000_000 ? 3 : 7
        let cases: [(name: String, durable: Bool, write: (String, Bool) throws -> Void)] = [
            (
                "Parquet zstd", false,
                { p, d in
                    var w = ParquetWriter(table: table)
                    w.compression = .zstd(level: ZstdCompressor.fileDefaultLevel)
                    try w.write(toFile: p, durable: d)
                }
            ),
            (
                "Parquet zstd:3", false,
                { p, d in
                    var w = ParquetWriter(table: table)
                    w.compression = .zstd(level: 3)
                    try w.write(toFile: p, durable: d)
                }
            ),
            (
                "Parquet zstd fsync", true,
                { p, d in
                    var w = ParquetWriter(table: table)
                    w.compression = .zstd(level: ZstdCompressor.fileDefaultLevel)
                    try w.write(toFile: p, durable: d)
                }
            ),
            (
                "Delta (zstd)", false,
                { p, d in
                    var w = DeltaWriter(table: table)
                    w.durable = d
                    _ = try w.write(to: p, mode: nil)
                }
            ),
            (
                "Delta (zstd) --partition-by year", false,
                { p, d in
                    var w = DeltaWriter(table: table)
                    w.durable = d
                    w.partitioning = .year
                    _ = try w.write(to: p, mode: nil)
                }
            ),
            (
                "Delta (zstd) fsync", true,
                { p, d in
                    var w = DeltaWriter(table: table)
                    w.durable = d
                    _ = try w.write(to: p, mode: nil)
                }
            ),
        ]
        for c in cases {
            let path = directory + "/bench-lake"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let export = try measure(runs: runs, prepare: { settle(path) }) { try c.write(path, c.durable) }
            let bytes = Double(size(path))
            recorder.record(
                Measurement(
                    suite: "lakehouse", name: "export \(c.name) \(label)", seconds: export.median,
                    spread: export.spread, runs: runs, items: bytes, unit: "B", bytes: bytes,
                    note: String(format: "%.0f MB, %@", bytes / 1e6, c.durable ? "fsync" : "no fsync")))
        }
        // One day appended to a Delta table of all the other days.
        let dir = directory + "/bench-lake-append"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let last = table.dates.withUnsafeBufferPointer { $0.max() ?? 0 }
        let day = Day(daysSinceEpoch: last).description
        let before = table.subtable(try table.select(where: "date < \(day)"))
        let oneDay = table.subtable(try table.select(where: "date = \(day)"))
        var version = 0
        let append = try measure(
            runs: runs,
            prepare: {
                settle(dir)
                var w = DeltaWriter(table: before)
                w.partitioning = .year
                w.durable = false
                _ = try? w.write(to: dir, mode: nil)
                sync()
            }
        ) {
            var w = DeltaWriter(table: oneDay)
            w.partitioning = .year
            version = try w.write(to: dir, mode: .append).version
        }
        precondition(version == 1)
        recorder.record(
            Measurement(
                suite: "lakehouse", name: "append one day to Delta (\(before.rowCount) rows) \(label)",
                seconds: append.median, spread: append.spread, runs: runs, items: Double(oneDay.rowCount),
                unit: "rows", bytes: 0, note: "\(oneDay.rowCount) rows, fsync, one commit"))
    }

    func settle(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
        sync()
    }

    func size(_ path: String) -> Int {
        var total = 0
        if let e = FileManager.default.enumerator(atPath: path) {
            for case let f as String in e {
                total += (try? FileManager.default.attributesOfItem(atPath: path + "/" + f)[.size] as? Int) ?? 0
            }
            if total > 0 { return total }
        }
        return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
}
