import Foundation
import Colonnade

// colonnade-bench [--suite scan,screens,indicators,decode,snapshot,interop,zip,import,cli,firsttouch,all] [--size small|medium|large] [--threads N] [--json FILE] [--compare FILE] [--svg DIR]
// colonnade-bench --from-json FILE[,FILE…] --svg DIR    (charts from saved reports, nothing measured)

/// Why these numbers would not be honest, or nil.
func refusalReason() -> String? {
    #if DEBUG
    return "a debug build; run `swift run -c release colonnade-bench`"
    #elseif COLONNADE_INTERNAL_CHECKS
    return "a build with COLONNADE_INTERNAL_CHECKS on"
    #else
    return nil
    #endif
}
// Charts from saved reports (--from-json) measure nothing, so any build may draw them.
if let why = refusalReason(), !CommandLine.arguments.contains("--from-json") {
    FileHandle.standardError.write(Data("colonnade-bench: refusing to report numbers from \(why)\n".utf8))
    exit(2)
}

struct Options {
    var suites: Set<String> = ["scan", "screens", "decode", "snapshot"]
    var size = "large"
    var threads = QueryOptions.availableCores
    var json: String?
    var compare: String?
    var svg: String?
    var fromJSON: [String] = []
}

func usage(_ message: String) -> Never {
    FileHandle.standardError.write(
        Data(
            """
            error: \(message)
            usage: colonnade-bench [--suite scan,screens,indicators,exact-windows,crossticker,decode,snapshot,interop,zip,import,import-update,cli,firsttouch,interop-read,codecs,lakehouse,adjustments,all] [--size small|medium|large] [--threads N] [--json FILE] [--compare FILE] [--svg DIR]
                   colonnade-bench --from-json FILE[,FILE...] --svg DIR

            """.utf8))
    exit(2)
}

var options = Options()
var args = Array(CommandLine.arguments.dropFirst())
while !args.isEmpty {
    let a = args.removeFirst()
    func value() -> String {
        guard !args.isEmpty else { usage("\(a) needs a value") }
        return args.removeFirst()
    }
    switch a {
    case "--suite":
        let list = value().split(separator: ",").map(String.init)
        var s = Set<String>()
        for item in list {
            switch item {
            case "all":
                s.formUnion(["scan", "screens", "crossticker", "decode", "snapshot", "interop", "zip", "import", "cli", "firsttouch"])
            case "scan", "screens", "indicators", "exact-windows", "crossticker", "decode", "snapshot", "interop", "zip", "import",
                "import-update", "cli", "firsttouch", "interop-read", "codecs", "lakehouse", "adjustments":
                s.insert(item)
            default:
                usage(
                    "unknown suite '\(item)' (scan, screens, indicators, exact-windows, crossticker, decode, snapshot, interop, zip, import, import-update, cli, firsttouch, interop-read, codecs, lakehouse, adjustments, all)"
                )
            }
        }
        options.suites = s
    case "--size":
        options.size = value()
        guard ["small", "medium", "large"].contains(options.size) else { usage("unknown size '\(options.size)' (small, medium, large)") }
    case "--threads":
        guard let n = Int(value()), n >= 1 else { usage("--threads needs a positive integer") }
        options.threads = n
    case "--json": options.json = value()
    case "--compare": options.compare = value()
    case "--svg": options.svg = value()
    case "--from-json": options.fromJSON = value().split(separator: ",").map(String.init)
    case "-h", "--help": usage("help requested")
    default: usage("unknown option '\(a)'")
    }
}

/// Reads a saved `--json` report.
func loadReport(_ path: String) throws -> Report {
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    return try decoder.decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
}

if !options.fromJSON.isEmpty {
    // Charts from saved reports (their results merged, the first one's machine), nothing measured.
    guard let directory = options.svg else { usage("--from-json needs --svg DIR") }
    do {
        let reports = try options.fromJSON.map(loadReport)
        var merged = reports[0]
        for other in reports.dropFirst() {
            let names = Set(other.results.map { $0.suite + "/" + $0.name })
            merged.results = other.results + merged.results.filter { !names.contains($0.suite + "/" + $0.name) }
        }
        // Say every commit the figures come from (later files win for the same benchmark).
        var commits: [String] = []
        for report in reports.reversed() where !commits.contains(report.machine.commit) { commits.append(report.machine.commit) }
        merged.machine.commit = commits.joined(separator: " and ")
        for path in try BenchmarkCharts.write(merged, to: directory) { print("wrote \(path)") }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        exit(1)
    }
}

let sizes = ["small": (100, 2_520), "medium": (1_000, 5_000), "large": (2_000, 10_000)]
let (tickerCount, dayCount) = sizes[options.size]!
let label = "\(tickerCount * dayCount / 1_000_000 > 0 ? "\(tickerCount * dayCount / 1_000_000)M" : "\(tickerCount * dayCount / 1000)k")"
let recorder = Recorder()
var machine = MachineInfo.current(size: options.size, threads: options.threads)
print(
    "colonnade-bench \(Colonnade.version) — \(machine.cpuModel), \(machine.cores) cores, commit \(machine.commit), size \(options.size) (\(tickerCount) tickers × \(dayCount) days), threads \(options.threads)"
)

/// Runs one suite; a failure (a benchmark command that failed, a wrong answer) ends the run with
/// its error and exit status 1, so no figure of a failed run is reported.
@MainActor func suite(_ name: String, _ body: () throws -> Void) {
    guard options.suites.contains(name) else { return }
    do {
        try body()
    } catch {
        FileHandle.standardError.write(Data("colonnade-bench: the \(name) suite failed: \(error)\n".utf8))
        exit(1)
    }
}

suite("scan") {
    resetPeakResident()
    let table = benchTable()
    try ScanSuite(table: table, threads: options.threads, recorder: recorder, label: label).run()
    recorder.peaks["scan"] = peakResidentBytes()
    print("peak memory (scan): \(Format.bytes(recorder.peaks["scan"]!))")
}

suite("screens") {
    resetPeakResident()
    let table = benchTable()
    try ScreenSuite(table: table, threads: options.threads, recorder: recorder, label: label).run()
    recorder.peaks["screens"] = peakResidentBytes()
    print("peak memory (screens): \(Format.bytes(recorder.peaks["screens"]!))")
}

suite("indicators") {
    // Issue 30: I1–I4 and S3 with exact windows (Benchmarks/peers/indicators.py times the peers).
    resetPeakResident()
    let table = benchTable()
    try IndicatorSuite(table: table, threads: options.threads, recorder: recorder, label: label).run()
    recorder.peaks["indicators"] = peakResidentBytes()
    print("peak memory (indicators): \(Format.bytes(recorder.peaks["indicators"]!))")
}

suite("exact-windows") {
    // Only the indicators suite's first part: S3 with exact windows against the floating-point path.
    try IndicatorSuite(table: benchTable(), threads: options.threads, recorder: recorder, label: label).exactWindowCost()
}

if options.suites.contains("crossticker") {
    resetPeakResident()
    let table = benchTable()
    try CrossTickerSuite(table: table, threads: options.threads, recorder: recorder, label: label).run()
    recorder.peaks["crossticker"] = peakResidentBytes()
    print("peak memory (crossticker): \(Format.bytes(recorder.peaks["crossticker"]!))")
}

/// The table for the snapshot (and decode) suites, generated once.
nonisolated(unsafe) var sharedTable: QuoteTable?
func benchTable() -> QuoteTable {
    if let t = sharedTable { return t }
    let start = Date()
    let t = QuoteGenerator(tickers: tickerCount, days: dayCount, seed: 42).makeTable()
    print(String(format: "generated %d rows in %.1f s (setup, not timed)", t.rowCount, Date().timeIntervalSince(start)))
    sharedTable = t
    return t
}

let workDirectory = ProcessInfo.processInfo.environment["COLONNADE_BENCH_DIR"] ?? FileManager.default.temporaryDirectory.path

suite("decode") {
    resetPeakResident()
    let before = currentResidentBytes()
    try DecodeSuite(table: benchTable(), recorder: recorder, label: label).run()
    recorder.peaks["decode"] = peakResidentBytes()
    print("peak memory (decode): \(Format.bytes(recorder.peaks["decode"]!)) (the generated table alone: \(Format.bytes(before)))")
}

suite("snapshot") {
    resetPeakResident()
    try SnapshotSuite(table: benchTable(), recorder: recorder, label: label, directory: workDirectory).run()
    recorder.peaks["snapshot"] = peakResidentBytes()
    print("peak memory (snapshot): \(Format.bytes(recorder.peaks["snapshot"]!))")
}

suite("interop") {
    resetPeakResident()
    try InteropSuite(table: benchTable(), recorder: recorder, label: label, directory: workDirectory).run()
    recorder.peaks["interop"] = peakResidentBytes()
    print("peak memory (interop): \(Format.bytes(recorder.peaks["interop"]!))")
}

suite("zip") {
    resetPeakResident()
    try ZipSuite(table: benchTable(), recorder: recorder, label: label, directory: workDirectory).run()
    recorder.peaks["zip"] = peakResidentBytes()
    print("peak memory (zip): \(Format.bytes(recorder.peaks["zip"]!))")
}

suite("import") {
    resetPeakResident()
    try ImportSuite(table: benchTable(), recorder: recorder, label: label, directory: workDirectory).run()
    recorder.peaks["import"] = peakResidentBytes()
    print("peak memory (import, this process): \(Format.bytes(recorder.peaks["import"]!))")
}

// Only the import suite's update row (one day for every ticker into the saved snapshot, beside a
// plain save): no JSON or CSV inputs written, so it runs at large size in a few minutes.
if !options.suites.contains("import") {
    suite("import-update") {
        try ImportSuite(table: benchTable(), recorder: recorder, label: label, directory: workDirectory).runUpdateOnly()
    }
}

suite("cli") {
    resetPeakResident()
    try CLISuite(table: benchTable(), threads: options.threads, recorder: recorder, label: label, directory: workDirectory).run()
    recorder.peaks["cli"] = peakResidentBytes()
}

suite("interop-read") {
    try InteropReadSuite(table: benchTable(), recorder: recorder, label: label, directory: workDirectory).run()
}

suite("lakehouse") {
    // Issue 35: zstd Parquet and Delta export, one-day Delta append (Benchmarks/peers/lakehouse.py times the peers).
    try LakehouseSuite(table: benchTable(), recorder: recorder, label: label, directory: workDirectory).run()
}

suite("adjustments") {
    // Issue 33: verify --adjustments, adjust and an update's restatement (Benchmarks/suites/70-adjustments.sh).
    try AdjustmentSuite(table: benchTable(), recorder: recorder, label: label, directory: workDirectory).run()
}

suite("codecs") {
    try CodecSuite(recorder: recorder, directory: workDirectory).run()
}

// Last: it maps and frees 1 GiB, which a suite after it would find faster to refill.
suite("firsttouch") {
    try FirstTouchSuite(recorder: recorder).run()
}

machine.loadAverageEnd = MachineInfo.loadAverage()
print(String(format: "load average (1 min) at start / end: %.1f / %.1f", machine.loadAverageStart ?? .nan, machine.loadAverageEnd ?? .nan))
if let path = options.json {
    let report = Report(machine: machine, results: recorder.results, peakMemory: recorder.peaks)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    print("wrote \(path)")
}

if let directory = options.svg {
    let report = Report(machine: machine, results: recorder.results, peakMemory: recorder.peaks)
    for path in try BenchmarkCharts.write(report, to: directory) { print("wrote \(path)") }
}

if let path = options.compare {
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    do {
        let old = try decoder.decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        print("\ncompared with \(path) (commit \(old.machine.commit), \(old.machine.date)); ratio > 1 means faster now")
        let previous = Dictionary(old.results.map { ($0.suite + "/" + $0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for m in recorder.results {
            guard let p = previous[m.suite + "/" + m.name], p.seconds.isFinite, m.seconds.isFinite, m.seconds > 0 else { continue }
            print(Format.pad(m.suite, 9) + Format.pad(m.name, 58) + String(format: "%8.2f×", p.seconds / m.seconds))
        }
    } catch {
        FileHandle.standardError.write(Data("error: cannot read --compare file \(path): \(error)\n".utf8))
        exit(1)
    }
}
print("sink \(benchmarkSink & 0xF)")
