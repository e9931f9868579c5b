import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Sorting and top-k against a full sort of the oracle's values.
@Suite struct SortingTests {
    @Test(arguments: [51, 52, 53])
    func topKEqualsThePrefixOfAFullSortOfTheOraclesValues(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let table = SeriesTables.random(tickerLengths: (0 ..< 20).map { _ in rng.inRange(0 ... 300) }, seed: seed)
        var oracle = ExpressionOracle(table: table)
        var generator = ExpressionGenerator(seed: seed + 7, maxWindow: 30)
        for _ in 0 ..< 12 {
            let p = generator.predicate(1)
            let selection = try table.select(p)
            var keys = [SortKey]()
            for _ in 0 ..< rng.inRange(1 ... 3) {
                switch rng.below(4) {
                case 0: keys.append(SortKey(.date, descending: rng.chance(2)))
                case 1: keys.append(SortKey(.ticker, descending: rng.chance(2)))
                default: keys.append(SortKey(generator.any(2), descending: rng.chance(2)))
                }
            }
            // The reference: every key's value from the oracle (nil and NaN last), then table order.
            let values: [[Double?]] = keys.map { key in
                switch key.value {
                case .expression(let e): return oracle.values(e).map { $0?.isNaN == true ? nil : $0 }
                case .date: return (0 ..< table.rowCount).map { Double(table.dates[$0]) }
                case .ticker:
                    // Symbols as text: T10 sorts before T2.
                    let symbols = table.tickers.map(\.symbol).sorted()
                    return (0 ..< table.rowCount).map { r in
                        Double(symbols.firstIndex(of: table.tickers[Int(table.tickerNumber(ofRow: r))].symbol)!)
                    }
                }
            }
            let expected = oracle.rows(p).sorted { a, b in
                for (k, key) in keys.enumerated() {
                    switch (values[k][a], values[k][b]) {
                    case (nil, nil): continue
                    case (nil, _): return false
                    case (_, nil): return true
                    case let (x?, y?):
                        if x != y { return key.descending ? x > y : x < y }
                    }
                }
                return a < b
            }
            for limit in [nil, 0, 1, 7, expected.count / 3, expected.count + 5] {
                let got = try selection.rows(sortedBy: keys, limit: limit)
                #expect(got == Array(expected.prefix(limit ?? expected.count)), "\(keys) limit \(String(describing: limit))")
            }
        }
    }

    @Test func sortKeysParseWithDirectionAndPositions() throws {
        let table = SeriesTables.random(tickerLengths: [5], seed: 1)
        #expect(try SortKey.parse("-date", table: table) == SortKey(.date, descending: true))
        #expect(try SortKey.parse("ticker", table: table) == SortKey(.ticker))
        #expect(
            try SortKey.parse("-pct_change(close, 5)", table: table)
                == SortKey(ValueExpression.column("close").pctChange(5), descending: true))
        #expect(
            try SortKey.parse("(high - low) / close", table: table)
                == SortKey((ValueExpression.column("high") - .column("low")) / .column("close")))
        do {
            _ = try SortKey.parse("-mavg(clsoe, 5)", table: table)
            Issue.record("no error")
        } catch {
            #expect(error.column == 7 && error.message.contains("unknown column 'clsoe'"), "\(error)")
        }
    }
}
