import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `codecs` suite (issue 32): Colonnade's ZSTD and LZ4 decoders in process, one core, against
/// the reference tools' in-memory decompression benchmark (`zstd -b -d`, `lz4 -b -d`) on the
/// same frames, in the same run. The input is an 89 MB datatable CSV of generated quotes (what a
/// quote export holds), compressed once (untimed) by `zstd -3` and by `lz4` (frame format, its
/// default 4 MB independent blocks). MB/s of decompressed output; our output is checked equal to
/// the CSV. The tools report their fastest run (`-b` keeps the best of its loops), so beside our
/// median we record our fastest run too, and the like-for-like ratio is fastest to fastest.
/// Skipped when the tools are not installed.
struct CodecSuite {
    let recorder: Recorder
    let directory: String

    func run() throws {
        guard let zstd = Self.which("zstd"), let lz4 = Self.which("lz4") else {
            print("codecs suite skipped: zstd and lz4 are needed (apt-get install zstd lz4)")
            return
        }
        let dir = directory + "/colonnade-codecs-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let csv = dir + "/quotes.csv"
        // About 89 MB of CSV: 400 tickers × 2,000 days.
        try QuoteGenerator.writeDatatableCSV(QuoteGenerator(tickers: 400, days: 2_000, seed: 32).makeTable(), to: csv)
        try Shell.run("'\(zstd)' -q -3 -f '\(csv)' -o '\(csv).zst' && '\(lz4)' -q -f '\(csv)' '\(csv).lz4'")
        let plain = try Data(contentsOf: URL(fileURLWithPath: csv))
        let runs = 9
        for (codec, tool, file) in [("ZSTD", zstd, csv + ".zst"), ("LZ4", lz4, csv + ".lz4")] {
            let frame = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            let size = plain.count
            let output = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
            defer { output.deallocate() }
            var failure: String?
            var fastest = Double.infinity
            let ours = measure(runs: runs) {
                frame.withUnsafeBytes { input in
                    let start = DispatchTime.now().uptimeNanoseconds
                    do {
                        if codec == "ZSTD" {
                            sink(try Zstd.decompress(input, into: output))
                        } else {
                            sink(try LZ4.decompressFrame(input, into: output))
                        }
                    } catch {
                        failure = "\(error)"
                    }
                    fastest = min(fastest, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                }
            }
            if let failure { throw BenchError("codecs suite: our \(codec) decoder failed: \(failure)") }
            guard plain.withUnsafeBytes({ $0.elementsEqual(UnsafeRawBufferPointer(output)) }) else {
                throw BenchError("codecs suite: our \(codec) decoder's output differs from the CSV")
            }
            // The tool's own figure: `-b -d` decompresses the file in memory for about 3 s (-i3)
            // and prints MB/s (10^6 bytes) of output, on one thread.
            let report = try Shell.run("'\(tool)' -b -d -i3 '\(file)' 2>&1")
            let toolSpeed = Self.lastSpeed(in: report)
            let oursSpeed = Double(size) / ours.median / 1e6
            let toolName = (tool as NSString).lastPathComponent
            let megabytes = String(format: "%.0f", Double(size) / 1e6)
            if let toolSpeed {
                // The tool's own figure as a row of its own (seconds for the same bytes at its MB/s).
                recorder.record(
                    Measurement(
                        suite: "codecs", name: "\(codec) decode \(megabytes) MB CSV (\(toolName) -b -d, in memory)",
                        seconds: Double(size) / (toolSpeed * 1e6), spread: 0, runs: 1, items: Double(size), unit: "B",
                        bytes: Double(size), note: "the tool's figure, one thread, same frames: " + Self.lastLine(of: report)))
            } else {
                throw BenchError("codecs suite: no MB/s figure in \(toolName) -b -d's output: \(report.suffix(300))")
            }
            recorder.record(
                Measurement(
                    suite: "codecs", name: "\(codec) decode \(megabytes) MB CSV (Colonnade, in process, fastest run)",
                    seconds: fastest, spread: ours.spread, runs: runs + 1, items: Double(size), unit: "B", bytes: Double(size),
                    note: String(
                        format: "fastest of %d runs, as the tool reports its fastest: %.0f MB/s = %.2f× the tool", runs + 1,
                        Double(size) / fastest / 1e6, Double(size) / fastest / 1e6 / (toolSpeed ?? .nan))))
            recorder.record(
                Measurement(
                    suite: "codecs", name: "\(codec) decode \(megabytes) MB CSV (Colonnade, in process)",
                    seconds: ours.median, spread: ours.spread, runs: runs, items: Double(size), unit: "B",
                    bytes: Double(size),
                    note: toolSpeed.map {
                        String(
                            format: "%@ -b -d: %.0f MB/s; ours %.0f MB/s = %.2f×", toolName, $0, oursSpeed,
                            oursSpeed / $0)
                    }
                        ?? "tool figure not read: \(report.suffix(120))"))
        }
    }

    /// The tool's last progress line with a speed (it rewrites one line with carriage returns).
    static func lastLine(of text: String) -> String {
        let lines = text.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).map { $0.trimmingCharacters(in: .whitespaces) }
        return lines.last(where: { $0.contains("MB/s") }) ?? ""
    }

    /// The last "NNN.N MB/s" in a tool's benchmark output (its decompression speed).
    static func lastSpeed(in text: String) -> Double? {
        let words = text.replacingOccurrences(of: "\r", with: "\n").split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," })
        var last: Double?
        for (i, w) in words.enumerated() where w == "MB/s" && i > 0 {
            if let v = Double(words[i - 1]) { last = v }
        }
        return last
    }

    static func which(_ name: String) -> String? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
        return nil
    }
}
