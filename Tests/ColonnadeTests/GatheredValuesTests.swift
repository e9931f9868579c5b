import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Values at scattered rows evaluated over gathered rows (`ExpressionProgram+Gathered.swift`:
/// short runs copied end to end and evaluated in one pass) against the program evaluated over the
/// whole table, bit for bit; and as-of screens against the whole-table screen restricted to the
/// as-of rows.
@Suite struct GatheredValuesTests {
    /// Tickers the cut into segments must get right: none, one row, two, lengths around a mask
    /// word (64), a zone-map block (4096) and the windows (252 …), long ones. Each starts on its
    /// own day and steps 1-3 days a row (gaps like holidays), so they end on different days: as of
    /// the table's last day some have stopped trading.
    static let lengths = [0, 1, 2, 1, 63, 64, 65, 0, 127, 128, 129, 251, 252, 253, 1, 400, 799, 4095, 4096, 4097, 30, 1, 600]

    /// A table of `lengths` with nulls and specials at the given rates: with none, every Float64
    /// column is quarter-integers with a decimal scale, so windows over them are the exact ones
    /// (prefix sums when no row is null).
    static func table(seed: UInt64, nullRate: Double, specialRate: Double) -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        var lengths = Self.lengths
        for i in lengths.indices.reversed() { lengths.swapAt(i, rng.below(i + 1)) }  // tickers in another order per seed
        return SeriesTables.random(tickerLengths: lengths, seed: seed, nullRate: nullRate, specialRate: specialRate)
    }

    /// Rows to ask for: the as-of rows of several days and stale limits; each ticker's first and
    /// last row; scattered rows (runs of one and of several rows, across tickers' boundaries);
    /// every row of the table (long runs, evaluated in place).
    static func rowSets(_ table: QuoteTable, seed: UInt64) -> [(String, [Int])] {
        var sets = [(String, [Int])]()
        let dates = (0 ..< table.rowCount).map { table.dates[$0] }
        let lo = dates.min()!, hi = dates.max()!
        for day in [
            ScreenDay.latest, .day(Day(daysSinceEpoch: (lo + hi) / 2)), .day(Day(daysSinceEpoch: lo + 30)),
            .day(Day(daysSinceEpoch: hi + 3)),
        ] {
            for stale in [StaleLimit.default, .none, .days(0)] {
                sets.append(("as of \(day) \(stale)", table.rows(on: day, maxStale: stale)))
            }
        }
        let nonEmpty = table.tickers.filter { $0.rowCount > 0 }
        sets.append(("ends", Array(Set(nonEmpty.flatMap { [$0.firstRow, $0.firstRow + $0.rowCount - 1] })).sorted()))
        var rng = SplitMix64(seed: seed)
        for rate in [0.002, 0.05, 0.4] {
            sets.append(("scattered \(rate)", (0 ..< table.rowCount).filter { _ in rng.nextUnit() < rate }))
        }
        sets.append(("all", Array(0 ..< table.rowCount)))
        return sets
    }

    /// The screens of the peers benchmark and expressions of every gatherable node kind.
    static let texts = [
        "open - 1.03 * prev(close)", "(high - low) / close", "volume - 2 * mavg(volume, 20)",
        "close - mavg(close, 50)", "mavg(close, 50) - mavg(close, 200)", "high - mmax(high, 252)",
        "mmin(low, 64) + msum(close - open, 5)", "mdev(close, 20)", "pct_change(close, 3) * change(volume)",
        "if(close > prev(close), volume, -volume)", "case when close is null then 1 when f32 > 0 then mavg(f32, 7) end",
        "greatest(high - low, abs(high - prev(close)), abs(low - prev(close)))", "coalesce(prev(open, 4), ln(abs(close)), 0)",
        "mavg(greatest(high - low, abs(high - prev(close))), 14)", "-sqrt(abs(mmax(close, 3) - mmin(close, 3)))",
        "mavg(mavg(close, 3), 5) - msum(prev(close), 252)",
    ]

    @Test(arguments: [(1, 0.0, 0.0), (2, 0.04, 0.0), (3, 0.04, 0.02), (4, 0.0, 0.05)] as [(UInt64, Double, Double)])
    func valuesAtRowsEqualTheWholeTablesToTheBit(seed: UInt64, nullRate: Double, specialRate: Double) throws {
        let table = Self.table(seed: seed, nullRate: nullRate, specialRate: specialRate)
        var generator = ExpressionGenerator(seed: seed + 50, maxWindow: 300)
        var expressions = try Self.texts.map { try QueryParser(table: table).parseValue($0) }
        for _ in 0 ..< 25 { expressions.append(generator.any(3)) }
        var gathered = 0
        for e in expressions {
            let program = try ExpressionProgram(e, table: table)
            if program.gatheredColumns != nil { gathered += 1 }
            var whole = [Double](repeating: 0, count: table.rowCount)
            whole.withUnsafeMutableBufferPointer { w in
                program.evaluate(rows: 0 ..< table.rowCount, into: w.baseAddress!, scratch: ExpressionScratch())
            }
            let scratch = ExpressionScratch()  // one for every set: nothing kept by row may leak between them
            for (name, rows) in Self.rowSets(table, seed: seed) {
                let got = program.evaluateValues(atRows: rows, scratch: scratch)
                #expect(got.map(\.bitPattern) == rows.map { whole[$0].bitPattern }, "\(e) at \(name)")
            }
        }
        #expect(gathered == expressions.count)  // none of these reads rows by number
    }

    /// The work counted is the rows the runs read, as run by run: the same count as a program with
    /// the same lookback that cannot be gathered (a condition on dates reads rows by number).
    @Test func gatheredRunsCountTheRowsTheyRead() throws {
        let table = Self.table(seed: 5, nullRate: 0, specialRate: 0)
        let parser = QueryParser(table: table)
        let gathered = try ExpressionProgram(parser.parseValue("close - mavg(close, 50)"), table: table)
        let inPlace = try ExpressionProgram(parser.parseValue("if(date >= 1970-01-01, close - mavg(close, 50), 0)"), table: table)
        #expect(gathered.gatheredColumns != nil && inPlace.gatheredColumns == nil)
        #expect(gathered.lookback == 49 && inPlace.lookback == 49)
        for day in [ScreenDay.latest, .day(Day(daysSinceEpoch: table.dates[table.rowCount / 2]))] {
            let rows = table.rows(on: day, maxStale: .none)
            let (a, b) = (ExpressionScratch(), ExpressionScratch())
            let values = gathered.evaluateValues(atRows: rows, scratch: a)
            let expected = inPlace.evaluateValues(atRows: rows, scratch: b)
            #expect(values.map(\.bitPattern) == expected.map(\.bitPattern))
            #expect(a.rowsEvaluated == b.rowsEvaluated && a.rowsEvaluated > rows.count)
            #expect(a.windowRows == a.rowsEvaluated)
        }
    }

    /// Moving extremes whose window is the whole gathered piece (an as-of row's `mmax(x, n)` reads
    /// exactly its n rows), over values that tie often (+0 beside -0), with NaN, nulls and ±∞.
    @Test(arguments: [6, 7])
    func extremesOfWholePiecesEqualTheWholeTables(seed: UInt64) throws {
        let table = try ExtremeWindowTests.table(lengths: [1, 5, 63, 64, 65, 252, 253, 300, 0, 2, 700], seed: seed)
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 252, 253] {
            for isMin in [false, true] {
                let e = isMin ? ValueExpression.column("x").mmin(n) : ValueExpression.column("x").mmax(n)
                let reference = ExtremeWindowTests.reference(table, window: n, isMin: isMin)
                let program = try ExpressionProgram(e, table: table)
                let rows = Array(0 ..< table.rowCount)
                // Every row alone: a run of one row, its piece the row and the n - 1 before it.
                let alone = rows.map { program.evaluateValues(atRows: [$0], scratch: ExpressionScratch())[0] }
                for r in rows {
                    if let x = reference[r], !x.isNaN {
                        #expect(alone[r].bitPattern == x.bitPattern, "\(e) row \(r): \(alone[r]) for \(x)")
                    } else {
                        #expect(alone[r].isNaN, "\(e) row \(r): \(alone[r]) for null or NaN")
                    }
                }
            }
        }
    }

    /// As-of screens (gathered rows) against the whole-table screen restricted to the as-of rows,
    /// on days inside the table, after its end and on its last day, with every stale limit.
    @Test(arguments: [8, 9, 10])
    func asOfScreensEqualTheWholeTableScreenOnTheAsOfRows(seed: UInt64) throws {
        let table = Self.table(seed: seed, nullRate: seed == 8 ? 0 : 0.03, specialRate: seed == 10 ? 0.02 : 0)
        var oracle = ExpressionOracle(table: table)
        var generator = ExpressionGenerator(seed: seed + 7, maxWindow: 300)
        let screens = [
            "open > 1.03 * prev(close)", "(high - low) / close > 0.05 and volume > 2 * mavg(volume, 20)",
            "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)", "high >= mmax(high, 252)",
        ].map { try! QueryParser(table: table).parse($0) }
        var predicates = screens
        for _ in 0 ..< 20 { predicates.append(generator.predicate(2)) }
        var matched = 0
        for p in predicates {
            let all = oracle.rows(p)
            #expect(try table.select(p).rows() == all, "\(p)")
            for day in [
                ScreenDay.latest, .day(Day(daysSinceEpoch: table.dates[table.rowCount / 2])),
                .day(Day(daysSinceEpoch: table.dates[table.rowCount - 1] + 9)),
            ] {
                for stale in [StaleLimit.default, .none, .days(0)] {
                    let asOf = Set(table.rows(on: day, maxStale: stale))
                    let got = try table.select(p, on: day, maxStale: stale).rows()
                    #expect(got == all.filter(asOf.contains), "\(p) on \(day) \(stale)")
                    matched += got.count
                }
            }
        }
        #expect(matched > 0)
    }
}
