import Foundation
import Testing

/// `export` on a terminal draws `exporting R of N rows · M MB · X MB/s` on standard error while
/// it writes, erased at the end; to a pipe or file standard error it draws nothing.
@Suite struct ExportProgressTests {
    static func environment(delayMilliseconds: Int) -> [String: String] {
        var environment = EndToEndFixture.cleanEnvironment
        environment["COLONNADE_PROGRESS_AFTER_MS"] = String(delayMilliseconds)
        return environment
    }

    @Test func onATerminalExportShowsRowsAndRateThenErasesTheLine() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("export-progress")
        let session = try PseudoTerminalSession(["export", "--snapshot", fx.snapshot, "--format", "csv", "-o", "out.csv"],
                                                environment: Self.environment(delayMilliseconds: 0), in: directory)
        #expect(try session.finish() == 0)
        let output = session.output
        let pattern = try Regex(#"\e\[Kexporting ([\d,]+) of 3,600 rows · \d+ MB · \d+ MB/s · \d+\.\d s"#)
        let counts = output.matches(of: pattern).map { Int(String($0.output[1].substring!).replacingOccurrences(of: ",", with: ""))! }
        #expect(!counts.isEmpty, "\(output.debugDescription)")
        #expect(counts == counts.sorted() && counts.allSatisfy { $0 <= fx.table.rowCount })
        let last = try #require(output.range(of: "exporting ", options: .backwards))
        let note = try #require(output.range(of: "note: wrote 3,600 of 3,600 rows to out.csv"))
        let erase = try #require(output[last.upperBound...].range(of: "\u{1B}[K"))
        #expect(erase.upperBound <= note.lowerBound)
        #expect(try String(contentsOf: directory.appendingPathComponent("out.csv"), encoding: .utf8).split(separator: "\n").count == 3_601)
    }

    @Test func offATerminalExportDrawsNothing() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("export-quiet")
        let run = try runBuiltColonnade(["export", "--snapshot", fx.snapshot, "--format", "ndjson", "-o", "out.ndjson"],
                                        environment: Self.environment(delayMilliseconds: 0), in: directory)
        #expect(run.status == 0)
        #expect(run.standardError == "note: wrote 3,600 of 3,600 rows to out.ndjson\n")
    }
}
