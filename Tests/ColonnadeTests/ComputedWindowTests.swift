import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Windows over computed expressions (`mavg(close - open, 5)`, `msum(high - low, 20)`, a window of
/// the true range, ATR's seed) follow the exact-windows rule when the expression's values are
/// decimals of the columns' scale: the window is the exact decimal sum, rounded once. Checked
/// against exact decimal arithmetic written here: every price is generated as a whole number of
/// units `10^-d` (stored as the Double its decimal text parses to), an expression's value is the
/// integer arithmetic on those, a window's sum the integer sum, a comparison of two means a
/// comparison of integer cross products, and a mean's value the one rounding `Double(S) / Double(D)`
/// of two integers below 2^53. Masks exactly equal, ties included (the walk moves by a few units,
/// so equal means are common), on whole-cent and 12-decimal data, with nulls, across ticker and
/// 512-row block boundaries.
@Suite struct ComputedWindowTests {
    /// Scaled integers per row and column (nil: null).
    struct Data {
        var open = [Int64?](), high = [Int64?](), low = [Int64?](), close = [Int64?]()
    }

    static func table(digits: Int, seed: UInt64) -> (QuoteTable, Data) {
        var rng = SplitMix64(seed: seed)
        var rowTickers = [Int32](), dates = Column<Int32>()
        var columns = [Column<Double>](repeating: Column<Double>(), count: 4)
        var data = Data()
        let lengths = (0 ..< 14).map { _ in rng.chance(5) ? rng.below(6) : rng.inRange(0 ... 400) }
        for (t, length) in lengths.enumerated() {
            var c: Int64 = digits == 2 ? Int64(rng.inRange(100 ... 99_999)) : Int64(rng.inRange(10_000_000_000 ... 9_990_000_000_000))
            for r in 0 ..< length {
                rowTickers.append(Int32(t))
                dates.append(Int32(10_000 + r))
                c = max(10, c + Int64(rng.inRange(-2 ... 2)))
                let o = max(1, c + Int64(rng.inRange(-3 ... 3)))
                let h = max(o, c) + Int64(rng.inRange(0 ... 3)), l = max(1, min(o, c) - Int64(rng.inRange(0 ... 3)))
                let values = [o, h, l, c].map { v -> Int64? in rng.chance(40) ? nil : v }
                for (k, v) in values.enumerated() {
                    if let v {
                        columns[k].append(Double(ExactWindowTests.decimalText(v, digits: digits))!)
                    } else {
                        columns[k].appendNull()
                    }
                }
                data.open.append(values[0])
                data.high.append(values[1])
                data.low.append(values[2])
                data.close.append(values[3])
            }
        }
        do {
            let table = try QuoteTable(
                sortingRows: lengths.indices.map { TickerEntry(symbol: String(format: "T%02d", $0)) },
                rowTickers: rowTickers, dates: dates,
                schema: ["open", "high", "low", "close"].map { ColumnDescriptor(name: $0, type: .float64) },
                columns: columns.map { AnyColumn($0) })
            return (table, data)
        } catch {
            preconditionFailure("test table: \(error)")
        }
    }

    /// An expression and its exact scaled value per row (nil: null), computed on the integers.
    typealias Exact = (text: String, values: [Int64?])

    static func expressions(_ table: QuoteTable, _ d: Data) -> [Exact] {
        let rows = 0 ..< table.rowCount
        func prev(_ x: [Int64?], _ r: Int) -> Int64? {
            let t = Int(table.tickerNumber(ofRow: r))
            return r - 1 >= table.tickers[t].firstRow ? x[r - 1] : nil
        }
        func map(_ f: (Int) -> Int64?) -> [Int64?] { rows.map(f) }
        let trueRange = map { r -> Int64? in
            guard let h = d.high[r], let l = d.low[r], let p = prev(d.close, r) else { return nil }
            return max(h - l, abs(h - p), abs(l - p))
        }
        return [
            ("close - open", map { r in d.close[r].flatMap { c in d.open[r].map { c - $0 } } }),
            ("high - low", map { r in d.high[r].flatMap { h in d.low[r].map { h - $0 } } }),
            ("close - prev(close)", map { r in d.close[r].flatMap { c in prev(d.close, r).map { c - $0 } } }),
            ("greatest(high - low, abs(high - prev(close)), abs(low - prev(close)))", trueRange),
            (
                "2 * close - high - low",
                map { r in
                    guard let c = d.close[r], let h = d.high[r], let l = d.low[r] else { return nil }
                    return 2 * c - h - l
                }
            ),
            (
                "if(close > open, close - open, 0)",
                map { r in
                    guard let c = d.close[r], let o = d.open[r] else { return 0 }  // unknown condition: the else branch
                    return c > o ? c - o : 0
                }
            ),
        ]
    }

    /// The exact sum of the `n` values ending at `row` within its ticker, or nil.
    static func windowSum(_ x: [Int64?], _ table: QuoteTable, row: Int, n: Int) -> Int64? {
        let t = Int(table.tickerNumber(ofRow: row))
        guard row - n + 1 >= table.tickers[t].firstRow else { return nil }
        var sum: Int64 = 0
        for k in row - n + 1 ... row {
            guard let v = x[k] else { return nil }
            sum += v
        }
        return sum
    }

    @Test(arguments: [(2, 31 as UInt64), (2, 32), (12, 33), (12, 34)])
    func windowsOfComputedExpressionsAreExact(digits: Int, seed: UInt64) throws {
        let (table, data) = Self.table(digits: digits, seed: seed)
        let exprs = Self.expressions(table, data)
        let all = Array(0 ..< table.rowCount)
        let unit = DecimalScale.powers[digits]
        var ties = 0
        for (i, (text, x)) in exprs.enumerated() {
            // The scale is known: the exact kernel runs.
            let program = try ExpressionProgram(QueryParser(table: table).parseValue(text), table: table)
            #expect(program.decimalScale?.digits == digits, "\(text)")
            for n in [1, 2, 5, 14, 50] {
                // Values: the exact mean rounded once.
                let got = try table.values(of: QueryParser(table: table).parseValue("mavg(\(text), \(n))"), atRows: all)
                for r in all {
                    let expected = Self.windowSum(x, table, row: r, n: n).map { Double($0) / (Double(n) * unit) }
                    #expect(got[r] == expected, "mavg(\(text), \(n)) row \(r)")
                }
                let sums = try table.values(of: QueryParser(table: table).parseValue("msum(\(text), \(n))"), atRows: all)
                for r in all {
                    #expect(sums[r] == Self.windowSum(x, table, row: r, n: n).map { Double($0) / unit }, "msum(\(text), \(n)) row \(r)")
                }
                // Masks: two means of different expressions and windows, by integer cross products.
                let (otherText, y) = exprs[(i + 1) % exprs.count]
                let m = [1, 3, 7, 20][n % 4]
                for (op, keep) in [(">", { (c: Int) in c > 0 }), ("=", { $0 == 0 }), ("<=", { $0 <= 0 })] {
                    let query = "mavg(\(text), \(n)) \(op) mavg(\(otherText), \(m))"
                    let expected = all.filter { r in
                        guard let a = Self.windowSum(x, table, row: r, n: n), let b = Self.windowSum(y, table, row: r, n: m) else {
                            return false
                        }
                        let c = Int128(a) * Int128(m) - Int128(b) * Int128(n)
                        return keep(c < 0 ? -1 : c == 0 ? 0 : 1)
                    }
                    if op == "=" { ties += expected.count }
                    for threads in [1, 3] {
                        var options = QueryOptions(threads: threads)
                        options.rowsPerChunk = zoneMapBlockRows
                        #expect(try table.select(where: query, options: options).rows() == expected, "\(query)")
                    }
                }
            }
        }
        #expect(ties > 100, "the data must hold exact ties for the masks to test them (\(ties))")
    }

    @Test(arguments: [2, 12])
    func wilderSeedOfTheTrueRangeIsTheExactMean(digits: Int) throws {
        // ATR: rma(<true range>, n) first holds the mean of the first n true ranges, exactly rounded.
        let (table, data) = Self.table(digits: digits, seed: 40 + UInt64(digits))
        let (text, tr) = Self.expressions(table, data)[3]
        let unit = DecimalScale.powers[digits]
        for n in [1, 3, 14] {
            let got = try table.values(of: QueryParser(table: table).parseValue("rma(\(text), \(n))"), atRows: Array(0 ..< table.rowCount))
            for t in table.tickers where t.rowCount > 0 {
                // The row where the n-th non-null true range arrives, and their sum.
                var seen = 0, sum: Int64 = 0
                for r in t.rows {
                    guard let v = tr[r] else { continue }
                    seen += 1
                    sum += v
                    if seen == n {
                        #expect(got[r] == Double(sum) / (Double(n) * unit), "rma(\(text), \(n)) seed at row \(r)")
                        break
                    }
                }
            }
        }
    }

    @Test func expressionsThatAreNotDecimalsKeepTheFloatingPointWindows() throws {
        let (table, _) = Self.table(digits: 12, seed: 50)
        for text in ["close / open", "close * close", "sqrt(close)", "mavg(close, 3) - open", "ln(close)"] {
            let program = try ExpressionProgram(QueryParser(table: table).parseValue(text), table: table)
            #expect(program.decimalScale == nil, "\(text)")
        }
        // Whole-cent products keep a scale (4 digits); so do decimal constants.
        let (cents, _) = Self.table(digits: 2, seed: 51)
        for (text, digits) in [("close * close", 4), ("close - 0.005", 3), ("-close + 2", 2), ("abs(open - close)", 2)] {
            let program = try ExpressionProgram(QueryParser(table: cents).parseValue(text), table: cents)
            #expect(program.decimalScale?.digits == digits, "\(text)")
        }
    }
}
