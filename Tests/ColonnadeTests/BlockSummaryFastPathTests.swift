import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// The four-lane block summaries of columns without nulls against the row-by-row pass, bit for
/// bit: NaN, ±0 (the first in row order wins a tie), ±∞, all-NaN blocks, and lengths around
/// block boundaries.
@Suite struct BlockSummaryFastPathTests {
    static func bits(_ s: BlockSummaries<Double>) -> [[UInt64]] {
        [s.minimums.map(\.bitPattern), s.maximums.map(\.bitPattern), s.unknownCounts.map(UInt64.init)]
    }

    @Test(arguments: [0, 1, 3, 511, 512, 513, 1023, 1024, 1027, 5000])
    func doublesMatchTheRowByRowPass(length: Int) {
        var rng = SplitMix64(seed: 77 &+ UInt64(length))
        for round in 0 ..< 6 {
            let specials: [Double] = [.nan, 0, -0.0, .infinity, -.infinity, 1e-300, -1e-300]
            var values = [Double]()
            for r in 0 ..< length {
                let pick = rng.next() % 16
                switch round {
                case 0: values.append(rng.nextUnit() * 200 - 100)
                case 1: values.append(pick < 7 ? specials[Int(pick)] : rng.nextUnit() - 0.5)
                case 2: values.append(pick < 2 ? 0 : (pick < 4 ? -0.0 : Double(pick) - 8))  // ties at zero and elsewhere
                case 3: values.append(.nan)
                case 4: values.append(r % 512 < 500 ? .nan : (pick % 2 == 0 ? 0 : -0.0))  // zero extremes after NaNs
                default: values.append(pick < 8 ? .infinity : -.infinity)
                }
            }
            let column = Column<Double>(values)
            #expect(column.validity == nil)
            let fast = BlockSummaries(of: column)
            let reference = BlockSummaries(rowByRow: column)
            #expect(Self.bits(fast) == Self.bits(reference), "length \(length), round \(round)")
        }
    }

    @Test(arguments: [0, 1, 511, 512, 513, 2048, 3001])
    func int32MatchTheRowByRowPass(length: Int) {
        var rng = SplitMix64(seed: 5 &+ UInt64(length))
        let values = (0 ..< length).map { r in
            r % 7 == 0 ? (r % 2 == 0 ? Int32.min : Int32.max) : Int32(truncatingIfNeeded: rng.next())
        }
        let column = Column<Int32>(values)
        let fast = BlockSummaries(of: column)
        let reference = BlockSummaries(rowByRow: column)
        #expect(fast == reference)
    }

    @Test func columnsWithNullsKeepTheRowByRowPass() {
        var values: [Double?] = (0 ..< 1500).map { Double($0 % 90) - 45 }
        values[3] = nil
        values[700] = nil
        values[701] = .nan
        let column = Column<Double>(values)
        #expect(column.validity != nil)
        #expect(Self.bits(BlockSummaries(of: column)) == Self.bits(BlockSummaries(rowByRow: column)))
        #expect(BlockSummaries(of: column).unknownCounts == [1, 2, 0])
    }
}
