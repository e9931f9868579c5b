import Colonnade
import ColonnadeTestSupport
import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// WIKI's adjustment rule (docs/ADJUSTMENTS.md) on the real WIKI fixtures: the check accepts the
/// vendor's own data, finds the stale day of the older AAPL vintage and of a stale split, and the
/// recomputation reproduces the vendor's adjusted columns.
@Suite struct AdjustmentFixtureTests {
    /// Every fixture with WIKI's adjusted columns, and its ticker when the file does not name it.
    static let wikiFixtures: [(String, String?)] = [
        ("WIKI-AAPL.desc.csv", "AAPL"), ("WIKI-AAPL.2014.asc.csv", "AAPL"), ("WIKI-AMZN.asc.csv", "AMZN"),
        ("WIKI-BRK_A.2014.asc.csv", "BRK_A"), ("WIKI-FB.asc.csv", "FB"), ("WIKI-GOOG.asc.csv", "GOOG"),
        ("WIKI-KO.asc.csv", "KO"), ("WIKI-MSFT.2014.asc.csv", "MSFT"), ("WIKI-ORCL-2000.desc.csv", "ORCL"),
        ("WIKI-ZEN.2014.asc.csv", "ZEN"), ("WIKI-PRICES.datatable.2014.csv", nil),
        ("WIKI-AMZN.dataset.json", nil),
    ]

    static func load(_ name: String, ticker: String? = nil) throws -> QuoteTable {
        try QuoteImporter.decodeFile(Fixtures.url(name).path, ticker: ticker).table
    }

    static func day(_ text: String) -> Int32 { Day(text)!.daysSinceEpoch }

    /// The table without its adjusted columns.
    static func droppingAdjusted(_ table: QuoteTable) throws -> QuoteTable {
        let keep = table.schema.indices.filter { !table.schema[$0].identifier.hasPrefix("adj_") }
        return try QuoteTable(
            schema: keep.map { table.schema[$0] }, columns: keep.map { table.columns[$0] },
            dates: table.dates, tickers: table.tickers)
    }

    /// The worst relative difference between two tables' adjusted columns, and whether their nulls agree.
    static func worstDifference(_ a: QuoteTable, _ b: QuoteTable) -> (worst: Double, nullsAgree: Bool) {
        var worst = 0.0, nullsAgree = true
        for name in AdjustmentRule.adjustedIdentifiers {
            guard let x = a.column(named: name), let y = b.column(named: name) else { return (.infinity, false) }
            for r in 0 ..< a.rowCount {
                let u = x.doubleValue(at: r), v = y.doubleValue(at: r)
                if (u == nil) != (v == nil) { nullsAgree = false }
                if let u, let v, u != v { worst = max(worst, abs(u - v) / abs(v)) }
            }
        }
        return (worst, nullsAgree)
    }

    @Test(arguments: wikiFixtures)
    func everyTickerOfTheVendorsDataPassesTheCheck(name: String, ticker: String?) throws {
        let table = try Self.load(name, ticker: ticker)
        #expect(table.hasWikiAdjustmentColumns)
        let problems = try table.adjustmentProblems(limit: 10)
        #expect(problems.isEmpty, "\(name): \(problems)")
    }

    /// `WIKI-PRICES.datatable.json` is a sample of rows, not a whole history: MSFT jumps from
    /// 2017-04-05 to 2017-05-18, over its 0.39 ex-dividend of 2017-05-16, which the adjusted
    /// values carry and the rows do not. The check finds exactly that gap.
    @Test
    func aHistoryWithADividendDayMissingFailsAfterTheGap() throws {
        let table = try Self.load("WIKI-PRICES.datatable.json")
        let problems = try table.adjustmentProblems(limit: 10)
        #expect(problems.map(\.ticker) == ["MSFT"])
        #expect(problems.map(\.day) == [Self.day("2017-05-18")])
        #expect(problems.first?.column == "adj_close")
    }

    @Test
    func koNullCloseDividendContributesNoFactor() throws {
        let table = try Self.load("WIKI-KO.asc.csv", ticker: "KO")
        let events = try table.corporateEvents(ofTicker: 0)
        #expect(events.contains(CorporateEvent(day: Self.day("2001-09-12"), split: nil, dividend: 0.18, ignored: true)))
        #expect(events.filter { $0.split != nil }.count == 6)
        // Counting its dividend would break the check on the next day.
        #expect(try table.adjustmentProblems().isEmpty)
    }

    @Test
    func theOlderAAPLVintageFailsOnItsOneStaleDayAndNowhereElse() throws {
        let table = try Self.load("WIKI-AAPL.asc.csv", ticker: "AAPL")
        let problems = try table.adjustmentProblems(limit: 1_000)
        #expect(problems.map(\.day) == [Self.day("2016-08-02")])
        #expect(problems.first?.column == "adj_close")
        // The dividend of 2016-08-04 (0.57 on a close of 105.87) the vintage has not recorded yet.
        #expect(abs((problems.first?.relativeError ?? 0) - 0.0053551) < 1e-6)
    }

    @Test
    func aStaleSplitFailsOnTheSplitDayExactly() throws {
        var table = try Self.load("WIKI-AAPL.desc.csv", ticker: "AAPL")
        let split = Self.day("2014-06-09")
        #expect(try table.corporateEvents(ofTicker: 0).contains(CorporateEvent(day: split, split: 7, dividend: nil, ignored: false)))
        // As a stale update leaves them: the split's factor missing before the split day.
        for name in AdjustmentRule.adjustedIdentifiers {
            let i = try #require(table.columnIndex(named: name))
            guard case .float64(var c) = table.columns[i] else {
                Issue.record("\(name) is not Float64")
                return
            }
            let factor = name == "adj_volume" ? 1.0 / 7 : 7
            c.withUnsafeMutableBufferPointer { v in for r in 0 ..< table.rowCount where table.dates[r] < split { v[r] *= factor } }
            table = try QuoteTable(
                schema: table.schema, columns: table.columns.enumerated().map { $0.offset == i ? .float64(c) : $0.element },
                dates: table.dates, tickers: table.tickers)
        }
        let problems = try table.adjustmentProblems(limit: 1_000)
        #expect(problems.map(\.day) == [split])
        #expect(problems.first?.column == "adj_close")
        // Recomputing repairs it (the anchor is the newest day's, untouched).
        var repaired = table
        try repaired.recomputeAdjustments()
        #expect(try repaired.adjustmentProblems().isEmpty)
        #expect(Self.worstDifference(repaired, try Self.load("WIKI-AAPL.desc.csv", ticker: "AAPL")).worst <= 1e-6)
    }

    /// Vintages that end on the vendor's as-of day, adjusted columns dropped: the anchor is 1.
    @Test(arguments: [("WIKI-AAPL.desc.csv", "AAPL"), ("WIKI-KO.asc.csv", "KO"), ("WIKI-AMZN.asc.csv", "AMZN")])
    func adjustReproducesTheVendorFromRawColumns(name: String, ticker: String) throws {
        let vendor = try Self.load(name, ticker: ticker)
        var table = try Self.droppingAdjusted(vendor)
        #expect(!table.hasAdjustedColumns)
        let summaries = try table.recomputeAdjustments()
        #expect(summaries.map(\.anchor) == [1])
        #expect(table.hasWikiAdjustmentColumns)
        let (worst, nullsAgree) = Self.worstDifference(table, vendor)
        #expect(nullsAgree)
        #expect(worst <= 1e-6)
        #expect(worst <= 1e-10, "measured 5e-12 at most (docs/ADJUSTMENTS.md)")
    }

    /// The 2014-only files end before the vendor's as-of day: the anchor carries its later events.
    @Test(arguments: [
        ("WIKI-AAPL.2014.asc.csv", "AAPL", 0.978027), ("WIKI-MSFT.2014.asc.csv", "MSFT", 0.966068),
        ("WIKI-ORCL-2000.desc.csv", "ORCL", 0.910685), ("WIKI-ZEN.2014.asc.csv", "ZEN", 1.0),
    ])
    func adjustReproducesTheVendorThroughTheAnchor(name: String, ticker: String, anchor: Double) throws {
        let vendor = try Self.load(name, ticker: ticker)
        var table = vendor
        let summaries = try table.recomputeAdjustments()
        #expect(abs(summaries[0].anchor - anchor) < 1e-6)
        let (worst, nullsAgree) = Self.worstDifference(table, vendor)
        #expect(nullsAgree)
        #expect(worst <= 1e-6)
    }

    @Test
    func adjustReproducesEveryTickerOfTheDatatable() throws {
        let vendor = try Self.load("WIKI-PRICES.datatable.2014.csv")
        #expect(vendor.tickers.map(\.symbol) == ["AAPL", "BRK.A", "MSFT", "ZEN"])
        var table = vendor
        let anchors = try table.recomputeAdjustments().map(\.anchor)
        #expect(abs(anchors[0] - 0.950004) < 1e-6 && abs(anchors[2] - 0.926953) < 1e-6)
        #expect(Self.worstDifference(table, vendor).worst <= 1e-6)
    }
}
