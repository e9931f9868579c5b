import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Windows over decimal columns against exact decimal arithmetic written here: each value is
/// generated as a whole number `m` of units `10^-d` and stored as the Double its decimal text
/// parses to; a window's sum is the integer sum of its `m`, and a comparison of a value with a
/// mean (or of two means) is a comparison of integer cross products. The engine must give
/// exactly these masks, ties included, on whole-cent and on 12-decimal data.
@Suite struct ExactWindowTests {
    /// A table of tickers of random lengths (0 … 300 rows): `close` walks in steps of −2 … 2 units
    /// of `10^-digits` (so windows often average to exactly a close: ties), with about 2 % nulls
    /// when `nulls`. Returns the table and each row's scaled integer (nil for null).
    static func decimalTable(digits: Int, seed: UInt64, nulls: Bool) -> (QuoteTable, [Int64?]) {
        var rng = SplitMix64(seed: seed)
        var rowTickers = [Int32](), dates = Column<Int32>(), close = Column<Double>()
        var scaled = [Int64?]()
        let lengths = (0 ..< 16).map { _ in rng.chance(5) ? rng.below(5) : rng.inRange(0 ... 300) }
        for (t, length) in lengths.enumerated() {
            // Whole cents from 1.00 to 999.99, or 12-decimal prices from 0.01 to 9.99 (as WIKI's
            // adjusted columns: at most 13 significant digits).
            var m: Int64 =
                digits == 2
                ? Int64(rng.inRange(100 ... 99_999))
                : Int64(rng.inRange(10_000_000_000 ... 9_990_000_000_000))
            for r in 0 ..< length {
                rowTickers.append(Int32(t))
                dates.append(Int32(10_000 + r))
                m = max(1, m + Int64(rng.inRange(-2 ... 2)))
                if nulls && rng.chance(50) {
                    close.appendNull()
                    scaled.append(nil)
                } else {
                    close.append(Double(decimalText(m, digits: digits))!)
                    scaled.append(m)
                }
            }
        }
        do {
            // Symbols that sort in generation order (T00, T01, …): rows stay in `scaled`'s order.
            let table = try QuoteTable(
                sortingRows: lengths.indices.map { TickerEntry(symbol: String(format: "T%02d", $0)) },
                rowTickers: rowTickers, dates: dates,
                schema: [ColumnDescriptor(name: "close", type: .float64)],
                columns: [AnyColumn(close)])
            return (table, scaled)
        } catch {
            preconditionFailure("test table: \(error)")
        }
    }

    /// `m·10^-digits` written out, e.g. 1021 with 2 digits → "10.21".
    static func decimalText(_ m: Int64, digits: Int) -> String {
        var text = String(m)
        while text.count <= digits { text = "0" + text }
        text.insert(".", at: text.index(text.endIndex, offsetBy: -digits))
        return text
    }

    /// The exact sum of the `n` scaled values ending at `row`, or nil when the window is not full
    /// in its ticker or holds a null.
    static func windowSum(_ scaled: [Int64?], _ table: QuoteTable, row: Int, n: Int) -> Int64? {
        let t = Int(table.tickerNumber(ofRow: row))
        guard row - n + 1 >= table.tickers[t].firstRow else { return nil }
        var sum: Int64 = 0
        for k in row - n + 1 ... row {
            guard let m = scaled[k] else { return nil }
            sum += m
        }
        return sum
    }

    static func compare<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : a == b ? 0 : 1 }

    @Test(arguments: [(2, 1 as UInt64), (2, 2), (12, 3), (12, 4)])
    func windowComparisonsMatchExactDecimalArithmetic(digits: Int, seed: UInt64) throws {
        let (table, scaled) = Self.decimalTable(digits: digits, seed: seed, nulls: seed % 2 == 0)
        var ties = 0
        for (a, b) in [(1, 2), (2, 3), (3, 4), (4, 6), (5, 10), (9, 50), (50, 200)] {
            // close against mavg(close, b): sign of n·m − Σ.
            let closeVsMean: [Int?] = (0 ..< table.rowCount).map { r in
                guard let m = scaled[r], let s = Self.windowSum(scaled, table, row: r, n: b) else { return nil }
                return Self.compare(Int128(m) * Int128(b), Int128(s))
            }
            // mavg(close, a) against mavg(close, b): sign of Σa·b − Σb·a.
            let meanVsMean: [Int?] = (0 ..< table.rowCount).map { r in
                guard let x = Self.windowSum(scaled, table, row: r, n: a),
                    let y = Self.windowSum(scaled, table, row: r, n: b)
                else { return nil }
                return Self.compare(Int128(x) * Int128(b), Int128(y) * Int128(a))
            }
            ties += closeVsMean.filter { $0 == 0 }.count + meanVsMean.filter { $0 == 0 }.count
            for (op, accept) in [(">", [1]), ("=", [0]), ("<=", [-1, 0])] {
                let cases = [
                    ("close \(op) mavg(close, \(b))", closeVsMean),
                    ("mavg(close, \(a)) \(op) mavg(close, \(b))", meanVsMean),
                ]
                for (text, reference) in cases {
                    let expected = reference.indices.filter { reference[$0].map { accept.contains($0) } ?? false }
                    if digits == 12 && text.hasPrefix("mavg") {
                        // Two 12-decimal means can differ by less than Float64 resolves (1e-12/(a·b)):
                        // rounded once each, only their ties are guaranteed, and they must hold.
                        if op == "=" {
                            let got = Set(try table.select(where: text, options: QueryOptions(threads: 1)).rows())
                            #expect(expected.allSatisfy { got.contains($0) }, "\(text): an exact tie lost")
                        }
                        continue
                    }
                    let single = try table.select(where: text, options: QueryOptions(threads: 1))
                    #expect(single.rows() == expected, "\(text) on \(digits)-decimal data")
                    var options = QueryOptions(threads: 3)
                    options.rowsPerChunk = zoneMapBlockRows
                    #expect(try table.select(where: text, options: options).mask == single.mask, "\(text): chunk dependence")
                }
            }
        }
        #expect(ties > 50)  // the walks make real decimal ties, which the masks above must keep
    }

    /// Values of msum, mavg and mdev: the correctly rounded exact decimal (msum, mavg) and within
    /// 1e-12 of the scale of the inputs (mdev); a window of equal values has mdev exactly 0.
    @Test(arguments: [2, 12])
    func windowValuesAreTheRoundedExactDecimal(digits: Int) throws {
        let (table, scaled) = Self.decimalTable(digits: digits, seed: 40 + UInt64(digits), nulls: true)
        let p = Double(sign: .plus, exponent: 0, significand: 1) * Foundation.pow(10, Double(digits))
        let all = Array(0 ..< table.rowCount)
        for n in [1, 2, 7, 50] {
            let sums = try table.values(of: .column("close").msum(n), atRows: all)
            let means = try table.values(of: .column("close").mavg(n), atRows: all)
            let devs = try table.values(of: .column("close").mdev(n), atRows: all)
            for r in 0 ..< table.rowCount {
                guard let s = Self.windowSum(scaled, table, row: r, n: n) else {
                    #expect(sums[r] == nil && means[r] == nil && devs[r] == nil, "row \(r) n \(n)")
                    continue
                }
                // Σ/10^d and Σ/(n·10^d), exact Decimal → Double through the decimal text.
                let sumText = Self.decimalText(s, digits: digits)
                #expect(sums[r] == Double(sumText), "msum row \(r) n \(n): \(String(describing: sums[r])) vs \(sumText)")
                let mean = Decimal(string: sumText)! / Decimal(n)
                let expectedMean = Double(truncating: mean as NSNumber)
                #expect(
                    Swift.abs((means[r] ?? .nan) - expectedMean) <= 1e-12 * Swift.abs(expectedMean),
                    "mavg row \(r) n \(n)")
                // Two-pass deviation of the exact values.
                let window = (r - n + 1 ... r).map { Double(scaled[$0]!) / p }
                if n == 1 {
                    #expect(devs[r] == nil)
                    continue
                }
                let allEqual = Set((r - n + 1 ... r).map { scaled[$0]! }).count == 1
                if allEqual { #expect(devs[r] == 0, "mdev of equal values, row \(r)") }
                let mu = window.reduce(0, +) / Double(n)
                let sd = (window.map { ($0 - mu) * ($0 - mu) }.reduce(0, +) / Double(n - 1)).squareRoot()
                #expect(Swift.abs((devs[r] ?? .nan) - sd) <= 1e-12 * Swift.abs(window[0]) + 1e-9 * sd, "mdev row \(r) n \(n)")
            }
        }
        _ = p
    }

    @Test func quotientIsCorrectlyRounded() {
        // Exact cases and ties to even, against Double's own division where both are exact.
        for (a, b) in [(1, 3), (2, 3), (10, 4), (1021 * 50, 50 * 100), (-7, 2), (123_456_789, 1000)] as [(Int128, Int128)] {
            #expect(SeriesKernels.quotient(a, b) == Double(a) / Double(b), "\(a)/\(b)")
        }
        // Beyond 2^53: (2^60 + 1) / 1 rounds to 2^60; (2^60 + 2^8) / 2^4 is exact in Double (2^56 + 2^4).
        #expect(SeriesKernels.quotient((1 << 60) + 1, 1) == 0x1p60)
        #expect(SeriesKernels.quotient((1 << 60) + (1 << 8), 1 << 4) == 0x1p56 + 16)
        // A half-way case just above a tie rounds up: 2^53 + 1 + 1/3.
        #expect(SeriesKernels.quotient(((1 << 53) + 1) * 3 + 1, 3) == 0x1p53 + 2)
        #expect(SeriesKernels.quotient(((1 << 53) + 1) * 3 - 1, 3) == 0x1p53)
    }

    @Test func decimalScaleIsDetectedAndDroppedByMutation() {
        var c = Column<Double>([10.21, 3, 0.5, .nan])
        #expect(c.decimalScale?.digits == 2)
        c.append(1.0 / 3)
        #expect(c.decimalScale == nil)
        #expect(Column<Double>([1.123456789012]).decimalScale?.digits == 12)
        #expect(Column<Double>([.infinity]).decimalScale == nil)
    }
}
