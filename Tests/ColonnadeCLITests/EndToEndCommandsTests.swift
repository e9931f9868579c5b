import Colonnade
import DataLinkFormat
import Foundation
import Testing
@testable import ColonnadeCLI

/// End-to-end: `info`, `verify`, `export`, `generate` and the help texts, run as a process.
@Suite struct EndToEndCommandsTests {
    // MARK: info

    @Test func infoAsJSONDescribesTheSnapshot() throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("info", "--format", "json")
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)
        let info = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let table = fx.table
        #expect(info["path"] as? String == fx.snapshot)
        #expect((info["rows"] as? NSNumber)?.intValue == table.rowCount)
        #expect((info["ticker_count"] as? NSNumber)?.intValue == EndToEndFixture.tickers)
        #expect(
            (info["file_bytes"] as? NSNumber)?.intValue
                == (try FileManager.default.attributesOfItem(atPath: fx.snapshot)[.size] as? NSNumber)?.intValue)
        #expect(info["format_version"] as? String == "1.0")
        #expect(info["checksums"] as? String == "verified")
        #expect((info["block_summaries"] as? NSNumber)?.boolValue == true)
        #expect(info["date_column"] as? String == "Date")
        #expect(info["first_date"] as? String == "2000-01-03")
        #expect(info["last_date"] as? String == Day(daysSinceEpoch: table.dates[table.rowCount - 1]).description)
        #expect(info["metadata"] as? [String: String] == table.metadata)
        #expect(table.metadata["seed"] == String(EndToEndFixture.seed))

        let columns = try #require(info["columns"] as? [[String: Any]])
        #expect(columns.map { $0["identifier"] as? String } == ["date"] + table.schema.map(\.identifier))
        #expect(columns.map { $0["name"] as? String } == ["Date"] + QuoteGenerator.columnNames)
        #expect(columns.first?["type"] as? String == "date")
        #expect(columns.dropFirst().allSatisfy { $0["type"] as? String == "float64" && ($0["nullable"] as? NSNumber)?.boolValue == false })

        let tickers = try #require(info["tickers"] as? [[String: Any]])
        #expect(tickers.map { $0["symbol"] as? String } == table.tickers.map(\.symbol))
        for (entry, ticker) in zip(tickers, table.tickers) {
            #expect((entry["rows"] as? NSNumber)?.intValue == ticker.rowCount)
            #expect(entry["first_date"] as? String == Day(daysSinceEpoch: table.dates[ticker.firstRow]).description)
            #expect(entry["last_date"] as? String == Day(daysSinceEpoch: table.dates[ticker.rows.upperBound - 1]).description)
            #expect(entry["name"] as? String == ticker.metadata["name"])
        }
    }

    @Test func infoAsATableDescribesTheSnapshot() throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("info")
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)
        let lines = try OutputParser.lines(run.standardOutput)
        let last = Day(daysSinceEpoch: fx.table.dates[fx.table.rowCount - 1]).description
        #expect(lines.contains("snapshot    \(fx.snapshot)"))
        #expect(lines.contains("rows        3,600 in 12 tickers from 2000-01-03 to \(last)"))
        #expect(lines.contains("checksums   verified"))
        #expect(lines.contains("metadata    seed: \(EndToEndFixture.seed)"))
        #expect(lines.contains { $0.hasPrefix("format      version 1.0, ") })
        // One line per column (the date column first), then one per ticker.
        #expect(lines.contains { $0.split(separator: " ") == ["date", "Date", "date", "(int32", "days)", "no"] })
        #expect(lines.contains { $0.split(separator: " ") == ["adj_close", "Adj.", "Close", "float64", "no"] })
        for ticker in fx.table.tickers {
            #expect(lines.contains { $0.hasPrefix(ticker.symbol + " ") && $0.contains(" 300  2000-01-03  \(last)  ") }, "\(ticker.symbol)")
        }
    }

    // MARK: verify

    @Test func verifyPassesAnIntactSnapshot() throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("verify")
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)
        #expect(run.standardOutput == "ok: \(fx.snapshot): 3,600 rows, 12 tickers, 13 columns; every checksum and invariant holds\n")
    }

    // (A damaged snapshot: EndToEndSnapshotTests.)

    // MARK: export

    @Test(arguments: ["csv", "ndjson"])
    func exportWritesEveryColumnOfTheSelectionToStandardOutput(format: String) throws {
        let fx = try EndToEndFixture.get()
        for expression in [nil, "close > 100 and ticker in (KO, FDX, XOM, AAPL)"] {
            let selection = try expression.map { try fx.table.select(where: $0) } ?? fx.table.selectAll()
            let run = try fx.run(["export", "--snapshot", fx.snapshot, "--format", format] + (expression.map { ["--where", $0] } ?? []))
            #expect(run.status == 0)
            #expect(run.standardError.isEmpty)
            let parsed =
                format == "csv"
                ? try OutputParser.csv(run.standardOutput)
                : try OutputParser.ndjson(run.standardOutput, columns: fx.allColumns)
            #expect(parsed.columns == fx.allColumns)
            #expect(parsed.rows.count == selection.count)
            #expect(parsed.rows == fx.expectedRows(selection.rows(), columns: fx.allColumns))
        }
    }

    @Test(arguments: ["csv", "ndjson"])
    func exportToAFileWritesWhatStandardOutputWouldGet(format: String) throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("export")
        let expression = "volume > 1e6"
        let count = try fx.table.select(where: expression).count
        let toStdout = try fx.run("export", "--format", format, "--where", expression)
        let viaDash = try fx.run("export", "--format", format, "--where", expression, "-o", "-")
        #expect(viaDash.standardOutput == toStdout.standardOutput)

        // A relative -o is relative to the working directory.
        let relative = try runBuiltColonnade(
            [
                "export", "--snapshot", fx.snapshot, "--format", format, "--where", expression,
                "-o", "out.\(format)",
            ], in: directory)
        #expect(relative.status == 0)
        #expect(relative.standardOutput.isEmpty)
        #expect(
            relative.standardError
                == "note: wrote \(count.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))) of 3,600 rows to out.\(format)\n"
        )
        let written = try String(contentsOf: directory.appendingPathComponent("out.\(format)"), encoding: .utf8)
        #expect(written == toStdout.standardOutput)

        let absolute = directory.appendingPathComponent("all.\(format)").path
        let whole = try fx.run("export", "--format", format, "--output", absolute)
        #expect(whole.status == 0)
        let all = try String(contentsOfFile: absolute, encoding: .utf8)
        let parsed = format == "csv" ? try OutputParser.csv(all) : try OutputParser.ndjson(all, columns: fx.allColumns)
        #expect(parsed.rows == fx.expectedRows(0 ..< fx.table.rowCount, columns: fx.allColumns))
    }

    @Test func exportIntoAMissingDirectoryFailsWithOneLine() throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("export", "--format", "csv", "-o", "/nonexistent-dir/out.csv")
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError.hasPrefix("error: "))
        #expect(run.standardError.contains("/nonexistent-dir/out.csv"))
    }

    // MARK: generate

    @Test func generateWritesTheGeneratorsTableReproducibly() throws {
        let directory = try EndToEndFixture.scratchDirectory("generate")
        func generate(_ name: String, seed: String) throws -> BuiltExecutable.Result {
            try runBuiltColonnade(["generate", "--tickers", "5", "--days", "40", "--seed", seed, "--snapshot", name], in: directory)
        }
        let first = try generate("a.snapshot", seed: "7")
        #expect(first.status == 0)
        #expect(first.standardOutput.isEmpty)
        #expect(first.standardError == "note: wrote 200 rows (5 tickers × 40 days) to a.snapshot\n")

        let path = directory.appendingPathComponent("a.snapshot").path
        let loaded = try QuoteTable.load(from: path)
        let expected = QuoteGenerator(tickers: 5, days: 40, seed: 7).makeTable()
        #expect(loaded == expected)
        #expect(loaded.metadata == expected.metadata)
        #expect(loaded.tickers.map(\.symbol) == ["AAPL", "MSFT", "AMZN", "GOOG", "FB"])

        // The same seed gives the same bytes; so does saving the generator's table directly.
        #expect(try generate("b.snapshot", seed: "7").status == 0)
        let a = try Data(contentsOf: URL(fileURLWithPath: path))
        let b = try Data(contentsOf: directory.appendingPathComponent("b.snapshot"))
        #expect(a == b)
        let direct = directory.appendingPathComponent("direct.snapshot").path
        try expected.save(to: direct)
        #expect(try Data(contentsOf: URL(fileURLWithPath: direct)) == a)
        // Another seed, other quotes.
        #expect(try generate("c.snapshot", seed: "8").status == 0)
        #expect(try Data(contentsOf: directory.appendingPathComponent("c.snapshot")) != a)

        // And --start moves the calendar.
        let moved = try runBuiltColonnade(
            ["generate", "--tickers", "2", "--days", "3", "--start", "2010-06-05", "--snapshot", "d.snapshot"], in: directory)
        #expect(moved.status == 0)
        let d = try QuoteTable.load(from: directory.appendingPathComponent("d.snapshot").path)
        #expect((0 ..< 3).map { Day(daysSinceEpoch: d.dates[$0]).description } == ["2010-06-07", "2010-06-08", "2010-06-09"])
    }

    // MARK: help

    @Test(arguments: CommandSpec.colonnadeCommands)
    func everyCommandsHelpIsPrintedBothWays(spec: CommandSpec) throws {
        let viaFlag = try runBuiltColonnade([spec.name, "--help"])
        let viaShortFlag = try runBuiltColonnade([spec.name, "-h"])
        let viaHelp = try runBuiltColonnade(["help", spec.name])
        for run in [viaFlag, viaShortFlag, viaHelp] {
            #expect(run.status == 0)
            #expect(run.standardError.isEmpty)
        }
        #expect(viaFlag.standardOutput == viaHelp.standardOutput)
        #expect(viaShortFlag.standardOutput == viaHelp.standardOutput)
        let text = viaHelp.standardOutput
        #expect(text == spec.helpText())
        #expect(text.hasPrefix("OVERVIEW: "))
        #expect(text.contains("\nUSAGE: colonnade \(spec.name)"))
        for option in spec.options {
            #expect(text.contains(option.synopsis), "\(spec.name) --help shows \(option.synopsis)")
        }
        #expect(text.contains("-h, --help"))
    }

    @Test func filterHelpExplainsTheTimingLine() throws {
        let run = try runBuiltColonnade(["filter", "--help"])
        let text = run.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("With --timing, one JSON object goes to standard error: load_ms, query_ms"))
        #expect(text.contains("--format table|csv|json|ndjson"))
        #expect(text.contains("--agg LIST"))
    }

    @Test func topLevelHelpAndVersion() throws {
        let help = try runBuiltColonnade(["--help"])
        #expect(help.status == 0)
        #expect(help.standardError.isEmpty)
        #expect(help.standardOutput == (try runBuiltColonnade(["help"])).standardOutput)
        for spec in CommandSpec.colonnadeCommands {
            #expect(help.standardOutput.contains("\n  \(spec.name) "), "\(spec.name)")
        }
        let version = try runBuiltColonnade(["--version"])
        #expect(version.standardOutput == "colonnade \(Colonnade.version)\n")
    }
}
