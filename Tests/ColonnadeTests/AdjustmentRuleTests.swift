import Colonnade
import ColonnadeTestSupport
import Testing

/// WIKI's adjustment rule (docs/ADJUSTMENTS.md) against an obviously-correct reference: for every
/// row, the product of every later event day's factor, written as a double loop over `[Double?]`.
@Suite struct AdjustmentRuleTests {
    /// One ticker's raw rows; nil is a null.
    struct RawRows {
        var open: [Double?], high: [Double?], low: [Double?], close: [Double?], volume: [Double?]
        var dividend: [Double?], split: [Double?]
    }

    /// Random raw rows: prices around 50, dividends on 1 row in 20, splits on 1 in 60, nulls on
    /// 1 in `nullOneIn` of the rows (a null close among them, with a dividend kept).
    static func randomRows(_ count: Int, rng: inout SplitMix64, nullOneIn: Int) -> RawRows {
        var r = RawRows(open: [], high: [], low: [], close: [], volume: [], dividend: [], split: [])
        for _ in 0 ..< count {
            let c = 10 + Double(rng.below(9_000)) / 100
            let isNull = nullOneIn > 0 && rng.chance(nullOneIn)
            r.open.append(isNull ? nil : c * 0.99)
            r.high.append(isNull ? nil : c * 1.01)
            r.low.append(isNull ? nil : c * 0.98)
            r.close.append(isNull ? nil : c)
            r.volume.append(rng.chance(40) ? nil : Double(rng.below(1_000_000)))
            r.dividend.append(rng.chance(20) ? Double(rng.inRange(1 ... 90)) / 100 : (rng.chance(30) ? nil : 0))
            r.split.append(rng.chance(60) ? [2, 3, 0.5, 7, 1.5][rng.below(5)] : (rng.chance(30) ? nil : 1))
        }
        return r
    }

    /// The reference: day i's price factor is anchor × the product of f_t over later rows with a close.
    static func reference(_ r: RawRows, anchor: Double) -> [[Double?]] {
        let n = r.close.count
        var out = [[Double?]](repeating: [Double?](repeating: nil, count: n), count: 5)
        for i in 0 ..< n {
            var price = anchor, volume = 1.0
            for t in stride(from: n - 1, to: i, by: -1) {
                guard let c = r.close[t] else { continue }
                let d = r.dividend[t] ?? 0, s = r.split[t] ?? 1
                if d == 0 && s == 1 { continue }
                price *= c / ((c + d) * s)
                volume *= s
            }
            out[0][i] = r.open[i].map { $0 * price }
            out[1][i] = r.high[i].map { $0 * price }
            out[2][i] = r.low[i].map { $0 * price }
            out[3][i] = r.close[i].map { $0 * price }
            out[4][i] = r.volume[i].map { $0 * volume }
        }
        return out
    }

    static let rawNames = ["Open", "High", "Low", "Close", "Volume", "Ex-Dividend", "Split Ratio"]
    static let adjustedNames = ["Adj. Open", "Adj. High", "Adj. Low", "Adj. Close", "Adj. Volume"]

    /// A table of the tickers' raw rows (and the adjusted columns given, when any).
    static func table(_ tickers: [(String, RawRows)], adjusted: [[[Double?]]]? = nil) throws -> QuoteTable {
        var columns = [[Double?]](repeating: [], count: 7)
        var adj = [[Double?]](repeating: [], count: 5)
        var dates = [Int32](), entries = [TickerEntry]()
        for (k, (symbol, rows)) in tickers.enumerated() {
            entries.append(TickerEntry(symbol: symbol, firstRow: dates.count, rowCount: rows.close.count))
            dates += (0 ..< rows.close.count).map { Int32(10_000 + $0) }
            for (i, c) in [rows.open, rows.high, rows.low, rows.close, rows.volume, rows.dividend, rows.split].enumerated() {
                columns[i] += c
            }
            if let adjusted { for i in 0 ..< 5 { adj[i] += adjusted[k][i] } }
        }
        var schema = rawNames.map { ColumnDescriptor(name: $0, type: .float64) }
        var all = columns.map { AnyColumn(Column<Double>($0)) }
        if adjusted != nil {
            schema += adjustedNames.map { ColumnDescriptor(name: $0, type: .float64) }
            all += adj.map { AnyColumn(Column<Double>($0)) }
        }
        return try QuoteTable(schema: schema, columns: all, dates: Column(dates), tickers: entries)
    }

    static func values(_ table: QuoteTable, _ name: String) -> [Double?] {
        let c = table.column(named: name)!
        return (0 ..< table.rowCount).map { c.doubleValue(at: $0) }
    }

    @Test(arguments: [0, 1, 2, 63, 64, 65, 4_095, 4_097])
    func recomputationMatchesTheReferenceAcrossSizesAndNulls(rows: Int) throws {
        var rng = SplitMix64(seed: UInt64(rows) &+ 17)
        let tickers = (0 ..< 3).map { ("T\($0)", Self.randomRows(rows + $0, rng: &rng, nullOneIn: 25)) }
        var table = try Self.table(tickers)
        #expect(!table.hasAdjustedColumns)
        let summaries = try table.recomputeAdjustments(threads: 3)
        #expect(summaries.map(\.ticker) == ["T0", "T1", "T2"])
        #expect(summaries.allSatisfy { $0.anchor == 1 })
        let expected = tickers.map { Self.reference($0.1, anchor: 1) }
        for (k, name) in AdjustmentRule.adjustedIdentifiers.enumerated() {
            let got = Self.values(table, name)
            let want = expected.flatMap { $0[k] }
            #expect(got.count == want.count)
            for (g, w) in zip(got, want) {
                #expect((g == nil) == (w == nil), "\(name)")
                if let g, let w { #expect(abs(g - w) <= 1e-12 * abs(w), "\(name): \(g) vs \(w)") }
            }
        }
        // The recomputed table passes the check, on any thread count.
        #expect(try table.adjustmentProblems(threads: 1).isEmpty)
        #expect(try table.adjustmentProblems(threads: 4).isEmpty)
    }

    @Test
    func theAnchorIsTheNewestAdjustedCloseOverClose() throws {
        var rng = SplitMix64(seed: 5)
        let rows = Self.randomRows(300, rng: &rng, nullOneIn: 0)
        var adjusted = Self.reference(rows, anchor: 0.8)
        // The vendor's newest row: adj_close / close = 0.8; earlier adjusted values deliberately off.
        adjusted[3][0] = 1
        var table = try Self.table([("A", rows)], adjusted: [adjusted])
        let summaries = try table.recomputeAdjustments(threads: 2)
        #expect(abs(summaries[0].anchor - 0.8) < 1e-15)
        let want = Self.reference(rows, anchor: 0.8)
        for (k, name) in AdjustmentRule.adjustedIdentifiers.enumerated() {
            for (g, w) in zip(Self.values(table, name), want[k]) {
                #expect((g == nil) == (w == nil))
                if let g, let w { #expect(abs(g - w) <= 1e-12 * abs(w)) }
            }
        }
        // Unanchored: anchor 1.
        var plain = table
        #expect(try plain.recomputeAdjustments(anchored: false)[0].anchor == 1)
    }

    @Test
    func onlyTheTickersAskedForAreRecomputedAndTheRestKeepTheirValues() throws {
        var rng = SplitMix64(seed: 9)
        let a = Self.randomRows(100, rng: &rng, nullOneIn: 10), b = Self.randomRows(80, rng: &rng, nullOneIn: 0)
        let staleB = Self.reference(b, anchor: 1).map { $0.map { $0.map { $0 * 3 } } }
        var table = try Self.table([("A", a), ("B", b)], adjusted: [Self.reference(a, anchor: 2), staleB])
        let before = Self.values(table, "adj_close")
        try table.recomputeAdjustments(tickers: ["A"])
        #expect(Self.values(table, "adj_close") == before)  // A was already right; B untouched
        let fresh = try Self.table([("A", a), ("B", b)])
        var created = fresh
        try created.recomputeAdjustments(tickers: ["B"])
        // Columns created for B only: A's rows are null.
        #expect(Self.values(created, "adj_close")[0 ..< 100].allSatisfy { $0 == nil })
        #expect(Self.values(created, "adj_close")[100...].allSatisfy { $0 != nil })
        #expect(throws: AdjustmentError.unknownTickers(["ZZZ"])) { try created.recomputeAdjustments(tickers: ["ZZZ"]) }
    }

    @Test
    func theCheckFindsTheFirstStaleDayOfEachTickerOnly() throws {
        var rng = SplitMix64(seed: 11)
        let a = Self.randomRows(500, rng: &rng, nullOneIn: 30), b = Self.randomRows(400, rng: &rng, nullOneIn: 0)
        var staleA = Self.reference(a, anchor: 1)
        // A stale update: the days before row 250 miss a factor of 7 (×7 prices, ÷7 volume).
        for i in 0 ..< 250 {
            for k in 0 ..< 4 { staleA[k][i] = staleA[k][i].map { $0 * 7 } }
            staleA[4][i] = staleA[4][i].map { $0 / 7 }
        }
        let table = try Self.table([("A", a), ("B", b)], adjusted: [staleA, Self.reference(b, anchor: 1)])
        let problems = try table.adjustmentProblems(limit: 100)
        let firstWithClose = (250 ..< 500).first { a.close[$0] != nil }!
        // The stale edge once for adj_close; adj_volume fails at its own edge too when the edge
        // row's volume is null (the next row with a volume is then compared across it).
        #expect(problems.allSatisfy { $0.ticker == "A" })
        #expect(problems.dropFirst().allSatisfy { $0.column == "adj_volume" } && problems.count <= 2)
        #expect(problems.first?.row == firstWithClose)
        #expect(problems.first?.column == "adj_close")
        #expect(abs((problems.first?.relativeError ?? 0) - 6) < 1e-9)
        // One adjusted open off by 1e-5 is found on its day; 1e-8 is within the tolerance.
        for (error, found) in [(1e-5, true), (1e-8, false)] {
            var adjusted = Self.reference(b, anchor: 1)
            adjusted[0][123] = adjusted[0][123].map { $0 * (1 + error) }
            let t = try Self.table([("B", b)], adjusted: [adjusted])
            let p = try t.adjustmentProblems()
            #expect(p.map(\.row) == (found ? [123] : []))
            if found { #expect(p.first?.column == "adj_open") }
        }
    }

    @Test
    func tablesWithoutTheEventColumnsAreRefusedNamingThem() throws {
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "close", type: .float64), ColumnDescriptor(name: "closeadj", type: .float64)],
            columns: [.float64(Column<Double>([1.0])), .float64(Column<Double>([1.0]))],
            dates: Column([Int32(1)]), tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 1)])
        let missing = ["open", "high", "low", "volume", "ex_dividend", "split_ratio"]
        #expect(throws: AdjustmentError.missingColumns(missing, otherAdjusted: ["closeadj"])) { try table.adjustmentProblems() }
        var copy = table
        #expect(throws: AdjustmentError.missingColumns(missing, otherAdjusted: ["closeadj"])) { try copy.recomputeAdjustments() }
        var rng = SplitMix64(seed: 1)
        let raw = try Self.table([("A", Self.randomRows(10, rng: &rng, nullOneIn: 0))])
        #expect(throws: AdjustmentError.noAdjustedColumns) { try raw.adjustmentProblems() }
    }

    @Test
    func eventsListSplitsAndDividendsAndMarkThoseWithoutAClose() throws {
        let rows = RawRows(
            open: [1, 1, nil, 1], high: [1, 1, nil, 1], low: [1, 1, nil, 1], close: [10, 11, nil, 12],
            volume: [5, 5, 0, 5], dividend: [0, 0.5, 0.18, nil], split: [1, 1, nil, 7])
        let table = try Self.table([("A", rows)])
        let events = try table.corporateEvents(ofTicker: 0)
        #expect(
            events == [
                CorporateEvent(day: 10_001, split: nil, dividend: 0.5, ignored: false),
                CorporateEvent(day: 10_002, split: nil, dividend: 0.18, ignored: true),
                CorporateEvent(day: 10_003, split: 7, dividend: nil, ignored: false),
            ])
    }

    @Test(arguments: [UInt64(42), 7])
    func theGeneratorFollowsTheRuleBitForBit(seed: UInt64) throws {
        let table = QuoteGenerator(tickers: 40, days: 3_000, seed: seed).makeTable()
        #expect(try table.adjustmentProblems().isEmpty)
        // Events exist, so the check is not empty-handed.
        let events = try (0 ..< 40).flatMap { try table.corporateEvents(ofTicker: $0) }
        #expect(events.contains { $0.split != nil } && events.contains { $0.dividend != nil })
        var recomputed = table
        try recomputed.recomputeAdjustments()
        for name in AdjustmentRule.adjustedIdentifiers { #expect(recomputed.column(named: name) == table.column(named: name), "\(name)") }
    }
}
