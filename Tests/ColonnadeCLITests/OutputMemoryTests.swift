import Colonnade
import Foundation
import Testing

/// Output streams: rows go out as they are produced, so the memory of the process writing them
/// does not grow with the answer. Measured as `RssAnon` (`/proc/PID/status`: anonymous memory,
/// not the snapshot's mapped pages), sampled after every megabyte the test reads from the pipe,
/// while the process is still writing. Counts bytes and kilobytes, never seconds.
@Suite(.serialized) struct OutputMemoryTests {
    /// Snapshots of 0.25 M and 2.5 M rows (25 and 250 tickers × 10,000 days), written once.
    static let snapshots: Result<(small: String, large: String), any Error> = Result {
        let directory = try EndToEndFixture.scratchDirectory("memory")
        let small = directory.appendingPathComponent("small.snapshot").path
        let large = directory.appendingPathComponent("large.snapshot").path
        try QuoteGenerator(tickers: 25, days: 10_000, seed: 5).makeTable().save(to: small, durable: false)
        try QuoteGenerator(tickers: 250, days: 10_000, seed: 5).makeTable().save(to: large, durable: false)
        return (small, large)
    }

    /// `RssAnon` of `pid` in kB, `nil` once the process is gone.
    static func anonymousKilobytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") })
        else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    /// Runs `colonnade arguments` with standard output a pipe the test reads to the end; returns
    /// the lines written and the largest `RssAnon` seen (kB).
    static func run(_ arguments: [String]) throws -> (lines: Int, peakKilobytes: Int) {
        let process = Process()
        process.executableURL = try BuiltExecutable.url()
        process.arguments = arguments
        process.environment = EndToEndFixture.cleanEnvironment
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        try? output.fileHandleForWriting.close()
        let pid = process.processIdentifier
        var peak = 0, lines = 0, sinceSample = 0
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            lines += chunk.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
            sinceSample += chunk.count
            if sinceSample >= 1 << 20 {
                sinceSample = 0
                if let kb = anonymousKilobytes(pid) { peak = max(peak, kb) }
            }
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(arguments)")
        return (lines, peak)
    }

    @Test func csvOfMillionsOfRowsToAPipeKeepsMemoryFlat() throws {
        let (small, large) = try Self.snapshots.get()
        let arguments = ["filter", "--format", "csv", "--columns", "date,close"]
        let smallRun = try Self.run(arguments + ["--snapshot", small])
        let largeRun = try Self.run(arguments + ["--snapshot", large])
        #expect(smallRun.lines == 250_001 && largeRun.lines == 2_500_001)
        #expect(largeRun.peakKilobytes > 0, "sampled while it ran")
        #expect(largeRun.peakKilobytes < 64 << 10, "RssAnon \(largeRun.peakKilobytes) kB")
        // Ten times the rows, no more memory (4 MB for the allocator's slack).
        #expect(
            largeRun.peakKilobytes <= smallRun.peakKilobytes + 4 << 10,
            "0.25 M rows: \(smallRun.peakKilobytes) kB, 2.5 M rows: \(largeRun.peakKilobytes) kB")
    }

    @Test func aTableToAPipeStreamsToo() throws {
        // The table format measures its first rows, then writes each row as it comes.
        let (_, large) = try Self.snapshots.get()
        let run = try Self.run(["filter", "--snapshot", large, "--columns", "date"])
        #expect(run.lines == 2 + 2_500_000)
        #expect(run.peakKilobytes > 0 && run.peakKilobytes < 64 << 10, "RssAnon \(run.peakKilobytes) kB")
    }
}
