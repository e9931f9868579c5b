import Colonnade
import DataLinkFormat
@testable import ColonnadeIngest
import ColonnadeTestSupport
import DecodingTestSupport
import Foundation
import Testing

@Suite("Decoding real API responses")
struct DecodingFixtureTests {
    static let dataFixtures = Fixtures.allNames.filter { !$0.hasPrefix("error.") && !$0.contains("mock-wrapped") }

    @Test(arguments: dataFixtures)
    func fixtureDecodesEqualToReference(_ name: String) throws {
        let data = try Data(contentsOf: Fixtures.url(name))
        let ticker = QuoteImporter.tickerSymbol(fromFileName: name)!
        let response = try QuoteImporter.decodeFile(Fixtures.url(name).path)
        let reference =
            name.hasSuffix(".json")
            ? try ReferenceReader.json(data, ticker: ticker)
            : try ReferenceReader.csv(String(decoding: data, as: UTF8.self), ticker: ticker)
        #expect(!reference.isEmpty)
        // dataset JSON names its own ticker (dataset_code) — same as the file name here.
        let difference = ReferenceReader.firstDifference(
            response.table,
            reference.map { row in
                var row = row
                if response.format == .legacyJSON { row.ticker = "NASDAQ.AAPL" }
                return row
            })
        #expect(difference == nil, "\(name): \(difference ?? "")")
        for column in response.table.columns { #expect(column.elementType == .float64) }
    }

    @Test
    func formatsAreSniffed() throws {
        let expected: [String: QuoteFormat] = [
            "WIKI-AMZN.dataset.json": .datasetJSON, "BCHAIN-BLCHS.dataset.json": .datasetJSON,
            "GOOG-NASDAQ_AAPL.v1.json": .legacyJSON, "WIKI-PRICES.datatable.json": .datatableJSON,
            "WIKI-PRICES.datatable.2014.csv": .datatableCSV, "WIKI-KO.asc.csv": .timeSeriesCSV,
        ]
        for (name, format) in expected {
            #expect(try QuoteImporter.decodeFile(Fixtures.url(name).path).format == format, "\(name)")
        }
    }

    @Test
    func nullRowOfKOIsNullInTheRightColumns() throws {
        let table = try QuoteImporter.decodeFile(Fixtures.url("WIKI-KO.asc.csv").path).table
        let day = Day("2001-09-12")!.daysSinceEpoch
        let r = try #require(table.ticker("KO")!.rows.first { table.dates[$0] == day })
        let nulls = ["Open", "High", "Low", "Close", "Split Ratio", "Adj. Open", "Adj. High", "Adj. Low", "Adj. Close"]
        for d in table.schema {
            let value = table.column(named: d.name)!.doubleValue(at: r)
            if nulls.contains(d.name) { #expect(value == nil, "\(d.name)") } else { #expect(value != nil, "\(d.name)") }
        }
        #expect(table.column(named: "Ex-Dividend")!.doubleValue(at: r) == 0.18)
        #expect(table.column(named: "volume")!.doubleValue(at: r) == 0)
        #expect(table.rowCount == 13_747)
    }

    @Test
    func msft2014HasItsGaps() throws {
        let table = try QuoteImporter.decodeFile(Fixtures.url("WIKI-MSFT.2014.asc.csv").path).table
        #expect(table.rowCount == 247)
        #expect(table.tickers.map(\.symbol) == ["MSFT"])
        #expect(!table.dates.withUnsafeBufferPointer { $0.contains(Day("2014-11-05")!.daysSinceEpoch) })
    }

    @Test
    func datasetJSONKeepsNameAndSortsNewestFirstRows() throws {
        let table = try QuoteImporter.decodeFile(Fixtures.url("WIKI-AMZN.dataset.json").path).table
        #expect(table.tickers.map(\.symbol) == ["AMZN"])
        #expect(table.tickers[0].metadata["name"] == "Amazon.com Inc. (AMZN) Prices, Dividends, Splits and Trading Volume")
        #expect(table.rowCount == 250)
        #expect(Day(daysSinceEpoch: table.dates[0]).description == "2016-10-03")
        #expect(Day(daysSinceEpoch: table.dates[249]).description == "2017-09-29")
        #expect(
            table.schema.map(\.identifier) == [
                "open", "high", "low", "close", "volume", "ex_dividend", "split_ratio",
                "adj_open", "adj_high", "adj_low", "adj_close", "adj_volume",
            ])
    }

    @Test
    func datatableJSONMixesIntegersAndFloats() throws {
        let response = try QuoteImporter.decodeFile(Fixtures.url("WIKI-PRICES.datatable.json").path)
        let table = response.table
        #expect(response.nextCursorID == nil)
        #expect(Set(table.tickers.map(\.symbol)) == ["MSFT", "COF", "GOOGL"])
        #expect(table.rowCount == 17)
        #expect(table.dateColumnName == "date")
        let msft = table.ticker("MSFT")!
        let first = msft.rows.lowerBound
        #expect(Day(daysSinceEpoch: table.dates[first]).description == "2017-04-03")
        #expect(table.column(named: "volume")!.doubleValue(at: first) == 20_400_871)
        #expect(table.column(named: "split_ratio")!.doubleValue(at: first) == 1)
        #expect(table.column(named: "ex-dividend")!.doubleValue(at: first) == 0)
        #expect(table.column(named: "open")!.doubleValue(at: first) == 65.81)
    }

    @Test
    func datatableCSVMapsUnderscoreCodesToSymbols() throws {
        let table = try QuoteImporter.decodeFile(Fixtures.url("WIKI-PRICES.datatable.2014.csv").path).table
        #expect(table.tickers.map(\.symbol) == ["AAPL", "BRK.A", "MSFT", "ZEN"])
        #expect(table.tickers.map(\.rowCount) == [252, 252, 252, 160])
        let brk = try QuoteImporter.decodeFile(Fixtures.url("WIKI-BRK_A.2014.asc.csv").path).table
        #expect(brk.tickers.map(\.symbol) == ["BRK.A"])
    }

    @Test
    func errorBodiesGiveTheErrorCase() throws {
        for (name, code) in [("error.QECx05.json", "QECx05"), ("error.QECx02.csv", "QECx02")] {
            do {
                _ = try QuoteImporter.decodeFile(Fixtures.url(name).path)
                Issue.record("\(name) decoded")
            } catch {
                guard case let .apiError(source, actualCode, message) = error else {
                    Issue.record("\(name): \(error)")
                    continue
                }
                #expect(source == name)
                #expect(actualCode == code)
                #expect(
                    message.hasPrefix(
                        code == "QECx05" ? "The url you requested is incorrect." : "You have submitted an incorrect Quandl code."))
            }
        }
    }

    @Test
    func mockWrappedResponseIsNotAQuandlResponse() throws {
        do {
            _ = try QuoteImporter.decodeFile(Fixtures.url("WIKI-PRICES.datatable.mock-wrapped.json").path)
            Issue.record("mock decoded")
        } catch {
            guard case .notADataLinkResponse = error else {
                Issue.record("\(error)")
                return
            }
            #expect(error.description.contains("not a Quandl response"))
            #expect(error.description.contains("'all'"))
        }
    }
}
