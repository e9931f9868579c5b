import Colonnade
import DataLinkFormat
import Foundation

/// The `zip` suite: inflate throughput on a large zipped CSV (the generated table as a datatable
/// CSV, zipped by Info-ZIP `zip -6`), beside `unzip -p` and `gzip -dc` of the same DEFLATE bytes
/// in the same run; and end to end `colonnade import big.zip` vs `unzip -p big.zip | colonnade
/// import -` vs unzip + Polars `read_csv` (when a Python with Polars is found: $COLONNADE_BENCH_PYTHON,
/// else Benchmarks/peers/.venv/bin/python).
struct ZipSuite {
    let table: QuoteTable
    let recorder: Recorder
    let label: String
    let directory: String

    func run() throws {
        let dir = directory + "/colonnade-zip-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let csvPath = dir + "/PRICES.csv", zipPath = dir + "/big.zip", gzPath = dir + "/big.csv.gz"
        let start = Date()
        try QuoteGenerator.writeDatatableCSV(table, to: csvPath)
        guard Shell.has("zip") else {
            // Without the archive nothing in this suite can run: every row says so.
            for name in Self.rowNames { recorder.record(notMeasured("zip", name, "Info-ZIP 'zip' is not installed")) }
            return
        }
        try Shell.run("cd '\(dir)' && zip -q -6 big.zip PRICES.csv")
        let archive = try ZipArchive(contentsOfFile: zipPath)
        guard let member = archive.members.first else { throw BenchError("zip -6 wrote no member into \(zipPath)") }
        try Self.writeGzip(of: member, archive: zipPath, to: gzPath)
        let csvBytes = Double(member.uncompressedSize)
        print(
            String(
                format:
                    "zip input: %.0f MB CSV, %.0f MB zip (zip -6, ratio %.1f), gzip of the same DEFLATE stream (made in %.1f s, not timed)",
                csvBytes / 1e6, Double(member.compressedSize) / 1e6, csvBytes / Double(member.compressedSize),
                Date().timeIntervalSince(start)))
        try FileManager.default.removeItem(atPath: csvPath)
        let runs = 3

        // Inflate only, one core: stream the member, CRC-32 and size checked, bytes dropped.
        let inflate = try measure(runs: runs) {
            var total = 0
            try archive.stream(member, limits: ZipLimits(maximumRatio: 1 << 20, maximumSize: Int.max)) { chunk in
                total += chunk.data.count
                return 0
            }
            guard total == member.uncompressedSize else { throw BenchError("inflated \(total) bytes, not \(member.uncompressedSize)") }
            sink(total)
        }
        record("inflate (ZipArchive.stream, CRC checked) t=1", inflate, bytes: csvBytes, note: "output bytes")
        for (name, tool, command) in [
            ("unzip -p > /dev/null", "unzip", "unzip -p '\(zipPath)'"),
            ("gzip -dc > /dev/null (same DEFLATE bytes)", "gzip", "gzip -dc '\(gzPath)'"),
        ] {
            guard Shell.has(tool) else {
                recorder.record(notMeasured("zip", name, "'\(tool)' is not installed"))
                continue
            }
            // One untimed run with its output counted; the timed runs' exit statuses are checked.
            try Shell.checkOutputSize(command, is: member.uncompressedSize)
            let result = try measure(runs: runs) { try Shell.run(command + " > /dev/null") }
            record(name, result, bytes: csvBytes, note: String(format: "ours is %.2f× its speed", result.median / inflate.median))
        }

        // End to end through the CLI, into a fresh snapshot each run; every run's exit status
        // checked, and the last run's snapshot holds every row.
        let colonnade = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("colonnade").path
        guard FileManager.default.isExecutableFile(atPath: colonnade) else {
            throw BenchError("\(colonnade) not built (swift build -c release --product colonnade)")
        }
        let snapshot = dir + "/q.snapshot"
        // Each side's fixed cost, measured and shown: a process that does nothing else.
        let colonnadeStart = try measure(runs: runs) { try Shell.run("'\(colonnade)' --version > /dev/null") }
        record("start-up: colonnade --version", colonnadeStart, bytes: 0, note: "the fixed cost in every colonnade row below")
        let direct = try measure(runs: runs, prepare: { unlink(snapshot) }) {
            try Shell.run("'\(colonnade)' import '\(zipPath)' --snapshot '\(snapshot)' > /dev/null")
        }
        try checkRows(snapshot)
        record("colonnade import big.zip (end to end, saved)", direct, bytes: csvBytes, note: "MB/s of CSV; inflate + decode + save")
        if Shell.has("unzip") {
            let piped = try measure(runs: runs, prepare: { unlink(snapshot) }) {
                try Shell.run("unzip -p '\(zipPath)' | '\(colonnade)' import - --snapshot '\(snapshot)' > /dev/null")
            }
            try checkRows(snapshot)
            record(
                "unzip -p big.zip | colonnade import -", piped, bytes: csvBytes,
                note: String(format: "import big.zip is %.2f× faster", piped.median / direct.median))
        } else {
            recorder.record(notMeasured("zip", "unzip -p big.zip | colonnade import -", "'unzip' is not installed"))
        }

        let environment = ProcessInfo.processInfo.environment
        let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "peers/.venv/bin/python"
        ).path
        let python = environment["COLONNADE_BENCH_PYTHON"] ?? peers
        let polarsName = "unzip -p > file, then Polars read_csv"
        guard FileManager.default.isExecutableFile(atPath: python), (try? Shell.run("'\(python)' -c 'import polars'")) != nil else {
            recorder.record(
                notMeasured(
                    "zip", "start-up: python -c 'import polars'", "no Python with Polars at \(python) (Benchmarks/peers/run.sh creates one)"
                ))
            recorder.record(notMeasured("zip", polarsName, "no Python with Polars at \(python) (Benchmarks/peers/run.sh creates one)"))
            return
        }
        guard Shell.has("unzip") else {
            recorder.record(notMeasured("zip", polarsName, "'unzip' is not installed"))
            return
        }
        let pythonStart = try measure(runs: runs) { try Shell.run("'\(python)' -c 'import polars' > /dev/null") }
        record("start-up: python -c 'import polars'", pythonStart, bytes: 0, note: "the fixed cost in the Polars row below")
        let read =
            "unzip -p '\(zipPath)' > '\(dir)/u.csv' && '\(python)' -c \"import polars as pl; print(pl.read_csv('\(dir)/u.csv').height)\""
        let height = try Shell.run(read).trimmingCharacters(in: .whitespacesAndNewlines)
        guard Int(height) == table.rowCount else { throw BenchError("Polars read \(height) rows, not \(table.rowCount)") }
        let polars = try measure(runs: runs) { try Shell.run(read + " > /dev/null") }
        // Whole processes on both sides: the ratio of the times net of each side's start-up is shown beside the gross one.
        let net = (polars.median - pythonStart.median) / (direct.median - colonnadeStart.median)
        record(
            polarsName, polars, bytes: csvBytes,
            note: String(
                format: "import big.zip is %.2f× faster whole process, %.2f× net of each side's start-up (Polars: all threads)",
                polars.median / direct.median, net))
    }

    /// Every row name this suite records, for "not measured" when it cannot run at all.
    static let rowNames = [
        "inflate (ZipArchive.stream, CRC checked) t=1", "unzip -p > /dev/null", "gzip -dc > /dev/null (same DEFLATE bytes)",
        "start-up: colonnade --version", "colonnade import big.zip (end to end, saved)",
        "unzip -p big.zip | colonnade import -", "start-up: python -c 'import polars'",
        "unzip -p > file, then Polars read_csv",
    ]

    /// Throws unless the snapshot at `path` holds the table's rows.
    private func checkRows(_ path: String) throws {
        let rows = try QuoteTable.load(from: path, verify: false).rowCount
        guard rows == table.rowCount else { throw BenchError("\(path) holds \(rows) rows, not \(table.rowCount)") }
    }

    private func record(_ name: String, _ result: (median: Double, spread: Double), bytes: Double, note: String) {
        recorder.record(
            Measurement(
                suite: "zip", name: name, seconds: result.median, spread: result.spread, runs: 3,
                items: bytes, unit: "B", bytes: bytes, note: note))
    }

    /// A gzip file (RFC 1952) wrapping the member's raw DEFLATE stream: the same bytes for gzip -dc.
    static func writeGzip(of member: ZipMember, archive: String, to path: String) throws {
        let zip = try FileHandle(forReadingFrom: URL(fileURLWithPath: archive))
        defer { try? zip.close() }
        try zip.seek(toOffset: UInt64(member.dataOffset))
        let stream = try zip.read(upToCount: member.compressedSize) ?? Data()
        var out = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3])
        out.append(stream)
        for v in [UInt32(member.crc32), UInt32(truncatingIfNeeded: member.uncompressedSize)] {
            out.append(contentsOf: [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)])
        }
        try out.write(to: URL(fileURLWithPath: path))
    }
}
