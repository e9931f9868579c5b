import Colonnade
import DataLinkFormat
@testable import ColonnadeCLI
@testable import ColonnadeIngest
import ColonnadeTestSupport
import Foundation
import Testing

/// `colonnade import`: saved responses (real fixtures and generated files) into a snapshot,
/// all or nothing.
@Suite struct ImportCommandTests {
    static func fixture(_ name: String) -> String { Fixtures.quandlPath(name) }

    /// The rows `QuoteImporter` decodes from one file, for comparing counts.
    static func rows(_ path: String, ticker: String? = nil) throws -> QuoteTable {
        try QuoteImporter.decodeFile(path, ticker: ticker).table
    }

    @Test
    func importsRealFixturesOfEveryShape() async throws {
        let scratch = try Scratch()
        let files = ["WIKI-AAPL.2014.asc.csv", "WIKI-AMZN.dataset.json", "WIKI-PRICES.datatable.json"].map(Self.fixture)
        let run = await runOffPool(["import"] + files + ["--snapshot", scratch.snapshot], in: scratch)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty)

        let saved = try QuoteTable.load(from: scratch.snapshot)
        let aapl = try Self.rows(files[0]), amzn = try Self.rows(files[1]), prices = try Self.rows(files[2])
        #expect(saved.ticker("AAPL")?.rowCount == aapl.rowCount, "ticker from the file name WIKI-AAPL…")
        #expect(saved.ticker("AMZN")?.rowCount == amzn.rowCount, "ticker from dataset_code")
        for entry in prices.tickers {
            #expect(saved.ticker(entry.symbol)?.rowCount == entry.rowCount, "\(entry.symbol) from the datatable")
        }
        let total = aapl.rowCount + amzn.rowCount + prices.rowCount
        #expect(saved.rowCount == total)
        #expect(
            run.standardOutput.contains(
                "imported \(total.groupedText) rows for \(2 + prices.tickers.count) tickers into \(scratch.snapshot)"))
        #expect(run.standardOutput.contains("AAPL"))
    }

    /// Past `ImportCommand.summaryTickers` tickers the summary shows the first and last half of
    /// them and how many it left out; the total line still counts every one.
    @Test func aSummaryOfManyTickersShowsTheFirstAndLast() async throws {
        let scratch = try Scratch()
        let generated = QuoteGenerator(tickers: 25, days: 3, seed: 5).makeTable()
        let files = try QuoteGenerator.writeTimeSeriesCSV(generated, toDirectory: scratch.file("csv"))
        let run = await runOffPool(["import"] + files + ["--snapshot", "quotes.snapshot"], in: scratch)
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        let symbols = generated.tickers.map(\.symbol)
        let shown = symbols.filter { s in lines.contains { $0.hasPrefix(s + " ") } }
        #expect(shown == Array(symbols.prefix(10) + symbols.suffix(10)), "\(run.standardOutput)")
        #expect(lines.contains("… 5 more rows …"), "\(run.standardOutput)")
        #expect(lines.last?.hasPrefix("imported 75 rows for 25 tickers into ") == true, "\(run.standardOutput)")
        #expect(try QuoteTable.load(from: scratch.snapshot).tickers.count == 25)
    }

    @Test func importsGeneratedFilesIntoAnExistingSnapshot() async throws {
        let scratch = try Scratch()
        try await makeSnapshot(in: scratch)  // AAPL, MSFT, AMZN × 50 days
        let generated = QuoteGenerator(tickers: 8, days: 70, seed: 3).makeTable()
        let json = try QuoteGenerator.writeDatasetJSON(generated, toDirectory: scratch.file("json"))
        let csv = try QuoteGenerator.writeTimeSeriesCSV(generated, toDirectory: scratch.file("csv"))
        // JSON for the first four tickers, CSV for the rest; relative paths.
        let files =
            json.prefix(4).map { "json/" + ($0 as NSString).lastPathComponent }
            + csv.dropFirst(4).map { "csv/" + ($0 as NSString).lastPathComponent }
        let run = await runOffPool(["import"] + files + ["--snapshot", "quotes.snapshot"], in: scratch)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("imported 560 rows for 8 tickers"))
        let saved = try QuoteTable.load(from: scratch.snapshot)
        #expect(saved.tickers.map(\.symbol) == generated.tickers.map(\.symbol))
        for entry in generated.tickers {
            #expect(saved.ticker(entry.symbol)?.rowCount == 70, "\(entry.symbol): the 50 stored days are replaced, 20 added")
        }
        // Later values win: the stored close of AAPL's first day is now the imported one.
        let close = try #require(saved.columnIndex(named: "Close"))
        let generatedClose = try #require(generated.columnIndex(named: "Close"))
        let first = try #require(saved.ticker("AAPL")).firstRow
        let generatedFirst = try #require(generated.ticker("AAPL")).firstRow
        #expect(saved.columns[close].doubleValue(at: first) == generated.columns[generatedClose].doubleValue(at: generatedFirst))
    }

    @Test
    func tickerOptionNamesTheRows() async throws {
        let scratch = try Scratch()
        let copy = scratch.file("prices.csv")
        try FileManager.default.copyItem(atPath: Self.fixture("WIKI-MSFT.2014.asc.csv"), toPath: copy)
        let run = await runOffPool(["import", copy, "--ticker", "BRK.B", "--snapshot", scratch.snapshot], in: scratch)
        #expect(run.status == 0, "\(run.standardError)")
        let saved = try QuoteTable.load(from: scratch.snapshot)
        #expect(saved.tickers.map(\.symbol) == ["BRK.B"])
        let expected = try Self.rows(copy)
        #expect(saved.rowCount == expected.rowCount)
    }

    @Test func aBadSecondFileChangesNothing() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let generated = QuoteGenerator(tickers: 3, days: 20, seed: 5).makeTable()
        let paths = try QuoteGenerator.writeTimeSeriesCSV(generated, toDirectory: scratch.file("in"))
        var text = try String(contentsOfFile: paths[1], encoding: .utf8)
        text = text.replacingOccurrences(of: "\n2000-01-1", with: "\n2000-13-1")
        try text.write(toFile: paths[1], atomically: true, encoding: .utf8)

        let run = await runOffPool(["import"] + paths + ["--snapshot", scratch.snapshot], in: scratch)
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        #expect(run.errorLines.count == 1)
        #expect(run.errorLines.first?.contains((paths[1] as NSString).lastPathComponent) == true, "\(run.standardError)")
        #expect(scratch.bytes("quotes.snapshot") == before)
    }

    @Test(arguments: ["error.QECx02.csv", "error.QECx05.json"])
    func anErrorBodyIsExplained(name: String) async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let run = await runOffPool(
            ["import", Self.fixture("WIKI-AAPL.2014.asc.csv"), Self.fixture(name), "--snapshot", scratch.snapshot],
            in: scratch)
        #expect(run.status == 1)
        let code = name.split(separator: ".")[1]
        #expect(run.errorLines.count == 1)
        #expect(run.errorLines.first?.contains(name) == true, "\(run.standardError)")
        #expect(run.errorLines.first?.contains(String(code)) == true, "\(run.standardError)")
        #expect(run.standardError.contains("hint: the file holds the API's error response, not quotes; fetch it again"))
        #expect(scratch.bytes("quotes.snapshot") == before)
    }

    /// A saved response holding a key the CLI does not know (no key in the environment, so the
    /// stderr redactor cannot recognise it): no part of it reaches the terminal, wherever the
    /// error's excerpt is cut (issue 11).
    @Test func aKeyInASavedResponseNeverReachesStderr() async throws {
        let scratch = try Scratch()
        let key = "Zq9Xw7Vu5Ts3Rp1No8Ml"
        var files: [String] = []
        for padding in [0, 12, 16, 27, 31] {
            let name = "bad-\(padding).csv"
            try scratch.write("Date,Open\n2017-01-03,\(String(repeating: ".", count: padding))\(key)\n", to: name)
            files.append(name)
        }
        try scratch.write(
            #"{"quandl_error":{"code":"QEAx01","message":"We could not recognize your API key: '\#(key)'."}}"#, to: "error.json")
        try scratch.write("Date,Open\n2017-01-03,api_key=abc12\n", to: "param.csv")
        for file in files + ["error.json", "param.csv"] {
            let run = await runOffPool(["import", file, "--snapshot", scratch.snapshot], in: scratch)
            #expect(run.status == 1)
            #expect(run.standardError.contains("<redacted>"), "\(run.standardError)")
            #expect(!run.standardError.contains("Zq") && !run.standardError.contains("abc12"), "\(run.standardError)")
        }
    }

    @Test func missingFileAndHTMLAreErrors() async throws {
        let scratch = try Scratch()
        try scratch.write("<html><body>Incapsula</body></html>", to: "WIKI-FDX.json")
        for file in ["nope.csv", "WIKI-FDX.json"] {
            let run = await runOffPool(["import", file, "--snapshot", scratch.snapshot], in: scratch)
            #expect(run.status == 1)
            #expect(run.errorLines.count == 1)
            #expect(run.errorLines.first?.contains(file) == true, "\(run.standardError)")
        }
        #expect(scratch.bytes("quotes.snapshot") == nil, "no snapshot is created when nothing was imported")
    }
}
