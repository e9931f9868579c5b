import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Exact `msum` and `mavg` over a column read from the scaled prefix sums the windows over it
/// share (`ExpressionProgram.scaledPrefix`, held in the worker's scratch) against the exact kernel
/// run over each ticker's whole rows (`SeriesKernels.runExact`): the same values to the bit,
/// whatever rows are asked for and in whatever order (a request within an earlier one's rows
/// reads its sums, one outside computes its own); with nulls, a request holding one falls back
/// to the per-segment kernel.
@Suite struct ScaledPrefixTests {
    @Test(arguments: [(2, false), (12, false), (2, true)])
    func windowsFromSharedPrefixSumsEqualTheExactKernel(digits: Int, nulls: Bool) throws {
        let (table, _) = ExactWindowTests.decimalTable(digits: digits, seed: 70 + UInt64(digits), nulls: nulls)
        guard case .float64(let close) = table.columns[0], let scale = close.decimalScale else {
            Issue.record("no decimal scale")
            return
        }
        let src = (0 ..< table.rowCount).map { close.value(at: $0) ?? .nan }
        var rng = SplitMix64(seed: 7 + UInt64(digits))
        var shared = 0
        for n in [1, 2, 7, 50, 200] {
            for f in [ValueExpression.SeriesFunction.msum, .mavg] {
                #expect(SeriesKernels.hasPrefixKernel(f, window: n, scale: scale))
                let program = try ExpressionProgram(.series(f, .column("close"), window: n), table: table)
                guard case .exactSeries = program.root else {
                    Issue.record("\(f)(close, \(n)) is not an exact window")
                    continue
                }
                let reference = Self.kernelValues(f, window: n, scale: scale, src, table)
                let scratch = ExpressionScratch()
                for _ in 0 ..< 40 {
                    let hi = rng.inRange(1 ... table.rowCount)
                    let lo = rng.inRange(0 ... hi - 1)
                    let before = scratch.scaledPrefixRows
                    let got = Self.values(program, lo ..< hi, scratch)
                    if scratch.scaledPrefixRows == before { shared += 1 }  // read an earlier request's sums
                    for k in lo ..< hi where !Self.same(got[k - lo], reference[k]) {
                        Issue.record("\(f)(close, \(n)) row \(k) of \(lo ..< hi): \(got[k - lo]) vs \(reference[k])")
                        break
                    }
                }
            }
        }
        #expect(shared > 0)  // some requests lay within an earlier one's rows
    }

    static func same(_ a: Double, _ b: Double) -> Bool { a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) }

    /// The program's values over `rows` evaluated in `scratch`.
    static func values(_ program: ExpressionProgram, _ rows: Range<Int>, _ scratch: ExpressionScratch) -> [Double] {
        let buffer = scratch.acquire(rows.count + program.lookback)
        defer { scratch.release() }
        let v = program.evaluate(rows: rows, buffer: buffer, scratch: scratch)
        return (0 ..< rows.count).map { v[$0] }
    }

    /// `runExact` over each ticker's rows.
    static func kernelValues(
        _ f: ValueExpression.SeriesFunction, window n: Int, scale: DecimalScale, _ src: [Double], _ table: QuoteTable
    ) -> [Double] {
        var out = [Double](repeating: .nan, count: src.count)
        var ints = [Int64](repeating: 0, count: src.count)
        for t in table.tickers where t.rowCount > 0 {
            src.withUnsafeBufferPointer { s in
                out.withUnsafeMutableBufferPointer { o in
                    ints.withUnsafeMutableBufferPointer { i in
                        SeriesKernels.runExact(
                            f, window: n, scale: scale, src: s.baseAddress! + t.firstRow, dst: o.baseAddress! + t.firstRow,
                            s: 0, e: t.rowCount, ints: i.baseAddress! + t.firstRow)
                    }
                }
            }
        }
        return out
    }

    @Test func scaledPrefixSumsAreTheRunningSumsOfTheScaledValues() {
        let values: [Double] = [10.21, 0.01, 3, .nan, 999.99, -4.5]
        let scaled: [Int64] = [1021, 1, 300, 0, 99_999, -450]
        let q = UnsafeMutablePointer<Int64>.allocate(capacity: values.count + 1)
        defer { q.deallocate() }
        let nulls = values.withUnsafeBufferPointer {
            SeriesKernels.scaledPrefixSums($0.baseAddress!, count: values.count, scale: DecimalScale(digits: 2, maxScaled: 99_999), into: q)
        }
        #expect(nulls == 1)
        var sum: Int64 = 0
        #expect(q[0] == 0)
        for (k, m) in scaled.enumerated() {
            sum += m
            #expect(q[k + 1] == sum, "prefix \(k + 1)")
        }
    }
}
