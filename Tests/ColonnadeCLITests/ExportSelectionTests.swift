import Colonnade
import DataLinkFormat
import Foundation
import Testing
@testable import ColonnadeCLI

/// `export` selects rows and columns exactly as `filter` does: `--tickers`, `--from`, `--to`,
/// `--on`, `--where` and `--columns`.
@Suite struct ExportSelectionTests {
    static func run(_ command: String, _ arguments: [String], in directory: URL? = nil) throws -> Invocation {
        let output = MemoryOutputWriter(), errors = MemoryOutputWriter()
        let context = CommandContext(
            standardOutput: output, standardError: errors, environment: [:],
            currentDirectory: directory?.path ?? "/tmp")
        let status = runColonnade([command, "--snapshot", try EndToEndFixture.get().snapshot] + arguments, context: context)
        return Invocation(status: status, standardOutput: output.text, standardError: errors.text)
    }

    @Test(arguments: [
        ["--tickers", "AAPL,KO", "--from", "2000-03-01", "--to", "2000-04-30"],
        ["--on", "latest", "--columns", "ticker,close,pct_change(close) as ret"],
        ["--where", "close > 1", "--tickers", "MSFT", "--columns", "date,adj_close,volume"],
        ["--on", "2000-06-01", "--where", "close > mavg(close, 20)"],
        ["--columns", "all", "--from", "2000-12-01"],
    ])
    func exportWritesWhatFilterSelects(selection: [String]) throws {
        for format in ["csv", "ndjson"] {
            let export = try Self.run("export", selection + ["--format", format])
            // filter's default columns are those --where mentions; export's are all: name them alike.
            let columns = selection.contains("--columns") ? [] : ["--columns", "all"]
            let filter = try Self.run("filter", selection + columns + ["--format", format])
            #expect(export.status == 0 && filter.status == 0, "\(export.standardError) \(filter.standardError)")
            #expect(export.standardOutput == filter.standardOutput, "\(selection) \(format)")
            #expect(export.standardOutput.split(separator: "\n").count > 1, "\(selection) selects some rows")
        }
    }

    @Test func columnarFormatsWriteTheSelectedValueColumns() throws {
        let directory = try EndToEndFixture.scratchDirectory("export-columns")
        let run = try Self.run(
            "export",
            [
                "--tickers", "KO", "--from", "2000-02-01", "--columns", "date,close,volume",
                "--format", "parquet", "-o", "ko.parquet",
            ], in: directory)
        #expect(run.status == 0, "\(run.standardError)")
        let table = try InteropReader.read(path: directory.appendingPathComponent("ko.parquet").path, ticker: nil)
        #expect(table.schema.map(\.identifier) == ["close", "volume"])
        #expect(table.tickers.map(\.symbol) == ["KO"])
        let fx = try EndToEndFixture.get()
        #expect(table.rowCount == (try fx.table.select(where: "ticker in (KO) and date >= 2000-02-01").count))
        // A computed column is for the text formats.
        let computed = try Self.run(
            "export", ["--columns", "close,pct_change(close)", "--format", "arrow", "-o", "x.arrow"], in: directory)
        #expect(computed.status == 2)
        #expect(
            computed.standardError.hasPrefix(
                "error: invalid value 'pct_change(close)' for '--columns' in 'colonnade export': "
                    + "arrow, arrows and parquet take value columns; computed columns go to csv or ndjson"))
    }

    @Test func badSelectionsAreUsageErrors() throws {
        let reversed = try Self.run("export", ["--from", "2001-01-01", "--to", "2000-01-01", "--format", "csv"])
        #expect(reversed.status == 2)
        let on = try Self.run("export", ["--on", "yesterday", "--format", "csv"])
        #expect(on.status == 2 && on.standardError.contains("'--on'"))
        let unknown = try Self.run("export", ["--tickers", "NOPE", "--format", "csv"])
        #expect(unknown.status == 0)
        #expect(unknown.standardError.contains("warning: no ticker 'NOPE' in this snapshot"))
    }
}
