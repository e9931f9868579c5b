import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// `mmin` and `mmax` (van Herk/Gil-Werman blocks in `SeriesKernels`) against a plain loop over each
/// window: windows of 1…400 rows on tickers of lengths around the window (n - 1, n, n + 1, 2n,
/// 2n + 1, 3n + 2, one row, none), values drawn from a small pool so that equal extremes, +0 beside
/// -0, NaN, nulls and ±∞ fill the windows; evaluated whole, over row ranges that start
/// mid-ticker, and in 512-row chunks on several threads.
@Suite struct ExtremeWindowTests {
    static let pool: [Double?] = [-1, -0.0, 0, 1, 2, 2, 3, .nan, nil, .infinity, -.infinity, 0, -0.0, 1]

    /// One ticker per length, values from `pool` (nil is a null).
    static func table(lengths: [Int], seed: UInt64) throws -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        var rowTickers = [Int32](), dates = [Int32](), values = [Double?]()
        for (t, length) in lengths.enumerated() {
            for d in 0 ..< length {
                rowTickers.append(Int32(t))
                dates.append(Int32(10_000 + d))
                // Mostly the same few values, so windows tie often; sometimes a special.
                values.append(rng.chance(3) ? pool[rng.below(pool.count)] : Double(rng.inRange(-2 ... 2)))
            }
        }
        var table = try QuoteTable(
            sortingRows: lengths.indices.map { TickerEntry(symbol: "T\($0)") },
            rowTickers: rowTickers, dates: Column<Int32>(dates),
            schema: [ColumnDescriptor(name: "x", type: .float64)],
            columns: [AnyColumn(Column<Double>(values))])
        table.computeSummaries()
        return table
    }

    /// The reference: nil (null) unless the window's n rows are in the row's ticker and none is
    /// null; NaN if one is NaN; else the extreme, and of equal extremes (+0, -0) the latest row's.
    static func reference(_ table: QuoteTable, window n: Int, isMin: Bool) -> [Double?] {
        let column = table.column(named: "x")!
        var out = [Double?](repeating: nil, count: table.rowCount)
        for ticker in table.tickers {
            for r in ticker.firstRow ..< ticker.firstRow + ticker.rowCount where r - n + 1 >= ticker.firstRow {
                var best: Double? = nil, sawNull = false, sawNaN = false
                for k in r - n + 1 ... r {
                    guard let v = column.doubleValue(at: k) else {
                        sawNull = true
                        continue
                    }
                    if v.isNaN {
                        sawNaN = true
                        continue
                    }
                    if let b = best { if isMin ? v <= b : v >= b { best = v } } else { best = v }
                }
                out[r] = sawNull ? nil : sawNaN ? .nan : best
            }
        }
        return out
    }

    static let windows = Array(1 ... 24) + [31, 32, 33, 63, 64, 65, 127, 128, 129, 199, 200, 251, 252, 253, 255, 256, 257, 300, 399, 400]

    @Test(arguments: windows)
    func extremesEqualAPlainLoopBitForBit(window n: Int) throws {
        let lengths = [n - 1, n, 0, n + 1, 1, 2 * n, 2 * n + 1, 3 * n + 2, max(0, n - 2)]
        let table = try Self.table(lengths: lengths, seed: UInt64(n))
        var rng = SplitMix64(seed: UInt64(1000 + n))
        for isMin in [false, true] {
            let e = ValueExpression.series(isMin ? .mmin : .mmax, .column("x"), window: n)
            let expected = Self.reference(table, window: n, isMin: isMin)
            // Values (NaN reported as null, as the API does), all rows and random ranges.
            let want = expected.map { $0.flatMap { $0.isNaN ? nil : $0 } }
            let all = try table.values(of: e, atRows: Array(0 ..< table.rowCount))
            var mismatches = 0
            for r in 0 ..< table.rowCount where all[r]?.bitPattern != want[r]?.bitPattern {
                mismatches += 1
                if mismatches <= 3 { Issue.record("\(e) row \(r): \(String(describing: all[r])) vs \(String(describing: want[r]))") }
            }
            #expect(mismatches == 0, "\(e): \(mismatches) rows differ")
            for _ in 0 ..< 3 {
                let a = rng.below(table.rowCount + 1), b = rng.below(table.rowCount + 1)
                let rows = Array(min(a, b) ..< max(a, b))
                let got = try table.values(of: e, atRows: rows)
                #expect(
                    zip(rows, got).allSatisfy { want[$0]?.bitPattern == $1?.bitPattern },
                    "\(e) over \(rows.first ?? 0)..<\((rows.last ?? -1) + 1)")
            }
            // Masks: `x >= mmax(x, n)` (`x <= mmin(x, n)`), whole and in 512-row chunks.
            let x = ValueExpression.column("x")
            let p = RowPredicate.compareExpressions(x, e, isMin ? .atMost(0) : .atLeast(0))
            let expectedRows = (0 ..< table.rowCount).filter { r in
                guard let v = table.column(named: "x")!.doubleValue(at: r), !v.isNaN,
                    let m = expected[r], !m.isNaN
                else { return false }
                return isMin ? v <= m : v >= m
            }
            #expect(try table.select(p, options: QueryOptions(threads: 1)).rows() == expectedRows, "\(p)")
            #expect(
                try table.select(p, options: ExpressionDifferentialTests.smallChunks(threads: 3)).rows() == expectedRows, "\(p) in chunks")
        }
    }

    /// The tie rule is visible: of +0 and -0 in a window, the later one is the extreme.
    @Test func equalExtremesGiveTheLatestRowsValue() throws {
        let table = try QuoteTable(
            sortingRows: [TickerEntry(symbol: "A")], rowTickers: [0, 0, 0, 0],
            dates: Column<Int32>([1, 2, 3, 4]),
            schema: [ColumnDescriptor(name: "x", type: .float64)],
            columns: [AnyColumn(Column<Double>([0.0, -0.0, 0.0, -1]))])
        let max2 = try table.values(of: .series(.mmax, .column("x"), window: 2), atRows: [1, 2, 3])
        #expect(max2.map { $0?.sign } == [.minus, .plus, .plus])  // [0, -0] → -0; [-0, 0] → 0; [0, -1] → 0
        let min3 = try table.values(of: .series(.mmin, .column("x"), window: 3), atRows: [2, 3])
        #expect(min3.map { $0?.sign } == [.plus, .minus])  // [0, -0, 0] → 0; [-0, 0, -1] → -1
        #expect(min3[1] == -1)
    }
}
