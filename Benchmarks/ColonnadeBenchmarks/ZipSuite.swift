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
        guard Self.shell("cd '\(dir)' && zip -q -6 big.zip PRICES.csv") != nil else {
            print("zip suite skipped: Info-ZIP 'zip' is not installed")
            return
        }
        let archive = try ZipArchive(contentsOfFile: zipPath)
        guard let member = archive.members.first else { return }
        try Self.writeGzip(of: member, archive: zipPath, to: gzPath)
        let csvBytes = Double(member.uncompressedSize)
        print(String(format: "zip input: %.0f MB CSV, %.0f MB zip (zip -6, ratio %.1f), gzip of the same DEFLATE stream (made in %.1f s, not timed)",
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
            sink(total)
        }
        record("inflate (ZipArchive.stream, CRC checked) t=1", inflate, bytes: csvBytes, note: "output bytes")
        for (name, command) in [("unzip -p > /dev/null", "unzip -p '\(zipPath)' > /dev/null"),
                                ("gzip -dc > /dev/null (same DEFLATE bytes)", "gzip -dc '\(gzPath)' > /dev/null")] {
            let result = measure(runs: runs) { _ = Self.shell(command) }
            record(name, result, bytes: csvBytes, note: String(format: "ours is %.2f× its speed", result.median / inflate.median))
        }

        // End to end through the CLI, into a fresh snapshot each run.
        let colonnade = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("colonnade").path
        guard FileManager.default.isExecutableFile(atPath: colonnade) else {
            print("end-to-end rows skipped: \(colonnade) not built (swift build -c release)")
            return
        }
        let snapshot = dir + "/q.snapshot"
        let direct = measure(runs: runs) {
            unlink(snapshot)
            _ = Self.shell("'\(colonnade)' import '\(zipPath)' --snapshot '\(snapshot)' > /dev/null")
        }
        record("colonnade import big.zip (end to end, saved)", direct, bytes: csvBytes, note: "MB/s of CSV; inflate + decode + save")
        let piped = measure(runs: runs) {
            unlink(snapshot)
            _ = Self.shell("unzip -p '\(zipPath)' | '\(colonnade)' import - --snapshot '\(snapshot)' > /dev/null")
        }
        record("unzip -p big.zip | colonnade import -", piped, bytes: csvBytes,
               note: String(format: "import big.zip is %.2f× faster", piped.median / direct.median))

        let environment = ProcessInfo.processInfo.environment
        let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("peers/.venv/bin/python").path
        let python = environment["COLONNADE_BENCH_PYTHON"] ?? peers
        guard FileManager.default.isExecutableFile(atPath: python), Self.shell("'\(python)' -c 'import polars'") != nil else {
            print("Polars row skipped: no Python with Polars at \(python) (Benchmarks/peers/run.sh creates one)")
            return
        }
        let polars = measure(runs: runs) {
            _ = Self.shell("unzip -p '\(zipPath)' > '\(dir)/u.csv' && '\(python)' -c \"import polars as pl; pl.read_csv('\(dir)/u.csv')\"")
        }
        record("unzip -p > file, then Polars read_csv", polars, bytes: csvBytes,
               note: String(format: "import big.zip is %.2f× faster (Polars: all threads; includes Python start-up)", polars.median / direct.median))
    }

    private func record(_ name: String, _ result: (median: Double, spread: Double), bytes: Double, note: String) {
        recorder.record(Measurement(suite: "zip", name: name, seconds: result.median, spread: result.spread, runs: 3,
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

    /// Runs `command` with /bin/sh; its standard output, or nil when it failed.
    @discardableResult
    static func shell(_ command: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }
}
