import Foundation

/// A horizontal grouped bar chart as one self-contained SVG: one row per group (a query, a
/// selectivity), one bar per series in it (threads × zone maps, an engine), a linear or log-10
/// value axis with round ticks, a value label at each bar's end. Used for `colonnade-bench --svg`.
struct BarChartSVG {
    struct Group {
        var label: String
        /// One value per series; nil (or a non-positive value on a log axis) leaves the slot empty.
        var values: [Double?]
    }

    var title: String
    var subtitle: String
    /// The value axis' caption (`M rows/s`).
    var unit: String
    var series: [String]
    var groups: [Group]
    var logScale = false

    static let palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]

    func render() -> String {
        let width = 900.0, left = 250.0, right = 70.0, top = 78.0, barHeight = 14.0, gap = 12.0
        let groupHeight = Double(max(series.count, 1)) * barHeight + gap
        let plotHeight = Double(groups.count) * groupHeight
        let height = top + plotHeight + 40
        let plotWidth = width - left - right
        let values = groups.flatMap { $0.values.compactMap { $0 } }.filter { $0.isFinite && (!logScale || $0 > 0) }
        let high = values.max() ?? 1, low = values.min() ?? 1
        // The axis: decades on a log scale, 1-2-5 steps from 0 on a linear one.
        var ticks: [Double] = []
        var lower = 0.0, upper = 1.0
        if logScale {
            let a = floor(log10(max(low, 1e-300))), b = ceil(log10(max(high, 1e-300)))
            lower = a
            upper = max(b, a + 1)
            ticks = stride(from: lower, through: upper, by: 1).map { pow(10, $0) }
        } else {
            let rough = max(high, 1e-12) / 5
            let magnitude = pow(10, floor(log10(rough)))
            let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? magnitude * 10
            upper = ceil(high / step) * step
            ticks = stride(from: 0, through: upper + step / 2, by: step).map { $0 }
        }
        func x(_ v: Double) -> Double {
            let t = logScale ? (log10(v) - lower) / (upper - lower) : v / upper
            return left + min(max(t, 0), 1) * plotWidth
        }
        func n(_ v: Double) -> String { String(format: "%.1f", v.isFinite ? v : 0) }
        func esc(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
                of: ">", with: "&gt;")
        }
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" font-family="sans-serif" font-size="11">
            <rect x="0" y="0" width="\(n(width))" height="\(n(height))" fill="#ffffff"/>
            <text x="\(n(left))" y="20" font-size="15" font-weight="bold" fill="#212529">\(esc(title))</text>
            <text x="\(n(left))" y="37" fill="#495057">\(esc(subtitle))</text>

            """
        var legendX = left
        for (i, name) in series.enumerated() {
            svg += "<rect x=\"\(n(legendX))\" y=\"48\" width=\"12\" height=\"10\" fill=\"\(Self.palette[i % Self.palette.count])\"/>"
            svg += "<text x=\"\(n(legendX + 16))\" y=\"57\" fill=\"#495057\">\(esc(name))</text>\n"
            legendX += 16 + 6.5 * Double(name.count) + 18
        }
        for tick in ticks {
            let tx = x(tick)
            svg += "<path d=\"M\(n(tx)) \(n(top - 4))V\(n(top + plotHeight))\" stroke=\"#e9ecef\" stroke-width=\"1\"/>"
            svg +=
                "<text x=\"\(n(tx))\" y=\"\(n(top + plotHeight + 14))\" text-anchor=\"middle\" fill=\"#495057\">\(Self.label(tick))</text>\n"
        }
        svg +=
            "<text x=\"\(n(left + plotWidth / 2))\" y=\"\(n(top + plotHeight + 30))\" text-anchor=\"middle\" fill=\"#495057\">\(esc(unit))\(logScale ? " (log scale)" : "")</text>\n"
        for (g, group) in groups.enumerated() {
            let y0 = top + Double(g) * groupHeight
            svg +=
                "<text x=\"\(n(left - 8))\" y=\"\(n(y0 + Double(series.count) * barHeight / 2 + 4))\" text-anchor=\"end\" fill=\"#212529\">\(esc(group.label))</text>\n"
            for (s, value) in group.values.enumerated() {
                guard let value, value.isFinite, !logScale || value > 0 else { continue }
                let y = y0 + Double(s) * barHeight
                let x0 = logScale ? left : x(0), x1 = x(value)
                svg +=
                    "<rect x=\"\(n(x0))\" y=\"\(n(y + 1))\" width=\"\(n(max(x1 - x0, 1)))\" height=\"\(n(barHeight - 2))\" fill=\"\(Self.palette[s % Self.palette.count])\"/>"
                svg +=
                    "<text x=\"\(n(x1 + 4))\" y=\"\(n(y + barHeight - 3))\" fill=\"#495057\" font-size=\"10\">\(Self.label(value))</text>\n"
            }
        }
        svg += "<path d=\"M\(n(left)) \(n(top - 4))V\(n(top + plotHeight))\" stroke=\"#868e96\" stroke-width=\"1\"/>\n</svg>\n"
        return svg
    }

    /// A value for a tick or a bar: three significant digits, `k`/`M`/`G` beyond a thousand.
    static func label(_ v: Double) -> String {
        guard v.isFinite else { return "?" }
        let units: [(Double, String)] = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
        for (size, suffix) in units where abs(v) >= size { return String(format: "%.3g", v / size) + suffix }
        return String(format: "%.3g", v)
    }
}
