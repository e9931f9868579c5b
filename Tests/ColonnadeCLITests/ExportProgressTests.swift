import Foundation
import Testing

/// `export` on a terminal draws `exporting R of N rows · M MB · X MB/s` on standard error while
/// it writes, erased at the end; to a pipe or file standard error it draws nothing.
@Suite struct ExportProgressTests {
    @Test func onATerminalExportShowsRowsAndRateThenErasesTheLine() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("export-progress")
        let session = colonnadeWithProgress(
            ["export", "--snapshot", fx.snapshot, "--format", "csv", "-o", "out.csv"], in: directory, onATerminal: true)
        #expect(session.status == 0)
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
        let run = colonnadeWithProgress(
            ["export", "--snapshot", fx.snapshot, "--format", "ndjson", "-o", "out.ndjson"], in: directory, onATerminal: false)
        #expect(run.status == 0)
        #expect(run.standardError == "note: wrote 3,600 of 3,600 rows to out.ndjson\n")
    }
}

/// `generate --snapshot` and `verify` on a terminal draw their progress the same way (rows made
/// and bytes saved; bytes checked and the rows they stand for), erased at the end; nothing to a
/// file or pipe.
@Suite struct GenerateAndVerifyProgressTests {
    @Test func onATerminalGenerateAndVerifyShowRowsAndRateThenEraseTheLine() throws {
        let directory = try EndToEndFixture.scratchDirectory("generate-progress")
        let generate = colonnadeWithProgress(
            ["generate", "--tickers", "20", "--days", "300", "--snapshot", "g.snapshot"], in: directory, onATerminal: true)
        #expect(generate.status == 0)
        let drawn = try Regex(#"\e\[Kgenerating ([\d,]+) of 6,000 rows · \d+ MB · \d+ MB/s · \d+\.\d s"#)
        #expect(!generate.output.matches(of: drawn).isEmpty, "\(generate.output.debugDescription)")
        let wrote = try #require(generate.output.range(of: "note: wrote 6,000 rows"))
        let last = try #require(generate.output.range(of: "generating ", options: .backwards))
        #expect(try #require(generate.output[last.upperBound...].range(of: "\u{1B}[K")).upperBound <= wrote.lowerBound)

        let verify = colonnadeWithProgress(
            ["verify", "--snapshot", "g.snapshot"], in: directory, onATerminal: true)
        #expect(verify.status == 0)
        let checked = try Regex(#"\e\[Kverifying ([\d,]+) of 6,000 rows · \d+ MB · \d+ MB/s · \d+\.\d s"#)
        let counts = verify.output.matches(of: checked).map {
            Int(String($0.output[1].substring!).replacingOccurrences(of: ",", with: ""))!
        }
        #expect(!counts.isEmpty && counts == counts.sorted() && counts.allSatisfy { $0 <= 6_000 }, "\(verify.output.debugDescription)")
        #expect(verify.output.contains("g.snapshot: 6,000 rows, 20 tickers"), "\(verify.output.debugDescription)")

        // Arrow and Parquet exports too, the note after the erased line.
        for (format, file) in [("parquet", "g.parquet"), ("arrow", "g.arrow")] {
            let export = colonnadeWithProgress(
                ["export", "--snapshot", "g.snapshot", "--format", format, "-o", file], in: directory, onATerminal: true)
            #expect(export.status == 0)
            let exported = try Regex(#"\e\[Kexporting ([\d,]+) of 6,000 rows · \d+ MB · \d+ MB/s · \d+\.\d s"#)
            #expect(!export.output.matches(of: exported).isEmpty, "\(format): \(export.output.debugDescription)")
            let note = try #require(export.output.range(of: "note: wrote 6,000 rows"))
            let last = try #require(export.output.range(of: "exporting ", options: .backwards))
            #expect(try #require(export.output[last.upperBound...].range(of: "\u{1B}[K")).upperBound <= note.lowerBound, "\(format)")
        }
    }

    @Test func offATerminalGenerateAndVerifyDrawNothing() throws {
        let directory = try EndToEndFixture.scratchDirectory("generate-quiet")
        let run = colonnadeWithProgress(
            ["generate", "--tickers", "3", "--days", "50", "--snapshot", "q.snapshot"], in: directory, onATerminal: false)
        #expect(
            run.status == 0 && run.standardError == "note: wrote 150 rows (3 tickers × 50 days) to q.snapshot\n", "\(run.standardError)")
        let verify = colonnadeWithProgress(
            ["verify", "--snapshot", "q.snapshot"], in: directory, onATerminal: false)
        #expect(verify.status == 0 && verify.standardError.isEmpty, "\(verify.standardError)")
    }
}
