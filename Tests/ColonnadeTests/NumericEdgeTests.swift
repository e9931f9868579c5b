import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Numeric conversions on values from a file or the command line never trap and stay exact.
@Suite struct NumericEdgeTests {
    static let int64Values: [Int64] = [
        .min, .min + 1, .min + 1024, -(1 << 53) - 1, -(1 << 53), -1, 0, 1, 1 << 53, (1 << 53) + 1,
        .max - 1024, .max - 1, .max,
    ]
    static let bounds: [Double] = [
        -.infinity, -0x1p64, -0x1p63 - 2048, -0x1p63, -0x1p63 + 1024, -0x1p53 - 2, -0x1p53, -1.5, -1, -0.0,
        0, 0.5, 1, 0x1p53, 0x1p53 + 2, 0x1p63 - 1024, 0x1p63, 0x1p63 + 2048, 0x1p64, .infinity, .nan,
        2_147_483_647, 2_147_483_648, -2_147_483_648, -2_147_483_649, 2_147_483_647.5,
    ]

    /// Whether the integer `x` satisfies `x op bound` for the real numbers (not after rounding x
    /// to a Double): exact with Float80, which holds every Int64 and every Double.
    static func exactly(_ x: Int64, _ bounds: RangeBounds<Double>) -> Bool {
        #if arch(x86_64)
        let v = Float80(x)
        if let lo = bounds.lower { if lo.isNaN || (bounds.lowerInclusive ? !(v >= Float80(lo)) : !(v > Float80(lo))) { return false } }
        if let hi = bounds.upper { if hi.isNaN || (bounds.upperInclusive ? !(v <= Float80(hi)) : !(v < Float80(hi))) { return false } }
        return true
        #else
        return bounds.matches(Double(x))
        #endif
    }

    func table<T: ColumnElement & FixedWidthInteger>(_ values: [T]) throws -> QuoteTable {
        var t = try QuoteTable(
            schema: [ColumnDescriptor(name: "open", type: T.elementType)], columns: [AnyColumn(Column<T>(values))],
            dates: Column<Int32>((0 ..< values.count).map(Int32.init)),
            tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: values.count)])
        t.computeSummaries()
        return t
    }

    @Test func integerColumnBoundsAtTheEdgesOfTheTypeAreExactAndNeverTrap() throws {
        let int64 = try table(Self.int64Values)
        let int32Values: [Int32] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
        let int32 = try table(int32Values)
        for b in Self.bounds {
            let variants: [RangeBounds<Double>] = [
                .greater(than: b), .atLeast(b), .less(than: b), .atMost(b), .equal(to: b),
                .closed(b, 0x1p63), .open(-0x1p63, b),
            ]
            for bounds in variants {
                for zonemaps in [true, false] {
                    let options = QueryOptions(threads: 1, useBlockSummaries: zonemaps)
                    let got = try int64.select(.range(column: "open", bounds: bounds), options: options).rows()
                    let expected = Self.int64Values.indices.filter { Self.exactly(Self.int64Values[$0], bounds) }
                    #expect(got == expected, "Int64 \(bounds)")
                    let got32 = try int32.select(.range(column: "open", bounds: bounds), options: options).rows()
                    let expected32 = int32Values.indices.filter { Self.exactly(Int64(int32Values[$0]), bounds) }
                    #expect(got32 == expected32, "Int32 \(bounds)")
                }
            }
        }
    }

    @Test func theIssuesExpressionOnAnInt64ColumnMatchesNothing() throws {
        let t = try table(Self.int64Values)
        #expect(try t.select(where: "open >= 9223372036854775808").count == 0)
        #expect(try t.select(where: "open > 9223372036854775807").count == 0)  // Int64.max, compared exactly
        #expect(try t.select(where: "open < -9223372036854775809").count == 0)
        #expect(try t.select(where: "open >= -9223372036854775808").count == Self.int64Values.count)
        #expect(try t.select(where: "not open >= 9223372036854775808").count == Self.int64Values.count)
        // Above 2^53 a Double "+ 1" is lost: x > 2^60 must not include 2^60 itself.
        let big = try table([Int64(1) << 60, (Int64(1) << 60) + 1])
        #expect(try big.select(where: "open > 1152921504606846976").rows() == [1])
    }

    /// Integer literals a Double cannot hold (fuzz finding 3), written as text, on every column
    /// type, with every operator, negated or not, with and without block summaries: the rows are
    /// those the real numbers select (Float80 holds every Int64 and every Double).
    @Test func integerLiteralsPast2To53CompareExactlyOnEveryColumnType() throws {
        let literals: [String] = [
            "9007199254740992", "9007199254740993", "9007199254740995", "-9007199254740993",
            "18014398509481987", "1152921504606846977", "9223372036854775806", "9223372036854775807",
            "-9223372036854775807", "9223372036854775809", "-9223372036854775809",
            "99999999999999999999", "0009007199254740993",
        ]
        let ints: [Int64] = [
            .min, -(1 << 53) - 2, -(1 << 53) - 1, -(1 << 53), 0, 1 << 53, (1 << 53) + 1, (1 << 53) + 2,
            (1 << 53) + 3, (1 << 53) + 4, (1 << 54) + 3, (1 << 54) + 4, (1 << 60) + 1, .max - 1, .max,
        ]
        let doubles: [Double] = [
            -0x1p63, -0x1p53 - 2, -0x1p53, 0, 0x1p53, 0x1p53 + 2, 0x1p53 + 4, 0x1p54 + 4, 0x1p60, 0x1p63 - 1024,
            0x1p63, 0x1p64, 1e20, .infinity, -.infinity, .nan,
        ]
        let int64 = try table(ints)
        var float64 = try QuoteTable(
            schema: [ColumnDescriptor(name: "open", type: .float64)], columns: [AnyColumn(Column<Double>(doubles))],
            dates: Column<Int32>((0 ..< doubles.count).map(Int32.init)),
            tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: doubles.count)])
        float64.computeSummaries()
        let floats = doubles.map(Float.init)
        var float32 = try QuoteTable(
            schema: [ColumnDescriptor(name: "open", type: .float32)], columns: [AnyColumn(Column<Float>(floats))],
            dates: Column<Int32>((0 ..< floats.count).map(Int32.init)),
            tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: floats.count)])
        float32.computeSummaries()
        #if arch(x86_64)
        func real(_ text: String) -> Float80 {
            let negative = text.hasPrefix("-")
            let digits = text.drop { $0 == "-" }
            var v: Float80 = 0
            for c in digits { v = v * 10 + Float80(c.wholeNumberValue ?? 0) }  // exact: under 2^64 significant bits
            return negative ? -v : v
        }
        let columns: [(String, QuoteTable, [Float80?])] = [
            ("Int64", int64, ints.map { Float80($0) }),
            ("Float64", float64, doubles.map { $0.isNaN ? nil : Float80($0) }),
            ("Float32", float32, floats.map { $0.isNaN ? nil : Float80($0) }),
        ]
        let operators: [(String, (Float80, Float80) -> Bool)] = [
            (">", (>)), (">=", (>=)), ("<", (<)), ("<=", (<=)), ("=", (==)), ("<>", (!=)),
        ]
        for literal in literals where literal.count - (literal.hasPrefix("-") ? 1 : 0) <= 19 {
            let l = real(literal)
            for (op, holds) in operators {
                for (name, t, values) in columns {
                    for negate in [false, true] {
                        for (text, column) in [("open \(op) \(literal)", true), ("open * 1 \(op) \(literal)", false)] {
                            // `open * 1` is computed in Double: exact for Double and Float values only.
                            if !column && name == "Int64" { continue }
                            let expected = values.indices.filter { i in
                                guard let v = values[i] else { return false }  // NaN: unknown, and so is its not
                                return holds(v, l) != negate
                            }
                            for zonemaps in [true, false] {
                                let q = negate ? "not (\(text))" : text
                                let got = try t.select(where: q, options: QueryOptions(threads: 1, useBlockSummaries: zonemaps)).rows()
                                #expect(got == expected, "\(name): \(q) (zone maps \(zonemaps))")
                            }
                        }
                    }
                }
            }
        }
        #endif
        // Past Int64 (20 digits): every Int64 is below; 99999999999999999999 rounds to 1e20, which a
        // Double column holds, and which is above the literal.
        #expect(try int64.select(where: "open < 99999999999999999999").count == ints.count)
        #expect(try int64.select(where: "open >= -99999999999999999999").count == ints.count)
        #expect(try float64.select(where: "open > 99999999999999999999").rows() == [12, 13])  // 1e20 and +inf
        #expect(try float64.select(where: "open >= 100000000000000000000").rows() == [12, 13])
        #expect(try float64.select(where: "open = 99999999999999999999").count == 0)
    }
}
