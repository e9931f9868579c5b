import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `cli` suite: the path a user runs. The generated table is saved as a snapshot (untimed),
/// then every scan query (Q1–Q4) and screen (S1–S4, and S1L–S4L: as of each ticker's last row,
/// `--on latest`) goes through `colonnade filter --where EXPR --count --timing` on it, at 1 and
/// all threads, zone maps as the CLI has them (on). Two figures per query: the whole process,
/// from its start to the answer printed (each run a fresh process: the snapshot mapped, checked
/// and queried), and the query alone as the CLI itself times it (`--timing`'s `query_ms`, the
/// median of its `--repeat` runs after a warm-up, parsing and loading excluded). Every run's
/// exit status is checked, and its count must be the in-memory engine's.
struct CLISuite {
    let table: QuoteTable
    let threads: Int
    let recorder: Recorder
    let label: String
    let directory: String

    static var queries: [(String, String, Bool)] {
        ScanSuite.queries.map { ($0.0, $0.1, false) }
            + ScreenSuite.screens.map { (String($0.0.prefix(2)), $0.1, false) }
            + ScreenSuite.screens.map { (String($0.0.prefix(2)) + "L", $0.1, true) }
    }

    func run() throws {
        let colonnade = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("colonnade").path
        guard FileManager.default.isExecutableFile(atPath: colonnade) else {
            throw BenchError("\(colonnade) not built (swift build -c release --product colonnade)")
        }
        let dir = directory + "/colonnade-cli-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let snapshot = dir + "/q.snapshot"
        var saved = table
        saved.computeSummaries()
        try saved.save(to: snapshot, durable: false)
        let runs = table.rowCount > 5_000_000 ? 5 : 9
        let repeats = 9
        let rows = Double(table.rowCount)
        // What every process pays before it reads the snapshot: the same binary doing nothing.
        let start = try measure(runs: runs) { try Shell.run("'\(colonnade)' --version > /dev/null") }
        recorder.record(
            Measurement(
                suite: "cli", name: "start-up: colonnade --version", seconds: start.median, spread: start.spread,
                runs: runs, items: 0, unit: "rows", bytes: 0, note: "the fixed cost of any colonnade process"))
        for (name, text, latest) in Self.queries {
            let expected =
                try latest
                ? table.select(QueryParser(table: table).parse(text), on: .latest).count
                : table.select(QueryParser(table: table).parse(text)).count
            for t in Set([1, threads]).sorted() {
                let command =
                    "'\(colonnade)' filter --snapshot '\(snapshot)' --where '\(text)' --count --threads \(t)"
                    + (latest ? " --on latest" : "")
                // The whole process, fresh each run (the page cache holds the snapshot: warm).
                var counted = ""
                let process = try measure(runs: runs) { counted = try Shell.run(command) }
                guard Int(counted.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: ",", with: "")) == expected
                else {
                    throw BenchError(
                        "\(command) answered \(counted.trimmingCharacters(in: .whitespacesAndNewlines)), the engine \(expected)")
                }
                // The query alone, as the CLI times it.
                let timingFile = dir + "/timing.json"
                try Shell.run(command + " --timing --repeat \(repeats) 2> '\(timingFile)' > /dev/null")
                let timing = try Self.timing(timingFile)
                guard timing.matched == expected else {
                    throw BenchError("\(command) --timing matched \(timing.matched), the engine \(expected)")
                }
                let what = latest ? "--on latest" : "whole table"
                // As of the latest day the work is per ticker (its last rows), not per row of the table.
                let items = latest ? Double(table.tickers.count) : rows, unit = latest ? "tickers" : "rows"
                recorder.record(
                    Measurement(
                        suite: "cli", name: "\(name) \(label) t=\(t) process start to answer (\(what))",
                        seconds: process.median, spread: process.spread, runs: runs, items: items, unit: unit,
                        bytes: 0, note: "count \(expected); a fresh process per run"))
                recorder.record(
                    Measurement(
                        suite: "cli", name: "\(name) \(label) t=\(t) query_ms (\(what))",
                        seconds: timing.queryMs / 1e3, spread: 0, runs: repeats, items: items, unit: unit,
                        bytes: 0, note: String(format: "--timing's median of %d; load_ms %.3f", repeats, timing.loadMs)))
            }
        }
    }

    /// `--timing`'s JSON line from `path`.
    static func timing(_ path: String) throws -> (queryMs: Double, loadMs: Double, matched: Int) {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let query = object["query_ms"] as? Double, let load = object["load_ms"] as? Double,
            let matched = object["matched"] as? Int
        else {
            throw BenchError("no --timing line in: \(text)")
        }
        return (query, load, matched)
    }
}
