import Colonnade

/// A price chart as one self-contained SVG document: no scripts, no external fonts or files.
///
/// One ticker with open/high/low/close and at most ``candlestickLimit`` trading days is drawn as
/// candlesticks, anything else as close lines (several tickers share one axis; with
/// ``normalize`` each is divided by its first price, so all start at 1.0). Overlays are extra
/// dashed lines, rows matching `--where` get a dot, volume bars go in a pane beneath. Trading
/// days are evenly spaced (no weekend gaps); date ticks sit on the first trading day of a
/// calendar boundary (``CalendarTicks``), price ticks on round numbers (``NiceTicks``). A null
/// leaves a gap in its line. Paths are simplified to the pixel grid (first, lowest, highest and
/// last point of each pixel column), so a 40-year daily chart stays small; coordinates have one
/// decimal and the output is the same bytes for the same input.
struct SVGChart {
    /// The tickers to draw, in legend order.
    var series: [ChartSeries]
    /// Divide each ticker's prices (and overlays) by its first price.
    var normalize = false
    /// Draw the volume pane (uses the first series' `volume`).
    var showVolume = false
    /// What the line shows (`close`), for the subtitle.
    var priceLabel = "close"
    /// The `--where` text, for the subtitle when rows are marked.
    var whereText: String?
    /// Said after the price in the subtitle (`adjusted for splits and dividends`), if anything.
    var priceNote: String?
    /// Prices on a logarithmic scale (values at or below 0 leave gaps).
    var logScale = false

    /// Candlesticks only up to this many trading days; lines beyond.
    static let candlestickLimit = 250

    // Layout, in pixels.
    let width = 960.0
    let marginLeft = 72.0, marginRight = 24.0, marginTop = 66.0, marginBottom = 30.0
    let priceHeight = 400.0, volumeGap = 14.0, volumeHeight = 100.0

    var plotWidth: Double { width - marginLeft - marginRight }
    var priceTop: Double { marginTop }
    var priceBottom: Double { marginTop + priceHeight }
    var volumeTop: Double { priceBottom + volumeGap }
    var volumeBottom: Double { volumeTop + volumeHeight }
    var height: Double { (showVolume ? volumeBottom : priceBottom) + marginBottom }

    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#ff7f0e"]
    static let upColor = "#2b8a3e", downColor = "#c92a2a", markColor = "#f08c00", splitColor = "#5f3dc4"

    /// Whether the prices are drawn as candlesticks.
    var usesCandlesticks: Bool {
        series.count == 1 && !normalize && series[0].ohlc != nil && (1 ... Self.candlestickLimit).contains(series[0].count)
    }

    /// The document.
    func render() -> String {
        var svg = ""
        let w = SVGText.number(width), h = SVGText.number(height)
        svg.append(line: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        svg.append(
            line:
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(w)\" height=\"\(h)\" viewBox=\"0 0 \(w) \(h)\" font-family=\"sans-serif\" font-size=\"11\">"
        )
        svg.append(line: "<title>\(SVGText.escaped(title))</title>")
        svg.append(line: "<rect x=\"0\" y=\"0\" width=\"\(w)\" height=\"\(h)\" fill=\"#ffffff\"/>")
        svg.append(
            line:
                "<text x=\"\(n(marginLeft))\" y=\"22\" font-size=\"15\" font-weight=\"bold\" fill=\"#212529\">\(SVGText.escaped(title))</text>"
        )

        let days = unionOfDays()
        guard let firstDay = days.first, let lastDay = days.last else {
            svg.append(line: "<text x=\"\(n(marginLeft))\" y=\"40\" fill=\"#495057\">no rows in the range</text>")
            svg.append(line: "</svg>")
            return svg
        }
        svg.append(
            line:
                "<text x=\"\(n(marginLeft))\" y=\"40\" fill=\"#495057\">\(SVGText.escaped(subtitle(firstDay, lastDay, days.count)))</text>")

        let positions = series.map { self.positions(of: $0, in: days) }
        let scaled = series.map(scaledValues)
        let slot = plotWidth / Double(days.count)
        func x(_ index: Int) -> Double { clampX(marginLeft + (Double(index) + 0.5) * slot) }

        // Price axis.
        let candles = usesCandlesticks
        var low = Double.infinity, high = -Double.infinity
        for s in scaled {
            for values in [s.close] + (candles ? [s.open, s.high, s.low] : []) + s.overlays {
                for case let v? in values {
                    low = min(low, v)
                    high = max(high, v)
                }
            }
        }
        if low > high { (low, high) = logScale ? (1, 10) : (0, 1) }
        if normalize { (low, high) = (min(low, 1), max(high, 1)) }
        let priceTicks =
            logScale
            ? PriceAxis(logCovering: low, high, maxCount: max(2, Int(priceHeight / 45)))
            : PriceAxis(NiceTicks(covering: low, high, maxCount: max(2, Int(priceHeight / 45))))
        func y(_ value: Double) -> Double {
            let span = priceTicks.position(priceTicks.upper) - priceTicks.position(priceTicks.lower)
            return clampY(priceBottom - (priceTicks.position(value) - priceTicks.position(priceTicks.lower)) / span * priceHeight)
        }

        // Grid and axes.
        let dateTicks = CalendarTicks(from: firstDay, to: lastDay, maxCount: max(1, Int(plotWidth / 90)))
        let dateTickIndices = tickIndices(dateTicks, days: days, slot: slot)
        var grid = ""
        for value in priceTicks.values { grid += "M\(n(marginLeft)) \(n(y(value)))H\(n(marginLeft + plotWidth))" }
        for (index, _) in dateTickIndices {
            grid += "M\(n(x(index))) \(n(priceTop))V\(n(showVolume ? volumeBottom : priceBottom))"
        }
        svg.append(line: "<path d=\"\(grid)\" fill=\"none\" stroke=\"#e9ecef\" stroke-width=\"1\"/>")
        if normalize {
            svg.append(
                line:
                    "<path d=\"M\(n(marginLeft)) \(n(y(1)))H\(n(marginLeft + plotWidth))\" fill=\"none\" stroke=\"#868e96\" stroke-width=\"1\"/>"
            )
        }
        var frame = "M\(n(marginLeft)) \(n(priceTop))V\(n(priceBottom))H\(n(marginLeft + plotWidth))"
        if showVolume { frame += "M\(n(marginLeft)) \(n(volumeTop))V\(n(volumeBottom))H\(n(marginLeft + plotWidth))" }
        svg.append(line: "<path d=\"\(frame)\" fill=\"none\" stroke=\"#adb5bd\" stroke-width=\"1\"/>")
        svg.append(line: "<g fill=\"#495057\" text-anchor=\"end\">")
        for value in priceTicks.values {
            svg.append(line: "<text x=\"\(n(marginLeft - 6))\" y=\"\(n(y(value) + 4))\">\(priceTicks.label(value))</text>")
        }
        svg.append(line: "</g>")
        svg.append(line: "<g fill=\"#495057\" text-anchor=\"middle\">")
        let labelY = (showVolume ? volumeBottom : priceBottom) + 16
        for (index, day) in dateTickIndices {
            svg.append(line: "<text x=\"\(n(x(index)))\" y=\"\(n(labelY))\">\(SVGText.escaped(dateTicks.label(day)))</text>")
        }
        svg.append(line: "</g>")

        // Volume pane.
        if showVolume, let volume = series.first?.volume {
            var top = 0.0
            for case let v? in volume where v > top { top = v }
            let volumeTicks = NiceTicks(covering: 0, max(top, 1), maxCount: 3)
            func vy(_ v: Double) -> Double { clampY(volumeBottom - max(0, v) / volumeTicks.upper * volumeHeight) }
            var bars = ""
            let barWidth: Double
            if Double(days.count) <= plotWidth {
                barWidth = max(1, slot * 0.7)
                for (row, index) in positions[0].enumerated() {
                    if let v = volume[row], v > 0 { bars += "M\(n(x(index))) \(n(volumeBottom))V\(n(vy(v)))" }
                }
            } else {
                // One bar per pixel column: the largest volume in it.
                barWidth = 1
                var column = Int.min, largest = 0.0
                func flush() {
                    if column != Int.min && largest > 0 { bars += "M\(n(Double(column) + 0.5)) \(n(volumeBottom))V\(n(vy(largest)))" }
                }
                for (row, index) in positions[0].enumerated() {
                    let c = Int(x(index).rounded(.down))
                    if c != column {
                        flush()
                        column = c
                        largest = 0
                    }
                    if let v = volume[row] { largest = max(largest, v) }
                }
                flush()
            }
            svg.append(line: "<path d=\"\(bars)\" fill=\"none\" stroke=\"#adb5bd\" stroke-width=\"\(n(barWidth))\"/>")
            svg.append(
                line:
                    "<text x=\"\(n(marginLeft - 6))\" y=\"\(n(volumeTop + 10))\" fill=\"#495057\" text-anchor=\"end\">\(Self.compact(volumeTicks.upper))</text>"
            )
            svg.append(line: "<text x=\"\(n(marginLeft + 4))\" y=\"\(n(volumeTop + 10))\" fill=\"#868e96\">volume</text>")
        }

        // Prices.
        if candles {
            svg.append(line: candlesticks(scaled[0], positions: positions[0], x: x, y: y, slot: slot))
        } else {
            for (i, s) in scaled.enumerated() {
                let points = zip(positions[i], s.close).map { index, v in v.map { (x(index), y($0)) } }
                svg.append(
                    line:
                        "<path d=\"\(Self.linePath(points))\" fill=\"none\" stroke=\"\(color(ofSeries: i))\" stroke-width=\"1.5\" stroke-linejoin=\"round\" stroke-linecap=\"round\"/>"
                )
            }
        }
        // Overlays.
        var overlayNumber = 0
        for (i, s) in scaled.enumerated() {
            for values in s.overlays {
                let points = zip(positions[i], values).map { index, v in v.map { (x(index), y($0)) } }
                let path = Self.linePath(points)
                // Null throughout (a window longer than the history): no line, the legend still names it.
                if !path.isEmpty {
                    svg.append(
                        line:
                            "<path d=\"\(path)\" fill=\"none\" stroke=\"\(color(ofOverlay: overlayNumber))\" stroke-width=\"1.2\" stroke-dasharray=\"5 3\" stroke-linejoin=\"round\"/>"
                    )
                }
                overlayNumber += 1
            }
        }
        // Split days: a dotted line over the prices, a triangle on the time axis and the ratio.
        var splitLines = "", splitTriangles = "", splitLabels = ""
        for (i, s) in series.enumerated() {
            for split in s.splits where split.index < positions[i].count {
                let px = x(positions[i][split.index])
                splitLines += "M\(n(px)) \(n(priceTop))V\(n(priceBottom))"
                splitTriangles += "M\(n(px)) \(n(priceBottom - 7))L\(n(clampX(px + 4))) \(n(priceBottom))H\(n(clampX(px - 4)))Z"
                let label = (series.count > 1 ? "\(s.symbol) " : "") + "split " + FetchCommand.splitText(split.ratio)
                splitLabels += "<text x=\"\(n(clampX(px + 3)))\" y=\"\(n(priceTop + 11))\">\(SVGText.escaped(label))</text>"
            }
        }
        if !splitLines.isEmpty {
            svg.append(
                line:
                    "<g class=\"splits\" fill=\"\(Self.splitColor)\" font-size=\"10\"><path d=\"\(splitLines)\" fill=\"none\" stroke=\"\(Self.splitColor)\" stroke-width=\"1\" stroke-dasharray=\"1 3\"/>"
                    + "<path d=\"\(splitTriangles)\" stroke=\"none\"/>\(splitLabels)</g>")
        }
        // Marks: one dot per pixel column and series, at the price (above the candle's high with
        // candlesticks; at the pane's foot when the price is null).
        var marks = ""
        for (i, s) in series.enumerated() {
            var lastColumn = Int.min
            for (row, index) in positions[i].enumerated() where s.marked[row] {
                let px = x(index)
                let column = Int(px.rounded(.down))
                if column == lastColumn { continue }
                lastColumn = column
                let above = candles ? scaled[i].high[row].map { clampY(y($0) - 6) } : nil
                let py = above ?? scaled[i].close[row].map(y) ?? priceBottom - 4
                marks += "<circle cx=\"\(n(px))\" cy=\"\(n(py))\" r=\"3\"/>"
            }
        }
        if !marks.isEmpty {
            svg.append(line: "<g fill=\"\(Self.markColor)\" stroke=\"#ffffff\" stroke-width=\"0.8\">\(marks)</g>")
        }
        svg.append(line: legend())
        svg.append(line: "</svg>")
        return svg
    }

    // MARK: Pieces

    /// The chart's title: the ticker and company name, or the tickers.
    var title: String {
        if series.count == 1 {
            let s = series[0]
            return s.name.map { "\(s.symbol) — \($0)" } ?? s.symbol
        }
        let shown = series.prefix(8).map(\.symbol).joined(separator: ", ")
        let more = series.count > 8 ? " and \(series.count - 8) more" : ""
        return shown + more + (normalize ? " — growth of 1.0" : "")
    }

    private func subtitle(_ first: Int32, _ last: Int32, _ count: Int) -> String {
        var text =
            "\(Day(daysSinceEpoch: first).description) to \(Day(daysSinceEpoch: last).description) · \(count) trading day\(count == 1 ? "" : "s") · \(priceLabel)"
        if normalize { text += " ÷ first \(priceLabel)" }
        if let priceNote { text += ", \(priceNote)" }
        if logScale { text += " · log scale" }
        if let whereText {
            let marked = series.reduce(0) { $0 + $1.marked.lazy.filter { $0 }.count }
            text += " · ● where \(whereText) (\(marked) row\(marked == 1 ? "" : "s"))"
        }
        return text
    }

    private func legend() -> String {
        var items: [(label: String, color: String, dashed: Bool)] = []
        if !usesCandlesticks || series.count > 1 {
            for (i, s) in series.enumerated() { items.append((s.symbol, color(ofSeries: i), false)) }
        }
        var overlayNumber = 0
        for s in series {
            for overlay in s.overlays {
                items.append((series.count > 1 ? "\(s.symbol) \(overlay.label)" : overlay.label, color(ofOverlay: overlayNumber), true))
                overlayNumber += 1
            }
        }
        var out = "<g font-size=\"11\" fill=\"#495057\">"
        var x = marginLeft
        for item in items {
            guard x < width - marginRight - 40 else { break }
            let dash = item.dashed ? " stroke-dasharray=\"5 3\"" : ""
            out += "<path d=\"M\(n(x)) 54H\(n(x + 18))\" stroke=\"\(item.color)\" stroke-width=\"2\"\(dash)/>"
            out += "<text x=\"\(n(x + 22))\" y=\"58\">\(SVGText.escaped(item.label))</text>"
            x += 22 + 6.5 * Double(item.label.count) + 16
        }
        return out + "</g>"
    }

    private func color(ofSeries index: Int) -> String { Self.palette[index % Self.palette.count] }

    private func color(ofOverlay index: Int) -> String {
        Self.palette[(series.count + index) % Self.palette.count]
    }

    /// The candlesticks: wicks and bodies, one path per direction.
    private func candlesticks(_ s: ScaledSeries, positions: [Int], x: (Int) -> Double, y: (Double) -> Double, slot: Double) -> String {
        var upWicks = "", downWicks = "", upBodies = "", downBodies = ""
        let half = min(12, max(0.5, slot * 0.35))
        for (row, index) in positions.enumerated() {
            guard let c = s.close[row] else { continue }
            let cx = x(index)
            guard let o = s.open[row], let h = s.high[row], let l = s.low[row] else {
                // Only a close: a short level mark.
                upWicks += "M\(n(clampX(cx - half))) \(n(y(c)))H\(n(clampX(cx + half)))"
                continue
            }
            let up = c >= o
            let wick = "M\(n(cx)) \(n(y(max(h, o, c))))V\(n(y(min(l, o, c))))"
            var top = y(max(o, c)), bottom = y(min(o, c))
            if bottom - top < 1 { (top, bottom) = (clampY(top - 0.5), clampY(top + 0.5)) }
            let body = "M\(n(clampX(cx - half))) \(n(top))H\(n(clampX(cx + half)))V\(n(bottom))H\(n(clampX(cx - half)))Z"
            if up {
                upWicks += wick
                upBodies += body
            } else {
                downWicks += wick
                downBodies += body
            }
        }
        return "<path d=\"\(upWicks)\" fill=\"none\" stroke=\"\(Self.upColor)\" stroke-width=\"1\"/>\n"
            + "<path d=\"\(downWicks)\" fill=\"none\" stroke=\"\(Self.downColor)\" stroke-width=\"1\"/>\n"
            + "<path d=\"\(upBodies)\" fill=\"#ffffff\" stroke=\"\(Self.upColor)\" stroke-width=\"1\"/>\n"
            + "<path d=\"\(downBodies)\" fill=\"\(Self.downColor)\" stroke=\"\(Self.downColor)\" stroke-width=\"1\"/>"
    }

    /// A polyline through `points` (`nil` is a gap), simplified to the pixel grid: of the points
    /// in one pixel column only the first, lowest, highest and last are kept, in their order. A
    /// point alone between gaps becomes a zero-length segment (a dot, with round caps).
    static func linePath(_ points: [(Double, Double)?]) -> String {
        var d = ""
        var penDown = false
        var column = Int.min
        var group: [(order: Int, x: Double, y: Double)] = []  // first, lowest, highest, last
        var lonePoint: (Double, Double)?
        func emit(_ x: Double, _ y: Double) {
            d += (penDown ? "L" : "M") + SVGText.number(x) + " " + SVGText.number(y)
            if !penDown { lonePoint = (x, y) } else { lonePoint = nil }
            penDown = true
        }
        func flush() {
            guard !group.isEmpty else { return }
            var kept = group.sorted { $0.order < $1.order }
            kept = kept.enumerated().filter { i, p in i == 0 || p.order != kept[i - 1].order }.map(\.element)
            for p in kept { emit(p.x, p.y) }
            group.removeAll(keepingCapacity: true)
        }
        func endRun() {
            flush()
            if let (x, y) = lonePoint { d += "L" + SVGText.number(x) + " " + SVGText.number(y) }
            lonePoint = nil
            penDown = false
            column = Int.min
        }
        for (order, point) in points.enumerated() {
            guard let (x, y) = point else {
                endRun()
                continue
            }
            let c = Int(x.rounded(.down))
            if c != column {
                flush()
                column = c
                group = [(order, x, y), (order, x, y), (order, x, y), (order, x, y)]
                continue
            }
            if y < group[1].y { group[1] = (order, x, y) }
            if y > group[2].y { group[2] = (order, x, y) }
            group[3] = (order, x, y)
        }
        endRun()
        return d
    }

    // MARK: Data

    /// A series' values as drawn: normalized when asked.
    struct ScaledSeries {
        var close: [Double?], open: [Double?], high: [Double?], low: [Double?]
        var overlays: [[Double?]]
    }

    private func scaledValues(_ s: ChartSeries) -> ScaledSeries {
        var factor = 1.0
        if normalize {
            // The first non-zero price is 1.0; with none, nothing can be drawn.
            if let base = s.close.lazy.compactMap({ $0 }).first(where: { $0 != 0 }) { factor = 1 / base } else { factor = .nan }
        }
        func scale(_ values: [Double?]) -> [Double?] {
            guard factor != 1 || logScale else { return values }
            // On a log scale a value at or below 0 has no place: a gap.
            return values.map {
                $0.flatMap { v in
                    let r = v * factor
                    return r.isFinite && (!logScale || r > 0) ? r : nil
                }
            }
        }
        return ScaledSeries(
            close: scale(s.close), open: scale(s.ohlc?.open ?? []), high: scale(s.ohlc?.high ?? []),
            low: scale(s.ohlc?.low ?? []), overlays: s.overlays.map { scale($0.values) })
    }

    /// Every day any series has, ascending.
    private func unionOfDays() -> [Int32] {
        if series.count == 1 { return series[0].days }
        return Array(Set(series.flatMap(\.days))).sorted()
    }

    /// For each row of `s`, its index among `days` (which contains all of them).
    private func positions(of s: ChartSeries, in days: [Int32]) -> [Int] {
        var out = [Int]()
        out.reserveCapacity(s.count)
        var j = 0
        for day in s.days {
            while j < days.count && days[j] < day { j += 1 }
            out.append(min(j, days.count - 1))
        }
        return out
    }

    /// Each tick at the first trading day on or after it, labels at least 70 px apart (a later
    /// tick landing on the same day replaces the earlier, so a Monday keeps its own date).
    private func tickIndices(_ ticks: CalendarTicks, days: [Int32], slot: Double) -> [(index: Int, day: Int32)] {
        var out: [(index: Int, day: Int32)] = []
        for tick in ticks.days {
            var lo = 0, hi = days.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if days[mid] < tick { lo = mid + 1 } else { hi = mid }
            }
            guard lo < days.count else { continue }
            let label: Int32
            switch ticks.unit {
            case .days, .weeks: label = days[lo]  // the trading day itself
            case .months, .years: label = tick
            }
            if let last = out.last, last.index == lo {
                out[out.count - 1] = (lo, label)
            } else if let last = out.last, Double(lo - last.index) * slot < 70 {
                continue
            } else {
                out.append((lo, label))
            }
        }
        return out
    }

    // MARK: Numbers

    private func clampX(_ v: Double) -> Double { v.isFinite ? min(max(v, 0), width) : 0 }
    private func clampY(_ v: Double) -> Double { v.isFinite ? min(max(v, 0), height) : 0 }
    private func n(_ v: Double) -> String { SVGText.number(v) }

    /// `25M`, `1.5B`, `800k`: a volume for an axis label.
    static func compact(_ value: Double) -> String {
        guard value.isFinite, value < 1e15 else { return String(format: "%.3g", value.isFinite ? value : 0) }
        let units: [(Double, String)] = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"), (1, "")]
        for (size, suffix) in units where value >= size || size == 1 {
            let v = value / size
            let text = v < 10 && v.rounded() != v ? String(format: "%.1f", v) : String(Int64(v.rounded()))
            return text + suffix
        }
        return "0"
    }
}

extension String {
    /// Appends `text` and a line feed.
    fileprivate mutating func append(line text: String) {
        self += text
        self += "\n"
    }
}
