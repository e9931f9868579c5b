import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Grouped aggregates (ticker, year, month, ticker and year/month) of columns and expressions,
/// first/last/stddev included, against `AggregateOracle` on random tables with nulls, NaN, ±0,
/// ±∞ and tickers of 0…300 rows; bit-identical for any thread count and chunk size 512 or 1024.
///
/// Tolerance: counts, min, max, first and last exactly; sum and mean within 1e-9 of the sum of
/// the absolute values; stddev within 1e-7 relative (Welford and Chan vs two-pass). A NaN or an
/// infinity must be the same NaN-ness or infinity.
@Suite struct AggregateDifferentialTests {
    static let groupings: [(AggregateGrouping, Bool, String?)] = [
        (.none, false, nil), (.ticker, true, nil), (.year, false, "year"), (.month, false, "month"),
        (AggregateGrouping(byTicker: true, bucket: .year), true, "year"),
        (AggregateGrouping(byTicker: true, bucket: .month), true, "month"),
        (.date, false, "date"), (.week, false, "week"), (.quarter, false, "quarter"),
        (AggregateGrouping(byTicker: true, bucket: .week), true, "week"), (AggregateGrouping(byTicker: true, bucket: .date), true, "date"),
        (AggregateGrouping(byTicker: true, bucket: .quarter), true, "quarter"),
    ]

    static func close(_ got: Double?, _ expected: Double?, _ function: Aggregate.Function, scale: Double) -> Bool {
        switch (got, expected) {
        case (nil, nil): return true
        case let (g?, e?):
            if e.isNaN || g.isNaN { return e.isNaN && g.isNaN }
            if e.isInfinite || g.isInfinite { return e == g }
            switch function {
            case .count, .min, .max, .first, .last: return g == e
            case .sum, .mean: return Swift.abs(g - e) <= 1e-9 * Swift.max(1, scale)
            case .stddev: return Swift.abs(g - e) <= 1e-7 * Swift.max(1, Swift.abs(e))
            case .median, .quantile: return Swift.abs(g - e) <= 1e-12 * Swift.max(1, Swift.abs(e))
            case .corr: return Swift.abs(g - e) <= 1e-7
            }
        default: return false
        }
    }

    static func sameBits(_ a: AggregateResult, _ b: AggregateResult) -> Bool {
        a.rows.count == b.rows.count
            && zip(a.rows, b.rows).allSatisfy { x, y in
                x.ticker == y.ticker && x.year == y.year && x.month == y.month && x.bucketKey == y.bucketKey
                    && x.values.count == y.values.count
                    && zip(x.values, y.values).allSatisfy { u, v in
                        switch (u, v) {
                        case (nil, nil): true
                        case let (u?, v?): u.isNaN ? v.isNaN : u.bitPattern == v.bitPattern
                        default: false
                        }
                    }
            }
    }

    @Test(arguments: [1, 2, 3, 4])
    func groupedAggregatesOfColumnsAndExpressionsMatchTheOracle(seed: UInt64) throws {
        var rng = SplitMix64(seed: 500 + seed)
        let lengths = (0 ..< 20).map { _ in rng.chance(6) ? rng.below(3) : rng.inRange(0 ... 300) }
        let table = SeriesTables.random(tickerLengths: lengths, seed: seed)
        var oracle = AggregateOracle(table: table)
        var generator = ExpressionGenerator(seed: 600 + seed, maxWindow: 60)
        var checked = 0
        for round in 0 ..< 6 {
            var aggregates: [Aggregate] = [.count]
            for _ in 0 ..< 8 {
                let f = Aggregate.Function.allCases[rng.below(Aggregate.Function.allCases.count)]
                let argument: ValueExpression =
                    rng.chance(3)
                    ? .column(SeriesTables.columns[rng.below(SeriesTables.columns.count)])
                    : generator.any(2)
                var aggregate = Aggregate(f, argument)
                if f == .quantile { aggregate.parameter = [0, 0.1, 0.25, 0.5, 0.9, 1][rng.below(6)] }
                if f == .corr {
                    aggregate.second =
                        rng.chance(2) ? .column(SeriesTables.columns[rng.below(SeriesTables.columns.count)]) : generator.any(2)
                }
                aggregates.append(aggregate)
            }
            let predicate = round == 0 ? RowPredicate.constant(true) : generator.predicate(1)
            let selection = try table.select(predicate)
            for (grouping, byTicker, bucket) in Self.groupings {
                let expected = oracle.rows(aggregates, matching: selection.rows(), byTicker: byTicker, bucket: bucket)
                var results = [AggregateResult]()
                for threads in [1, 2, 3] {
                    for chunk in [1, 2] {
                        var o = QueryOptions(threads: threads)
                        o.rowsPerChunk = chunk * zoneMapBlockRows
                        results.append(try selection.aggregate(aggregates, by: grouping, options: o))
                    }
                }
                // Thread count never changes a bit; chunk size may change sums overall only.
                for (i, r) in results.enumerated() where i >= 2 {
                    #expect(Self.sameBits(r, results[i % 2]), "threads change \(grouping): \(aggregates)")
                }
                if grouping != .none { #expect(Self.sameBits(results[0], results[1]), "chunk size changes grouped \(grouping)") }
                let got = results[0]
                if grouping.isOverall && selection.count == 0 {
                    #expect(got.rows.count == 1 && expected.isEmpty)
                    continue
                }
                guard got.rows.count == expected.count else {
                    Issue.record("\(grouping): \(got.rows.count) groups, expected \(expected.count) for \(predicate)")
                    continue
                }
                for (g, e) in zip(got.rows, expected) {
                    #expect(g.ticker == e.ticker && g.year == e.year && g.month == e.month && g.bucketText == e.bucket, "\(g) vs \(e)")
                    for (k, a) in aggregates.enumerated() where !Self.close(g.values[k], e.values[k], a.function, scale: e.scales[k]) {
                        Issue.record(
                            "\(grouping) \(e.ticker ?? "") \(e.year ?? 0)-\(e.month ?? 0) \(a): got \(String(describing: g.values[k])), expected \(String(describing: e.values[k]))"
                        )
                    }
                    checked += 1
                }
            }
        }
        #expect(checked > 100)
    }

    /// Adjacent tickers whose values would change the answer: a per-ticker expression in a year
    /// bucket never reads the previous ticker's rows, and first/last are by date across tickers.
    @Test func yearBucketsSpanTickersButExpressionsDoNot() throws {
        // Two tickers on the same dates, 2013-12-30 … 2014-01-02 (four days), closes 1… and 100….
        let d0 = Day(2013, 12, 30).daysSinceEpoch
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "close", type: .float64)],
            columns: [AnyColumn(Column<Double>([1, 2, 3, 4, 100, 200, 300, 400]))],
            dates: Column<Int32>([d0, d0 + 1, d0 + 2, d0 + 3, d0, d0 + 1, d0 + 2, d0 + 3]),
            tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 4), TickerEntry(symbol: "B", firstRow: 4, rowCount: 4)])
        let r = try table.selectAll().aggregate(
            [.count, .sum(Field("close").change()), .first("close"), .last("close"), .stddev("close"), .count(Field("close").prev())],
            by: .year)
        #expect(r.rows.map(\.year) == [2013, 2014])
        // 2013: rows 0, 1, 4, 5. change: null, 1, null, 100 (never 100 - 4).
        let squares: Double =
            (1 - 75.75) * (1 - 75.75) + (2 - 75.75) * (2 - 75.75) + (100 - 75.75) * (100 - 75.75) + (200 - 75.75) * (200 - 75.75)
        let expected2013: [Double?] = [4, 101, 1, 200, (squares / 3).squareRoot(), 2]
        #expect(r.rows[0].values == expected2013)
        // 2014: rows 2, 3, 6, 7. first by date: ties go to table order (A), last to B.
        let expected2014: [Double?] = [4, 202, 3, 400]
        #expect(Array(r.rows[1].values[0 ... 3]) == expected2014)
        let byTicker = try table.selectAll().aggregate(
            [.first("close"), .last("close")], by: AggregateGrouping(byTicker: true, bucket: .year))
        #expect(byTicker.rows.map { "\($0.ticker!) \($0.bucketText!)" } == ["A 2013", "A 2014", "B 2013", "B 2014"])
        let expectedEnds: [[Double?]] = [[1, 2], [3, 4], [100, 200], [300, 400]]
        #expect(byTicker.rows.map(\.values) == expectedEnds)
        let months = try table.selectAll().aggregate([.count], by: .month)
        #expect(months.rows.map(\.bucketText) == ["2013-12", "2014-01"])
    }

    @Test func listsAndGroupingsParse() throws {
        let table = SeriesTables.random(tickerLengths: [5], seed: 1)
        let list = try Aggregate.parseList(
            "count, avg(high - low),max(pct_change(close, 5)) , first(close), last(\"close\"), stddev(close)",
            table: table)
        #expect(
            list == [
                .count, .mean(Field("high") - Field("low")), .max(Field("close").pctChange(5)), .first("close"),
                .last("close"), .stddev("close"),
            ])
        #expect(list[1].description == "avg(high - low)" && list[5].description == "stddev(close)")
        // Positions point into the whole list.
        do {
            _ = try Aggregate.parseList("count, max(pct_change(clse))", table: table)
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .unknownColumn || error.message.contains("clse"))
            #expect(error.column == 23, "\(error)")
            #expect(error.suggestions.contains("close"))
        }
        #expect(throws: QueryError.self) { try Aggregate.parseList("mode(close)", table: table) }
        #expect(
            try Aggregate.parseList("median(close), quantile(close, 0.9) as q9, corr(close, open)", table: table)
                == [.median(.column("close")), .quantile(.column("close"), 0.9).named("q9"), .corr(.column("close"), .column("open"))])
        #expect(throws: QueryError.self) { try Aggregate.parseList("quantile(close, 1.5)", table: table) }
        #expect(throws: QueryError.self) { try Aggregate.parseList("avg(high - low)") }  // expressions need the table
        #expect(throws: QueryError.self) { try table.selectAll().aggregate([.sum("ticker")]) }
        #expect(throws: QueryError.self) { try table.selectAll().aggregate([.sum(Field("close").mavg(0 + 1) + .column("nope"))]) }
        #expect(try AggregateGrouping(parsing: "ticker, year") == AggregateGrouping(byTicker: true, bucket: .year))
        #expect(try AggregateGrouping(parsing: "month") == .month)
        #expect(throws: QueryError.self) { try AggregateGrouping(parsing: "year,month") }
        #expect(throws: QueryError.self) { try AggregateGrouping(parsing: "fortnight") }
        #expect(try AggregateGrouping(parsing: "week,ticker") == AggregateGrouping(byTicker: true, bucket: .week, tickerFirst: false))
        #expect(throws: QueryError.self) { try AggregateGrouping(parsing: "week,quarter") }
    }
}
