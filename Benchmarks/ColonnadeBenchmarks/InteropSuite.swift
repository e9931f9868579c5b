import Foundation
import Colonnade

/// Arrow IPC and Parquet export and import of the bench table (issue 14), in process: MB/s of the
/// file written or read (1 MB = 10^6 bytes). Files go to the work directory through the page
/// cache and are not `fsync`ed (`durable: false`), as the peers' writers in
/// Benchmarks/peers/interop.py are timed too; before every export (not timed) the last file is
/// removed and dirty pages are written back (`sync`), so a run is not throttled by the writeback
/// of the one before (a 2 GB file per run soon reaches the kernel's dirty-page limit). Reading
/// maps the file the previous export wrote, so it comes from the page cache.
struct InteropSuite {
    let table: QuoteTable
    let recorder: Recorder
    let label: String
    let directory: String

    func run() throws {
        let runs = table.rowCount > 5_000_000 ? 5 : 9
        let rows = table.rowCount
        let cases: [(name: String, file: String, write: (String) throws -> Void)] = [
            ("Arrow IPC file", "bench.arrow", { try ArrowIPCWriter(table: table, format: .file).write(toFile: $0, durable: false) }),
            ("Arrow IPC stream", "bench.arrows", { try ArrowIPCWriter(table: table, format: .stream).write(toFile: $0, durable: false) }),
            ("Parquet uncompressed", "bench.parquet", { try ParquetWriter(table: table).write(toFile: $0, durable: false) }),
            (
                "Parquet Snappy", "bench-snappy.parquet",
                {
                    var w = ParquetWriter(table: table)
                    w.compression = .snappy
                    try w.write(toFile: $0, durable: false)
                }
            ),
        ]
        for c in cases {
            let path = directory + "/" + c.file
            defer { try? FileManager.default.removeItem(atPath: path) }
            let export = try measure(runs: runs, prepare: { settle(path) }) { try c.write(path) }
            let bytes = Double(fileSize(path))
            recorder.record(
                Measurement(
                    suite: "interop", name: "export \(c.name) \(label)", seconds: export.median,
                    spread: export.spread, runs: runs, items: bytes, unit: "B", bytes: bytes,
                    note: String(format: "%.0f MB file, no fsync", bytes / 1e6)))
            let read = try measure(runs: runs) {
                let t = try InteropReader.read(path: path)
                precondition(t.rowCount == rows, "read \(t.rowCount) rows of \(rows)")
                sink(t.rowCount)
            }
            recorder.record(
                Measurement(
                    suite: "interop", name: "import \(c.name) \(label)", seconds: read.median,
                    spread: read.spread, runs: runs, items: bytes, unit: "B", bytes: bytes,
                    note: "our own file, memory-mapped, into a table"))
        }
        // The Hive layout: one file per year.
        let dir = directory + "/bench-parts"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files: [String] = []
        let export = try measure(runs: runs, prepare: { settle(dir) }) {
            files = try ParquetWriter(table: table).writePartitionedByYear(toDirectory: dir, durable: false)
        }
        let bytes = Double(files.reduce(0) { $0 + fileSize($1) })
        recorder.record(
            Measurement(
                suite: "interop", name: "export Parquet --partition-by year \(label)", seconds: export.median,
                spread: export.spread, runs: runs, items: bytes, unit: "B", bytes: bytes,
                note: String(format: "%d files, %.0f MB, no fsync", files.count, bytes / 1e6)))
        let read = try measure(runs: runs) { sink(try InteropReader.read(path: dir).rowCount) }
        recorder.record(
            Measurement(
                suite: "interop", name: "import Parquet year=… directory \(label)", seconds: read.median,
                spread: read.spread, runs: runs, items: bytes, unit: "B", bytes: bytes,
                note: "\(files.count) files merged into one table"))
    }

    /// Untimed, before an export: the last output removed, dirty pages written back.
    func settle(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
        sync()
    }

    func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
}
