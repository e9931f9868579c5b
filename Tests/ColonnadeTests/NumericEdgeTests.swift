import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Numeric conversions on values from a file or the command line never trap and stay exact.
@Suite struct NumericEdgeTests {
    static let int64Values: [Int64] = [.min, .min + 1, .min + 1024, -(1 << 53) - 1, -(1 << 53), -1, 0, 1, 1 << 53, (1 << 53) + 1,
                                       .max - 1024, .max - 1, .max]
    static let bounds: [Double] = [-.infinity, -0x1p64, -0x1p63 - 2048, -0x1p63, -0x1p63 + 1024, -0x1p53 - 2, -0x1p53, -1.5, -1, -0.0,
                                   0, 0.5, 1, 0x1p53, 0x1p53 + 2, 0x1p63 - 1024, 0x1p63, 0x1p63 + 2048, 0x1p64, .infinity, .nan,
                                   2_147_483_647, 2_147_483_648, -2_147_483_648, -2_147_483_649, 2_147_483_647.5]

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
        var t = try QuoteTable(schema: [ColumnDescriptor(name: "open", type: T.elementType)], columns: [AnyColumn(Column<T>(values))],
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
            let variants: [RangeBounds<Double>] = [.greater(than: b), .atLeast(b), .less(than: b), .atMost(b), .equal(to: b),
                                                   .closed(b, 0x1p63), .open(-0x1p63, b)]
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
        #expect(try t.select(where: "open > 9223372036854775807").count == 0)  // the literal is 2^63 as a Double
        #expect(try t.select(where: "open < -9223372036854775809").count == 0)
        #expect(try t.select(where: "open >= -9223372036854775808").count == Self.int64Values.count)
        #expect(try t.select(where: "not open >= 9223372036854775808").count == Self.int64Values.count)
        // Above 2^53 a Double "+ 1" is lost: x > 2^60 must not include 2^60 itself.
        let big = try table([Int64(1) << 60, (Int64(1) << 60) + 1])
        #expect(try big.select(where: "open > 1152921504606846976").rows() == [1])
    }
}
