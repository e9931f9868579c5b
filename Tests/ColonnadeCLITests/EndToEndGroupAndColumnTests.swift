import Colonnade
import Foundation
import Testing

/// End-to-end: computed output columns (`--columns … pct_change(close) as ret, mavg(close,50)`),
/// calendar groups (`--by year|month|ticker,year`) and aggregates of expressions through the built
/// `colonnade`, read back and compared with the engine on the same snapshot.
@Suite struct EndToEndGroupAndColumnTests {
    static let screen = "close > mavg(close, 20)"

    @Test(arguments: ["csv", "ndjson"])
    func computedColumnsPrintTheEnginesValues(format: String) throws {
        let fx = try EndToEndFixture.get()
        let table = fx.table
        let run = try fx.run(
            "filter", "--where", Self.screen, "--columns", "ticker,date,close,pct_change(close) as ret,mavg(close,50)",
            "--format", format, "--limit", "3000")
        #expect(run.status == 0, "\(run.standardError)")
        let columns = ["ticker", "date", "close", "ret", "mavg(close,50)"]
        let parsed =
            format == "csv" ? try OutputParser.csv(run.standardOutput) : try OutputParser.ndjson(run.standardOutput, columns: columns)
        #expect(parsed.columns == columns)
        let rows = try table.select(where: Self.screen).rows(limit: 3000)
        let ret = try table.values(of: Field("close").pctChange(), atRows: rows)
        let mavg = try table.values(of: Field("close").mavg(50), atRows: rows)
        let expected = zip(fx.expectedRows(rows, columns: ["ticker", "date", "close"]), zip(ret, mavg)).map { base, v in
            base + [v.0.map(Value.number) ?? .null, v.1.map(Value.number) ?? .null]
        }
        #expect(parsed.rows == expected)
        #expect(mavg.contains { $0 == nil } && mavg.contains { $0 != nil }, "the first 49 rows of a ticker have no 50-day average")
    }

    @Test func computedColumnsFollowSortAndOn() throws {
        let fx = try EndToEndFixture.get()
        let table = fx.table
        let run = try fx.run(
            "filter", "--on", "latest", "--sort", "-pct_change(close, 5)", "--limit", "5",
            "--columns", "ticker,pct_change(close, 5) as r5", "--format", "csv")
        #expect(run.status == 0, "\(run.standardError)")
        let latest = try table.select(.constant(true), on: .latest)
        let rows = try latest.rows(sortedBy: [SortKey(Field("close").pctChange(5), descending: true)], limit: 5)
        let values = try table.values(of: Field("close").pctChange(5), atRows: rows)
        let expected = zip(fx.expectedRows(rows, columns: ["ticker"]), values).map { $0 + [$1.map(Value.number) ?? .null] }
        #expect(try OutputParser.csv(run.standardOutput).rows == expected)
    }

    @Test func aBadComputedColumnPointsAtTheProblem() throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("filter", "--columns", "date,mavg(clse, 5) as m")
        #expect(run.status == 2)
        let lines = try OutputParser.lines(run.standardError)
        try #require(lines.count >= 3, "\(run.standardError)")
        #expect(lines[0].hasPrefix("error: --columns: unknown column 'clse'"), "\(lines[0])")
        #expect(lines[1] == "  mavg(clse, 5)")
        #expect(lines[2] == "       ^")
        let unknown = try fx.run("filter", "--columns", "date,clse")
        #expect(unknown.status == 2 && unknown.standardError.contains("did you mean"), "\(unknown.standardError)")
    }

    @Test(arguments: ["year", "month", "ticker,year", "ticker,month", "ticker"])
    func groupedAggregatesOfExpressionsMatchTheEngine(by: String) throws {
        let fx = try EndToEndFixture.get()
        let table = fx.table
        let agg = "count,avg(high - low),max(pct_change(close)),first(close),last(close),stddev(close)"
        let run = try fx.run("filter", "--where", "volume > 0", "--agg", agg, "--by", by, "--format", "csv")
        #expect(run.status == 0, "\(run.standardError)")
        let parsed = try OutputParser.csv(run.standardOutput)
        let grouping = try AggregateGrouping(parsing: by)
        let keys = grouping.keyNames
        #expect(
            parsed.columns == keys + [
                "count(*)", "avg(high - low)", "max(pct_change(close))", "first(close)", "last(close)",
                "stddev(close)",
            ])
        let result = try table.select(where: "volume > 0").aggregate(try Aggregate.parseList(agg, table: table), by: grouping)
        #expect(result.rows.count > 1)
        let expected = result.rows.map { row -> [Value] in
            var keyValues = [Value]()
            if grouping.byTicker { keyValues.append(.text(row.ticker ?? "")) }
            switch grouping.bucket {
            case .year?: keyValues.append(.number(Double(row.year ?? 0)))
            case .month?, .date?, .week?, .quarter?: keyValues.append(.text(row.bucketText ?? ""))
            case nil: break
            }
            return keyValues + row.values.map { $0.map(Value.number) ?? .null }
        }
        #expect(parsed.rows == expected)
        let count = try fx.run("filter", "--where", "volume > 0", "--count", "--by", by, "--format", "csv")
        let counted = try OutputParser.csv(count.standardOutput)
        #expect(counted.columns == keys + ["count"])
        #expect(counted.rows == expected.map { Array($0.prefix(keys.count + 1)) })
    }

    @Test func aBadGroupingOrAggregateIsAUsageError() throws {
        let fx = try EndToEndFixture.get()
        let by = try fx.run("filter", "--count", "--by", "fortnight")
        #expect(by.status == 2 && by.standardError.contains("'--by'"), "\(by.standardError)")
        let agg = try fx.run("filter", "--agg", "count,max(pct_change(clse))")
        #expect(agg.status == 2)
        let lines = try OutputParser.lines(agg.standardError)
        try #require(lines.count >= 3, "\(agg.standardError)")
        #expect(lines[1] == "  count,max(pct_change(clse))")
        #expect(lines[2] == "  " + String(repeating: " ", count: "count,max(pct_change(".count) + "^")
    }
}
