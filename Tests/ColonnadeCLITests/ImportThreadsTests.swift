import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import DataLinkFormat
import Foundation
import Testing

/// `import --threads N` (issue 13): the same snapshot bytes for any N, and a bad file among many
/// leaves the snapshot byte for byte as it was, with an error naming file:line:column.
@Suite struct ImportThreadsTests {
    static func writeInputs(_ scratch: Scratch) throws -> [String] {
        let table = QuoteGenerator(tickers: 16, days: 40, seed: 13).makeTable()
        let json = try QuoteGenerator.writeDatasetJSON(table, toDirectory: scratch.file("json"))
        try QuoteGenerator.writeDatatableCSV(QuoteGenerator(tickers: 4, days: 60, seed: 14).makeTable(), to: scratch.file("ALL.csv"))
        return json + [scratch.file("ALL.csv")]
    }

    @Test func everyThreadCountSavesTheSameSnapshotBytes() async throws {
        let scratch = try Scratch()
        let inputs = try Self.writeInputs(scratch)
        var saved: [Data] = []
        for threads in 1 ... 4 {
            let snapshot = scratch.file("t\(threads).snapshot")
            let run = await runOffPool(["import"] + inputs + ["--threads", "\(threads)", "--snapshot", snapshot], in: scratch)
            #expect(run.status == 0, "\(run.standardError)")
            // Not a terminal: no progress line.
            #expect(run.standardError.isEmpty, "\(run.standardError)")
            saved.append(try #require(scratch.bytes("t\(threads).snapshot")))
        }
        #expect(saved.allSatisfy { $0 == saved[0] })
    }

    @Test func aBadFileAmongManyLeavesTheSnapshotByteIdentical() async throws {
        let scratch = try Scratch()
        let inputs = try Self.writeInputs(scratch)
        let first = await runOffPool(["import", inputs[0], inputs[1], "--snapshot", scratch.snapshot], in: scratch)
        #expect(first.status == 0, "\(first.standardError)")
        let before = try #require(scratch.bytes("quotes.snapshot"))
        // Line 3 of the datatable CSV: its second field (the date) made invalid.
        var csv = try String(contentsOfFile: inputs.last!, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
        var fields = csv[2].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        fields[1] = "2001-13-01"
        csv[2] = fields.joined(separator: ",")
        try csv.joined(separator: "\n").write(toFile: inputs.last!, atomically: true, encoding: .utf8)
        let column = fields[0].utf8.count + 2
        for threads in 1 ... 4 {
            let run = await runOffPool(["import"] + inputs + ["--threads", "\(threads)", "--snapshot", scratch.snapshot], in: scratch)
            #expect(run.status == 1)
            #expect(run.standardError.contains("ALL.csv:3:\(column)"), "threads \(threads): \(run.standardError)")
            #expect(scratch.bytes("quotes.snapshot") == before, "threads \(threads)")
        }
    }

    /// `colonnade arguments` in process on this thread, and the parallel regions it started
    /// (`forEachChunk` with two or more workers: `ParallelRegions`).
    static func countedRun(_ arguments: [String], in scratch: Scratch, environment: [String: String]) -> (Invocation, regions: Int) {
        let output = MemoryOutputWriter()
        let errors = MemoryOutputWriter()
        let context = CommandContext(
            standardOutput: output, standardError: errors, environment: environment, currentDirectory: scratch.path)
        let (status, regions) = ParallelRegions.counted { runColonnade(arguments, context: context) }
        return (Invocation(status: status, standardOutput: output.text, standardError: errors.text), regions)
    }

    /// `--threads 1` means one thread for the whole import, the save included (the ordinary
    /// path: upsert into an existing snapshot, then `SnapshotWriter`; and the direct path's
    /// commit), counted, not timed: no parallel region is started. With 2 threads the same
    /// imports start some, so the count can fail.
    @Test(arguments: [false, true])
    func oneThreadMeansOneThreadForTheWholeImport(intoAnExistingSnapshot: Bool) throws {
        var regions: [Int: Int] = [:]
        for threads in [1, 2] {
            let scratch = try Scratch()
            let inputs = try Self.writeInputs(scratch)
            let environment = scratch.environment()
            if intoAnExistingSnapshot {
                let first = Self.countedRun(
                    ["import", inputs[0], "--snapshot", scratch.snapshot, "--threads", "1"], in: scratch,
                    environment: environment
                ).0
                #expect(first.status == 0, "\(first.standardError)")
            }
            let (run, n) = Self.countedRun(
                ["import"] + inputs + ["--threads", "\(threads)", "--snapshot", scratch.snapshot], in: scratch,
                environment: environment)
            #expect(run.status == 0, "\(run.standardError)")
            regions[threads] = n
        }
        #expect(regions[1] == 0, "--threads 1 started \(regions[1] ?? -1) parallel regions")
        #expect((regions[2] ?? 0) > 0, "--threads 2 started none: the count shows nothing")
    }
}
