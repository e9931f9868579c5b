import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// A moving window named more than once in a screen (S3's `mavg(close, 50)` on both sides of its
/// `and`) is computed once per chunk (`SharedWindow`). The work is counted
/// (`EvaluationCounters.windowRows`: rows run through window kernels), never timed; the answers
/// are those of `ExpressionOracle`'s plain loops and of computing each window every time.
@Suite struct SharedWindowTests {
    static func table(seed: UInt64) -> QuoteTable {
        var rng = SplitMix64(seed: 1300 + seed)
        // Tickers shorter than the windows, empty ones, and ones crossing 512-row blocks and chunks.
        let lengths = (0 ..< 14).map { _ in rng.chance(4) ? rng.below(30) : rng.inRange(100 ... 900) }
        return SeriesTables.random(tickerLengths: lengths, seed: 70 + seed, nullRate: 0.04, specialRate: 0.02)
    }

    static let queries = [
        "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)",
        "mavg(close, 20) > 100 or mavg(close, 20) < 50 or mdev(close, 20) > 3",
        "mmax(high, 30) - mmin(low, 30) > 2 * mdev(close, 30) and high >= mmax(high, 30) and low > mmin(low, 30)",
        "msum(volume, 10) > 2 * msum(volume, 10) / 10 + prev(msum(volume, 10))",
        "if(mavg(close, 5) > mavg(close, 40), mavg(close, 5), -mavg(close, 40)) > mavg(mavg(close, 5), 10)",
        "ema(close, 12) > mavg(close, 26) and prev(mavg(close, 26)) < prev(ema(close, 12))",
    ]

    static func select(_ table: QuoteTable, _ p: RowPredicate, threads: Int, chunk: Int, share: Bool) throws -> (rows: [Int], work: Int) {
        var options = QueryOptions(threads: threads)
        options.rowsPerChunk = chunk * zoneMapBlockRows
        options.shareWindows = share
        let counters = EvaluationCounters()
        options.counters = counters
        let rows = try table.select(p, options: options).rows()
        return (rows, counters.windowRows.load(ordering: .relaxed))
    }

    @Test(arguments: [1, 2, 3])
    func sharedWindowsAnswerAsComputingEachTime(seed: UInt64) throws {
        let table = Self.table(seed: seed)
        var oracle = ExpressionOracle(table: table)
        for text in Self.queries {
            let predicate = try QueryParser(table: table).parse(text)
            let expected = oracle.rows(predicate)
            for (threads, chunk) in [(1, 1), (3, 1), (2, 4), (1, 128)] {
                let shared = try Self.select(table, predicate, threads: threads, chunk: chunk, share: true)
                let separate = try Self.select(table, predicate, threads: threads, chunk: chunk, share: false)
                #expect(shared.rows == expected, "\(text) threads \(threads) chunk \(chunk)")
                #expect(separate.rows == expected, "\(text) unshared")
                // Work is held in `aWindowNamedTwiceIsComputedOncePerChunk`: here a later `and` term
                // evaluates only words still set, and a shared window computes its whole chunk, so
                // with 512-row chunks sharing can run a few more window rows than it saves.
            }
        }
        // Random screens with a window named twice.
        var generator = ExpressionGenerator(seed: 1400 + seed, maxWindow: 60)
        for _ in 0 ..< 40 {
            let w = generator.window()
            let x = ValueExpression.series(.mavg, generator.exact(1), window: w)
            let y = generator.any(2)
            let p = RowPredicate.and([
                .compareExpressions(x, y, RangeBounds(lower: 0, lowerInclusive: false)),
                .or([.compare(x, generator.bounds()), .compareExpressions(.series(.prev, x, window: 1), x, generator.order())]),
            ])
            let expected = oracle.rows(p)
            let shared = try Self.select(table, p, threads: 2, chunk: 1, share: true)
            #expect(shared.rows == expected, "\(p)")
            #expect(try Self.select(table, p, threads: 1, chunk: 2, share: false).rows == expected, "\(p) unshared")
        }
    }

    /// Work counted: S3's `mavg(close, 50)`, named twice, costs about what it costs named once.
    @Test func aWindowNamedTwiceIsComputedOncePerChunk() throws {
        let table = SeriesTables.random(tickerLengths: [900, 700, 1200, 40, 1100], seed: 5, nullRate: 0.02, specialRate: 0)
        let parse = { (text: String) in try QueryParser(table: table).parse(text) }
        // Every leaf evaluated over every row (an `or`: nothing skipped), one thread.
        let twice = try parse("mavg(close, 50) > 100 or mavg(close, 50) < 99")
        let once = try parse("mavg(close, 50) > 100 or close < 99")
        let chunks = (table.rowCount + zoneMapBlockRows - 1) / zoneMapBlockRows
        // The rows computed before each chunk: the request's own lookback and the window's reach,
        // each at most 2n − 2 = 98 (the floating-point lookback; exact windows read n − 1).
        let reach = 2 * 98
        let shared = try Self.select(table, twice, threads: 1, chunk: 1, share: true)
        let separate = try Self.select(table, twice, threads: 1, chunk: 1, share: false)
        let single = try Self.select(table, once, threads: 1, chunk: 1, share: true)
        #expect(shared.rows == separate.rows)
        #expect(separate.work >= 2 * table.rowCount)
        #expect(single.work >= table.rowCount)
        // Named twice and shared: each chunk's rows once, plus at most `reach` rows before each.
        #expect(shared.work <= table.rowCount + chunks * reach, "shared \(shared.work), rows \(table.rowCount)")
        #expect(shared.work <= single.work + chunks * reach)
    }
}
