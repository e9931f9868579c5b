import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// `msum` and `mavg` on values whose sums round (so the order of additions shows in the bits),
/// against a plain reference of the documented scheme (`SeriesKernels`): a fresh left-to-right
/// sum of the window ending at each restart row (the ticker's n-th row, then every n rows), then
/// `+ entering - leaving` one row at a time; NaN and ±∞ counted, not added. The engine runs
/// several restart blocks side by side; every value must have the reference's exact bits.
@Suite struct WindowSumTests {
    /// One ticker per length: values with many significant digits, some NaN, ±∞ and nulls.
    static func table(lengths: [Int], seed: UInt64, specials: Bool) throws -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        var rowTickers = [Int32](), dates = [Int32](), values = [Double?]()
        let pool: [Double?] = [.nan, .infinity, -.infinity, nil]
        for (t, length) in lengths.enumerated() {
            for d in 0 ..< length {
                rowTickers.append(Int32(t))
                dates.append(Int32(10_000 + d))
                if specials && rng.chance(150) {
                    values.append(pool[rng.below(pool.count)])
                } else {
                    values.append(Double(rng.inRange(-1_000_000 ... 9_000_000)) / 7 * (t % 2 == 0 ? 1 : 1e-3))
                }
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

    /// The reference value at every row (nil for null or NaN, as the API reports them).
    static func reference(_ table: QuoteTable, window n: Int, mean: Bool) -> [Double?] {
        let column = table.column(named: "x")!
        var out = [Double?](repeating: nil, count: table.rowCount)
        for ticker in table.tickers {
            let start = ticker.firstRow
            func x(_ r: Int) -> Double { column.doubleValue(at: r) ?? .nan }
            for r in start ..< start + ticker.rowCount where r - start >= n - 1 {
                let q = start + n - 1 + ((r - start - (n - 1)) / n) * n  // the restart row at or before r
                var sum = 0.0, nan = 0, positive = 0, negative = 0
                func add(_ v: Double, _ sign: Int) {
                    if v.isFinite {
                        sum = sign > 0 ? sum + v : sum - v
                    } else if v.isNaN {
                        nan += sign
                    } else if v > 0 {
                        positive += sign
                    } else {
                        negative += sign
                    }
                }
                for k in q - n + 1 ... q { add(x(k), 1) }
                var i = q
                while i < r {
                    i += 1
                    add(x(i), 1)
                    add(x(i - n), -1)
                }
                if nan > 0 || (positive > 0 && negative > 0) { continue }
                out[r] = positive > 0 ? .infinity : negative > 0 ? -.infinity : mean ? sum / Double(n) : sum
            }
        }
        return out
    }

    @Test(arguments: [1, 2, 3, 4, 5, 7, 8, 20, 50, 63, 64, 65, 200, 252])
    func slidingSumsHaveTheReferenceBits(window n: Int) throws {
        let lengths = [4 * n + 3, n - 1, 2 * n, 0, 9 * n + 1, 3 * n - 1, n, 6 * n + n / 2]
        for specials in [false, true] {
            let table = try Self.table(lengths: lengths, seed: UInt64(n) * 7 + (specials ? 1 : 0), specials: specials)
            var rng = SplitMix64(seed: UInt64(500 + n))
            for mean in [false, true] {
                let e = ValueExpression.series(mean ? .mavg : .msum, .column("x"), window: n)
                let want = Self.reference(table, window: n, mean: mean)
                let got = try table.values(of: e, atRows: Array(0 ..< table.rowCount))
                var mismatches = 0
                for r in 0 ..< table.rowCount where got[r]?.bitPattern != want[r]?.bitPattern {
                    mismatches += 1
                    if mismatches <= 3 { Issue.record("\(e) row \(r): \(String(describing: got[r])) vs \(String(describing: want[r]))") }
                }
                #expect(mismatches == 0, "\(e), specials \(specials): \(mismatches) rows differ")
                #expect(want.contains { $0 != nil })
                // Row ranges starting mid-ticker see the same values.
                for _ in 0 ..< 3 {
                    let a = rng.below(table.rowCount + 1), b = rng.below(table.rowCount + 1)
                    let rows = Array(min(a, b) ..< max(a, b))
                    let part = try table.values(of: e, atRows: rows)
                    #expect(zip(rows, part).allSatisfy { want[$0]?.bitPattern == $1?.bitPattern }, "\(e) over a range")
                }
            }
        }
    }
}
