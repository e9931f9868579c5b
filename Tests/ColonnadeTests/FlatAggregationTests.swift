import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// The flat path of grouped aggregates (`Selection+FlatAggregation.swift`: bare columns, grouped
/// by ticker) against the general path (`QueryOptions.flatAggregation` off) bit for bit, and
/// against `AggregateOracle`, on random tables with nulls, NaN, ±0 and ±∞ in every column type,
/// tickers of 0…300 rows (buckets crossing mask words), every match and selective predicates.
@Suite struct FlatAggregationTests {
    static let functions: [Aggregate.Function] = [.count, .sum, .min, .max, .mean, .first, .last]

    /// With nulls (a bucket's rows are visited one by one) and without (a bucket where every row
    /// matches takes one loop per field asked for).
    @Test(arguments: [1, 2, 3], [0.06, 0])
    func flatGroupsEqualTheGeneralPathAndTheOracle(seed: UInt64, nullRate: Double) throws {
        var rng = SplitMix64(seed: 900 + seed)
        let lengths = (0 ..< 24).map { _ in rng.chance(6) ? rng.below(3) : rng.inRange(0 ... 300) }
        let table = SeriesTables.random(tickerLengths: lengths, seed: 40 + seed, nullRate: nullRate, specialRate: 0.05)
        var oracle = AggregateOracle(table: table)
        var generator = ExpressionGenerator(seed: 950 + seed, maxWindow: 20)
        // Grouped by ticker (`flatGrouped`) or by date alone (`flatByDate`).
        let groupings = AggregateDifferentialTests.groupings.filter { $0.1 || $0.2 == "date" }
        var checked = 0, flat = 0
        for round in 0 ..< 6 {
            var aggregates: [Aggregate] = [.count]
            for _ in 0 ..< 6 {
                let f = Self.functions[rng.below(Self.functions.count)]
                aggregates.append(Aggregate(f, SeriesTables.columns[rng.below(SeriesTables.columns.count)]))
            }
            if round == 0 {
                aggregates = try Aggregate.parseList("first(open),max(high),min(low),last(close),sum(volume),count(f32)", table: table)
            }
            let predicate = round < 2 ? RowPredicate.constant(true) : generator.predicate(1)
            let selection = try table.select(predicate)
            for (grouping, byTicker, bucket) in groupings {
                let expected = oracle.rows(aggregates, matching: selection.rows(), byTicker: byTicker, bucket: bucket)
                var general = QueryOptions(threads: 1)
                general.flatAggregation = false
                let reference = try selection.aggregate(aggregates, by: grouping, options: general)
                for threads in [1, 2, 3] {
                    let got = try selection.aggregate(aggregates, by: grouping, options: QueryOptions(threads: threads))
                    #expect(AggregateDifferentialTests.sameBits(got, reference), "\(grouping) \(aggregates) threads \(threads)")
                    #expect(got.rows.map(\.bucketText) == reference.rows.map(\.bucketText))
                    #expect(got.rows.map(\.ticker) == reference.rows.map(\.ticker))
                }
                flat += 1
                guard reference.rows.count == expected.count else {
                    Issue.record("\(grouping): \(reference.rows.count) groups, expected \(expected.count)")
                    continue
                }
                for (g, e) in zip(reference.rows, expected) {
                    #expect(g.ticker == e.ticker && g.bucketText == e.bucket, "\(g) vs \(e)")
                    for (k, a) in aggregates.enumerated()
                    where !AggregateDifferentialTests.close(g.values[k], e.values[k], a.function, scale: e.scales[k]) {
                        Issue.record(
                            "\(grouping) \(a): got \(String(describing: g.values[k])), expected \(String(describing: e.values[k]))")
                    }
                    checked += 1
                }
            }
        }
        #expect(flat == 6 * groupings.count)
        #expect(checked > 500)
    }

    /// The flat path is the one taken: grouped by ticker over bare columns it evaluates no
    /// expression rows; a stddev or an expression argument goes the general way.
    @Test func flatPathTakesBareColumnsOnly() throws {
        let table = SeriesTables.random(tickerLengths: [70, 0, 130, 5], seed: 7)
        let all = table.selectAll()
        let weekly = try AggregateGrouping(parsing: "ticker,week")
        let bars = try Aggregate.parseList("first(open),max(high),min(low),last(close),sum(volume)", table: table)
        let barsPlan = try AggregationPlan(bars, table: table)
        #expect(AggregationPlan.flatEligible(barsPlan, weekly))
        #expect(!AggregationPlan.flatEligible(barsPlan, .week))
        let spread = try AggregationPlan(Aggregate.parseList("stddev(close)", table: table), table: table)
        #expect(!AggregationPlan.flatEligible(spread, weekly))
        let expression = try AggregationPlan(Aggregate.parseList("max(high - low)", table: table), table: table)
        #expect(!AggregationPlan.flatEligible(expression, weekly))
        // By date alone: the dense per-day path; by week alone (several rows of a ticker in a
        // group, summed per ticker first) the general one.
        let plan = try AggregationPlan(bars, table: table)
        #expect(all.flatByDate(plan, .date, aggregates: bars, options: QueryOptions()) != nil)
        #expect(all.flatByDate(plan, .week, aggregates: bars, options: QueryOptions()) == nil)
        #expect(all.flatByDate(spread, .date, aggregates: bars, options: QueryOptions()) == nil)
        // Labels are formatted from the key when read.
        let result = try all.aggregate(bars, by: weekly)
        #expect(result.rows.allSatisfy { $0.bucketLabel == $0.bucketKey.map { Day(daysSinceEpoch: Int32($0)).description } })
    }
}
