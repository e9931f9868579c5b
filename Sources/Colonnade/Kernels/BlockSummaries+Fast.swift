/// Block summaries of columns without nulls, four lanes at a time.
///
/// Measured on a medium import profile, the row-by-row pass (a null check, a NaN check and a
/// first-value branch per row) took 5.5 % of a one-thread JSON import, run serially after all
/// inputs were placed. Here each block is four independent min/max/NaN-count chains of selects
/// with no branches; NaN never wins a `<` or `>`, so it only counts as unknown.
///
/// Bit-identity with `init(rowByRow:)`: among non-NaN doubles the only distinct bit patterns
/// that compare equal are +0 and −0, where the row-by-row pass keeps the first in row order. A
/// block whose minimum or maximum compares equal to zero is therefore recomputed row by row;
/// every other extreme is a unique value, whatever order the lanes saw it in.
extension BlockSummaries {
    /// The summaries of `column` (which has no validity) through a fast path, or nil when its
    /// element type has none.
    static func fastSummaries(of column: Column<Element>) -> BlockSummaries? {
        if Element.self == Double.self {
            return column.withUnsafeBufferPointer { values in
                // Safe: Element is Double, checked above.
                let doubles = UnsafeBufferPointer(
                    start: UnsafeRawPointer(values.baseAddress)?.assumingMemoryBound(to: Double.self),
                    count: values.count)
                let s = BlockSummaries<Double>.doubleSummaries(doubles)
                return unsafeBitCast(s, to: BlockSummaries.self)
            }
        }
        if Element.self == Int32.self {
            return column.withUnsafeBufferPointer { values in
                // Safe: Element is Int32, checked above.
                let ints = UnsafeBufferPointer(
                    start: UnsafeRawPointer(values.baseAddress)?.assumingMemoryBound(to: Int32.self),
                    count: values.count)
                let s = BlockSummaries<Int32>.int32Summaries(ints)
                return unsafeBitCast(s, to: BlockSummaries.self)
            }
        }
        return nil
    }
}

extension BlockSummaries {
    /// Whether `Element` has the fast per-block summary (`fastSummary(of:count:)`): Float64 and
    /// Int32 (prices and dates).
    static var hasFastSummaries: Bool { Element.self == Double.self || Element.self == Int32.self }

    /// One block's summary (minimum, maximum, unknown count) of `count` values without nulls,
    /// bit-identical to the row-by-row pass, for an element type with `hasFastSummaries`.
    @inline(__always)
    static func fastSummary(of p: UnsafePointer<Element>, count: Int) -> (Element, Element, UInt32) {
        if Element.self == Double.self {
            // Safe: Element is Double, checked above.
            let s = BlockSummaries<Double>.summary(of: UnsafeRawPointer(p).assumingMemoryBound(to: Double.self), count: count)
            return (unsafeBitCast(s.0, to: Element.self), unsafeBitCast(s.1, to: Element.self), s.2)
        }
        precondition(Element.self == Int32.self, "no fast summary for \(Element.self)")
        // Safe: Element is Int32, checked above.
        let s = BlockSummaries<Int32>.summary(of: UnsafeRawPointer(p).assumingMemoryBound(to: Int32.self), count: count)
        return (unsafeBitCast(s.0, to: Element.self), unsafeBitCast(s.1, to: Element.self), 0)
    }
}

extension BlockSummaries where Element == Double {
    /// Summaries of `values` (no nulls), bit-identical to the row-by-row pass.
    static func doubleSummaries(_ values: UnsafeBufferPointer<Double>) -> BlockSummaries<Double> {
        let n = values.count
        let blocks = blockCount(forRows: n)
        var mins = [Double](repeating: 0, count: blocks)
        var maxs = [Double](repeating: 0, count: blocks)
        var unknowns = [UInt32](repeating: 0, count: blocks)
        guard let base = values.baseAddress else { return BlockSummaries(minimums: mins, maximums: maxs, unknownCounts: unknowns) }
        for b in 0 ..< blocks {
            let lo = b * blockRows, hi = Swift.min(lo + blockRows, n)
            (mins[b], maxs[b], unknowns[b]) = summary(of: base + lo, count: hi - lo)
        }
        return BlockSummaries(minimums: mins, maximums: maxs, unknownCounts: unknowns)
    }

    /// The summary of one block of `count` values without nulls: minimum, maximum and NaN
    /// count, exactly as the row-by-row pass gives them.
    package static func summary(of p: UnsafePointer<Double>, count: Int) -> (Double, Double, UInt32) {
        let (mn, mx, unknown) = block(p, count: count)
        if unknown == UInt32(count) { return (Double.nullPlaceholder, Double.nullPlaceholder, unknown) }
        if mn == 0 || mx == 0 {
            let (a, b) = ordered(p, count: count)
            return (a, b, unknown)
        }
        return (mn, mx, unknown)
    }

    /// Minimum, maximum (over non-NaN values; ±∞ when there are none) and NaN count of `count`
    /// values, in four lanes.
    @inline(__always)
    private static func block(_ p: UnsafePointer<Double>, count: Int) -> (Double, Double, UInt32) {
        var mn0 = Double.infinity, mn1 = Double.infinity, mn2 = Double.infinity, mn3 = Double.infinity
        var mx0 = -Double.infinity, mx1 = -Double.infinity, mx2 = -Double.infinity, mx3 = -Double.infinity
        var nan0 = 0, nan1 = 0, nan2 = 0, nan3 = 0
        var i = 0
        // Safe: i + 3 < count within the loop, the tail below stays under count.
        while i + 4 <= count {
            let a = p[i], b = p[i + 1], c = p[i + 2], d = p[i + 3]
            mn0 = a < mn0 ? a : mn0
            mx0 = a > mx0 ? a : mx0
            nan0 &+= a != a ? 1 : 0
            mn1 = b < mn1 ? b : mn1
            mx1 = b > mx1 ? b : mx1
            nan1 &+= b != b ? 1 : 0
            mn2 = c < mn2 ? c : mn2
            mx2 = c > mx2 ? c : mx2
            nan2 &+= c != c ? 1 : 0
            mn3 = d < mn3 ? d : mn3
            mx3 = d > mx3 ? d : mx3
            nan3 &+= d != d ? 1 : 0
            i += 4
        }
        while i < count {
            let a = p[i]
            mn0 = a < mn0 ? a : mn0
            mx0 = a > mx0 ? a : mx0
            nan0 &+= a != a ? 1 : 0
            i += 1
        }
        let mn01 = mn1 < mn0 ? mn1 : mn0, mn23 = mn3 < mn2 ? mn3 : mn2
        let mx01 = mx1 > mx0 ? mx1 : mx0, mx23 = mx3 > mx2 ? mx3 : mx2
        return (mn23 < mn01 ? mn23 : mn01, mx23 > mx01 ? mx23 : mx01, UInt32(nan0 + nan1 + nan2 + nan3))
    }

    /// Minimum and maximum of the non-NaN values among `count` (at least one), first of equals
    /// winning, as the row-by-row pass takes them.
    private static func ordered(_ p: UnsafePointer<Double>, count: Int) -> (Double, Double) {
        var mn = Double.nullPlaceholder, mx = Double.nullPlaceholder
        var seen = false
        // Safe: r < count.
        for r in 0 ..< count {
            let x = p[r]
            if x.isNaN { continue }
            if !seen {
                mn = x
                mx = x
                seen = true
                continue
            }
            if x < mn { mn = x }
            if x > mx { mx = x }
        }
        return (mn, mx)
    }
}

extension BlockSummaries where Element == Int32 {
    /// Summaries of `values` (no nulls): integers have no NaN and no equal values with
    /// different bits, so lane order does not matter.
    static func int32Summaries(_ values: UnsafeBufferPointer<Int32>) -> BlockSummaries<Int32> {
        let n = values.count
        let blocks = blockCount(forRows: n)
        var mins = [Int32](repeating: 0, count: blocks)
        var maxs = [Int32](repeating: 0, count: blocks)
        let unknowns = [UInt32](repeating: 0, count: blocks)
        guard let base = values.baseAddress else { return BlockSummaries(minimums: mins, maximums: maxs, unknownCounts: unknowns) }
        for b in 0 ..< blocks {
            let lo = b * blockRows, hi = Swift.min(lo + blockRows, n)
            (mins[b], maxs[b]) = summary(of: base + lo, count: hi - lo)
        }
        return BlockSummaries(minimums: mins, maximums: maxs, unknownCounts: unknowns)
    }

    /// Minimum and maximum of one block of `count` (at least one) values.
    package static func summary(of p: UnsafePointer<Int32>, count: Int) -> (Int32, Int32) {
        var mn = Int32.max, mx = Int32.min
        // Safe: the caller vouches for count values at p.
        for r in 0 ..< count {
            let x = p[r]
            mn = Swift.min(mn, x)
            mx = Swift.max(mx, x)
        }
        return (mn, mx)
    }
}
