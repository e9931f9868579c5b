import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Every kernel shape against the scalar definition, per element type.
@Suite struct KernelTests {
    static let sizes = [0, 1, 63, 64, 65, 4095, 4096, 4097, 70_000]

    func boundsShapes<T: ColumnElement>(_ a: T, _ b: T) -> [RangeBounds<T>] {
        [
            .open(a, b), .closed(a, b), .halfOpen(a, b), .greater(than: a), .atLeast(a), .less(than: b), .atMost(b),
            .equal(to: a), RangeBounds(lower: a, upper: b, upperInclusive: true), .any, .open(b, a), .closed(a, a),
        ]
    }

    func check<T: ColumnElement>(_ values: [T], _ bounds: RangeBounds<T>) {
        let n = values.count
        let expected = values.map { bounds.matches($0) }
        var rng = SplitMix64(seed: UInt64(n))
        let dense = (0 ..< Bitmask.wordCount(forBits: n)).map { _ in rng.next() }
        // Words with 0…12 rows set: exercises the sparse path of intersect mode (≤ 8 bits) and the dense one.
        let sparse = (0 ..< Bitmask.wordCount(forBits: n)).map { _ -> UInt64 in
            var w: UInt64 = 0
            for _ in 0 ..< rng.next() % 13 { w |= 1 << (rng.next() % 64) }
            return w
        }
        for prior in [dense, sparse] {
            values.withUnsafeBufferPointer { v in
                for mode in [MaskWriteMode.store, .intersect, .union] {
                    var words = prior
                    if n & 63 != 0, !words.isEmpty { words[words.count - 1] &= (1 << UInt64(n & 63)) - 1 }
                    let before = words
                    words.withUnsafeMutableBufferPointer { RangeKernels.evaluate(bounds, values: v, into: $0, mode: mode) }
                    for i in 0 ..< n {
                        let old = (before[i >> 6] >> UInt64(i & 63)) & 1 == 1
                        let got = (words[i >> 6] >> UInt64(i & 63)) & 1 == 1
                        let want: Bool =
                            switch mode {
                            case .store: expected[i]
                            case .intersect: old && expected[i]
                            case .union: old || expected[i]
                            }
                        if got != want {
                            Issue.record("\(T.self) n=\(n) \(bounds) mode=\(mode) row \(i) value \(values[i]): got \(got)")
                            return
                        }
                    }
                    if n & 63 != 0 { #expect(words[words.count - 1] >> UInt64(n & 63) == 0, "padding bits set") }
                }
            }
        }
    }

    @Test(arguments: sizes)
    func doubleKernelsMatchScalarReference(n: Int) {
        var rng = SplitMix64(seed: 11)
        let special: [Double] = [.nan, 0, -0.0, .infinity, -.infinity, 80, 83]
        let values = (0 ..< n).map { _ in rng.nextUnit() < 0.05 ? special[Int(rng.next() % 7)] : (60 + 40 * rng.nextUnit()).rounded() }
        for b in boundsShapes(80.0, 83.0) + boundsShapes(-0.0, 0.0) + boundsShapes(-Double.infinity, .infinity) { check(values, b) }
        check(values, .open(.nan, 90))
    }

    @Test(arguments: sizes)
    func floatKernelsMatchScalarReference(n: Int) {
        var rng = SplitMix64(seed: 12)
        let special: [Float] = [.nan, 0, -0.0, .infinity, -.infinity, 80, 83]
        let values = (0 ..< n).map { _ in rng.nextUnit() < 0.05 ? special[Int(rng.next() % 7)] : Float((60 + 40 * rng.nextUnit()).rounded())
        }
        for b in boundsShapes(Float(80), Float(83)) + boundsShapes(Float(-0.0), Float(0)) { check(values, b) }
    }

    @Test(arguments: sizes)
    func int32KernelsMatchScalarReference(n: Int) {
        var rng = SplitMix64(seed: 13)
        let values = (0 ..< n).map { _ in rng.nextUnit() < 0.02 ? [Int32.min, .max, 0][Int(rng.next() % 3)] : Int32(60 + rng.next() % 40) }
        for b in boundsShapes(Int32(80), Int32(83)) + boundsShapes(Int32.min, Int32.max) { check(values, b) }
    }

    @Test(arguments: sizes)
    func int64KernelsMatchScalarReference(n: Int) {
        var rng = SplitMix64(seed: 14)
        let values = (0 ..< n).map { _ in rng.nextUnit() < 0.02 ? [Int64.min, .max, 0][Int(rng.next() % 3)] : Int64(60 + rng.next() % 40) }
        for b in boundsShapes(Int64(80), Int64(83)) + boundsShapes(Int64.min, Int64.max) { check(values, b) }
    }

    @Test func allAndNoneSelectivity() {
        let values = [Double](repeating: 81, count: 4097)
        check(values, .open(80, 83))  // 100 %
        check(values, .open(90, 93))  // 0 %
    }

    @Test func blockSummariesDecideSkipFillOrScan() {
        let rows = BlockSummaries<Double>.blockRows
        var c = Column<Double>((0 ..< 2 * rows).map { Double($0 % 100) })
        c.computeSummaries()
        let s = c.summaries!
        #expect(s.count == 2)
        #expect(s.outcome(of: .open(200, 300), inBlock: 0, rows: rows) == .none)
        #expect(s.outcome(of: .closed(0, 99), inBlock: 0, rows: rows) == .all)
        #expect(s.outcome(of: .open(0, 99), inBlock: 0, rows: rows) == .some)
        var withNull = Column<Double>([1.0, nil, 3.0])
        withNull.computeSummaries()
        #expect(withNull.summaries!.unknownCounts == [1])
        #expect(withNull.summaries!.outcome(of: .closed(0, 10), inBlock: 0, rows: 3) == .some)
        var allNaN = Column<Double>([Double.nan, .nan])
        allNaN.computeSummaries()
        #expect(allNaN.summaries!.outcome(of: .any, inBlock: 0, rows: 2) == .none)
    }
}
