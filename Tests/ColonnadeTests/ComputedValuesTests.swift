import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Computed columns (`QuoteTable.values(of:atRows:)`, what `--columns 'pct_change(close) as ret'`
/// prints) against `ExpressionOracle` on random tables with nulls, NaN, ±0, ±∞, tickers of 0…300
/// rows: the same value bit for bit at any rows, in any order, with repeats, whatever rows are
/// asked for (a window sees the ticker's whole history).
@Suite struct ComputedValuesTests {
    static func same(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (x?, y?): x.bitPattern == y.bitPattern || (x == y)
        default: false
        }
    }

    @Test(arguments: [1, 2, 3])
    func valuesAtAnyRowsMatchTheOracle(seed: UInt64) throws {
        var rng = SplitMix64(seed: 700 + seed)
        let lengths = (0 ..< 16).map { _ in rng.chance(6) ? rng.below(3) : rng.inRange(0 ... 300) }
        let table = SeriesTables.random(tickerLengths: lengths, seed: seed)
        var oracle = ExpressionOracle(table: table)
        var generator = ExpressionGenerator(seed: 800 + seed)
        for round in 0 ..< 25 {
            let e = round == 0 ? ValueExpression.column("close") : generator.any(3)
            let all = oracle.values(e)
            let isBare: Bool
            if case .column = e { isBare = true } else { isBare = false }
            // Expressions: NaN is null. A bare column keeps its stored NaN.
            let expected = all.map { v in isBare ? v : v.flatMap { $0.isNaN ? nil : $0 } }
            // Every row, in order; then a random sample in random order with repeats.
            let every = try table.values(of: e, atRows: Array(0 ..< table.rowCount))
            for r in 0 ..< table.rowCount where !Self.same(every[r], expected[r]) {
                Issue.record("row \(r) of \(e): got \(String(describing: every[r])), expected \(String(describing: expected[r]))")
                break
            }
            let sample = (0 ..< 200).map { _ in rng.below(max(1, table.rowCount)) }.filter { $0 < table.rowCount }
            let got = try table.values(of: e, atRows: sample)
            #expect(zip(got, sample).allSatisfy { Self.same($0, expected[$1]) }, "\(e)")
        }
        #expect(throws: QueryError.self) { try table.values(of: .column("nope"), atRows: [0]) }
        #expect(throws: QueryError.self) { try table.values(of: Field("close") - .column("date"), atRows: [0]) }
    }
}
