/// Partial state of aggregates of one argument over some rows: count, sum, minimum, maximum and,
/// when asked for, Welford's mean and sum of squared deviations (for stddev) and the earliest and
/// latest known value by (date, row).
struct Accumulator: Sendable {
    /// Values added, NaN included (the divisor of `sum`'s mean: a NaN makes it NaN).
    var count = 0
    /// NaN values added (a bare column's stored NaN): null to `count(x)`, as to `x is null`.
    var nans = 0
    var sum = 0.0
    var min = Double.nan
    var max = Double.nan
    /// Running mean and sum of squared deviations (Welford), over the same values as `count`.
    var mean = 0.0
    var m2 = 0.0
    /// The earliest and latest known (non-NaN) value: row -1 when none.
    var firstRow = -1, firstDate: Int32 = 0, firstValue = 0.0
    var lastRow = -1, lastDate: Int32 = 0, lastValue = 0.0

    /// Which optional parts to keep (the plain sum and count loop stays lean otherwise).
    struct Needs: Sendable, Equatable {
        var spread = false
        var ends = false

        mutating func formUnion(_ o: Needs) {
            spread = spread || o.spread
            ends = ends || o.ends
        }
    }

    @inline(__always)
    mutating func add(_ x: Double) {
        count += 1
        sum += x
        if x.isNaN {
            nans += 1
        } else {
            if !(x >= min) { min = x }  // also true while min is NaN
            if !(x <= max) { max = x }
        }
    }

    /// Welford's update; call after `add(x)` (which counted x).
    @inline(__always)
    mutating func addSpread(_ x: Double) {
        let d = x - mean
        mean += d / Double(count)
        m2 += d * (x - mean)
    }

    /// Rows must come in ascending order: ties in date keep the earlier row first, the later last.
    @inline(__always)
    mutating func addEnds(_ x: Double, row: Int, date: Int32) {
        guard !x.isNaN else { return }
        if firstRow < 0 || date < firstDate { firstRow = row; firstDate = date; firstValue = x }
        if lastRow < 0 || date >= lastDate { lastRow = row; lastDate = date; lastValue = x }
    }

    /// Adds `o`, which covers rows after this one's (so ties in date go to this one for first and
    /// to `o` for last). Sums add in call order; spreads combine by Chan et al.'s formula.
    mutating func merge(_ o: Accumulator) {
        if o.count > 0 {
            if count == 0 {
                mean = o.mean; m2 = o.m2
            } else {
                let n = Double(count + o.count)
                let delta = o.mean - mean
                mean += delta * (Double(o.count) / n)
                m2 += o.m2 + delta * delta * (Double(count) * Double(o.count) / n)
            }
        }
        count += o.count
        nans += o.nans
        sum += o.sum
        if !o.min.isNaN && !(o.min >= min) { min = o.min }
        if !o.max.isNaN && !(o.max <= max) { max = o.max }
        if o.firstRow >= 0 && (firstRow < 0 || o.firstDate < firstDate) {
            firstRow = o.firstRow; firstDate = o.firstDate; firstValue = o.firstValue
        }
        if o.lastRow >= 0 && (lastRow < 0 || o.lastDate >= lastDate) {
            lastRow = o.lastRow; lastDate = o.lastDate; lastValue = o.lastValue
        }
    }

    /// The value of `function` (nil where it has none).
    func value(_ function: Aggregate.Function) -> Double? {
        switch function {
        case .count: Double(count - nans)
        case .sum: count == 0 ? nil : sum
        case .min: min.isNaN ? nil : min
        case .max: max.isNaN ? nil : max
        case .mean: count == 0 ? nil : sum / Double(count)
        case .first: firstRow < 0 ? nil : firstValue
        case .last: lastRow < 0 ? nil : lastValue
        case .stddev: count < 2 ? nil : (Swift.max(m2, 0) / Double(count - 1)).squareRoot()
        }
    }
}
