import Colonnade
import Foundation
import Testing
@testable import ColonnadeCLI

/// End-to-end: `colonnade filter` as a process, its output parsed back and compared with the
/// engine's own answer on the same snapshot.
@Suite struct EndToEndFilterTests {
    static let expression = "close > 100 and 1e5 < volume < 1e6"

    /// The engine's matching rows for `expression`.
    static func engineSelection(_ fx: EndToEndFixture, _ expression: String = expression) throws -> Selection {
        try fx.table.select(where: expression)
    }

    @Test(arguments: ["table", "csv", "json", "ndjson"])
    func everyFormatPrintsTheEnginesRowsWithTheMentionedColumns(format: String) throws {
        let fx = try EndToEndFixture.get()
        let selection = try Self.engineSelection(fx)
        #expect(selection.count > 10 && selection.count < fx.table.rowCount / 2, "a selective query")
        let run = try fx.run("filter", "--where", Self.expression, "--format", format)
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)

        // By default: ticker, date and the columns --where mentions, in first-mention order.
        let columns = ["ticker", "date", "close", "volume"]
        let parsed: ParsedResult
        switch format {
        case "csv": parsed = try OutputParser.csv(run.standardOutput)
        case "json": parsed = try OutputParser.jsonArray(run.standardOutput, columns: columns)
        case "ndjson": parsed = try OutputParser.ndjson(run.standardOutput, columns: columns)
        default:
            // Not a terminal: every row, and no statistics line (that goes to a terminal's stderr).
            parsed = try OutputParser.table(run.standardOutput, hasFooter: false).result
        }
        #expect(parsed.columns == columns)
        #expect(parsed.rows.count == selection.count)
        #expect(parsed.rows == fx.expectedRows(selection.rows(), columns: columns))
    }

    @Test(arguments: ["csv", "json", "ndjson"])
    func allColumnsOfEveryRowRoundTripExactly(format: String) throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("filter", "--columns", "all", "--format", format)
        #expect(run.status == 0)
        let parsed =
            switch format {
            case "csv": try OutputParser.csv(run.standardOutput)
            case "json": try OutputParser.jsonArray(run.standardOutput, columns: fx.allColumns)
            default: try OutputParser.ndjson(run.standardOutput, columns: fx.allColumns)
            }
        #expect(parsed.columns == fx.allColumns)
        #expect(parsed.rows.count == fx.table.rowCount)
        #expect(parsed.rows == fx.expectedRows(0 ..< fx.table.rowCount, columns: fx.allColumns))
    }

    @Test func columnsAreThoseAskedForInTheirOrderWhateverTheirSpelling() throws {
        let fx = try EndToEndFixture.get()
        let selection = try Self.engineSelection(fx)
        // Identifiers, a source name and the date column's source name.
        let run = try fx.run("filter", "--where", Self.expression, "--columns", "adj_close,Date,ticker,Adj. Volume", "--format", "csv")
        #expect(run.status == 0)
        let parsed = try OutputParser.csv(run.standardOutput)
        #expect(parsed.columns == ["adj_close", "date", "ticker", "adj_volume"])
        #expect(parsed.rows == fx.expectedRows(selection.rows(), columns: parsed.columns))
    }

    @Test func limitPrintsTheFirstRowsAndTheFooterCountsEveryMatch() throws {
        let fx = try EndToEndFixture.get()
        let selection = try Self.engineSelection(fx)
        let csv = try fx.run("filter", "--where", Self.expression, "--limit", "7", "--format", "csv")
        #expect(
            try OutputParser.csv(csv.standardOutput).rows
                == fx.expectedRows(selection.rows(limit: 7), columns: ["ticker", "date", "close", "volume"]))

        let table = try fx.run("filter", "--where", Self.expression, "--limit", "7")
        #expect(table.status == 0)
        #expect(table.standardError.isEmpty)
        let parsed = try OutputParser.table(table.standardOutput, hasFooter: false).result
        #expect(parsed.rows.count == 7)

        // A limit above the matches prints them all.
        let all = try fx.run("filter", "--where", Self.expression, "--limit", "100000", "--format", "ndjson")
        #expect(try OutputParser.lines(all.standardOutput).count == selection.count)
    }

    @Test func onATerminalTheTableIsCappedAndTheStatisticsLineSaysHowManyWereShown() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("pty-table")
        // A 40-line terminal: 35 rows, the first 18 and the last 17, with the gap between.
        let term = try PseudoTerminalSession(
            ["filter", "--snapshot", fx.snapshot, "--tickers", "KO", "--columns", "date,close"],
            environment: EndToEndFixture.cleanEnvironment, in: directory)
        #expect(try term.finish() == 0)
        let lines = term.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 + 35 + 1 + 1, "\(term.output)")
        #expect(lines[20] == "… 265 more rows …")
        #expect(lines.last?.wholeMatch(of: /35 of 300 matching rows shown in [0-9.]+ (µs|ms|s)/) != nil, "\(lines.last ?? "")")
        let ko = fx.table.ticker("KO")!
        let firstDate = Day(daysSinceEpoch: fx.table.dates[ko.firstRow]).description
        let lastDate = Day(daysSinceEpoch: fx.table.dates[ko.firstRow + ko.rowCount - 1]).description
        #expect(lines[2].hasPrefix(firstDate) && lines[37].hasPrefix(lastDate))

        // --all lifts the cap; an empty answer says 0 of 0.
        let all = try PseudoTerminalSession(
            ["filter", "--snapshot", fx.snapshot, "--tickers", "KO", "--columns", "date,close", "--all"],
            environment: EndToEndFixture.cleanEnvironment, in: directory)
        #expect(try all.finish() == 0)
        #expect(all.output.split(separator: "\n").count == 2 + 300 + 1)
        let none = try PseudoTerminalSession(
            ["filter", "--snapshot", fx.snapshot, "--where", "close < 0"],
            environment: EndToEndFixture.cleanEnvironment, in: directory)
        #expect(try none.finish() == 0)
        #expect(none.output.split(separator: "\n").last?.hasPrefix("0 of 0 matching rows shown in ") == true, "\(none.output)")
    }

    @Test(arguments: ["date", "-date"])
    func sortOrdersByDateThenTableOrder(sort: String) throws {
        let fx = try EndToEndFixture.get()
        let selection = try Self.engineSelection(fx)
        let dates = fx.table.dates
        let descending = sort == "-date"
        let expectedOrder = selection.rows().sorted { a, b in
            dates[a] != dates[b] ? (descending ? dates[a] > dates[b] : dates[a] < dates[b]) : a < b
        }
        let columns = ["ticker", "date", "close", "volume"]
        let run = try fx.run("filter", "--where", Self.expression, "--sort", sort, "--format", "csv")
        #expect(run.status == 0)
        let parsed = try OutputParser.csv(run.standardOutput)
        #expect(parsed.rows == fx.expectedRows(expectedOrder, columns: columns))
        let printedDates = parsed.rows.map { $0[1].description }
        #expect(printedDates == (descending ? printedDates.sorted(by: >) : printedDates.sorted()))
        #expect(Set(parsed.rows.map { $0[0] }).count > 1, "rows of several tickers interleave")

        // With --limit: the first rows of that order.
        let limited = try fx.run("filter", "--where", Self.expression, "--sort", sort, "--limit", "25", "--format", "csv")
        #expect(try OutputParser.csv(limited.standardOutput).rows == fx.expectedRows(expectedOrder.prefix(25), columns: columns))
    }

    @Test func tickersAndDateRangeNarrowTheRows() throws {
        let fx = try EndToEndFixture.get()
        let selection = try fx.table.select(where: "ticker in (KO, AAPL) and date >= 2000-03-01 and date <= 2000-06-30")
        #expect(selection.count > 0)
        for arguments in [["--tickers", "KO,AAPL"], ["--tickers", "KO", "--tickers", "AAPL"]] {
            let run = try fx.run(
                ["filter", "--snapshot", fx.snapshot] + arguments
                    + ["--from", "2000-03-01", "--to", "2000-06-30", "--columns", "all", "--format", "csv"])
            #expect(run.status == 0)
            let parsed = try OutputParser.csv(run.standardOutput)
            #expect(parsed.rows == fx.expectedRows(selection.rows(), columns: fx.allColumns))
            #expect(Set(parsed.rows.map { $0[0] }) == [.text("AAPL"), .text("KO")])
            #expect(parsed.rows.first?[1] == .text("2000-03-01"))
            #expect(parsed.rows.last?[1] == .text("2000-06-30"))
        }
        // With --where too, everything is and-ed.
        let both = try fx.table.select(where: "ticker in (KO, AAPL) and date >= 2000-03-01 and date <= 2000-06-30 and close > 30")
        let run = try fx.run(
            "filter", "--tickers", "KO,AAPL", "--from", "2000-03-01", "--to", "2000-06-30", "--where", "close > 30", "--count")
        #expect(run.standardOutput == "\(both.count)\n")
    }

    @Test func countPrintsTheNumberOfMatchesInEveryFormat() throws {
        let fx = try EndToEndFixture.get()
        let n = try Self.engineSelection(fx).count
        let table = try fx.run("filter", "--where", Self.expression, "--count")
        #expect(table.status == 0 && table.standardError.isEmpty)
        #expect(table.standardOutput == "\(n)\n")
        let csv = try fx.run("filter", "--where", Self.expression, "--count", "--format", "csv")
        #expect(csv.standardOutput == "count\n\(n)\n")
        let json = try fx.run("filter", "--where", Self.expression, "--count", "--format", "json")
        #expect(try OutputParser.jsonArray(json.standardOutput, columns: ["count"]).rows == [[.number(Double(n))]])
        let ndjson = try fx.run("filter", "--where", Self.expression, "--count", "--format", "ndjson")
        #expect(ndjson.standardOutput == "{\"count\":\(n)}\n")
    }

    @Test(arguments: ["table", "csv", "json"])
    func countByTickerMatchesTheEngine(format: String) throws {
        let fx = try EndToEndFixture.get()
        let expected = try Self.engineSelection(fx).countsByTicker().map {
            [Value.text(fx.table.tickers[Int($0.ticker)].symbol), .number(Double($0.count))]
        }
        let run = try fx.run("filter", "--where", Self.expression, "--count", "--by", "ticker", "--format", format)
        #expect(run.status == 0)
        let parsed =
            switch format {
            case "csv": try OutputParser.csv(run.standardOutput)
            case "json": try OutputParser.jsonArray(run.standardOutput, columns: ["ticker", "count"])
            default: try OutputParser.table(run.standardOutput, hasFooter: false).result
            }
        #expect(parsed.columns == ["ticker", "count"])
        #expect(parsed.rows == expected)
        #expect(expected.count > 1)
    }

    static let aggregates = "count,sum(close),min(low),max(high),avg(volume)"
    static let aggregateColumns = ["count(*)", "sum(close)", "min(low)", "max(high)", "avg(volume)"]

    /// The engine's aggregate rows as values (ticker first when grouped).
    static func expectedAggregates(_ fx: EndToEndFixture, byTicker: Bool) throws -> [[Value]] {
        let result = try engineSelection(fx).aggregate(try Aggregate.parseList(aggregates), byTicker: byTicker)
        return result.rows.map { row in
            (byTicker ? [Value.text(row.ticker ?? "?")] : []) + row.values.map { $0.map(Value.number) ?? .null }
        }
    }

    @Test(arguments: ["csv", "json", "ndjson"], [false, true])
    func aggregatesMatchTheEngine(format: String, byTicker: Bool) throws {
        let fx = try EndToEndFixture.get()
        let columns = (byTicker ? ["ticker"] : []) + Self.aggregateColumns
        let run = try fx.run(
            ["filter", "--snapshot", fx.snapshot, "--where", Self.expression, "--agg", Self.aggregates, "--format", format]
                + (byTicker ? ["--by", "ticker"] : []))
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)
        let parsed =
            switch format {
            case "csv": try OutputParser.csv(run.standardOutput)
            case "json": try OutputParser.jsonArray(run.standardOutput, columns: columns)
            default: try OutputParser.ndjson(run.standardOutput, columns: columns)
            }
        #expect(parsed.columns == columns)
        let expected = try Self.expectedAggregates(fx, byTicker: byTicker)
        #expect(parsed.rows == expected)
        #expect(expected.count == (byTicker ? try Self.engineSelection(fx).countsByTicker().count : 1))
    }

    @Test func aggregatesInTheTableFormat() throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("filter", "--where", Self.expression, "--agg", Self.aggregates, "--by", "ticker")
        #expect(run.status == 0)
        // No footer under aggregates; their values with at most 6 decimals (CSV and JSON keep every digit).
        let parsed = try OutputParser.table(run.standardOutput, hasFooter: false).result
        #expect(parsed.columns == ["ticker"] + Self.aggregateColumns)
        let rounded = try Self.expectedAggregates(fx, byTicker: true).map { row in
            row.map { value -> Value in
                guard case .number(let bits) = value else { return value }
                return .number(Double(Double(bitPattern: bits).roundedText(decimals: 6))!)
            }
        }
        #expect(parsed.rows == rounded)
    }

    @Test func timingWritesOneJSONLineToStandardError() throws {
        let fx = try EndToEndFixture.get()
        let n = try Self.engineSelection(fx).count
        let run = try fx.run("filter", "--where", Self.expression, "--count", "--timing", "--repeat", "3", "--threads", "3")
        #expect(run.status == 0)
        #expect(run.standardOutput == "\(n)\n")
        let lines = try OutputParser.lines(run.standardError)
        #expect(lines.count == 1, "\(run.standardError)")
        let timing = try OutputParser.jsonObject(lines[0])
        for key in ["load_ms", "query_ms", "repeat", "warmup", "rows", "matched", "threads"] {
            #expect(timing[key] is NSNumber, "\(key) in \(lines[0])")
        }
        #expect((timing["load_ms"] as? NSNumber)?.doubleValue ?? -1 >= 0)
        #expect((timing["query_ms"] as? NSNumber)?.doubleValue ?? -1 >= 0)
        #expect((timing["repeat"] as? NSNumber)?.intValue == 3)
        #expect((timing["warmup"] as? NSNumber)?.intValue == 1)  // --repeat given: one untimed run first
        #expect((timing["threads"] as? NSNumber)?.intValue == 3)
        #expect((timing["rows"] as? NSNumber)?.intValue == fx.table.rowCount)
        #expect((timing["matched"] as? NSNumber)?.intValue == n)

        // Printing rows: still one line, the rest of the output unchanged.
        let rows = try fx.run("filter", "--where", Self.expression, "--format", "csv", "--timing", "--threads", "1")
        let plain = try fx.run("filter", "--where", Self.expression, "--format", "csv")
        #expect(rows.standardOutput == plain.standardOutput)
        let rowLines = try OutputParser.lines(rows.standardError)
        #expect(rowLines.count == 1)
        let rowTiming = try OutputParser.jsonObject(rowLines.first ?? "")
        #expect((rowTiming["repeat"] as? NSNumber)?.intValue == 1)
        #expect((rowTiming["warmup"] as? NSNumber)?.intValue == 0)
        #expect((rowTiming["threads"] as? NSNumber)?.intValue == 1)
        #expect((rowTiming["matched"] as? NSNumber)?.intValue == n)
        #expect(plain.standardError.isEmpty)
    }

    @Test func threadCountDoesNotChangeTheOutput() throws {
        let fx = try EndToEndFixture.get()
        let variants: [[String]] = [
            ["--where", Self.expression, "--columns", "all", "--format", "csv"],
            ["--where", Self.expression, "--sort", "-date", "--format", "ndjson"],
            ["--where", Self.expression, "--agg", Self.aggregates, "--by", "ticker", "--format", "csv"],
            ["--agg", Self.aggregates, "--format", "json"],
            ["--where", "volume > 1e6 and not (close < 20 or close > 500)", "--count", "--by", "ticker", "--format", "csv"],
        ]
        for arguments in variants {
            let base = ["filter", "--snapshot", fx.snapshot] + arguments
            let one = try fx.run(base + ["--threads", "1"])
            let three = try fx.run(base + ["--threads", "3"])
            let noZoneMaps = try fx.run(base + ["--threads", "3", "--no-zonemaps"])
            #expect(one.status == 0 && three.status == 0 && noZoneMaps.status == 0)
            #expect(!one.standardOutput.isEmpty)
            #expect(one.standardOutput == three.standardOutput, "\(arguments)")
            #expect(one.standardOutput == noZoneMaps.standardOutput, "\(arguments)")
        }
    }

    /// Fuzz finding 3: `volume > 9007199254740993` compared with 9007199254740992, the nearest
    /// Double, and so matched 2^53 + 1. Integer literals are exact, on the command line too.
    @Test func integerLiteralsPast2To53CompareExactlyWithAnInt64Column() throws {
        let scratch = try Scratch()
        let values: [Int64] = [(1 << 53) - 1, 1 << 53, (1 << 53) + 1, (1 << 53) + 2, .max - 1, .max]
        var table = try QuoteTable(
            schema: [ColumnDescriptor(name: "volume", type: .int64)], columns: [AnyColumn(Column<Int64>(values))],
            dates: Column<Int32>((0 ..< Int32(values.count)).map { $0 }),
            tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: values.count)])
        table.computeSummaries()
        try table.save(to: scratch.snapshot, durable: false)
        for (expression, count) in [
            ("volume > 9007199254740993", 3), ("volume >= 9007199254740993", 4),
            ("volume = 9007199254740993", 1), ("volume <> 9007199254740993", 5),
            ("volume < 9007199254740993", 2), ("not volume <= 9007199254740993", 3),
            ("volume between 9007199254740993 and 9223372036854775806", 3),
            ("volume > 9223372036854775806", 1), ("volume = 9223372036854775807", 1),
            ("volume * 1 > 9007199254740993", 3),
        ] {  // in Double: 2^53 + 2 and the two near 2^63
            let run = colonnade(["filter", "--snapshot", scratch.snapshot, "--where", expression, "--count"])
            #expect(run.status == 0, "\(expression): \(run.standardError)")
            #expect(run.standardOutput == "\(count)\n", "\(expression): \(run.standardOutput)")
        }
        let rows = colonnade(["filter", "--snapshot", scratch.snapshot, "--where", "volume = 9007199254740993", "--format", "csv"])
        #expect(rows.status == 0, "\(rows.standardError)")
        #expect(rows.standardOutput.contains(",9007199254740993"), "\(rows.standardOutput)")
    }
}
