import Foundation

/// Round-number ticks for a value axis: a step of 1, 2 or 5 times a power of ten, and the axis
/// range widened to whole steps around the data.
///
///     let ticks = NiceTicks(covering: 0.37, 9.2, maxCount: 6)
///     ticks.values   // [0, 2, 4, 6, 8, 10]
///     ticks.label(4) // "4"
///
/// A range of one value (or none) is widened around it, so there are always at least two ticks.
struct NiceTicks: Equatable {
    /// The bottom of the axis (the first tick).
    let lower: Double
    /// The top of the axis (the last tick).
    let upper: Double
    /// The distance between ticks.
    let step: Double
    /// The tick values, from `lower` to `upper`.
    let values: [Double]
    /// Digits after the decimal point in labels: enough to tell ticks apart, no more.
    let decimals: Int

    /// Ticks covering `minimum...maximum` with at most `maxCount` ticks (at least 2).
    ///
    /// - Precondition: `maxCount >= 2`. Non-finite bounds are treated as no data (`0...1`).
    init(covering minimum: Double, _ maximum: Double, maxCount: Int = 8) {
        precondition(maxCount >= 2, "a value axis needs room for two ticks")
        var low = Swift.min(minimum, maximum), high = Swift.max(minimum, maximum)
        if !low.isFinite || !high.isFinite { (low, high) = (0, 1) }
        // Keep the span itself finite (±1e300 leaves room to widen and round).
        (low, high) = (Swift.max(low, -1e300), Swift.min(high, 1e300))
        if high - low <= Swift.max(abs(high), abs(low)) * 1e-12 {
            // One value: widen by 10 % of it (or by 1 around zero).
            let pad = low == 0 ? 1 : abs(low) * 0.1
            (low, high) = (low - pad, high + pad)
        }
        // The smallest 1-2-5 step that covers the range in maxCount - 1 intervals.
        let rough = (high - low) / Double(maxCount - 1)
        var exponent = Int(floor(log10(rough)))
        var mantissa = 1
        func ticks(_ m: Int, _ e: Int) -> (Double, Double, Int) {
            let s = Self.value(Int64(m), exponent: e)
            let first = floor(low / s), last = ceil(high / s)
            return (first, last, Int(last - first) + 1)
        }
        search: while true {
            for m in [1, 2, 5] {
                let (_, _, count) = ticks(m, exponent)
                if count <= maxCount {
                    mantissa = m
                    break search
                }
            }
            exponent += 1
        }
        let (first, last, _) = ticks(mantissa, exponent)
        step = Self.value(Int64(mantissa), exponent: exponent)
        decimals = Swift.max(0, -exponent)
        // Each tick as an integer count of steps, scaled once: no accumulated rounding.
        values = stride(from: first, through: last, by: 1).map { Self.value(Int64($0) * Int64(mantissa), exponent: exponent) }
        lower = values.first ?? low
        upper = values.last ?? high
    }

    /// `units × 10^exponent`, dividing for negative exponents so that 0.1-steps are as exact as
    /// decimals allow.
    private static func value(_ units: Int64, exponent: Int) -> Double {
        exponent >= 0 ? Double(units) * pow(10, Double(exponent)) : Double(units) / pow(10, Double(-exponent))
    }

    /// The label of a tick: fixed-point with ``decimals`` digits (`-0` printed as `0`).
    func label(_ value: Double) -> String {
        let text = String(format: "%.\(decimals)f", value)
        return text.hasPrefix("-") && text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) ? String(text.dropFirst()) : text
    }
}
