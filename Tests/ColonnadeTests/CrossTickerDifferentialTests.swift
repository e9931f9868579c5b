import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Cross-sectional functions, `ref` and moving variance/covariance/correlation/beta against
/// `ExpressionOracle` (row by row from the rules) on random tables whose tickers start late, skip
/// days (so some days have one ticker), and hold nulls, NaN, ±∞ and many ties (quarter-integers).
///
/// Tolerances: ranks, counts and percent ranks exactly; means and z-scores within 1e-12 of the
/// day's largest magnitude (the same sums in the same order, so in practice exact); moving
/// statistics within 1e-9 · sqrt(var_x · var_y) of the two-pass values (scaled to the inputs, never
/// relative to a value near zero). A null and a NaN are the same (a NaN in an expression is null).
@Suite struct CrossTickerDifferentialTests {
    static func table(_ seed: UInt64) -> QuoteTable {
        var rng = SplitMix64(seed: 900 + seed)
        let lengths = (0 ..< 9).map { _ in rng.chance(5) ? rng.below(3) : rng.inRange(20 ... 160) }
        return SeriesTables.random(tickerLengths: lengths, seed: seed)
    }

    /// nil for null or NaN.
    static func known(_ v: Double?) -> Double? { v.flatMap { $0.isNaN ? nil : $0 } }

    static func agree(_ got: [Double?], _ expected: [Double?], tolerance: (Int) -> Double) -> Int? {
        for r in got.indices {
            switch (known(got[r]), known(expected[r])) {
            case (nil, nil): continue
            case let (g?, e?):
                if g.isInfinite || e.isInfinite {
                    if g != e { return r }
                    continue
                }
                if Swift.abs(g - e) > tolerance(r) { return r }
            default: return r
            }
        }
        return nil
    }

    static func crossSectionExpressions(_ rng: inout SplitMix64, _ generator: inout ExpressionGenerator) -> [ValueExpression] {
        var out = [ValueExpression]()
        for f in CrossTickerExpression.CrossSectionFunction.allCases {
            let column = ValueExpression.column(SeriesTables.columns[rng.below(SeriesTables.columns.count)])
            out.append(.crossTicker(.crossSection(f, column)))
            out.append(.crossTicker(.crossSection(f, generator.any(2))))
        }
        // Composed both ways, and nested.
        out.append(Field("close").pctChange(5).xrank)
        out.append(Field("volume").xpct.mavg(5))
        out.append(Field("close").xz.xrank)
        out.append(Field("close").xmean.change(2) + Field("open").xcount)
        out.append(Field("high").mmax(3).xpct.mmin(4))
        return out
    }

    @Test(arguments: [1, 2, 3, 4])
    func crossSectionalFunctionsMatchTheOracle(seed: UInt64) throws {
        let table = Self.table(seed)
        var oracle = ExpressionOracle(table: table)
        var rng = SplitMix64(seed: 70 + seed)
        var generator = ExpressionGenerator(seed: 80 + seed, maxWindow: 30)
        let all = Array(0 ..< table.rowCount)
        // A sparse scope: each ticker's last row and a random tenth of the rows.
        let some = all.filter { r in rng.chance(10) || table.tickers.contains { $0.rowCount > 0 && $0.firstRow + $0.rowCount - 1 == r } }
        var checked = 0
        for e in Self.crossSectionExpressions(&rng, &generator) {
            let expected = oracle.values(e)
            let got = try table.values(of: e, atRows: all)
            let scale = expected.compactMap { Self.known($0) }.filter(\.isFinite).map(Swift.abs).max() ?? 1
            if let r = Self.agree(got, expected, tolerance: { _ in 1e-12 * Swift.max(1, scale) }) {
                Issue.record("\(e) row \(r): got \(String(describing: got[r])), expected \(String(describing: expected[r]))")
                continue
            }
            // Only some rows asked for: only their dates are computed, with the same values.
            let sparse = try table.values(of: e, atRows: some)
            for (k, r) in some.enumerated() where !(Self.known(sparse[k]) == Self.known(got[r])) {
                Issue.record("\(e) row \(r) alone: \(String(describing: sparse[k])) vs \(String(describing: got[r]))")
                break
            }
            checked += 1
        }
        #expect(checked >= 12)
    }

    /// A screen with a cross-sectional term: the same rows for any thread count and chunk size, as
    /// of the latest day equal to the whole-table answer's last rows, and as the oracle says.
    @Test(arguments: [1, 2, 3])
    func screensAreThreadInvariantAndAsOfTheirOwnDate(seed: UInt64) throws {
        let table = Self.table(seed)
        var oracle = ExpressionOracle(table: table)
        let predicates: [RowPredicate] = [
            Field("close").pctChange(3).xpct > 0.5,
            Field("close").xrank <= 2 && Field("volume").xz > 0,
            Field("close") / Field("close").ref("T1") > Field("close").mmax(5) / Field("close").ref("T1").mmax(5),
            Field("close").pctChange().mbeta(Field("close").pctChange().ref("T0"), 10) > 1,
        ]
        for p in predicates {
            let expected = oracle.rows(p)
            var masks = [Bitmask]()
            for threads in [1, 2, 3] {
                for chunk in [1, 2] {
                    var o = QueryOptions(threads: threads)
                    o.rowsPerChunk = chunk * zoneMapBlockRows
                    masks.append(try table.select(p, options: o).mask)
                }
            }
            #expect(masks.allSatisfy { $0 == masks[0] }, "\(p)")
            #expect(try table.select(p).rows() == expected, "\(p)")
            let lasts = Set(table.rows(on: .latest))
            #expect(try table.select(p, on: .latest).rows() == expected.filter(lasts.contains), "\(p) on latest")
            // As of a day: each row the as-of rule picks (a ticker's last row on or before the
            // day) carries the value computed on its own date.
            if let day = expected.first.map({ table.dates[$0] }) {
                let screenDay = ScreenDay.day(Day(daysSinceEpoch: day))
                let asOf = Set(table.rows(on: screenDay))
                let onDay = try table.select(p, on: screenDay).rows()
                #expect(onDay == expected.filter(asOf.contains), "\(p) on \(Day(daysSinceEpoch: day))")
            }
        }
    }

    @Test(arguments: [1, 2, 3])
    func referenceTickerMatchesTheOracle(seed: UInt64) throws {
        let table = Self.table(seed)
        var oracle = ExpressionOracle(table: table)
        let all = Array(0 ..< table.rowCount)
        for symbol in ["T0", "T3", "T8"] {
            for e in [
                Field("close").ref(symbol), Field("close").pctChange(3).ref(symbol), Field("close") / Field("close").ref(symbol),
                Field("close").pctChange(2) - Field("close").pctChange(2).ref(symbol), Field("volume").xrank.ref(symbol),
            ] {
                let got = try table.values(of: e, atRows: all)
                if let r = Self.agree(got, oracle.values(e), tolerance: { _ in 0 }) {
                    Issue.record("\(e) row \(r): got \(String(describing: got[r])), expected \(String(describing: oracle.values(e)[r]))")
                }
            }
        }
        // Written three ways; never read as a column.
        let parser = QueryParser(table: table)
        for text in ["ref(close, 'T0')", "ref(close, \"T0\")", "ref(close, T0)"] {
            #expect(try parser.parseValue(text) == Field("close").ref("T0"), "\(text)")
        }
        #expect(Field("close").ref("T0").description == "ref(close, 'T0')")
        // An unknown ticker: an error with did-you-mean.
        do {
            _ = try table.values(of: try parser.parseValue("ref(close, 'T00')"), atRows: [0])
            Issue.record("ref to an unknown ticker did not fail")
        } catch {
            #expect(error.message.contains("no ticker 'T00'") && error.suggestions.contains("T0"), "\(error)")
        }
    }

    @Test(arguments: [1, 2, 3])
    func movingStatisticsAreWithinTheirToleranceOfTwoPass(seed: UInt64) throws {
        let table = Self.table(seed)
        var oracle = ExpressionOracle(table: table)
        let all = Array(0 ..< table.rowCount)
        let x = Field("close") + Field("open"), y = Field("high").change()
        for n in [1, 2, 3, 7, 25] {
            let varX = oracle.values(x.mvar(n)), varY = oracle.values(y.mvar(n))
            func scale(_ r: Int) -> Double {
                let a = Self.known(varX[r]) ?? 0, b = Self.known(varY[r]) ?? 0
                return 1e-9 * Swift.max((a * b).squareRoot(), 1e-300) + 1e-12
            }
            let cases: [(ValueExpression, (Int) -> Double)] = [
                (x.mvar(n), { r in 1e-9 * (Self.known(varX[r]) ?? 0) + 1e-12 }),
                (x.mcov(y, n), scale),
                (x.mcorr(y, n), { _ in 1e-8 }),
                (
                    x.mbeta(y, n),
                    { r in 1e-9 * ((Self.known(varX[r]) ?? 0) / Swift.max(Self.known(varY[r]) ?? 1, 1e-300)).squareRoot() + 1e-12 }
                ),
                (Field("close").pctChange().mbeta(Field("close").pctChange().ref("T0"), n), { _ in 1e-7 }),
            ]
            for (e, tolerance) in cases {
                let got = try table.values(of: e, atRows: all)
                let expected = oracle.values(e)
                if let r = Self.agree(got, expected, tolerance: tolerance) {
                    Issue.record("\(e) row \(r): got \(String(describing: got[r])), expected \(String(describing: expected[r]))")
                }
                // Any row range gets the same values (restarts are fixed by the data, not the start).
                let tail = Array(all.suffix(all.count / 3))
                let part = try table.values(of: e, atRows: tail)
                #expect(zip(part, tail).allSatisfy { v, r in Self.known(v)?.bitPattern == Self.known(got[r])?.bitPattern }, "\(e)")
            }
        }
    }

    /// Prices near 1e6 with quarter steps over 3,000 rows: sliding sums of squares would lose every
    /// digit; the updates with restarts stay within 1e-9 · var.
    @Test func movingVarianceIsStableOnLargeLevels() throws {
        var rng = SplitMix64(seed: 5)
        var values = [Double](), level = 1e6
        for _ in 0 ..< 3000 {
            level += Double(rng.inRange(-4 ... 4)) / 4
            values.append(level)
        }
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "close", type: .float64)], columns: [AnyColumn(Column<Double>(values))],
            dates: Column<Int32>((0 ..< 3000).map { Int32(10_000 + $0) }),
            tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 3000)])
        var oracle = ExpressionOracle(table: table)
        for n in [20, 60, 250] {
            let e = Field("close").mvar(n)
            let got = try table.values(of: e, atRows: Array(0 ..< 3000)), expected = oracle.values(e)
            #expect(Self.agree(got, expected, tolerance: { r in 1e-9 * (Self.known(expected[r]) ?? 0) + 1e-12 }) == nil, "n = \(n)")
        }
    }

    /// O(1) per row, counted as work: on a random walk of prices and on returns the slid sums stay
    /// within their error bound, so the windows summed two-pass are the fixed restarts (one per
    /// `n` rows) and few others; the values stay within the tolerance of two-pass sums.
    @Test func movingStatisticsSumFewWindowsTwoPass() {
        var rng = SplitMix64(seed: 11)
        let count = 20_000
        var x = [Double](), y = [Double](), level = 100.0
        for _ in 0 ..< count {
            let r = Double(rng.inRange(-1000 ... 1000)) / 1e5
            level *= 1 + r
            x.append(level)
            y.append(r + Double(rng.inRange(-500 ... 500)) / 1e5)
        }
        var dst = [Double](repeating: 0, count: count)
        for n in [5, 20, 60, 250] {
            let fixed = (count - 1) / n + 1  // full windows from row n - 1, one restart per n of them
            for f in CrossTickerExpression.MovingStatistic.allCases {
                let restarts = MovingStatistics.run(
                    f, window: n, x: x, y: f.isPair ? y : x, dst: &dst, base: 0,
                    segment: 0 ..< count, tickerStart: 0)
                #expect(
                    restarts >= fixed - 1 && restarts <= fixed + count / 200, "\(f) n = \(n): \(restarts) two-pass windows, \(fixed) fixed")
                // Spot checks against a plain two-pass computation.
                for row in stride(from: n - 1, to: count, by: 997) where n > 1 {
                    let a = Array(x[row - n + 1 ... row]), b = Array((f.isPair ? y : x)[row - n + 1 ... row])
                    let ma = a.reduce(0, +) / Double(n), mb = b.reduce(0, +) / Double(n)
                    var sxx = 0.0, syy = 0.0, sxy = 0.0
                    for k in 0 ..< n {
                        sxx += (a[k] - ma) * (a[k] - ma)
                        syy += (b[k] - mb) * (b[k] - mb)
                        sxy += (a[k] - ma) * (b[k] - mb)
                    }
                    let expected: Double, tolerance: Double
                    switch f {
                    case .mvar:
                        expected = sxx / Double(n - 1)
                        tolerance = 1e-9 * expected
                    case .mcov:
                        expected = sxy / Double(n - 1)
                        tolerance = 1e-9 * (sxx * syy).squareRoot() / Double(n - 1)
                    case .mcorr:
                        expected = sxy / (sxx * syy).squareRoot()
                        tolerance = 1e-8
                    case .mbeta:
                        expected = sxy / syy
                        tolerance = 1e-9 * (sxx / syy).squareRoot()
                    }
                    #expect(Swift.abs(dst[row] - expected) <= tolerance, "\(f) n = \(n) row \(row): \(dst[row]) vs \(expected)")
                }
            }
        }
    }

    /// The exact-windows rule: of columns with a decimal scale (cents here), `mvar` and `mcov` are
    /// the decimal values rounded once (numerators and denominators below 2^53, so one division),
    /// `mbeta` the rounded quotient of the exact numerators, and a window of equal closes has
    /// variance 0 exactly and a null correlation and beta.
    @Test func movingStatisticsOfDecimalColumnsAreExact() throws {
        var rng = SplitMix64(seed: 21)
        let count = 400
        var xs = [Double](), ys = [Double](), cx = 10_000, cy = 5_000
        for k in 0 ..< count {
            if k % 50 < 44 { cx += rng.inRange(-30 ... 30) }  // then six equal closes
            cy += rng.inRange(-20 ... 20)
            xs.append(Double(cx) / 100)
            ys.append(Double(cy) / 100)
        }
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "close", type: .float64), ColumnDescriptor(name: "open", type: .float64)],
            columns: [AnyColumn(Column<Double>(xs)), AnyColumn(Column<Double>(ys))],
            dates: Column<Int32>((0 ..< count).map { Int32(10_000 + $0) }),
            tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: count)])
        let all = Array(0 ..< count)
        var constantWindows = 0
        for n in [2, 5, 20] {
            let v = try table.values(of: Field("close").mvar(n), atRows: all)
            let c = try table.values(of: Field("close").mcov(.column("open"), n), atRows: all)
            let b = try table.values(of: Field("open").mbeta(.column("close"), n), atRows: all)
            let r = try table.values(of: Field("close").mcorr(.column("open"), n), atRows: all)
            #expect(v[n - 2] == nil && c[n - 2] == nil)
            for i in n - 1 ..< count {
                var sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0
                for k in i - n + 1 ... i {
                    let a = Int((xs[k] * 100).rounded()), d = Int((ys[k] * 100).rounded())
                    sx += a
                    sy += d
                    sxx += a * a
                    syy += d * d
                    sxy += a * d
                }
                let nxx = n * sxx - sx * sx, nxy = n * sxy - sx * sy
                let denominator = Double(n * (n - 1) * 10_000)
                #expect(v[i] == Double(nxx) / denominator, "mvar n = \(n) row \(i)")
                #expect(c[i] == Double(nxy) / denominator, "mcov n = \(n) row \(i)")
                #expect(b[i] == (nxx == 0 ? nil : Double(nxy) / Double(nxx)), "mbeta n = \(n) row \(i)")
                if nxx == 0 {
                    constantWindows += 1
                    #expect(v[i] == 0 && r[i] == nil)
                } else {
                    let nyy = n * syy - sy * sy
                    if nyy == 0 {
                        #expect(r[i] == nil, "mcorr with equal opens, n = \(n) row \(i)")
                    } else {
                        #expect(Swift.abs((r[i] ?? .nan) - Double(nxy) / (Double(nxx) * Double(nyy)).squareRoot()) <= 1e-14)
                    }
                }
            }
        }
        #expect(constantWindows > 0)
    }

    /// xrank is SQL's rank() over the non-null values: ties share the lowest rank.
    @Test func ranksTiesAndNullsOnOneDay() throws {
        let d = Int32(16_000)
        let closes: [Double?] = [5, nil, 3, 5, .nan, 1]
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "close", type: .float64)], columns: [AnyColumn(Column<Double>(closes))],
            dates: Column<Int32>([Int32](repeating: d, count: 6)),
            tickers: (0 ..< 6).map { TickerEntry(symbol: "T\($0)", firstRow: $0, rowCount: 1) })
        let rows = Array(0 ..< 6)
        #expect(try table.values(of: Field("close").xrank, atRows: rows) == [3, nil, 2, 3, nil, 1])
        #expect(try table.values(of: Field("close").xpct, atRows: rows) == [2.0 / 3, nil, 1.0 / 3, 2.0 / 3, nil, 0])
        #expect(try table.values(of: Field("close").xcount, atRows: rows) == [4, 4, 4, 4, 4, 4])
        #expect(try table.values(of: Field("close").xmean, atRows: rows) == [3.5, 3.5, 3.5, 3.5, 3.5, 3.5])
        let z = try table.values(of: Field("close").xz, atRows: rows)
        let sd = ((1.5 * 1.5 * 2 + 0.5 * 0.5 + 2.5 * 2.5) / 3).squareRoot()
        #expect(z[0] == 1.5 / sd && z[1] == nil && z[5] == -2.5 / sd)
        // The parser reads them, and the text round-trips.
        let parsed = try QueryParser(table: table).parseValue("mavg(xpct(close), 5)")
        #expect(parsed == Field("close").xpct.mavg(5) && parsed.description == "mavg(xpct(close), 5)")
        #expect(
            try QueryParser(table: table).parseValue("mbeta(close, ref(close, T1), 60)").description == "mbeta(close, ref(close, 'T1'), 60)"
        )
    }
}
