import Testing
import Colonnade
import ColonnadeTestSupport

/// Random predicates with bounds on and around block minima and maxima, over quote-shaped tables,
/// checked against a row-at-a-time reference with zone maps on and off, on one chunk and on many
/// chunks and threads. Counters prove that every zone-map outcome (skip, fill, kernel) happened.
@Suite struct ZoneMapDifferentialTests {
    /// The values a bound should sit on or next to in block `block` of `column`: its minimum and
    /// maximum, their neighbours in the column's type, and the middle.
    static func edges(_ column: AnyColumn, block: Int) -> [Double] {
        func around<T: BinaryFloatingPoint>(_ mn: T, _ mx: T) -> [Double] {
            [mn, mx, mn.nextDown, mn.nextUp, mx.nextDown, mx.nextUp, (mn + mx) / 2].map { Double($0) }
        }
        func around<T: FixedWidthInteger>(_ mn: T, _ mx: T) -> [Double] {
            [Double(mn), Double(mx), Double(mn) - 1, Double(mn) + 1, Double(mx) - 1, Double(mx) + 1, (Double(mn) + Double(mx)) / 2]
        }
        switch column {
        case .float64(let c): return c.summaries.map { around($0.minimums[block], $0.maximums[block]) } ?? []
        case .float32(let c): return c.summaries.map { around($0.minimums[block], $0.maximums[block]) } ?? []
        case .int64(let c): return c.summaries.map { around($0.minimums[block], $0.maximums[block]) } ?? []
        case .int32(let c): return c.summaries.map { around($0.minimums[block], $0.maximums[block]) } ?? []
        }
    }

    /// A range on a random column with bounds from the edges of one or two nearby blocks.
    static func leaf(_ table: QuoteTable, rng: inout SplitMix64) -> RowPredicate {
        let c = rng.below(table.schema.count)
        let blocks = BlockSummaries<Double>.blockCount(forRows: table.rowCount)
        let b1 = rng.below(blocks), b2 = min(blocks - 1, b1 + rng.below(6))
        let low = edges(table.columns[c], block: b1), high = edges(table.columns[c], block: b2)
        var lo = low[rng.below(low.count)], hi = high[rng.below(high.count)]
        if lo > hi { swap(&lo, &hi) }
        let name = table.schema[c].identifier
        switch rng.below(6) {
        case 0: return .range(column: name, bounds: .closed(lo, hi))
        case 1: return .range(column: name, bounds: .open(lo, hi))
        case 2:
            return .range(
                column: name, bounds: RangeBounds(lower: lo, lowerInclusive: rng.chance(2), upper: hi, upperInclusive: rng.chance(2)))
        case 3: return .range(column: name, bounds: rng.chance(2) ? .atLeast(lo) : .greater(than: lo))
        case 4: return .range(column: name, bounds: rng.chance(2) ? .atMost(hi) : .less(than: hi))
        default: return .range(column: name, bounds: .equal(to: rng.chance(2) ? lo : hi))
        }
    }

    /// A leaf alone (the kernel stores), under `and` (intersects), under `or` (unions), negated,
    /// or mixed with ticker and date terms.
    static func predicate(_ table: QuoteTable, rng: inout SplitMix64) -> RowPredicate {
        switch rng.below(7) {
        case 0, 1: return leaf(table, rng: &rng)
        case 2: return .and([leaf(table, rng: &rng), leaf(table, rng: &rng), leaf(table, rng: &rng)])
        case 3: return .or([leaf(table, rng: &rng), leaf(table, rng: &rng)])
        case 4: return .not(leaf(table, rng: &rng))
        case 5: return .or([.and([leaf(table, rng: &rng), leaf(table, rng: &rng)]), leaf(table, rng: &rng)])
        default:
            let symbols = (0 ..< 3).map { _ in table.tickers[rng.below(table.tickers.count)].symbol }
            return .and([.tickers(symbols), .or([leaf(table, rng: &rng), .not(leaf(table, rng: &rng))])])
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func boundsAroundBlockEdgesMatchTheReference(seed: UInt64) throws {
        let table = TestTables.quoteShaped(tickers: 12, rows: 100 ... 1_200, seed: seed)
        let reference = ColumnarReference(table)
        let counters = EvaluationCounters()
        var zoneMapsOn = [QueryOptions(threads: 1), QueryOptions(threads: 3), QueryOptions(threads: 2)]
        zoneMapsOn[1].rowsPerChunk = zoneMapBlockRows
        zoneMapsOn[2].rowsPerChunk = 3 * zoneMapBlockRows
        for i in zoneMapsOn.indices { zoneMapsOn[i].counters = counters }
        var rng = SplitMix64(seed: 1_000 + seed)
        var partial = 0
        for _ in 0 ..< 80 {
            let p = Self.predicate(table, rng: &rng)
            let expected = reference.rows(p)
            if !expected.isEmpty && expected.count < table.rowCount { partial += 1 }
            let without = try table.select(p, options: QueryOptions(threads: 1, useBlockSummaries: false)).rows()
            #expect(without == expected, "zone maps off: \(p)")
            for options in zoneMapsOn {
                let got = try table.select(p, options: options).rows()
                if got != expected {
                    Issue.record(
                        "seed \(seed) threads \(options.effectiveThreads) chunk \(options.rowsPerChunk): \(p): got \(got.count) rows, expected \(expected.count)"
                    )
                    return
                }
            }
        }
        // Every outcome of a block summary was taken, many times; the predicates were not trivial.
        let b = counters.blocks
        #expect(b.skipped > 100 && b.filled > 100 && b.kernel > 100, "skipped \(b.skipped), filled \(b.filled), kernel \(b.kernel)")
        #expect(counters.parallelRuns.load(ordering: .relaxed) > 0)
        #expect(partial > 20, "only \(partial) predicates matched some but not all rows")
    }

    /// Bounds exactly on one block's minimum and maximum, inclusive and exclusive: the decisions
    /// where an off-by-one in the summary test would skip a matching row or fill a non-matching one.
    @Test func boundsExactlyOnEveryBlockEdge() throws {
        let table = TestTables.quoteShaped(tickers: 3, rows: 500 ... 900, seed: 9)
        let reference = ColumnarReference(table)
        let counters = EvaluationCounters()
        var options = QueryOptions(threads: 2)
        options.rowsPerChunk = 2 * zoneMapBlockRows
        options.counters = counters
        for c in [0, 4, 5, 6] {  // high (Float64), volume (Int64), open (Float32), split (Int32)
            let name = table.schema[c].identifier
            for block in 0 ..< BlockSummaries<Double>.blockCount(forRows: table.rowCount) {
                let e = Self.edges(table.columns[c], block: block)
                let (mn, mx) = (e[0], e[1])
                for bounds in [
                    RangeBounds.closed(mn, mx), .open(mn, mx), .halfOpen(mn, mx),
                    RangeBounds(lower: mn, lowerInclusive: false, upper: mx, upperInclusive: true),
                    .atLeast(mx), .greater(than: mx), .atMost(mn), .less(than: mn), .equal(to: mn),
                ] {
                    let p = RowPredicate.range(column: name, bounds: bounds)
                    let got = try table.select(p, options: options).rows(), expected = reference.rows(p)
                    if got != expected {
                        Issue.record("\(name) block \(block) \(bounds): got \(got.count) rows, expected \(expected.count)")
                        return
                    }
                }
            }
        }
        let b = counters.blocks
        #expect(b.skipped > 0 && b.filled > 0 && b.kernel > 0, "skipped \(b.skipped), filled \(b.filled), kernel \(b.kernel)")
    }
}
