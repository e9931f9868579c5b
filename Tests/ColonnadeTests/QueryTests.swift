import Testing
@testable import Colonnade
import ColonnadeTestSupport

@Suite struct QueryTests {
    @Test(arguments: [0, 1, 63, 64, 65, 4095, 4096, 4097, 70_000])
    func randomPredicatesMatchThreeValuedReference(rows: Int) throws {
        let table = TestTables.random(rows: rows, tickers: max(1, min(rows / 50, 40)), seed: UInt64(rows) + 3)
        var rng = SplitMix64(seed: 99 &+ UInt64(rows))
        let trials = rows > 10_000 ? 12 : 60
        var nonEmpty = 0, partial = 0
        for _ in 0 ..< trials {
            let p = Reference.randomPredicate(table, rng: &rng)
            let expected = Reference.rows(p, table: table)
            if !expected.isEmpty { nonEmpty += 1 }
            if !expected.isEmpty && expected.count < rows { partial += 1 }
            for options in [
                QueryOptions(threads: 1, useBlockSummaries: false), QueryOptions(threads: 1, useBlockSummaries: true),
                QueryOptions(threads: 3, useBlockSummaries: true), QueryOptions(threads: 2, useBlockSummaries: false),
            ] {
                let got = try table.select(p, options: options)
                if got.rows() != expected {
                    Issue.record("rows=\(rows) \(options) predicate \(p): got \(got.count) rows, expected \(expected.count)")
                    return
                }
                #expect(got.count == expected.count)
            }
        }
        // The random predicates must actually select something, and not everything.
        if rows >= 4095 { #expect(nonEmpty > trials / 4 && partial > trials / 4, "nonEmpty \(nonEmpty), partial \(partial)") }
    }

    @Test func notOfComparisonDoesNotMatchNullOrNaN() throws {
        let close = Column<Double>([50, nil, 70, .nan])
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "Close", type: .float64)], columns: [AnyColumn(close)],
            dates: Column<Int32>([1, 2, 3, 4]), tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 4)])
        #expect(try table.select(where: "not close > 60").rows() == [0])
        #expect(try table.select(where: "close > 60").rows() == [2])
        #expect(try table.select(where: "not (close > 60 or close < 55)").rows() == [])
        #expect(try table.select(where: "close > 60 or ticker = A").rows() == [0, 1, 2, 3])
        #expect(try table.select(where: "not (close > 60 and ticker = A)").rows() == [0])
    }

    @Test func tickerAndDateTermsUseTheIndex() throws {
        let table = QuoteGenerator(tickers: 8, days: 300, seed: 1).makeTable()
        let from = try #require(Day("2000-03-01")), to = try #require(Day("2000-06-30"))
        let s = try table.select(where: "ticker in (AAPL, KO) and 2000-03-01 <= date <= 2000-06-30")
        let expected = Reference.rows(.tickers(["AAPL", "KO"]) && Field.date.isBetween(from, to), table: table)
        #expect(s.rows() == expected)
        #expect(!expected.isEmpty)
        // The plan is a single interval leaf: no kernel at all.
        let plan = try table.plan(try QueryParser(table: table).parse("ticker in (AAPL, KO) and 2000-03-01 <= date <= 2000-06-30"))
        guard case .rows(let intervals) = plan else {
            Issue.record("expected an interval plan, got \(plan)")
            return
        }
        #expect(intervals.count == 2)
    }

    @Test func builderAndTextGiveTheSameAnswer() throws {
        let table = QuoteGenerator(tickers: 20, days: 1000, seed: 5).makeTable()
        let text = try table.select(where: "80 < high < 83 and 78 < low < 82 and ticker in (FDX, AAPL, KO, IBM) and date >= 2001-01-01")
        let built = try table.select(
            Field("high").isInside(80, 83) && Field("low").isInside(78, 82)
                && .tickers(["FDX", "AAPL", "KO", "IBM"]) && Field.date >= Day(2001, 1, 1))
        #expect(text.rows() == built.rows())
        #expect(
            text.rows()
                == Reference.rows(
                    try QueryParser(table: table).parse(
                        "80 < high < 83 and 78 < low < 82 and ticker in (FDX, AAPL, KO, IBM) and date >= 2001-01-01"), table: table))
    }

    @Test func integerColumnsCompareWithFractionalBoundsExactly() throws {
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "v", type: .int64), ColumnDescriptor(name: "w", type: .float32)],
            columns: [
                AnyColumn(Column<Int64>([80, 81, 82, 83, Int64.max])),
                AnyColumn(Column<Float>([80, 80.1, 80.5, 81, 1e30])),
            ],
            dates: Column<Int32>([1, 2, 3, 4, 5]), tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 5)])
        for e in [
            "v > 80.5", "v >= 81", "v < 82.5", "v <= 82", "80.5 < v < 82.5", "v = 81.5", "v > 1e300", "v < -1e300",
            "w > 80.1", "w >= 80.1", "w < 80.1", "w <= 80.1", "w = 80.1", "w > 1e39", "w between 80.1 and 81",
        ] {
            let p = try QueryParser(table: table).parse(e)
            #expect(try table.select(p).rows() == Reference.rows(p, table: table), "\(e)")
        }
    }

    @Test func aggregatesMatchReferenceOverallAndByTicker() throws {
        let table = TestTables.random(rows: 20_000, tickers: 13, seed: 8, specialRate: 0)
        let s = try table.select(where: "f64 > 70 or i32 < 65")
        let aggs: [Aggregate] = [.count, .count("f64"), .sum("f64"), .min("i32"), .max("i64"), .mean("Adj. F64"), .sum("f32")]
        for threads in [1, 3] {
            let overall = try s.aggregate(aggs, options: QueryOptions(threads: threads))
            let byTicker = try s.aggregate(aggs, byTicker: true, options: QueryOptions(threads: threads))
            func reference(_ rows: [Int]) -> [Double?] {
                aggs.map { a -> Double? in
                    guard let name = a.column else { return Double(rows.count) }
                    let c = table.column(named: name)!
                    let vs = rows.compactMap { c.doubleValue(at: $0) }
                    switch a.function {
                    case .count: return Double(vs.count)
                    case .sum: return vs.isEmpty ? nil : vs.reduce(0, +)
                    case .min: return vs.min()
                    case .max: return vs.max()
                    case .mean: return vs.isEmpty ? nil : vs.reduce(0, +) / Double(vs.count)
                    case .first, .last, .stddev, .median, .quantile, .corr: return nil  // not in this list (AggregateDifferentialTests)
                    }
                }
            }
            func close(_ a: [Double?], _ b: [Double?]) -> Bool {
                zip(a, b).allSatisfy { x, y in
                    switch (x, y) {
                    case (nil, nil): true
                    case let (x?, y?): abs(x - y) <= 1e-9 * max(1, abs(y))
                    default: false
                    }
                } && a.count == b.count
            }
            #expect(close(overall.rows[0].values, reference(s.rows())))
            #expect(byTicker.rows.count == s.countsByTicker().count)
            for row in byTicker.rows {
                let t = try #require(table.ticker(row.ticker!))
                let rows = s.rows().filter { t.rows.contains($0) }
                #expect(close(row.values, reference(rows)), "\(row.ticker!)")
            }
        }
        // Thread count does not change a single bit.
        #expect(try s.aggregate(aggs, options: QueryOptions(threads: 1)) == s.aggregate(aggs, options: QueryOptions(threads: 4)))
    }

    @Test func aggregateListParses() throws {
        let list = try Aggregate.parseList("count, sum(close),min(low) ,max(high),avg(volume), count(\"Adj. Close\")")
        #expect(list == [.count, .sum("close"), .min("low"), .max("high"), .mean("volume"), .count("Adj. Close")])
        #expect(throws: QueryError.self) { try Aggregate.parseList("total(close)") }
        #expect(throws: QueryError.self) { try Aggregate.parseList("sum") }
        #expect(throws: QueryError.self) { try Aggregate.parseList("sum(close") }
    }

    @Test func unknownColumnInSwiftPredicateSuggests() throws {
        let table = QuoteGenerator(tickers: 1, days: 10).makeTable()
        #expect { try table.select(Field("hihg") > 3) } throws: { ($0 as? QueryError)?.suggestions == ["high"] }
    }
}
