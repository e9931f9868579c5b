@testable import ColonnadeCLI
import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// `chart`'s adjusted prices (issue #33: adjusted by default, `--raw`, one consistent set of
/// candles, split marks, `--log`) and `--on` (issue #30), on the real KO and AAPL fixtures, checked
/// against values read straight from the fixture CSVs.
@Suite struct ChartAdjustedTests {
    /// The AAPL fixture's rows (the 2016 vintage the chart fixture imports): date, raw OHLC, adjusted OHLC.
    static func aaplRows(from: String, to: String) throws -> [(date: String, raw: [Double], adjusted: [Double], split: Double)] {
        let text = try String(contentsOfFile: Fixtures.quandlPath("WIKI-AAPL.asc.csv"), encoding: .utf8)
        return text.split(whereSeparator: \.isNewline).dropFirst().compactMap { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard f[0] >= from && f[0] <= to else { return nil }
            let n = f.dropFirst().map { Double($0) ?? .nan }
            // Open, High, Low, Close, Volume, Ex-Dividend, Split Ratio, Adj. Open … Adj. Close, Adj. Volume.
            return (f[0], Array(n[0 ..< 4]), Array(n[7 ..< 11]), n[6])
        }
    }

    /// The price axis' tick labels (right-aligned numbers left of the plot), as numbers.
    static func priceTickValues(_ document: SVGDocument) -> [Double] {
        document.all("text").filter { $0.attributes["x"] == SVGText.number(SVGChart(series: []).marginLeft - 6) }.compactMap {
            Double($0.text)
        }
    }

    /// The subtitle line.
    static func subtitle(_ document: SVGDocument) -> String {
        document.all("text").first { $0.text.contains(" trading day") }?.text ?? ""
    }

    @Test func pricesAreAdjustedByDefaultAndRawOnRequest() throws {
        let rows = try Self.aaplRows(from: "2014-05-01", to: "2014-07-31")
        let adjustedHigh = rows.map { $0.adjusted[1] }.max() ?? 0, rawHigh = rows.map { $0.raw[1] }.max() ?? 0
        #expect(rawHigh > 600 && adjustedHigh < 100, "the 7:1 split of 2014-06-09 is inside the range")

        let adjusted = try ChartTests.checkDocument(
            try ChartTests.chart(["AAPL", "--from", "2014-05-01", "--to", "2014-07-31"]), "adjusted")
        #expect(Self.subtitle(adjusted).contains("close, adjusted for splits and dividends"), "\(Self.subtitle(adjusted))")
        let ticks = Self.priceTickValues(adjusted)
        #expect((ticks.max() ?? 0) >= adjustedHigh && (ticks.max() ?? 0) < adjustedHigh * 1.2, "axis fits the adjusted prices: \(ticks)")
        #expect(adjusted.all("path").contains { $0.attributes["fill"] == SVGChart.downColor }, "candlesticks")

        let raw = try ChartTests.checkDocument(
            try ChartTests.chart(["AAPL", "--from", "2014-05-01", "--to", "2014-07-31", "--raw"]), "raw")
        #expect(!Self.subtitle(raw).contains("adjusted"))
        #expect((Self.priceTickValues(raw).max() ?? 0) >= rawHigh, "\(Self.priceTickValues(raw))")
    }

    /// Candles are drawn from close's own open, high and low; `--price` of another column is a line
    /// (adj_close with the raw open/high/low made false candles).
    @Test func anotherPriceColumnIsALineNeverMixedCandles() throws {
        for extra in [["--price", "adj_close", "--raw"], ["--price", "adj_close"], ["--price", "high"]] {
            let document = try ChartTests.checkDocument(
                try ChartTests.chart(["AAPL", "--from", "2014-05-01", "--to", "2014-07-31"] + extra), "\(extra)")
            #expect(!document.all("path").contains { $0.attributes["fill"] == SVGChart.downColor }, "\(extra): no candle bodies")
            #expect(
                document.all("path").contains { $0.attributes["stroke"] == SVGChart.palette[0] && $0.attributes["stroke-width"] == "1.5" })
        }
    }

    /// `--where` reads the drawn (adjusted) prices: the marked rows are those whose adjusted close
    /// passes, counted from the fixture; with `--raw`, the raw ones.
    @Test func marksReadTheSameColumnsAsTheDrawnPrices() throws {
        let rows = try Self.aaplRows(from: "2014-01-01", to: "2014-12-31")
        let adjustedCount = rows.filter { $0.adjusted[3] > 90 }.count, rawCount = rows.filter { $0.raw[3] > 90 }.count
        #expect(adjustedCount != rawCount && adjustedCount > 0)
        for (extra, count) in [([String](), adjustedCount), (["--raw"], rawCount)] {
            let document = try SVGDocument(
                try ChartTests.chart(["AAPL", "--from", "2014-01-01", "--to", "2014-12-31", "--where", "close > 90"] + extra))
            #expect(Self.subtitle(document).contains("where close > 90 (\(count) rows)"), "\(extra): \(count): \(Self.subtitle(document))")
            #expect(document.all("circle").count == count, "one dot per marked day (a year: fewer days than pixel columns)")
        }
        // An overlay of close is the drawn close: with candles off (a line), the two lines coincide.
        let document = try ChartTests.checkDocument(
            try ChartTests.chart(["AAPL", "--from", "2013-01-01", "--to", "2014-12-31", "--overlay", "close"]), "overlay")
        let line = try #require(
            document.all("path").first { $0.attributes["stroke"] == SVGChart.palette[0] && $0.attributes["stroke-width"] == "1.5" })
        let overlay = try #require(try ChartTests.overlayLines(document).first)
        #expect(SVGDocument.subpaths(line.attributes["d"] ?? "")?.joined().map(\.1) == overlay.joined().map(\.1))
    }

    @Test func splitDaysAreMarkedOnTheTimeAxis() throws {
        let rows = try Self.aaplRows(from: "2014-01-01", to: "2014-12-31")
        let splitIndex = try #require(rows.firstIndex { $0.split != 1 })
        #expect(rows[splitIndex].date == "2014-06-09" && rows.filter { $0.split != 1 }.count == 1)
        for extra in [[String](), ["--raw"], ["--log"]] {
            let document = try ChartTests.checkDocument(
                try ChartTests.chart(["AAPL", "--from", "2014-01-01", "--to", "2014-12-31"] + extra), "splits")
            let group = try #require(document.all("g").first { $0.attributes["class"] == "splits" }, "\(extra)")
            #expect(group.attributes["fill"] == SVGChart.splitColor)
            let labels = document.all("text").filter { $0.text.hasPrefix("split ") }
            #expect(labels.map(\.text) == ["split 7:1"])
            let line = try #require(document.all("path").first { $0.attributes["stroke"] == SVGChart.splitColor })
            let x = try #require(SVGDocument.subpaths(line.attributes["d"] ?? "")?.first?.first?.0)
            #expect(x == ChartTests.slotX(splitIndex, of: rows.count), "at the split's trading day: \(x)")
        }
        // No split in the range, no marks.
        let quiet = try ChartTests.chart(["AAPL", "--from", "2015-01-01", "--to", "2015-12-31"])
        #expect(!quiet.contains("class=\"splits\""))
        #expect(FetchCommand.splitText(7) == "7:1" && FetchCommand.splitText(1.5) == "3:2" && FetchCommand.splitText(0.1) == "1:10")
    }

    /// `--log`: equal ratios are equal distances, ticks are 1, 2, 5 × 10^k; a value at or below 0
    /// is a gap, never a point at the edge.
    @Test func aLogScaleSpacesEqualRatiosEqually() throws {
        let document = try ChartTests.checkDocument(try ChartTests.chart(["KO", "--log"]), "log")
        #expect(Self.subtitle(document).hasSuffix("· log scale"), "\(Self.subtitle(document))")
        let labels = document.all("text").filter { $0.attributes["x"] == SVGText.number(SVGChart(series: []).marginLeft - 6) }
        let ticks = labels.compactMap { label -> (value: Double, y: Double)? in
            guard let v = Double(label.text), let y = Double(label.attributes["y"] ?? "") else { return nil }
            return (v, y)
        }
        #expect(ticks.count >= 3, "\(ticks)")
        for t in ticks {
            let mantissa = t.value / pow(10, floor(log10(t.value)))
            #expect([1, 2, 5].contains((mantissa * 1000).rounded() / 1000), "\(t.value)")
        }
        var decades = 0
        let distance = { (a: Double, b: Double) -> Double? in
            guard let ya = ticks.first(where: { abs($0.value - a) < a * 1e-9 })?.y,
                let yb = ticks.first(where: { abs($0.value - b) < b * 1e-9 })?.y
            else { return nil }
            return ya - yb
        }
        var reference: Double?
        for t in ticks {
            guard let d = distance(t.value, t.value * 10) else { continue }
            decades += 1
            if let reference { #expect(abs(d - reference) <= 0.15, "a decade is \(reference) px and \(d) px") } else { reference = d }
        }
        #expect(decades >= 2, "KO's adjusted history spans several decades: \(ticks)")

        let gaps = SVGChart(series: [ChartTests.series([2, 0, -1, 4, 8])], logScale: true).render()
        let paths = try ChartTests.priceLine(gaps)
        #expect(paths.map(\.count) == [2, 2], "a dot for 2, then 4 to 8: \(paths)")
        #expect(PriceAxis(logCovering: 0.27, 46, maxCount: 8).values.count <= 8)
        #expect(PriceAxis(logCovering: 101, 103, maxCount: 8).values.count >= 2, "a narrow range still has ticks")
        #expect(PriceAxis(logCovering: 1e-3, 1e9, maxCount: 5).values.count <= 5)
    }

    /// `--on`: each ticker ends at its last row on or before the day (a Saturday answers with the
    /// Friday), a ticker with no row within --max-stale is left out with filter's note, and
    /// mistakes are precise errors.
    @Test func asOfADayEndsEachTickerAtItsRowForThatDay() throws {
        let snapshot = try ChartTests.fixtureSnapshot.get()
        let saturday = colonnade(["chart", "AAPL,KO", "--on", "2014-06-07", "--from", "2014-05-01", "--snapshot", snapshot])
        #expect(saturday.status == 0, "\(saturday.standardError)")
        #expect(saturday.standardError.contains("note: as of 2014-06-06 (2014-06-07 has no rows)"), "\(saturday.standardError)")
        let document = try ChartTests.checkDocument(saturday.standardOutput, "on")
        #expect(Self.subtitle(document).hasPrefix("2014-05-01 to 2014-06-06 · 26 trading days"), "\(Self.subtitle(document))")

        // KO's fixture and AAPL's both end on 2016-08-10: a week later both are stale by 7 days or less…
        let within = colonnade(["chart", "AAPL", "--on", "2016-08-15", "--from", "2016-08-01", "--snapshot", snapshot])
        #expect(within.status == 0, "\(within.standardError)")
        #expect(Self.subtitle(try SVGDocument(within.standardOutput)).hasPrefix("2016-08-01 to 2016-08-10"))
        // … a month later, left out; with --max-stale none, kept.
        let stale = colonnade(["chart", "AAPL,KO", "--on", "2016-09-30", "--snapshot", snapshot])
        #expect(stale.status == 1)
        #expect(
            stale.standardError.contains(
                "error: no ticker to chart as of 2016-09-30: AAPL, KO have no row on or before it within --max-stale 7"),
            "\(stale.standardError)")
        let kept = colonnade([
            "chart", "AAPL,KO", "--on", "2016-09-30", "--max-stale", "none", "--from", "2016-01-01", "--snapshot", snapshot,
        ])
        #expect(kept.status == 0, "\(kept.standardError)")
        #expect(Self.subtitle(try SVGDocument(kept.standardOutput)).contains("to 2016-08-10"))
        let latest = colonnade(["chart", "KO", "--on", "latest", "--from", "2016-08-01", "--snapshot", snapshot])
        #expect(latest.status == 0, "\(latest.standardError)")
        #expect(Self.subtitle(try SVGDocument(latest.standardOutput)).hasPrefix("2016-08-01 to 2016-08-10"))

        for (arguments, message) in [
            (["--on", "2014-13-01"], "--on"),
            (["--on", "2014-06-06", "--to", "2014-06-30"], "--to"),
            (["--max-stale", "3"], "--max-stale"),
            (["--on", "2014-06-06", "--max-stale", "-1"], "--max-stale"),
        ] {
            let run = colonnade(["chart", "AAPL"] + arguments + ["--snapshot", snapshot])
            #expect(run.status == ExitStatus.usage, "\(arguments): \(run.standardError)")
            #expect(run.standardError.hasPrefix("error: ") && run.standardError.contains(message), "\(arguments): \(run.standardError)")
            #expect(run.standardOutput.isEmpty)
        }
    }
}
