import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Overall aggregates of an as-of screen's selection, which reads its known rows instead of the
/// mask (`Selection+Aggregation.swift`), against the same aggregates over a selection of the same
/// mask alone, bit for bit: nulls, NaN, ±0 and ±∞ in every column type, chunks of one to three
/// zone-map blocks (rows in several chunks, some chunks empty), and plans the shortcut does not take.
@Suite struct KnownRowsAggregationTests {
    static let plain: [Aggregate] = [
        .count, .sum("close"), .mean("open"), .min("high"), .max("low"), .count("volume"), .sum("volume"), .min("f32"),
        .max("f32"), .sum("f32"),
    ]
    /// Plans that fall back to the mask: an expression, spread, ends and values.
    static let others: [[Aggregate]] = [
        [.sum(ValueExpression.column("close") - .column("open"))], [.stddev("close"), .sum("close")],
        [.first("close"), .last("high")], [.median(.column("low"))],
    ]

    @Test(arguments: [21, 22, 23])
    func knownRowsAggregateAsTheMaskDoes(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let lengths = (0 ..< 80).map { _ in rng.chance(6) ? rng.below(3) : rng.inRange(1 ... 600) }
        let table = SeriesTables.random(tickerLengths: lengths, seed: seed, nullRate: 0.1, specialRate: 0.1)
        var checked = 0
        for text in ["close > prev(close)", "high - low >= 0", "volume > 100", "open = open"] {
            for day in [ScreenDay.latest, .day(Day(daysSinceEpoch: table.dates[table.rowCount / 3]))] {
                for chunkRows in [zoneMapBlockRows, 2 * zoneMapBlockRows, 3 * zoneMapBlockRows, QueryOptions.chunkRows] {
                    var options = QueryOptions(threads: 2)
                    options.rowsPerChunk = chunkRows
                    let screen = try table.select(where: text, on: day, maxStale: .none, options: options)
                    #expect(screen.knownRows == screen.rows())
                    let fromMask = Selection(table: table, mask: screen.mask)
                    #expect(fromMask.knownRows == nil)
                    for aggregates in [Self.plain] + Self.others {
                        let got = try screen.aggregate(aggregates, options: options)
                        let expected = try fromMask.aggregate(aggregates, options: options)
                        // Bit for bit, except that every NaN is one: the mask's register loop may
                        // add in the other operand order, which picks another NaN's sign
                        // (`PlainAccumulationTests` holds that loop to `add` the same way).
                        let bits = { (r: AggregateResult) in
                            r.rows.flatMap { $0.values.map { $0.map { $0.isNaN ? Double.nan.bitPattern : $0.bitPattern } } }
                        }
                        #expect(bits(got) == bits(expected), "\(text) on \(day), chunks of \(chunkRows): \(aggregates)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 4 * 2 * 4 * 5)
    }
}
