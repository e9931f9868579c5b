@testable import ColonnadeCLI
import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// `filter --adjusted`, `export --adjusted` and the shell's `.adjusted on` (issue #33): `open`,
/// `high`, `low`, `close` and `volume` read `adj_open` … `adj_volume` in every expression, column,
/// sort key and aggregate; checked against rows picked by a plain loop over the fixture's own
/// adjusted values, and against the same screen spelled with the `adj_*` names.
@Suite struct AdjustedScreenTests {
    /// The real 2017 vintage of AAPL (splits of 2000, 2005 and 2014, quarterly dividends), imported once.
    static let aapl: Result<String, any Error> = Result {
        let directory = try EndToEndFixture.scratchDirectory("adjusted-aapl")
        let snapshot = directory.appendingPathComponent("q.snapshot").path
        let run = colonnade(["import", Fixtures.quandlPath("WIKI-AAPL.desc.csv"), "--ticker", "AAPL", "--snapshot", snapshot])
        guard run.status == 0 else { throw CommandFailure(run.standardError) }
        return snapshot
    }

    /// The fixture's rows, oldest first: (date, open, high, low, close, volume, adj_open, …, adj_volume).
    static func aaplRows() throws -> [(date: String, raw: [Double], adjusted: [Double])] {
        let text = try String(contentsOfFile: Fixtures.quandlPath("WIKI-AAPL.desc.csv"), encoding: .utf8)
        var rows = [(date: String, raw: [Double], adjusted: [Double])]()
        for line in text.split(whereSeparator: \.isNewline).dropFirst() {
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let numbers = f.dropFirst().map { Double($0) ?? .nan }
            rows.append((f[0], Array(numbers[0 ..< 5]), Array(numbers[7 ..< 12])))
        }
        return rows.reversed()
    }

    static func csvRows(_ text: String) -> [[String]] {
        text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }

    @Test func aScreenOverRawNamesReadsTheVendorsAdjustedValues() throws {
        let snapshot = try Self.aapl.get()
        let rows = try Self.aaplRows()
        // Reference: a plain loop over the CSV's own Adj. columns.
        let expected = rows.filter { r in r.adjusted[3] > 1.01 * r.adjusted[0] && r.adjusted[4] > 5e7 && r.adjusted[1] - r.adjusted[2] > 2 }
            .map { r in ["AAPL", r.date, "\(r.adjusted[3])", "\(r.adjusted[4])"] }
        #expect(expected.count > 50 && expected.count < rows.count / 4, "the screen must select some rows, not all: \(expected.count)")
        let run = colonnade([
            "filter", "--snapshot", snapshot, "--adjusted", "--format", "csv", "--columns", "ticker,date,close,volume",
            "--where", "close > 1.01 * open and volume > 5e7 and high - low > 2",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let got = Self.csvRows(run.standardOutput)
        #expect(got.first == ["ticker", "date", "close", "volume"], "CSV keeps the plain names")
        let values = got.dropFirst().map { [$0[0], $0[1], "\(Double($0[2]) ?? .nan)", "\(Double($0[3]) ?? .nan)"] }
        #expect(values == expected)
        #expect(run.standardError.contains("note: " + FilterCommand.adjustedNote), "\(run.standardError)")

        // Without --adjusted the same text reads the raw prices: a different answer (AAPL split 7:1 and 2:1 twice).
        let raw = rows.filter { r in r.raw[3] > 1.01 * r.raw[0] && r.raw[4] > 5e7 && r.raw[1] - r.raw[2] > 2 }.count
        let plain = colonnade([
            "filter", "--snapshot", snapshot, "--count", "--where", "close > 1.01 * open and volume > 5e7 and high - low > 2",
        ])
        #expect(plain.standardOutput == "\(raw)\n" && raw != expected.count, "\(plain.standardOutput) vs \(raw), \(expected.count)")
    }

    /// Series functions, sorting, aggregates and --on: `--adjusted` with raw names answers exactly
    /// what the `adj_*` spelling answers (values bit for bit), on the generated sample (dividends
    /// and splits) and on AAPL.
    @Test(arguments: [
        ["--where", "close > mavg(close, 20) and volume > mavg(volume, 10)", "--columns", "ticker,date,close,volume,mavg(close,5) as m"],
        ["--where", "rsi(close, 14) < 35 or pct_change(close, 5) > 0.08", "--columns", "ticker,date,open,high,low,close"],
        ["--sort", "-pct_change(close, 20),ticker", "--limit", "25", "--columns", "ticker,date,close,ema(close, 10) as e"],
        ["--agg", "count(*),avg(close),max(high - low),sum(volume),last(close)", "--by", "ticker"],
        ["--on", "latest", "--columns", "ticker,date,close,volume,close / cummax(close) - 1 as drawdown,ema(volume, 5) as v"],
    ])
    func theRawSpellingWithAdjustedEqualsTheAdjSpelling(_ arguments: [String]) throws {
        let adjSpelled = arguments.map { a in
            a.starts(with: "--")
                ? a : a.replacingOccurrences(of: #"\b(open|high|low|close|volume)\b"#, with: "adj_$1", options: .regularExpression)
        }
        for snapshot in [try EndToEndFixture.get().snapshot, try Self.aapl.get()] {
            let adjusted = colonnade(["filter", "--snapshot", snapshot, "--adjusted", "--format", "csv"] + arguments)
            let spelled = colonnade(["filter", "--snapshot", snapshot, "--format", "csv"] + adjSpelled)
            #expect(adjusted.status == 0 && spelled.status == 0, "\(adjusted.standardError) \(spelled.standardError)")
            let a = Self.csvRows(adjusted.standardOutput), s = Self.csvRows(spelled.standardOutput)
            #expect(a.count > 1, "the screen selects rows: \(arguments)")
            #expect(Array(a.dropFirst()) == Array(s.dropFirst()), "\(arguments) on \(snapshot)")
        }
    }

    @Test func aTableMarksTheAdjustedColumnsInItsHeader() throws {
        let snapshot = try Self.aapl.get()
        let run = colonnade([
            "filter", "--snapshot", snapshot, "--adjusted", "--format", "table", "--columns", "date,close,adj_close,volume,split_ratio",
            "--from", "2014-06-05", "--to", "2014-06-09",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let header = run.standardOutput.split(separator: "\n").first.map(String.init) ?? ""
        #expect(header.contains("close (adjusted)") && header.contains("volume (adjusted)"), "\(header)")
        #expect(
            header.contains("adj_close") && !header.contains("adj_close (adjusted)") && !header.contains("split_ratio (adjusted)"),
            "\(header)")
        // The vendor's values of 2014-06-06 (before the 7:1 split): adjusted, not the raw 645.57.
        #expect(run.standardOutput.contains("86.804445") && !run.standardOutput.contains("645.57"), "\(run.standardOutput)")
    }

    @Test func aTableWithoutAdjustedColumnsIsRefusedWithAPreciseError() throws {
        let raw = try AdjustmentCommandTests.withoutAdjustedColumns("WIKI-AAPL.desc.csv")
        let snapshot = try EndToEndFixture.scratchDirectory("noadj").appendingPathComponent("q.snapshot").path
        #expect(colonnade(["import", raw, "--ticker", "AAPL", "--snapshot", snapshot]).status == 0)
        for command in ["filter", "export"] {
            let run = colonnade([command, "--snapshot", snapshot, "--adjusted", "--format", "csv", "--where", "close > 1"])
            #expect(run.status == 1)
            #expect(run.standardOutput.isEmpty)
            #expect(
                run.standardError.contains(
                    "error: --adjusted: the table has no adjusted columns (adj_open, adj_high, adj_low, adj_close, adj_volume)"),
                "\(run.standardError)")
            #expect(run.standardError.contains("hint: 'colonnade adjust' creates them"), "\(run.standardError)")
        }
        // The shell refuses the setting when it is made, and keeps answering raw screens.
        let shell = try ShellTests.shellThroughAPipe(".adjusted on\n--count --where 'close > 1'\n", extra: [], snapshot: snapshot)
        #expect(shell.status == 1)
        #expect(shell.standardError.contains("the table has no adjusted columns"), "\(shell.standardError)")
        #expect(shell.standardOutput == "9306\n", "\(shell.standardOutput)")
    }

    @Test func exportWritesTheAdjustedValuesUnderTheRawNames() throws {
        let snapshot = try Self.aapl.get()
        let rows = try Self.aaplRows()
        let run = colonnade([
            "export", "--snapshot", snapshot, "--adjusted", "--format", "csv", "--columns", "date,open,high,low,close,volume",
            "--where", "date < 2000-01-01 and close > 3",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let got = Self.csvRows(run.standardOutput)
        #expect(got.first == ["date", "open", "high", "low", "close", "volume"])
        let expected = rows.filter { $0.date < "2000-01-01" && $0.adjusted[3] > 3 }.map { [$0.date] + $0.adjusted.map { "\($0)" } }
        #expect(expected.count > 10)
        #expect(got.dropFirst().map { [$0[0]] + $0.dropFirst().map { "\(Double($0) ?? .nan)" } } == expected)
    }

    @Test func theShellsAdjustedSettingAnswersAsFilterAdjusted() throws {
        let fx = try EndToEndFixture.get()
        let run = try ShellTests.shellThroughAPipe(
            """
            .format csv
            .adjusted on
            close > mavg(close, 10) and volume > 1e6
            .adjusted off
            close > mavg(close, 10) and volume > 1e6
            .adjusted maybe
            """)
        #expect(run.status == 1, "the last line is a mistake")
        #expect(run.standardError.contains("expected on or off"), "\(run.standardError)")
        let adjusted = try ShellTests.filter(["--adjusted", "--format", "csv", "--where", "close > mavg(close, 10) and volume > 1e6"])
        let plain = try ShellTests.filter(["--format", "csv", "--where", "close > mavg(close, 10) and volume > 1e6"])
        #expect(adjusted != plain, "the sample's dividends and splits make the answers differ")
        #expect(run.standardOutput == "note: " + FilterCommand.adjustedNote + "\n" + adjusted + plain, "\(run.standardOutput)")
        _ = fx
    }
}
