import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// The block-at-a-time decimal scale scan (`DecimalScale.scanBlocks`, whose passing blocks run a
/// loop without branches) against the value-by-value scan (`DecimalScale.scan`) it stands for:
/// the same digits and largest magnitude on columns of cents, 12-decimal values, whole numbers,
/// NaN, ±0, a value that needs more digits than the rest (anywhere: first, last, across blocks)
/// and values that have no scale (1/3, ∞, too large once scaled).
@Suite struct DecimalScaleScanTests {
    @Test(arguments: 0 ..< 24)
    func blockScanEqualsValueByValueScan(seed: Int) {
        var rng = SplitMix64(seed: 900 + UInt64(seed))
        let count = [0, 1, 63, 1023, 1024, 1025, 3000, 5000][seed % 8]
        var values = (0 ..< count).map { _ -> Double in
            switch seed % 3 {
            case 0: Double(rng.inRange(-99_999 ... 99_999)) / 100  // cents
            case 1:  // 12 decimals, as their text parses
                Double(ExactWindowTests.decimalText(Int64(rng.inRange(10_000_000_000 ... 9_990_000_000_000)), digits: 12)) ?? 0
            default: Double(rng.inRange(0 ... 1_000_000_000))  // whole numbers
            }
        }
        // A few odd values at random places (first, last, a block's edges).
        let odd: [Double] = [.nan, -0.0, 0.125, 1.0 / 3, .infinity, 4.5e15, 123.456789, 0.1, 1e-15]
        for _ in 0 ..< (seed % 4) where count > 0 {
            let at = [0, count - 1, min(1023, count - 1), min(1024, count - 1), rng.below(count)][rng.below(5)]
            values[at] = odd[rng.below(odd.count)]
        }
        values.withUnsafeBufferPointer { v in
            guard let base = v.baseAddress else { return }
            for (lo, hi) in [(0, count), (count / 3, count), (0, count / 2)] {
                let slow = DecimalScale.scan(base, lo, hi, digits: 0, largest: 0)
                let fast = DecimalScale.scanBlocks(base, lo, hi)
                #expect(fast.digits == slow.digits, "rows \(lo) ..< \(hi)")
                if slow.digits >= 0 { #expect(fast.largest.bitPattern == slow.largest.bitPattern, "rows \(lo) ..< \(hi)") }
            }
        }
    }

    @Test func columnScaleFindsTheMostDigitsAnywhere() {
        // One 3-digit value among 200,000 cents, in the last of several chunks.
        var values = (0 ..< 200_000).map { Double($0 % 10_000) / 100 }
        values[199_999] = 1.234
        #expect(Column<Double>(values).decimalScale == DecimalScale(digits: 3, maxScaled: 99_990))
        values[150_000] = 1.0 / 3
        #expect(Column<Double>(values).decimalScale == nil)
    }
}
