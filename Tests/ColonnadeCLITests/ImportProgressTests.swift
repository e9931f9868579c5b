@testable import ColonnadeCLI
import Foundation
import Testing

/// `colonnade import`'s progress line: on a terminal, an import that runs past the delay shows `importing F/N files · R rows ·
/// M MB · X MB/s · S s`, rewritten in place and erased before the summary; an import that ends
/// within the delay, or one whose standard error is not a terminal, shows nothing.
/// Runs that need the line at once are in-process with `TestTuning.progressDelay` zero (the binary
/// has no switch for it); the one-second default is run as the built executable on a pseudo-terminal.
@Suite struct ImportProgressTests {
    static let files = 200, days = 1_000

    /// `files` generated JSON responses (200 × 1,000 rows, about 22 MB), shared by the tests.
    static let inputs: Result<[String], any Error> = Result {
        let directory = try EndToEndFixture.scratchDirectory("progress-inputs")
        let generated = try runBuiltColonnade([
            "generate", "--tickers", "\(files)", "--days", "\(days)", "--seed", "13",
            "--json-dir", directory.path,
        ])
        guard generated.status == 0 else { throw CommandFailure("generate failed: \(generated.standardError)") }
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            .map { directory.appendingPathComponent($0).path }
    }

    /// The progress lines drawn, parsed: (files, rows, MB, MB/s).
    static func progressLines(_ output: String) throws -> [(files: Int, total: Int, rows: Int, megabytes: Int, rate: Int)] {
        let pattern = try Regex(#"\e\[Kimporting (\d+)/(\d+) files · ([\d,]+) rows · (\d+) MB · (\d+) MB/s · \d+\.\d s"#)
        return output.matches(of: pattern).map { match in
            let field = { (i: Int) in Int(String(match.output[i].substring!).replacingOccurrences(of: ",", with: ""))! }
            return (field(1), field(2), field(3), field(4), field(5))
        }
    }

    @Test func onATerminalALongImportShowsFilesRowsAndRateThenErasesTheLine() throws {
        let inputs = try Self.inputs.get()
        #expect(inputs.count == Self.files)
        let directory = try EndToEndFixture.scratchDirectory("progress-tty")
        let snapshot = directory.appendingPathComponent("s.snapshot").path
        let run = colonnadeWithProgress(
            ["import"] + inputs + ["--snapshot", snapshot, "--threads", "2"], in: directory, onATerminal: true)
        #expect(run.status == 0)
        let output = run.output
        let lines = try Self.progressLines(output)
        #expect(!lines.isEmpty, "no progress line in \(output.debugDescription)")
        for line in lines {
            #expect(line.total == Self.files)
            #expect(line.files <= Self.files && line.rows <= Self.files * Self.days)
            // Each file adds itself and its 1,000 rows together (separate counters, so a line
            // drawn between the two adds may be one file apart per decoding thread).
            #expect(abs(line.rows - line.files * Self.days) <= 2 * Self.days, "\(line)")
            #expect(line.megabytes <= 30, "\(line)")
        }
        // Counts only grow.
        #expect(lines.map(\.files) == lines.map(\.files).sorted())
        #expect(lines.map(\.rows) == lines.map(\.rows).sorted())
        // The line is erased (ESC [K after the last one) before the summary table, which ends the output.
        let lastLine = try #require(output.range(of: "importing ", options: .backwards))
        let afterLast = output[lastLine.upperBound...]
        let erase = try #require(afterLast.range(of: "\u{1B}[K"))
        let summary = try #require(afterLast.range(of: "imported 200,000 rows for 200 tickers"))
        #expect(erase.upperBound <= summary.lowerBound)
        #expect(!afterLast[erase.upperBound...].contains("importing"))
    }

    @Test func onATerminalAnImportWithinTheDelayShowsNothing() throws {
        let inputs = try Self.inputs.get()
        let directory = try EndToEndFixture.scratchDirectory("progress-quick")
        let snapshot = directory.appendingPathComponent("s.snapshot").path
        // One file of 1,000 rows imports in milliseconds, well within the default second.
        let session = try PseudoTerminalSession(
            ["import", inputs[0], "--snapshot", snapshot],
            environment: EndToEndFixture.cleanEnvironment, in: directory)
        #expect(try session.finish() == 0)
        #expect(!session.output.contains("importing"), "\(session.output.debugDescription)")
        #expect(!session.output.contains("\u{1B}[K"), "\(session.output.debugDescription)")
        #expect(session.output.contains("imported 1,000 rows for 1 ticker"))
    }

    @Test func notOnATerminalNothingIsDrawnEvenPastTheDelay() throws {
        let inputs = try Self.inputs.get()
        let directory = try EndToEndFixture.scratchDirectory("progress-pipe")
        let snapshot = directory.appendingPathComponent("s.snapshot").path
        let result = colonnadeWithProgress(
            ["import"] + inputs + ["--snapshot", snapshot, "--threads", "2"], in: directory, onATerminal: false)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.isEmpty, "\(result.standardError.debugDescription)")
        #expect(!result.output.contains("importing"))
        #expect(!result.output.contains("\u{1B}"))
        #expect(result.output.contains("imported 200,000 rows for 200 tickers"))
    }

    /// The shipped binary reads no test-only variable (issue 29): the variable that once made the
    /// line appear at once changes nothing, and one quick file shows no line.
    @Test func theBinaryIgnoresTheRetiredDelayVariable() throws {
        let inputs = try Self.inputs.get()
        let directory = try EndToEndFixture.scratchDirectory("progress-retired")
        var environment = EndToEndFixture.cleanEnvironment
        environment["COLONNADE_PROGRESS_AFTER_MS"] = "0"
        let session = try PseudoTerminalSession(
            ["import", inputs[0], "--snapshot", directory.appendingPathComponent("s.snapshot").path],
            environment: environment, in: directory)
        #expect(try session.finish() == 0)
        #expect(!session.output.contains("importing"), "\(session.output.debugDescription)")
        #expect(session.output.contains("imported 1,000 rows for 1 ticker"))
    }
}
