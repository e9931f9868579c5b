import Foundation

/// The price axis of a chart: linear (``NiceTicks``) or logarithmic (`chart --log`), with its
/// bounds, its ticks and where a value sits on it.
struct PriceAxis {
    /// The axis' lowest and highest values.
    let lower: Double, upper: Double
    /// The tick values, ascending, inside `lower ... upper`.
    let values: [Double]
    /// Whether positions are logarithms of values.
    let isLogarithmic: Bool
    private let labels: [Double: String]
    private let linear: NiceTicks?

    /// A linear axis with `ticks`' bounds and values.
    init(_ ticks: NiceTicks) {
        lower = ticks.lower
        upper = ticks.upper
        values = ticks.values
        isLogarithmic = false
        labels = [:]
        linear = ticks
    }

    /// A logarithmic axis covering `a ... b` (positive; anything else is taken as no data), padded
    /// by 2 % of its span in log space. Ticks are 1, 2, 5 × 10^k (or 1, 2, 3, 5, 7, or every
    /// mantissa, when the range is narrow; every few decades when it is wide), at most `maxCount`;
    /// a range too narrow for two of those gets linear nice ticks, placed logarithmically.
    init(logCovering a: Double, _ b: Double, maxCount: Int) {
        var low = Swift.min(a, b), high = Swift.max(a, b)
        if !(low > 0) || !low.isFinite || !high.isFinite { (low, high) = (1, 10) }
        if high / low < 1.02 { (low, high) = (low / 1.05, high * 1.05) }
        let lo = log10(low), hi = log10(high), pad = (hi - lo) * 0.02
        let axisLow = pow(10, lo - pad), axisHigh = pow(10, hi + pad)
        lower = axisLow
        upper = axisHigh
        isLogarithmic = true
        let firstDecade = Int(floor(log10(axisLow))), lastDecade = Int(ceil(log10(axisHigh)))
        func ticks(_ mantissas: [Int], every: Int = 1) -> [(value: Double, label: String)] {
            var out = [(value: Double, label: String)]()
            for e in stride(from: firstDecade, through: lastDecade, by: every) {
                for m in mantissas {
                    let v = Double(m) * pow(10, Double(e))
                    guard v >= axisLow && v <= axisHigh else { continue }
                    out.append((v, e >= 0 ? String(Int64(v.rounded())) : String(format: "%.\(-e)f", v)))
                }
            }
            return out
        }
        var chosen: [(value: Double, label: String)] = []
        for mantissas in [[1], [1, 2, 5], [1, 2, 3, 5, 7], Array(1 ... 9)] {
            let t = ticks(mantissas)
            if t.count <= maxCount { if t.count >= 2 || chosen.isEmpty { chosen = t } } else { break }
        }
        if chosen.count > maxCount || (chosen.isEmpty && lastDecade - firstDecade > maxCount) {
            let every = Swift.max(1, Int((Double(lastDecade - firstDecade + 1) / Double(Swift.max(1, maxCount))).rounded(.up)))
            chosen = ticks([1], every: every)
        }
        if chosen.count >= 2 {
            values = chosen.map(\.value)
            labels = Dictionary(chosen.map { ($0.value, $0.label) }, uniquingKeysWith: { a, _ in a })
            linear = nil
        } else {
            let nice = NiceTicks(covering: low, high, maxCount: Swift.max(2, maxCount))
            values = nice.values.filter { $0 > 0 && $0 >= axisLow && $0 <= axisHigh }
            labels = [:]
            linear = nice
        }
    }

    /// Where `value` sits: itself, or its logarithm.
    func position(_ value: Double) -> Double { isLogarithmic ? log10(value) : value }

    /// A tick's label.
    func label(_ value: Double) -> String {
        if let text = labels[value] { return text }
        return linear?.label(value) ?? String(value)
    }
}
