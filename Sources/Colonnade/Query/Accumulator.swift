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
    /// Every value (median and quantiles), in no particular order: sorted when read.
    var values: [Double] = []
    /// Pairs (x, y) known on both sides, for `corr`: their count, means and co-moments
    /// (Welford's update, Chan et al.'s combination).
    var pairs = 0
    var meanX = 0.0, meanY = 0.0, m2X = 0.0, m2Y = 0.0, coMoment = 0.0
    /// The first pair's values, whether a later pair differs from them on each side, and whether
    /// any value is infinite (then the co-moments are NaN).
    var firstX = 0.0, firstY = 0.0
    var xVaries = false, yVaries = false, infinite = false

    /// Which optional parts to keep (the plain sum and count loop stays lean otherwise).
    struct Needs: Sendable, Equatable {
        var spread = false
        var ends = false
        var values = false

        mutating func formUnion(_ o: Needs) {
            spread = spread || o.spread
            ends = ends || o.ends
            values = values || o.values
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
        if firstRow < 0 || date < firstDate {
            firstRow = row
            firstDate = date
            firstValue = x
        }
        if lastRow < 0 || date >= lastDate {
            lastRow = row
            lastDate = date
            lastValue = x
        }
    }

    /// One pair of known values (neither null nor NaN) for `corr`.
    @inline(__always)
    mutating func addPair(_ x: Double, _ y: Double) {
        if pairs == 0 {
            firstX = x
            firstY = y
        } else {
            xVaries = xVaries || x != firstX
            yVaries = yVaries || y != firstY
        }
        infinite = infinite || !x.isFinite || !y.isFinite
        pairs += 1
        let n = Double(pairs)
        let dx = x - meanX
        meanX += dx / n
        let dy = y - meanY
        meanY += dy / n
        m2X += dx * (x - meanX)
        m2Y += dy * (y - meanY)
        coMoment += dx * (y - meanY)
    }

    /// Adds `o`, which covers rows after this one's (so ties in date go to this one for first and
    /// to `o` for last). Sums add in call order; spreads combine by Chan et al.'s formula.
    mutating func merge(_ o: Accumulator) {
        if o.count > 0 {
            if count == 0 {
                mean = o.mean
                m2 = o.m2
            } else {
                let n = Double(count + o.count)
                let delta = o.mean - mean
                mean += delta * (Double(o.count) / n)
                m2 += o.m2 + delta * delta * (Double(count) * Double(o.count) / n)
            }
        }
        if o.pairs > 0 {
            if pairs == 0 {
                meanX = o.meanX
                meanY = o.meanY
                m2X = o.m2X
                m2Y = o.m2Y
                coMoment = o.coMoment
                firstX = o.firstX
                firstY = o.firstY
                xVaries = o.xVaries
                yVaries = o.yVaries
            } else {
                xVaries = xVaries || o.xVaries || o.firstX != firstX
                yVaries = yVaries || o.yVaries || o.firstY != firstY
                let a = Double(pairs), b = Double(o.pairs), n = a + b
                let dx = o.meanX - meanX, dy = o.meanY - meanY
                m2X += o.m2X + dx * dx * a * b / n
                m2Y += o.m2Y + dy * dy * a * b / n
                coMoment += o.coMoment + dx * dy * a * b / n
                meanX += dx * b / n
                meanY += dy * b / n
            }
            pairs += o.pairs
            infinite = infinite || o.infinite
        }
        if !o.values.isEmpty { values += o.values }
        count += o.count
        nans += o.nans
        sum += o.sum
        if !o.min.isNaN && !(o.min >= min) { min = o.min }
        if !o.max.isNaN && !(o.max <= max) { max = o.max }
        if o.firstRow >= 0 && (firstRow < 0 || o.firstDate < firstDate) {
            firstRow = o.firstRow
            firstDate = o.firstDate
            firstValue = o.firstValue
        }
        if o.lastRow >= 0 && (lastRow < 0 || o.lastDate >= lastDate) {
            lastRow = o.lastRow
            lastDate = o.lastDate
            lastValue = o.lastValue
        }
    }

    /// The value of `function` (nil where it has none); `parameter` is the q of a quantile.
    func value(_ function: Aggregate.Function, parameter: Double? = nil) -> Double? {
        switch function {
        case .median: Accumulator.quantile(values, 0.5)
        case .quantile: Accumulator.quantile(values, parameter ?? 0.5)
        case .corr:
            // Null with fewer than two pairs or a side of equal values (variance 0, one repeated
            // infinity included); else NaN where a value is infinite.
            pairs < 2 || !xVaries || !yVaries
                ? nil
                : infinite
                    ? .nan
                    : m2X <= 0 || m2Y <= 0 ? nil : Accumulator.clampedCorrelation(coMoment / (m2X.squareRoot() * m2Y.squareRoot()))
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

    /// `quantile_cont`: the value at position `q · (n − 1)` of the sorted values, interpolated
    /// linearly between its neighbours; nil for no values.
    static func quantile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let position = q * Double(sorted.count - 1)
        let lo = Int(position.rounded(.down)), hi = Swift.min(lo + 1, sorted.count - 1)
        let fraction = position - Double(lo)
        if fraction == 0 || sorted[lo] == sorted[hi] { return sorted[lo] }
        return sorted[lo] + (sorted[hi] - sorted[lo]) * fraction
    }

    /// A correlation clamped to [-1, 1] (rounding may step past); NaN (from infinities) stays NaN.
    static func clampedCorrelation(_ r: Double) -> Double { r.isNaN ? r : Swift.max(-1, Swift.min(1, r)) }
}
