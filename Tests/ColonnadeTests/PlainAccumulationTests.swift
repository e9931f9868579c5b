import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// `Selection.accumulatePlain` (count, NaN count, sum, min, max of a bare column over a mask, kept
/// in registers) against `Accumulator.add` row by row in ascending order, bit for bit: masks of
/// every density (empty words, single bits, whole words of 64 rows, runs across words), with and
/// without validity, ranges that start and end inside words and on their edges, and values with
/// NaN, ±0, ±∞ and repeats; starting from an empty accumulator and from one already holding values.
@Suite struct PlainAccumulationTests {
    static func reference<T: ColumnElement>(
        _ values: [T], mask: Bitmask, validity: Bitmask?, _ range: Range<Int>, from start: Accumulator
    ) -> Accumulator {
        var a = start
        for row in range where mask[row] && (validity?[row] ?? true) { a.add(values[row].doubleValue) }
        return a
    }

    static func same(_ a: Accumulator, _ b: Accumulator) -> Bool {
        // A NaN sum is NaN either way (its sign and payload depend on which NaN the adds met first).
        a.count == b.count && a.nans == b.nans && (a.sum.bitPattern == b.sum.bitPattern || (a.sum.isNaN && b.sum.isNaN))
            && a.min.bitPattern == b.min.bitPattern && a.max.bitPattern == b.max.bitPattern
    }

    /// A mask of `count` rows: density `oneIn` (0: every row; 1: none), with whole words set or
    /// cleared now and then.
    static func mask(_ count: Int, density: Int, _ rng: inout SplitMix64) -> Bitmask {
        var m = Bitmask(count: count)
        var row = 0
        while row < count {
            if row & 63 == 0 && row + 64 <= count && rng.chance(4) {
                let set = rng.chance(2)
                for r in row ..< row + 64 { m[r] = set }
                row += 64
                continue
            }
            m[row] = density == 0 ? true : density == 1 ? false : rng.chance(density)
            row += 1
        }
        return m
    }

    @Test(arguments: [1, 2, 3, 4])
    func registerLoopEqualsAddRowByRow(seed: UInt64) {
        var rng = SplitMix64(seed: 7_700 + seed)
        let count = 64 * 9 + rng.below(64)
        let specials: [Double] = [.nan, 0, -0.0, .infinity, -.infinity, 1.5, -1.5]
        let doubles = (0 ..< count).map { _ in
            rng.chance(8) ? specials[rng.below(specials.count)] : Double(rng.inRange(-100_000 ... 100_000)) / 100
        }
        let ints = (0 ..< count).map { _ in Int32(rng.inRange(-1000 ... 1000)) }
        var checked = 0
        for density in [0, 1, 2, 3, 17] {
            let m = Self.mask(count, density: density, &rng)
            for hasValidity in [false, true] {
                let validity = hasValidity ? Self.mask(count, density: 2 + rng.below(3), &rng) : nil
                var ranges: [Range<Int>] = [0 ..< count, 0 ..< 64, 64 ..< 128, 63 ..< 65, count - 1 ..< count]
                for _ in 0 ..< 12 {
                    let lo = rng.below(count)
                    ranges.append(lo ..< lo + 1 + rng.below(count - lo))
                }
                var seeded = Accumulator()
                seeded.add(3.25)
                seeded.add(-7)
                for range in ranges {
                    for start in [Accumulator(), seeded] {
                        var got = start
                        doubles.withUnsafeBufferPointer {
                            Selection.accumulatePlain($0.baseAddress!, mask: m, validity: validity, range, &got)
                        }
                        let expected = Self.reference(doubles, mask: m, validity: validity, range, from: start)
                        #expect(Self.same(got, expected), "doubles density \(density) validity \(hasValidity) \(range)")
                        var gotInts = start
                        ints.withUnsafeBufferPointer {
                            Selection.accumulatePlain($0.baseAddress!, mask: m, validity: validity, range, &gotInts)
                        }
                        let expectedInts = Self.reference(ints, mask: m, validity: validity, range, from: start)
                        #expect(Self.same(gotInts, expectedInts), "ints density \(density) validity \(hasValidity) \(range)")
                        checked += 2
                    }
                }
            }
        }
        #expect(checked == 5 * 2 * 17 * 2 * 2)
    }
}
