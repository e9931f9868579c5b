import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `interop-read` suite (issue 32): the bench table as Polars (Parquet, zstd: its default),
/// pandas (Feather, LZ4 frames: its default) and DuckDB (Parquet, Snappy: its default) write it,
/// decoded in process into a table (no save) by Colonnade, beside Polars `read_parquet`/`read_ipc`
/// and DuckDB `read_parquet` of the same files at the same thread count, in the same run
/// (Benchmarks/peers/interop_read.py writes the files and times the peers); and the end-to-end
/// `colonnade import` of each, which includes the durable save (fsync) of the snapshot.
///
/// Every reader runs at one thread and at the machine's thread count (`POLARS_MAX_THREADS`,
/// DuckDB `SET threads`, Colonnade's `threads:`), and each Colonnade row is compared with the
/// peers at its own thread count. Skipped when the peers' Python (`$COLONNADE_PEERS_PYTHON`, else
/// Benchmarks/peers/.venv/bin/python) is not there.
///
/// `COLONNADE_INTEROP_READ_FILES=a.parquet:b.feather` times only Colonnade's decode of those
/// files at each thread count (no peers, nothing recorded): for profiling the readers.
struct InteropReadSuite {
    let table: QuoteTable
    let recorder: Recorder
    let label: String
    let directory: String

    struct PeerReport: Decodable {
        struct Peer: Decodable {
            var reader: String
            var file: String
            var seconds: Double
            var spread: Double
            var runs: Int
        }
        var files: [String: Int]
        var rows: Int
        var threads: Int
        var peers: [Peer]
        var loadavg_start: [Double]
        var loadavg: [Double]
        var versions: [String: String]
        var feather_writer: String
    }

    func run() throws {
        let env = ProcessInfo.processInfo.environment
        if let files = env["COLONNADE_INTEROP_READ_FILES"] {
            for path in files.split(separator: ":").map(String.init) {
                for threads in Set([1, QueryOptions.availableCores]).sorted() {
                    // CPU seconds (user and system, all threads) of each run too: on a loaded
                    // machine a one-thread decode's CPU time is steadier than its wall time.
                    var cpu: [Double] = []
                    let ours = try measure(runs: 5) {
                        let before = processCPUSeconds()
                        sink(try InteropReader.read(path: path, threads: threads).rowCount)
                        cpu.append(processCPUSeconds() - before)
                    }
                    let counted = cpu.suffix(5).sorted()
                    print(
                        String(
                            format: "%@ t=%d: median %.3f s, spread %.0f %%; CPU median %.3f s (min %.3f s)", path, threads, ours.median,
                            ours.spread * 100, counted[counted.count / 2], counted[0]))
                }
            }
            return
        }
        let python = env["COLONNADE_PEERS_PYTHON"] ?? FileManager.default.currentDirectoryPath + "/Benchmarks/peers/.venv/bin/python"
        let script = FileManager.default.currentDirectoryPath + "/Benchmarks/peers/interop_read.py"
        guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: script) else {
            print("interop-read suite skipped: no peers' Python at \(python) (set COLONNADE_PEERS_PYTHON) or no \(script)")
            return
        }
        let dir = directory + "/colonnade-interop-read-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = dir + "/source.parquet"
        try ParquetWriter(table: table).write(toFile: source, durable: false)
        let runs = table.rowCount > 5_000_000 ? 3 : 5
        var reports: [Int: PeerReport] = [:]
        for (index, threads) in Set([1, QueryOptions.availableCores]).sorted().enumerated() {
            let json = dir + "/peers-t\(threads).json"
            // The first run writes the three files; the next ones time those same bytes.
            try Shell.run(
                "'\(python)' '\(script)' --source '\(source)' --workdir '\(dir)' --threads \(threads) --repeat \(runs)"
                    + (index > 0 ? " --reuse" : "") + " --json '\(json)' > /dev/null"
            )
            reports[threads] = try JSONDecoder().decode(PeerReport.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        }
        guard let one = reports[1] else { return }
        print(
            "interop-read: files written by Polars \(one.versions["polars"] ?? "?"), \(one.feather_writer), DuckDB \(one.versions["duckdb"] ?? "?")"
        )
        let colonnade = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("colonnade").path
        for (file, bytes) in one.files.sorted(by: { $0.key > $1.key }) {
            let path = dir + "/" + file
            let b = Double(bytes)
            for (threads, report) in reports.sorted(by: { $0.key < $1.key }) {
                let start = currentLoadAverage()
                let ours = try measure(runs: runs) {
                    let t = try InteropReader.read(path: path, threads: threads)
                    guard t.rowCount == one.rows else {
                        throw BenchError("interop-read: Colonnade read \(t.rowCount) rows of \(file), the source has \(one.rows)")
                    }
                    sink(t.rowCount)
                }
                let end = currentLoadAverage()
                var notes: [String] = []
                for p in report.peers where p.file == file {
                    let name = "\(p.reader) \(file) \(label) t=\(threads)"
                    recorder.record(
                        Measurement(
                            suite: "interop-read", name: name, seconds: p.seconds, spread: p.spread, runs: p.runs,
                            items: b, unit: "B", bytes: b,
                            note: String(
                                format: "peer, in process (perf_counter around the read), same files, same run; load average %.2f → %.2f",
                                report.loadavg_start.first ?? .nan, report.loadavg.first ?? .nan)))
                    notes.append(String(format: "%@ t=%d %.2f×", p.reader, threads, p.seconds / ours.median))
                }
                recorder.record(
                    Measurement(
                        suite: "interop-read", name: "Colonnade decode \(file) → table \(label) t=\(threads)", seconds: ours.median,
                        spread: ours.spread, runs: runs, items: b, unit: "B", bytes: b,
                        note: String(format: "in process, no save; load average %.2f → %.2f; peer time / ours: ", start, end)
                            + notes.joined(separator: ", ")))
            }
            if FileManager.default.isExecutableFile(atPath: colonnade) {
                let snapshot = dir + "/q.snapshot"
                var failure: Error?
                let e2e = measure(runs: runs, prepare: { unlink(snapshot) }) {
                    do { sink(try Shell.run("'\(colonnade)' import '\(path)' --snapshot '\(snapshot)' > /dev/null").count) } catch {
                        failure = error
                    }
                }
                unlink(snapshot)
                if let failure { throw failure }
                recorder.record(
                    Measurement(
                        suite: "interop-read", name: "colonnade import \(file) → snapshot \(label) (end to end)",
                        seconds: e2e.median, spread: e2e.spread, runs: runs, items: b, unit: "B", bytes: b,
                        note: "includes process start and the durable save (fsync)"))
            }
        }
    }
}

/// User and system CPU seconds of this process so far (every thread), from `getrusage`.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The 1-minute load average now (`/proc/loadavg`), NaN where there is none.
func currentLoadAverage() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8), let first = text.split(separator: " ").first else {
        return .nan
    }
    return Double(first) ?? .nan
}
