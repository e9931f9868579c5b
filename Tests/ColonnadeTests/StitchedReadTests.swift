import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// A store's version with appended segments read in place (`ColumnStitch`; ARCHITECTURE.md,
/// *Versions and appends*, *Reading in place*): range leaves and row-local expressions evaluated
/// over each file and their bits stitched, expressions with series copying rows from where they
/// lie, date ranges searched in place. The reference is the eager merge (itself checked bit for
/// bit against the deferred one by `DeferredMergeTests`): the same rows for fixed and random
/// predicates, over tables cut into a base and up to 12 appended parts (new tickers, tickers
/// skipping parts, parts of a single row), with NaN, ±inf and ±0, with and without nulls, across
/// chunk, word and block boundaries, on 1 and 2 threads. And the stitched path is taken: the
/// columns read stay unmerged.
@Suite struct StitchedReadTests {
    /// The rows `pieces` (a ticker number and rows counted from that ticker's first) of `t`, as
    /// a table with block summaries.
    static func slice(_ t: QuoteTable, _ pieces: [(ticker: Int, rows: Range<Int>)]) -> QuoteTable {
        let rows = pieces.map { p in t.tickers[p.ticker].firstRow + p.rows.lowerBound ..< t.tickers[p.ticker].firstRow + p.rows.upperBound }
        func take<T: ColumnElement>(_ c: Column<T>) -> Column<T> {
            var out = Column<T>()
            for r in rows { out.append(contentsOf: c, rows: r) }
            return out
        }
        func take(_ c: AnyColumn) -> AnyColumn {
            switch c {
            case .int32(let x): AnyColumn(take(x))
            case .int64(let x): AnyColumn(take(x))
            case .float32(let x): AnyColumn(take(x))
            case .float64(let x): AnyColumn(take(x))
            }
        }
        var first = 0
        let entries = pieces.map { p in
            defer { first += p.rows.count }
            return TickerEntry(symbol: t.tickers[p.ticker].symbol, firstRow: first, rowCount: p.rows.count)
        }
        var out = try! QuoteTable(schema: t.schema, columns: t.columns.map(take), dates: take(t.dates), tickers: entries)
        out.computeSummaries()
        return out
    }

    /// `whole` cut into a base and `parts` appended parts: each ticker's rows split at random
    /// points, so each part's days follow the earlier parts' (an append). A ticker with no rows
    /// in the base (one in three) is new in the first part that has it, after the base's
    /// tickers in the merged order but not in that part's.
    static func appendedParts(_ whole: QuoteTable, parts: Int, rng: inout SplitMix64) -> [QuoteTable] {
        let cuts = whole.tickers.map { t in
            var points = (0 ..< parts).map { _ in rng.below(t.rowCount + 1) }.sorted()
            if rng.chance(3) { points[0] = 0 }
            return [0] + points + [t.rowCount]
        }
        return (0 ... parts).map { p in
            slice(whole, whole.tickers.indices.compactMap { i in cuts[i][p] < cuts[i][p + 1] ? (i, cuts[i][p] ..< cuts[i][p + 1]) : nil })
        }
    }

    /// A base and its appended parts, merged eagerly (the reference).
    struct Store {
        let parts: [QuoteTable]
        let merged: QuoteTable

        init(seed: UInt64, nullRate: Double, specialRate: Double = 0.02) {
            var rng = SplitMix64(seed: seed)
            // Long tickers cross chunks, blocks and words; short ones (0 to 4 rows) and single-row
            // parts put run boundaries everywhere.
            let lengths = (0 ..< 8).map { _ in rng.chance(4) ? rng.below(5) : 300 + rng.below(2_500) }
            let whole = SeriesTables.random(tickerLengths: lengths, seed: seed, nullRate: nullRate, specialRate: specialRate)
            parts = StitchedReadTests.appendedParts(whole, parts: 1 + rng.below(12), rng: &rng)
            var m = parts[0]
            m.upsert(contentsOf: Array(parts.dropFirst()))
            merged = m
        }

        /// The same version, as a store reads it: deferred, so columns stay unmerged until read.
        func deferred() -> QuoteTable {
            var d = parts[0]
            d.upsert(contentsOf: Array(parts.dropFirst()), threads: 2, deferringColumns: true)
            return d
        }
    }

    static func options(threads: Int, smallChunks: Bool) -> QueryOptions {
        var o = QueryOptions()
        o.threads = threads
        if smallChunks { o.rowsPerChunk = 1_024 }
        return o
    }

    /// Fixed predicates, one of each kind the stitched paths take, and whether they leave every
    /// column they read unmerged (on a table without nulls): ranges of every type, ticker sets
    /// and date ranges, row-local expressions, series (exact windows, extremes, recursive).
    static let fixed: [(String, [String])] = [
        ("80 < close < 120", ["close"]),
        ("high >= 100 and low < 90 or not (open > 50)", ["high", "low", "open"]),
        ("f32 > 1 and volume >= 2000", ["f32", "volume"]),
        ("ticker in (T1, T3, T6) and close > 20", ["close"]),
        ("ticker in (T0, T1, T2, T4, T5, T7) and close > 3 or ticker = T6 and open < 50", ["close", "open"]),
        ("date >= 2002-01-01 and high > 30", ["high", "date"]),
        ("date >= 2003-06-01 and date < 2005-01-01 and high > 30", ["high", "date"]),
        ("ticker = T2 or date < 2003-02-01", ["date"]),
        ("(high - low) / close > 0.05", ["high", "low", "close"]),
        ("abs(open - close) > 2 and close > 0", ["open", "close"]),
        ("open > 1.03 * prev(close)", ["open", "close"]),
        ("close > mavg(close, 5) and mavg(close, 5) > mavg(close, 20)", ["close"]),
        ("high >= mmax(high, 252)", ["high"]),
        ("close > ema(close, 10) and rsi(close, 14) > 60", ["close"]),
        ("msum(close, 4) > 400 or mdev(open, 7) > 3", ["close", "open"]),
        ("(high - low) / close > 0.05 and volume > 2 * mavg(volume, 3)", ["high", "low", "close"]),
    ]

    static func isPending(_ table: QuoteTable, _ name: String) -> Bool {
        if name == "date" { return table.dates.isPending }
        return DeferredMergeTests.isPending(table.column(named: name)!)
    }

    /// Without infinities, decimal columns: windows are summed exactly, at the scale taken from
    /// the files' columns.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func fixedPredicatesAnswerAsTheMergeAndLeaveTheirColumnsUnmerged(seed: UInt64) throws {
        for (nullRate, specialRate) in [(0, 0.02), (0, 0), (0.04, 0.02)] {
            let store = Store(seed: seed, nullRate: nullRate, specialRate: specialRate)
            for (query, read) in Self.fixed {
                for (threads, small) in [(1, false), (2, true), (1, true)] {
                    let options = Self.options(threads: threads, smallChunks: small)
                    let table = store.deferred()
                    let expected = try store.merged.select(where: query, options: options).rows()
                    let actual = try table.select(where: query, options: options).rows()
                    // Compared apart from the expectation, which would print every row of both.
                    let same = actual == expected
                    #expect(
                        same,
                        "seed \(seed), nulls \(nullRate), specials \(specialRate), \(query), threads \(threads): \(actual.count) rows, expected \(expected.count)"
                    )
                    if nullRate == 0 {
                        for name in read {
                            #expect(Self.isPending(table, name), "seed \(seed): \(query) merged \(name)")
                        }
                    }
                }
            }
        }
    }

    /// Random predicates (ranges and expressions, with and without series, combined with
    /// and/or/not) and recursive or conditional expressions: the same rows as the merge.
    @Test(arguments: [UInt64(11), 12, 13, 14])
    func randomPredicatesAnswerAsTheMerge(seed: UInt64) throws {
        for nullRate in [0, 0.04] {
            let store = Store(seed: seed, nullRate: nullRate)
            var generator = ExpressionGenerator(seed: seed &* 7, maxWindow: 300)
            for i in 0 ..< 60 {
                let predicate: RowPredicate =
                    switch i % 3 {
                    case 0: generator.predicate(3)
                    case 1: .compare(generator.recursive(2), generator.bounds())
                    default: .compare(generator.conditional(2), generator.bounds())
                    }
                let options = Self.options(threads: 1 + i % 2, smallChunks: i % 4 < 2)
                let expected = try? store.merged.select(predicate, options: options).rows()
                let actual = try? store.deferred().select(predicate, options: options).rows()
                let same = actual == expected  // apart from the expectation, which would print every row
                #expect(
                    same,
                    "seed \(seed), nulls \(nullRate), predicate \(i): \(predicate): \(actual?.count ?? -1) rows, expected \(expected?.count ?? -1)"
                )
            }
        }
    }

    /// Counts, aggregates and row values of a deferred table read after a stitched query: the
    /// stitched mask selects rows of the merged order, which the merge (made when they are read)
    /// then gives; and a column's decimal scale from its sources is the merged column's.
    @Test func selectionsOverUnmergedColumnsReadTheMergedRows() throws {
        let store = Store(seed: 21, nullRate: 0, specialRate: 0)
        let table = store.deferred()
        let hits = try table.select(where: "5 < close < 300 and ticker in (T0, T2, T5)")
        let reference = try store.merged.select(where: "5 < close < 300 and ticker in (T0, T2, T5)")
        #expect(hits.count == reference.count && hits.count > 0)
        let values = hits.rows().map { table.column(named: "close")!.doubleValue(at: $0) }
        let same = values == reference.rows().map { store.merged.column(named: "close")!.doubleValue(at: $0) }
        #expect(same, "the selected rows' values differ")
        let fresh = store.deferred()
        guard case .float64(let unmerged) = fresh.column(named: "close")!, case .float64(let merged) = store.merged.column(named: "close")!
        else {
            Issue.record("close is not Float64")
            return
        }
        #expect(unmerged.decimalScale == merged.decimalScale && merged.decimalScale != nil)
        #expect(unmerged.isPending, "the decimal scale merged the column")
    }

    /// The search of a ticker's dates in the files (how date ranges are planned unmerged),
    /// against a linear scan of the merged dates: every ticker, every bound from before its first
    /// day to after its last, `<` and `<=`.
    @Test func partitionFindsWhatALinearScanOfTheMergedDatesFinds() throws {
        let store = Store(seed: 31, nullRate: 0)
        let table = store.deferred()
        let stitch = try #require(table.dates.unmergedStitch)
        for t in store.merged.tickers where t.rowCount > 0 {
            let days = t.rows.map { store.merged.dates[$0] }
            for bound in days.first! - 2 ... days.last! + 2 {
                for inclusive in [false, true] {
                    let isBefore: (Int32) -> Bool = { inclusive ? $0 <= bound : $0 < bound }
                    let expected = t.firstRow + (days.firstIndex { !isBefore($0) } ?? days.count)
                    #expect(stitch.partition(t.rows, isBefore) == expected, "\(t.symbol), bound \(bound), inclusive \(inclusive)")
                }
            }
        }
        #expect(table.dates.isPending)
    }

    /// The bit copy that stitches per-file masks, against bit-by-bit copying: random lengths and
    /// offsets on both sides (0 to 200 bits, all 64 alignments), into a mask holding other bits.
    @Test func orBitsCopiesEveryBitOfARun() {
        var rng = SplitMix64(seed: 3)
        for _ in 0 ..< 2_000 {
            let sourceBits = 1 + rng.below(400)
            var source = Bitmask(count: sourceBits)
            for i in 0 ..< sourceBits where rng.chance(2) { source[i] = true }
            let from = rng.below(sourceBits), count = rng.below(sourceBits - from + 1)
            let targetBits = count + rng.below(300)
            let at = rng.below(targetBits - count + 1)
            var target = Bitmask(count: targetBits)
            for i in 0 ..< targetBits where rng.chance(5) && !(at ..< at + count).contains(i) { target[i] = true }
            var expected = target
            for i in 0 ..< count where source[from + i] { expected[at + i] = true }
            source.withUnsafeWords { s in
                target.withUnsafeMutableWords { t in
                    StitchPlan.orBits(s.baseAddress!, wordCount: s.count, from: from, into: t.baseAddress!, at: at, count: count)
                }
            }
            #expect(target == expected, "from \(from), count \(count), at \(at)")
        }
    }
}
