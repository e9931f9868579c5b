@testable import ColonnadeCLI
import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// `colonnade chart`: ticks, the SVG's validity and bounds, gaps for nulls, one row, golden
/// files for fixture tickers, determinism and size.
@Suite struct ChartTests {
    // MARK: Price ticks

    @Test func priceTicksAreRoundAndCoverTheData() {
        #expect(NiceTicks(covering: 0.37, 9.2, maxCount: 6).values == [0, 2, 4, 6, 8, 10])
        #expect(NiceTicks(covering: 101.5, 104.25, maxCount: 5).values == [101, 102, 103, 104, 105])
        #expect(NiceTicks(covering: 101.5, 104.25, maxCount: 8).values == [101.5, 102, 102.5, 103, 103.5, 104, 104.5])
        #expect(NiceTicks(covering: 0.011, 0.019, maxCount: 6).label(0.012) == "0.012")
        // One value, or none, still gives an axis.
        #expect(NiceTicks(covering: 5, 5, maxCount: 8).values.count >= 2)
        #expect(NiceTicks(covering: 0, 0, maxCount: 8).values.count >= 2)
        #expect(NiceTicks(covering: .nan, .infinity, maxCount: 8).values == NiceTicks(covering: 0, 1, maxCount: 8).values)
        #expect(NiceTicks(covering: -1e308, 1e308, maxCount: 8).values.allSatisfy { $0.isFinite })
    }

    /// Ranges from 0.01 to 100,000 in price (seeded): steps of 1, 2 or 5 × 10^k, evenly spaced,
    /// at most maxCount ticks, the data inside, labels distinct.
    @Test func priceTicksFromOneCentToAHundredThousand() {
        var rng = SplitMix64(seed: 15)
        for _ in 0 ..< 2_000 {
            let magnitude = pow(10, -2 + 7 * rng.nextUnit())  // 0.01 … 100,000
            let a = magnitude * rng.nextUnit(), b = magnitude * rng.nextUnit()
            let maxCount = 2 + Int(rng.below(10))
            let ticks = NiceTicks(covering: a, b, maxCount: maxCount)
            #expect(ticks.values.count >= 2 && ticks.values.count <= maxCount, "\(a) \(b) \(maxCount): \(ticks.values)")
            #expect(ticks.lower <= min(a, b) && ticks.upper >= max(a, b))
            let exponent = floor(log10(ticks.step))
            let mantissa = (ticks.step / pow(10, exponent) * 1000).rounded() / 1000
            #expect([1, 2, 5, 10].contains(mantissa), "step \(ticks.step)")
            for (p, q) in zip(ticks.values, ticks.values.dropFirst()) {
                #expect(abs((q - p) - ticks.step) <= ticks.step * 1e-9)
            }
            let labels = ticks.values.map(ticks.label)
            #expect(Set(labels).count == labels.count, "\(labels)")
        }
    }

    // MARK: Date ticks

    static func day(_ text: String) -> Int32 { Day(text)?.daysSinceEpoch ?? 0 }

    @Test(arguments: [
        ("2014-03-05", "2014-03-07", CalendarTicks.Unit.days(1)),  // 3 days
        ("2014-03-03", "2014-03-14", .days(2)),  // 2 weeks
        ("2014-01-01", "2014-03-01", .weeks),  // 2 months
        ("2014-01-02", "2014-06-30", .months(1)),  // half a year
        ("2014-01-02", "2014-12-31", .months(3)),  // a year: quarters
        ("2010-01-04", "2014-12-31", .months(6)),  // 5 years: half-years
        ("2005-01-03", "2014-12-31", .years(1)),  // 10 years
        ("2003-01-02", "2016-08-10", .years(2)),  // 14 years
        ("1976-01-02", "2016-08-10", .years(5)),  // 40 years
        ("1900-01-01", "2020-12-31", .years(20)),  // 120 years
    ])
    func dateTicksSitOnCalendarBoundaries(first: String, last: String, unit: CalendarTicks.Unit) {
        let (a, b) = (Self.day(first), Self.day(last))
        let ticks = CalendarTicks(from: a, to: b, maxCount: 9)
        #expect(ticks.unit == unit)
        #expect(!ticks.days.isEmpty && ticks.days.count <= 9)
        #expect(ticks.days == ticks.days.sorted() && ticks.days.allSatisfy { a <= $0 && $0 <= b })
        for tick in ticks.days {
            let (year, month, dayOfMonth) = Day(daysSinceEpoch: tick).components
            switch ticks.unit {
            case .days(let n): #expect(Int(tick).floorMod(n) == 0)
            case .weeks: #expect(Int(tick - 4).floorMod(7) == 0, "a Monday")
            case .months(let n): #expect(dayOfMonth == 1 && (month - 1) % n == 0)
            case .years(let n): #expect(month == 1 && dayOfMonth == 1 && year % n == 0)
            }
        }
    }

    @Test func dateTickLabelsFitTheirUnit() {
        let quarter = CalendarTicks(from: Self.day("2014-01-02"), to: Self.day("2014-12-31"), maxCount: 9)
        #expect(quarter.days.map(quarter.label) == ["Apr 2014", "Jul 2014", "Oct 2014"])
        let years = CalendarTicks(from: Self.day("1976-01-02"), to: Self.day("2016-08-10"), maxCount: 9)
        #expect(years.days.map(years.label) == ["1980", "1985", "1990", "1995", "2000", "2005", "2010", "2015"])
        let one = CalendarTicks(from: Self.day("2014-03-05"), to: Self.day("2014-03-05"), maxCount: 9)
        #expect(one.days == [Self.day("2014-03-05")])
    }

    // MARK: The document

    /// Checks what every chart promises: well-formed XML with an `svg` root and a view box, every
    /// coordinate a finite number inside it, paths in absolute commands, nothing external.
    static func checkDocument(_ text: String, _ label: String) throws -> SVGDocument {
        let document = try SVGDocument(text)
        #expect(document.root?.name == "svg", "\(label)")
        let box = try #require(document.viewBox, "\(label): no viewBox")
        var bad: [String] = []
        for c in document.coordinates() {
            if let x = c.x, !(x.isFinite && x >= box.0 && x <= box.0 + box.2) { bad.append(c.what) }
            if let y = c.y, !(y.isFinite && y >= box.1 && y <= box.1 + box.3) { bad.append(c.what) }
        }
        #expect(bad.isEmpty, "\(label): \(bad.prefix(5))")
        #expect(document.all("script").isEmpty && document.all("image").isEmpty && document.all("use").isEmpty)
        #expect(!text.contains("href") && !text.contains("url(") && !text.contains("@import"), "\(label): refers outside itself")
        return document
    }

    /// A snapshot of real fixture tickers (KO since 1962, AAPL since 1980), imported once.
    static let fixtureSnapshot: Result<String, any Error> = Result {
        let path = try EndToEndFixture.scratchDirectory("chart").appendingPathComponent("wiki.snapshot").path
        for (file, ticker) in [("WIKI-KO.asc.csv", "KO"), ("WIKI-AAPL.asc.csv", "AAPL")] {
            let run = colonnade(["import", Fixtures.quandlPath(file), "--ticker", ticker, "--snapshot", path])
            guard run.status == 0 else { throw SVGDocument.ParseError(description: "import \(file): \(run.standardError)") }
        }
        return path
    }

    static func chart(_ arguments: [String]) throws -> String {
        let snapshot = try fixtureSnapshot.get()
        let run = colonnade(["chart"] + arguments + ["--snapshot", snapshot])
        #expect(run.status == 0, "\(arguments): \(run.standardError)")
        return run.standardOutput
    }

    /// The golden charts' names and `chart` arguments, from Tests/Fixtures/charts/goldens.tsv
    /// (the file Tests/Fixtures/charts/regenerate.sh rewrites the SVGs from).
    static func goldenCases() throws -> [String: [String]] {
        let text = try String(contentsOf: Fixtures.directory.appendingPathComponent("charts/goldens.tsv"), encoding: .utf8)
        var cases: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            cases[fields[0]] = Array(fields.dropFirst())
        }
        return cases
    }

    @Test func everyGoldenChartIsCompared() throws {
        #expect(
            Set(try Self.goldenCases().keys) == [
                "ko-history", "aapl-2014-h1-candles", "aapl-ko-growth", "ko-averages", "aapl-2014-raw-log",
            ])
    }

    /// Fixture charts compared with the committed golden files. The test never writes them: after
    /// a deliberate change, `Tests/Fixtures/charts/regenerate.sh` does (look at them before committing).
    @Test(arguments: ["ko-history", "aapl-2014-h1-candles", "aapl-ko-growth", "ko-averages", "aapl-2014-raw-log"])
    func fixtureChartsMatchTheirGoldenFiles(name: String) throws {
        let arguments = try #require(try Self.goldenCases()[name], "\(name) is not in goldens.tsv")
        let text = try Self.chart(arguments)
        _ = try Self.checkDocument(text, name)
        #expect(try Self.chart(arguments) == text, "the same input gives the same bytes")
        let golden = Fixtures.directory.appendingPathComponent("charts/\(name).svg")
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(
            text == expected, "\(name) differs from Tests/Fixtures/charts/\(name).svg (Tests/Fixtures/charts/regenerate.sh rewrites it)")
    }

    @Test func aTenYearDailyChartIsUnder300KB() throws {
        let text = try Self.chart(["KO", "--from", "2006-08-10", "--volume", "--overlay", "adj_close,open", "--where", "volume > 1e7"])
        let document = try Self.checkDocument(text, "ten years")
        #expect(text.utf8.count < 300_000, "\(text.utf8.count) bytes")
        #expect(!document.all("circle").isEmpty, "the --where rows are marked")
        #expect(document.all("circle").count <= 900, "at most one mark per pixel column")
    }

    @Test func candlesUpTo250DaysLinesBeyond() throws {
        let candles = try SVGDocument(try Self.chart(["AAPL", "--from", "2014-02-01", "--to", "2014-12-31"]))
        let fills = candles.all("path").compactMap { $0.attributes["fill"] }
        #expect(fills.contains(SVGChart.downColor), "filled bodies for falling days")
        let lines = try SVGDocument(try Self.chart(["AAPL", "--from", "2013-01-01", "--to", "2014-12-31"]))
        #expect(!lines.all("path").compactMap { $0.attributes["fill"] }.contains(SVGChart.downColor))
        #expect(lines.all("path").contains { $0.attributes["stroke"] == SVGChart.palette[0] })
    }

    /// A series built directly: `close` values, one day apart from 2014-01-01.
    static func series(_ close: [Double?], marked: [Bool]? = nil, symbol: String = "T") -> ChartSeries {
        let first = day("2014-01-01")
        return ChartSeries(
            symbol: symbol, name: nil, days: close.indices.map { first + Int32($0) }, close: close, ohlc: nil,
            volume: nil, overlays: [], marked: marked ?? close.map { _ in false })
    }

    /// The price line's subpaths.
    static func priceLine(_ text: String) throws -> [[(Double, Double)]] {
        let document = try checkDocument(text, "series")
        let line = try #require(
            document.all("path").first { $0.attributes["stroke"] == SVGChart.palette[0] && $0.attributes["stroke-width"] == "1.5" })
        return try #require(SVGDocument.subpaths(line.attributes["d"] ?? ""))
    }

    @Test func nullsLeaveGapsNeverZeros() throws {
        let paths = try Self.priceLine(SVGChart(series: [Self.series([11, 12, nil, nil, 13, 12.5, nil, 14])]).render())
        #expect(paths.count == 3, "three runs: \(paths)")
        // 2 points, 2 points, and a lone point drawn as a dot (the same point twice).
        #expect(paths.map(\.count) == [2, 2, 2])
        #expect(paths[2][0] == paths[2][1])
        // No point sits at 0: every y is one of the four values' positions.
        let ys = Set(paths.joined().map(\.1))
        #expect(ys.count == 5, "five distinct values drawn: \(ys)")
    }

    @Test func aTickerWithNullsFromAQuoteShapedTableDrawsGapsInBothLines() throws {
        let table = TestTables.quoteShaped(tickers: 2, rows: 3_000 ... 3_000, seed: 7)
        let path = try EndToEndFixture.scratchDirectory("chart-nulls").appendingPathComponent("q.snapshot").path
        try table.save(to: path)
        let symbol = table.tickers[0].symbol
        let closeNulls = table.column(named: "close").map { c in table.tickers[0].rows.filter { c.isNull($0) }.count } ?? 0
        #expect(closeNulls > 0, "the seed gives close nulls")
        let run = colonnade(["chart", symbol, "--overlay", "adj_close", "--snapshot", path])
        #expect(run.status == 0, "\(run.standardError)")
        let document = try Self.checkDocument(run.standardOutput, "nulls")
        let subpaths = document.all("path").filter { $0.attributes["stroke-width"] == "1.5" || $0.attributes["stroke-width"] == "1.2" }
            .map { SVGDocument.subpaths($0.attributes["d"] ?? "")?.count ?? 0 }
        #expect(subpaths.count == 2 && subpaths.allSatisfy { $0 > 1 }, "close (nulls) and adj_close (NaN) both broken: \(subpaths)")
    }

    @Test func oneRowIsAChartToo() throws {
        for chart in [
            SVGChart(series: [Self.series([42])]),
            SVGChart(series: [Self.series([42])], normalize: true),
            SVGChart(series: [Self.series([nil], marked: [true])], whereText: "close > 1"),
        ] {
            let text = chart.render()
            let document = try Self.checkDocument(text, "one row")
            #expect(document.all("text").count >= 3)
        }
        let single = try Self.chart(["AAPL", "--from", "2014-03-05", "--to", "2014-03-05", "--volume"])
        let document = try Self.checkDocument(single, "one AAPL day")
        #expect(document.all("text").contains { $0.text == "2014-03-05" })
    }

    @Test func marksFollowTheWhereRows() throws {
        let marked = [false, true, false, true, true]
        let text = SVGChart(series: [Self.series([1, 2, 3, 4, nil], marked: marked)], whereText: "x").render()
        let document = try Self.checkDocument(text, "marks")
        #expect(document.all("circle").count == 3, "one per marked row, the null one at the foot")
        #expect(text.contains("where x (3 rows)"))
    }

    @Test func textFromTheSnapshotIsEscaped() throws {
        var s = Self.series([1, 2])
        s.symbol = "A<&>\"'\u{1B}]0;owned\u{07}"
        s.name = "Evil & Co </text><script>alert(1)</script>"
        let text = SVGChart(series: [s]).render()
        let document = try Self.checkDocument(text, "escaping")
        #expect(document.all("script").isEmpty)
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(document.all("title").first?.text.hasPrefix("A<&>\"']0;owned — Evil & Co </text><script>") == true)
    }

    // MARK: Overlay expressions

    /// The overlay lines of a chart (dashed, not the legend's samples), as subpaths.
    static func overlayLines(_ document: SVGDocument) throws -> [[[(Double, Double)]]] {
        try document.all("path").filter { $0.attributes["stroke-dasharray"] != nil && $0.attributes["stroke-width"] == "1.2" }
            .map { try #require(SVGDocument.subpaths($0.attributes["d"] ?? "")) }
    }

    /// The x of the `index`-th of `count` trading days (the chart's layout: evenly spaced slots).
    static func slotX(_ index: Int, of count: Int) -> Double {
        let chart = SVGChart(series: [])
        return ((chart.marginLeft + (Double(index) + 0.5) * chart.plotWidth / Double(count)) * 10).rounded() / 10
    }

    /// The number of trading days the subtitle states.
    static func tradingDays(_ document: SVGDocument) throws -> Int {
        let subtitle = try #require(document.all("text").first { $0.text.contains(" trading day") }).text
        let words = subtitle.split(separator: " ")
        let index = try #require(words.firstIndex { $0.hasPrefix("trading") })
        return try #require(Int(words[index - 1].replacingOccurrences(of: ",", with: "")))
    }

    /// `mavg(close,50)` from a ticker's first day is null for its first 49 rows: the line starts at
    /// the 50th day, never at zero; from a later day it starts at once, computed with the rows
    /// before --from. A plain column and an expression can be mixed, each in the legend as typed.
    @Test func anOverlayExpressionStartsWhereItHasValues() throws {
        // AAPL's history starts on 1980-12-12: about 137 days to the end of June 1981.
        let early = try Self.checkDocument(try Self.chart(["AAPL", "--to", "1981-06-30", "--overlay", "mavg(close,50)"]), "first days")
        let count = try Self.tradingDays(early)
        #expect(count > 100 && count < 250, "\(count) days")
        let lines = try Self.overlayLines(early)
        #expect(lines.count == 1)
        let first = try #require(lines.first?.first?.first)
        #expect(first.0 == Self.slotX(49, of: count), "starts at the 50th day: \(first.0) vs \(Self.slotX(49, of: count))")
        #expect(lines[0].count == 1, "one run: no gap once the window is full")
        #expect(early.all("text").contains { $0.text == "mavg(close,50)" }, "the legend names it as typed")

        let later = try Self.checkDocument(
            try Self.chart([
                "AAPL", "--from", "1981-03-02", "--to", "1981-06-30",
                "--overlay", "mavg(close,50)", "--overlay", "adj_close",
            ]), "mid-history")
        let laterCount = try Self.tradingDays(later)
        let both = try Self.overlayLines(later)
        #expect(both.count == 2)
        for line in both {
            #expect(
                line.first?.first?.0 == Self.slotX(0, of: laterCount), "from the first day shown: \(String(describing: line.first?.first))")
        }
        // The average lags the price: its line differs from the adj_close line.
        #expect(both[0].joined().map(\.1) != both[1].joined().map(\.1))
    }

    /// An overlay with no value at all in the range (its window is longer than the history) draws
    /// no line — not an empty path, not zeros — and keeps its legend entry; the next overlay keeps
    /// its own colour.
    @Test func anOverlayWithoutValuesDrawsNothingButIsNamed() throws {
        let document = try Self.checkDocument(
            try Self.chart([
                "AAPL", "--to", "1981-06-30", "--overlay", "mavg(close,5000)",
                "--overlay", "mavg(close,5)",
            ]), "no values")
        let lines = document.all("path").filter { $0.attributes["stroke-width"] == "1.2" }
        #expect(lines.count == 1 && lines.allSatisfy { !($0.attributes["d"] ?? "").isEmpty })
        #expect(lines.first?.attributes["stroke"] == SVGChart.palette[2], "the second overlay's colour")
        #expect(document.all("text").contains { $0.text == "mavg(close,5000)" })
    }

    /// The same average over a window ending at each day, whatever --from is: the series the
    /// chart draws holds, for the days both ranges show, the same overlay values.
    @Test func anOverlayDoesNotDependOnTheFirstDayShown() throws {
        let table = try QuoteTable.load(from: try Self.fixtureSnapshot.get())
        let close = try #require(table.columnIndex(named: "close"))
        let average = try QueryParser(table: table).parseValue("mavg(close, 20)")
        func series(from: String?) throws -> ChartSeries {
            try #require(
                try ChartSeries(
                    table: table, symbol: "AAPL", from: from.map(Self.day), to: Self.day("1981-06-30"),
                    priceColumn: close, overlays: [("avg", average)], volumeColumn: nil, marks: nil))
        }
        let whole = try series(from: nil), part = try series(from: "1981-02-02")
        let values = try #require(whole.overlays.first?.values), partValues = try #require(part.overlays.first?.values)
        #expect(values.prefix(19).allSatisfy { $0 == nil } && values[19] != nil)
        #expect(partValues.count < values.count && partValues.allSatisfy { $0 != nil })
        #expect(Array(values.suffix(partValues.count)) == partValues)
    }

    // MARK: The command

    @Test func chartWritesAFileAndExplainsMistakes() throws {
        let snapshot = try Self.fixtureSnapshot.get()
        let directory = try EndToEndFixture.scratchDirectory("chart-out")
        let output = directory.appendingPathComponent("ko.svg").path
        let run = colonnade(["chart", "KO", "--from", "2014-01-01", "--snapshot", snapshot, "-o", output])
        #expect(run.status == 0 && run.standardOutput.isEmpty, "\(run.standardError)")
        #expect(run.standardError.contains("wrote \(output)"))
        _ = try Self.checkDocument(try String(contentsOfFile: output, encoding: .utf8), "file")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["ko.svg"], "no temporary left")

        let unknown = colonnade(["chart", "KOO", "--snapshot", snapshot])
        #expect(
            unknown.status == 1 && unknown.standardError.contains("no ticker 'KOO'") && unknown.standardError.contains("did you mean 'KO'"))
        let column = colonnade(["chart", "KO", "--overlay", "adj_clse", "--snapshot", snapshot])
        #expect(
            column.status == ExitStatus.usage && column.standardError.contains("--overlay: unknown column 'adj_clse'"),
            "\(column.standardError)")
        #expect(column.standardError.contains("adj_close"), "suggests the column: \(column.standardError)")
        let window = colonnade(["chart", "KO", "--overlay", "mavg(close, 0)", "--snapshot", snapshot])
        #expect(
            window.status == ExitStatus.usage && window.standardError.contains("--overlay") && window.standardError.contains("positive"),
            "\(window.standardError)")
        let syntax = colonnade(["chart", "KO", "--overlay", "mavg(close 50)", "--snapshot", snapshot])
        #expect(
            syntax.status == ExitStatus.usage && syntax.standardError.contains("^"), "a caret under the mistake: \(syntax.standardError)")
        let empty = colonnade(["chart", "KO", "--from", "2030-01-01", "--snapshot", snapshot])
        #expect(empty.status == 1 && empty.standardError.contains("KO has no rows from 2030-01-01"), "\(empty.standardError)")
        let volume = colonnade(["chart", "KO,AAPL", "--volume", "--snapshot", snapshot])
        #expect(volume.status == 1 && volume.standardError.contains("one ticker"))
        let badWhere = colonnade(["chart", "KO", "--where", "clse > 1", "--snapshot", snapshot])
        #expect(badWhere.status == ExitStatus.usage && badWhere.standardError.contains("--where"), "\(badWhere.standardError)")
        let notSVG = colonnade(["chart", "KO", "--snapshot", snapshot, "-o", snapshot])
        #expect(notSVG.status == 2, "a chart goes only to FILE.svg or -: \(notSVG.standardError)")
        #expect(
            notSVG.standardError.contains("invalid value '\(snapshot)' for '--output' in 'colonnade chart': a chart is one SVG document"))
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("chart-onto-\(getpid()).SVG").path
        try? FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: snapshot)
        defer { try? FileManager.default.removeItem(atPath: link) }
        let onto = colonnade(["chart", "KO", "--snapshot", snapshot, "-o", link])
        #expect(onto.status == 1, "never onto the snapshot it reads, whatever it is called: \(onto.standardError)")
    }
}
