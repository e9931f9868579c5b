import Foundation
import Colonnade
#if canImport(Glibc)
import Glibc
#endif

/// One measured figure.
struct Measurement: Codable {
    var suite: String
    var name: String
    /// Median seconds per run.
    var seconds: Double
    /// (max - min) / median over the runs.
    var spread: Double
    var runs: Int
    /// Items processed per run (rows, or bytes for decode/snapshot) and their unit.
    var items: Double
    var unit: String
    /// Bytes read per run, for GB/s (0 when not meaningful).
    var bytes: Double
    /// A free-form note (matched rows, ratio to baseline…).
    var note: String

    var perSecond: Double { items / seconds }
    var gigabytesPerSecond: Double { bytes / seconds / 1e9 }
}

/// Results kept alive so the optimizer cannot drop the measured work.
nonisolated(unsafe) var benchmarkSink: UInt64 = 0

@inline(never) func sink(_ x: Int) { benchmarkSink &+= UInt64(truncatingIfNeeded: x) }
@inline(never) func sink(_ x: Double) { benchmarkSink &+= x.bitPattern }
@inline(never) func sink(_ x: UInt64) { benchmarkSink &+= x }

/// Times `body`: one warm-up run, then `runs` timed runs; setup belongs outside `body`.
func measure(runs: Int, warmup: Int = 1, _ body: () throws -> Void) rethrows -> (median: Double, spread: Double) {
    try measure(runs: runs, warmup: warmup, prepare: {}, body)
}

/// `measure`, with `prepare` run untimed before every run (the warm-up too).
func measure(runs: Int, warmup: Int = 1, prepare: () throws -> Void, _ body: () throws -> Void) rethrows -> (median: Double, spread: Double)
{
    for _ in 0 ..< warmup {
        try prepare()
        try body()
    }
    var times = [Double]()
    for _ in 0 ..< runs {
        try prepare()
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    times.sort()
    let median = times.count % 2 == 1 ? times[times.count / 2] : (times[times.count / 2 - 1] + times[times.count / 2]) / 2
    return (median, median > 0 ? (times.last! - times.first!) / median : 0)
}

/// Times `body` from a cold page cache: before each run (not timed) `evict` drops the file's pages
/// and returns the fraction still resident; no warm-up run. Returns the largest such fraction too.
func measureCold(
    runs: Int, evict: () throws -> Double, _ body: () throws -> Void
) rethrows
    -> (median: Double, spread: Double, resident: Double)
{
    var resident = 0.0
    var times = [Double]()
    for _ in 0 ..< runs {
        resident = max(resident, try evict())
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    times.sort()
    let median = times.count % 2 == 1 ? times[times.count / 2] : (times[times.count / 2 - 1] + times[times.count / 2]) / 2
    return (median, median > 0 ? (times.last! - times.first!) / median : 0, resident)
}

/// The page cache's view of one file.
enum PageCache {
    /// Writes back and drops the file's cached pages (`fsync`, then
    /// `posix_fadvise(POSIX_FADV_DONTNEED)`); returns the fraction of its pages still resident.
    static func evict(_ path: String) throws -> Double {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw BenchError("open \(path): errno \(errno)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw BenchError("fsync \(path): errno \(errno)") }
        let rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        guard rc == 0 else { throw BenchError("posix_fadvise \(path): error \(rc)") }
        return try residentFraction(path)
    }

    /// The fraction of the file's pages in the page cache now (`mincore` on a fresh mapping).
    static func residentFraction(_ path: String) throws -> Double {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw BenchError("open \(path): errno \(errno)") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size > 0 else { return 0 }
        let size = Int(st.st_size)
        guard let p = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), p != MAP_FAILED else {
            throw BenchError("mmap \(path): errno \(errno)")
        }
        defer { munmap(p, size) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let pages = (size + page - 1) / page
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(p, size, &vector) == 0 else { throw BenchError("mincore \(path): errno \(errno)") }
        return Double(vector.reduce(0) { $0 + Int($1 & 1) }) / Double(pages)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// The commands a benchmark times or prepares with: run by bash (`-o pipefail`: a failing first
/// command of a pipe fails it), exit status checked every time. A failure throws, naming the
/// command with its exit status and its standard error, and so aborts the suite: no time is
/// recorded from a failed run.
enum Shell {
    /// Runs `command`; its standard output.
    /// - Throws: `BenchError` when it cannot start or exits with a status other than 0.
    @discardableResult
    static func run(_ command: String) throws -> String {
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-bench-stderr-\(getpid())").path
        guard FileManager.default.createFile(atPath: errors, contents: nil), let errorHandle = FileHandle(forWritingAtPath: errors) else {
            throw BenchError("cannot create \(errors)")
        }
        defer { try? FileManager.default.removeItem(atPath: errors) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-o", "pipefail", "-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = errorHandle
        do { try process.run() } catch { throw BenchError("cannot run /bin/bash for: \(command): \(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? errorHandle.close()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            let how =
                process.terminationReason == .exit ? "exit status \(process.terminationStatus)" : "signal \(process.terminationStatus)"
            throw BenchError("a benchmark command failed (\(how)): \(command)\n\(stderr.suffix(4000))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Whether `tool` is an executable on PATH (or an absolute path to one).
    static func has(_ tool: String) -> Bool {
        if tool.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: tool) }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }

    /// Runs `command` once (untimed) with its standard output counted by `wc -c`; throws unless
    /// it wrote exactly `bytes` bytes.
    static func checkOutputSize(_ command: String, is bytes: Int) throws {
        let counted = try run("\(command) | wc -c").trimmingCharacters(in: .whitespacesAndNewlines)
        guard Int(counted) == bytes else {
            throw BenchError("\(command) wrote \(counted) bytes, not the \(bytes) expected")
        }
    }
}

/// A figure that could not be measured (a missing tool): recorded with an infinite time and the
/// reason as its note, so that the report says "not measured", never a time or a verdict.
func notMeasured(_ suite: String, _ name: String, _ reason: String) -> Measurement {
    Measurement(
        suite: suite, name: name, seconds: .infinity, spread: 0, runs: 0, items: 0, unit: "B", bytes: 0,
        note: "not measured: " + reason)
}

/// Peak resident memory of this process so far (VmHWM), in bytes.
func peakResidentBytes() -> Int { statusKilobytes("VmHWM:") * 1024 }

/// Resident memory now (VmRSS), in bytes.
func currentResidentBytes() -> Int { statusKilobytes("VmRSS:") * 1024 }

/// A `kB` field of /proc/self/status, or 0.
private func statusKilobytes(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field) {
        return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
    }
    return 0
}

/// Resets the peak-memory mark (Linux: write 5 to /proc/self/clear_refs), so each suite reports its own peak.
func resetPeakResident() {
    if let h = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
        h.write(Data("5".utf8))
        try? h.close()
    }
}

/// Facts about the machine and build, stored with the results.
struct MachineInfo: Codable {
    var cpuModel: String
    var cores: Int
    var commit: String
    var date: String
    var swiftVersion: String
    var size: String
    var threads: Int
    /// The 1-minute load average when the run started and ended (`/proc/loadavg`): how shared the
    /// machine was. Optional so that reports from before they were recorded still decode.
    var loadAverageStart: Double?
    var loadAverageEnd: Double?
    /// The last-level (L3) cache, in bytes, from /sys (nil when the system does not say): a
    /// figure read from less than 4× this much memory is cache-resident, not a memory roof.
    var l3CacheBytes: Int?

    /// The L3 cache size /sys reports for cpu0 (`32768K`), in bytes.
    static func l3Cache() -> Int? {
        guard let text = try? String(contentsOfFile: "/sys/devices/system/cpu/cpu0/cache/index3/size", encoding: .utf8) else { return nil }
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let scale = t.hasSuffix("K") ? 1 << 10 : t.hasSuffix("M") ? 1 << 20 : 1
        return Int(t.trimmingCharacters(in: CharacterSet(charactersIn: "KM"))).map { $0 * scale }
    }

    /// The 1-minute load average now, if the system reports it.
    static func loadAverage() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
            let first = text.split(separator: " ").first
        else { return nil }
        return Double(first)
    }

    static func current(size: String, threads: Int) -> MachineInfo {
        var model = "unknown"
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let colon = line.firstIndex(of: ":")
        {
            model = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return MachineInfo(
            cpuModel: model, cores: QueryOptions.availableCores, commit: gitCommit(),
            date: ISO8601DateFormatter().string(from: Date()), swiftVersion: swiftVersion(),
            size: size, threads: threads, loadAverageStart: loadAverage(), loadAverageEnd: nil, l3CacheBytes: l3Cache())
    }

    private static func gitCommit() -> String {
        if let c = ProcessInfo.processInfo.environment["COLONNADE_COMMIT"] { return c }
        return run(["git", "rev-parse", "--short=12", "HEAD"]) ?? "unknown"
    }

    private static func swiftVersion() -> String {
        #if swift(>=6.3)
        return "6.3+"
        #else
        return "<6.3"
        #endif
    }

    static func run(_ args: [String]) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The whole report written with --json.
struct Report: Codable {
    var machine: MachineInfo
    var results: [Measurement]
    var peakMemory: [String: Int]
}

/// Formats numbers for the table.
enum Format {
    static func rate(_ x: Double, _ unit: String) -> String {
        if unit == "B" { return String(format: "%.0f MB/s", x / 1e6) }
        if x >= 1e9 { return String(format: "%.2f G%@/s", x / 1e9, unit) }
        if x >= 1e6 { return String(format: "%.1f M%@/s", x / 1e6, unit) }
        if x >= 1e3 { return String(format: "%.1f k%@/s", x / 1e3, unit) }
        return String(format: "%.1f %@/s", x, unit)
    }

    static func time(_ s: Double) -> String {
        if s >= 1 { return String(format: "%.2f s", s) }
        if s >= 1e-3 { return String(format: "%.2f ms", s * 1e3) }
        return String(format: "%.1f µs", s * 1e6)
    }

    static func bytes(_ b: Int) -> String { String(format: "%.1f MiB", Double(b) / 1_048_576) }

    static func pad(_ s: String, _ w: Int, right: Bool = false) -> String {
        let n = s.count
        if n >= w { return s }
        return right ? String(repeating: " ", count: w - n) + s : s + String(repeating: " ", count: w - n)
    }
}

/// Collects measurements and prints them as they come.
final class Recorder {
    var results: [Measurement] = []
    var peaks: [String: Int] = [:]
    private var printedHeader = false

    func record(_ m: Measurement) {
        results.append(m)
        if !printedHeader {
            print(
                Format.pad("suite", 9) + Format.pad("benchmark", 58) + Format.pad("median", 11, right: true)
                    + Format.pad("spread", 8, right: true) + Format.pad("throughput", 17, right: true)
                    + Format.pad("GB/s", 7, right: true) + "  note")
            printedHeader = true
        }
        print(
            Format.pad(m.suite, 9) + Format.pad(m.name, 58) + Format.pad(Format.time(m.seconds), 11, right: true)
                + Format.pad(String(format: "%.0f%%", m.spread * 100), 8, right: true)
                + Format.pad(m.items > 0 ? Format.rate(m.perSecond, m.unit) : "—", 17, right: true)
                + Format.pad(m.bytes > 0 ? String(format: "%.1f", m.gigabytesPerSecond) : "", 7, right: true)
                + "  " + m.note)
        fflush(nil)
    }
}
